"""Any transcript file to a `Transcript`: decode, pick the format, parse, fill in defaults.

The one entry point ingest uses. Every failure is a TranscriptError subclass:
UnsupportedFormat (no parser fits), DecodeFailure (bytes to text), MalformedTranscript
(the parser refused it), EmptyTranscript (nothing said), or the base TranscriptError when
the file cannot be read at all.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from datetime import datetime
from pathlib import Path, PurePath

from backchannel.extraction.formats import PARSERS, format_for_name, sniff_format
from backchannel.extraction.formats.common import Parsed, clean_speaker, clean_text, strip_markup
from backchannel.extraction.formats.decode import decode_bytes
from backchannel.extraction.formats.meeting_date import date_from_filename, date_from_mtime, strip_date
from backchannel.extraction.formats.transcript import (
    EmptyTranscript,
    MalformedTranscript,
    Transcript,
    TranscriptError,
    UnsupportedFormat,
    Utterance,
)

# No transcript is this big (a 10-hour meeting is under 1 MB); past it, reading and
# parsing would hold the daemon's writer and gigabytes of memory for minutes.
MAX_FILE_BYTES = 64 * 1024 * 1024


def unreadable_reason(
    st: os.stat_result, max_bytes: int | None = MAX_FILE_BYTES, *, hard_links_ok: bool = False
) -> str | None:
    """Why a file with this (l)stat must not be read as a transcript; None: it may.
    Symbolic links, FIFOs, devices, sockets and hard links (a second name for a file
    someone else put elsewhere) are refused, as is anything over `max_bytes`."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link: links are never followed here (copy the file itself)"
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a directory"
            if stat.S_ISDIR(mode)
            else "special"
        )
        return f"not a regular file ({kind}): only plain transcript files are read"
    if st.st_nlink > 1 and not hard_links_ok:
        return f"a hard link ({st.st_nlink} names for one file): copy the file itself instead"
    if max_bytes is not None and st.st_size > max_bytes:
        return (
            f"too large: {st.st_size / 1e6:.1f} MB; transcripts up to {max_bytes / 1e6:.1f} MB are read "
            "(split it into parts)"
        )
    return None


def parse_file(
    path: Path | str,
    *,
    strict: bool = False,
    max_bytes: int | None = MAX_FILE_BYTES,
    given_date: datetime | None = None,
    given_origin: str = "given",
) -> Transcript:
    """Read and parse a transcript file; `given_date` (`ingest --date`) serves when neither
    the file nor its name carries a date, and its mtime is the date of last resort.

    Files over `max_bytes` are refused. `strict` (files nobody named, e.g. from the
    inbox): the last path component is not followed if it is a link, and only a plain
    file with one name is read (`unreadable_reason`), checked on the opened file so it
    cannot be swapped between the check and the read."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
    if strict:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TranscriptError(path, unreadable_reason(os.lstat(path)) or "a symbolic link") from None
        raise TranscriptError(path, f"cannot read the file: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        why = unreadable_reason(st, max_bytes, hard_links_ok=not strict)
        if why:
            raise TranscriptError(path, why)
        try:
            # Bounded: the file may grow after fstat.
            data = f.read(max_bytes + 1) if max_bytes is not None else f.read()
        except OSError as e:
            raise TranscriptError(path, f"cannot read the file: {e.strerror or e}") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise TranscriptError(path, f"too large: more than {max_bytes / 1e6:.1f} MB")
    return parse_bytes(data, str(path), st.st_mtime, given_date=given_date, given_origin=given_origin)


def parse_bytes(
    data: bytes,
    name: str,
    mtime: float | None = None,
    *,
    given_date: datetime | None = None,
    given_origin: str = "given",
) -> Transcript:
    """Parse a transcript's bytes. `name` (a file name or path) picks the format by its
    extension and may carry the meeting date; `mtime` is the date of last resort."""
    try:
        return _parse(data, name, mtime, given_date, given_origin)
    except TranscriptError:
        raise
    except Exception as e:  # a parser bug must still reach ingest as a typed failure
        raise MalformedTranscript(name, f"unexpected parser error ({type(e).__name__}: {e})") from e


def _parse(
    data: bytes, name: str, mtime: float | None, given_date: datetime | None = None, given_origin: str = "given"
) -> Transcript:
    base = PurePath(name).name
    text, _encoding = decode_bytes(data, name)
    # NFC before parsing, so a name written with combining accents matches like any other
    text = unicodedata.normalize("NFC", text)
    if not text.strip("\ufeff\x00 \t\r\n\f\v"):
        raise EmptyTranscript(name, "the file is empty")
    parsed = _parse_text(text, name, base)
    transcript = _transcript(parsed, name)
    transcript.title = clean_text(parsed.title or "") or pretty_title(base)
    if transcript.meeting_date is None:
        when = date_from_filename(base)
        if when is not None:
            transcript.meeting_date, transcript.meeting_date_origin = when, "filename"
        elif given_date is not None:
            transcript.meeting_date, transcript.meeting_date_origin = given_date, given_origin
        elif mtime is not None:
            when = date_from_mtime(mtime)
            if when is not None:
                # Copying, downloading or syncing sets the mtime: the meeting's date stays
                # unknown, and the file's is kept only to be shown as such.
                transcript.file_date, transcript.meeting_date_origin = when, "mtime"
    return transcript


def _parse_text(text: str, name: str, base: str) -> Parsed:
    """Parse by extension; when the extension is unknown, or its parser refuses the file
    and the content is plainly another format (an .srt saved as .vtt), by content."""
    fmt = format_for_name(base)
    if fmt is None:
        fmt = sniff_format(text)
        if fmt is None:
            ext = PurePath(base).suffix or "(none)"
            raise UnsupportedFormat(name, f"unknown extension {ext} and the content is not WebVTT, SRT or JSON")
        return PARSERS[fmt](text, name)
    try:
        return PARSERS[fmt](text, name)
    except MalformedTranscript:
        sniffed = sniff_format(text)
        if sniffed is None or sniffed == fmt:
            raise
        return PARSERS[sniffed](text, name)


def _transcript(parsed: Parsed, name: str) -> Transcript:
    utterances: list[Utterance] = []
    for seg in parsed.segments:
        body = clean_text(strip_markup(seg.text))  # every format: "{vocalsound}", "[laughter]"
        if body:
            utterances.append(Utterance(len(utterances), clean_speaker(seg.speaker), body, seg.start_s, seg.end_s))
    if not utterances:
        raise EmptyTranscript(name, f"no utterance with text in this {parsed.format} file")
    transcript = Transcript(
        utterances=utterances,
        format=parsed.format,
        meeting_date=parsed.meeting_date,
        meeting_date_origin=parsed.meeting_date_origin if parsed.meeting_date else None,
        path=name,
    )
    declared = list(dict.fromkeys(p for p in (clean_speaker(x) for x in parsed.participants) if p))
    transcript.participants = declared or transcript.speakers()
    return transcript


def pretty_title(file_name: str) -> str:
    """A title from a file name: extension and date dropped, separators to spaces,
    'weekly_sync' -> 'Weekly sync'; the stem unchanged when nothing is left."""
    stem = PurePath(file_name).stem
    words = re.sub(r"[\s_.\-]+", " ", strip_date(stem)).strip()
    if not words:
        return stem or file_name
    return words[0].upper() + words[1:] if words.islower() else words

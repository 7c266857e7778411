"""Any transcript file to a `Transcript`: decode, pick the format, parse, fill in defaults.

The one entry point ingest uses. Every failure is a TranscriptError subclass:
UnsupportedFormat (no parser fits), DecodeFailure (bytes to text), MalformedTranscript
(the parser refused it), EmptyTranscript (nothing said), or the base TranscriptError when
the file cannot be read at all.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePath

from backchannel.extractors.decode import decode_bytes
from backchannel.extractors.formats import PARSERS, format_for_name, sniff_format
from backchannel.extractors.formats.common import Parsed, clean_speaker, clean_text
from backchannel.extractors.meeting_date import date_from_filename, date_from_mtime, strip_date
from backchannel.extractors.transcript import (
    EmptyTranscript,
    MalformedTranscript,
    Transcript,
    TranscriptError,
    UnsupportedFormat,
    Utterance,
)


def parse_file(path: Path | str) -> Transcript:
    """Read and parse a transcript file; its mtime is the date of last resort."""
    path = Path(path)
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except OSError as e:
        raise TranscriptError(path, f"cannot read the file: {e.strerror or e}") from None
    return parse_bytes(data, str(path), mtime)


def parse_bytes(data: bytes, name: str, mtime: float | None = None) -> Transcript:
    """Parse a transcript's bytes. `name` (a file name or path) picks the format by its
    extension and may carry the meeting date; `mtime` is the date of last resort."""
    try:
        return _parse(data, name, mtime)
    except TranscriptError:
        raise
    except Exception as e:  # a parser bug must still reach ingest as a typed failure
        raise MalformedTranscript(name, f"unexpected parser error ({type(e).__name__}: {e})") from e


def _parse(data: bytes, name: str, mtime: float | None) -> Transcript:
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
        elif mtime is not None:
            when = date_from_mtime(mtime)
            if when is not None:
                transcript.meeting_date, transcript.meeting_date_origin = when, "mtime"
    return transcript


def _parse_text(text: str, name: str, base: str) -> Parsed:
    """Parse by extension; when the extension is unknown, or its parser refuses the file
    and the content is plainly another format (an .srt saved as .vtt), by content."""
    fmt = format_for_name(base)
    if fmt is None:
        fmt = sniff_format(text)
        if fmt is None:
            ext = PurePath(base).suffix or "(none)"
            raise UnsupportedFormat(
                name, f"unknown extension {ext} and the content is not WebVTT, SRT or JSON"
            )
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
        body = clean_text(seg.text)
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

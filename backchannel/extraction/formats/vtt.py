"""WebVTT: webvtt-py for the block structure, our code for what it gets wrong.

webvtt-py splits blocks the way the W3C parser does (a line with "-->" starts a new
block, CR/LF/CRLF all end lines), so it reads cues. Where it departs from the W3C
parser we step in before it sees the text:
- the signature must be "WEBVTT" followed by a space, tab, line end or nothing
  (webvtt-py accepts "WEBVTTfoo");
- NUL becomes U+FFFD, as the spec's preprocessing says;
- a timing line must hold W3C timestamps (webvtt-py accepts "0:0:1.5") separated by
  spaces, tabs or form feeds only (its `\\s` also takes vertical tab); a line that
  fails is replaced by "-->" alone, which still ends the previous block, exactly as
  the original line did, and is then dropped by webvtt-py like any bad timing line.
Cue text is then ours: `<v Speaker>` voice spans (several in one cue split it), other
tags stripped, entities unescaped, `Speaker: text` prefixes read, and cues merged
into sentence runs (common.merge_runs).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from backchannel.extraction.formats.common import (
    Parsed,
    Segment,
    clean_speaker,
    merge_runs,
    parse_list_value,
    segments_by_speaker,
)
from backchannel.extraction.formats.meeting_date import parse_date_value
from backchannel.extraction.formats.transcript import MalformedTranscript

_SIGNATURE = re.compile(r"^WEBVTT(?:[ \t\r\n]|$)")
_LINE_END = re.compile(r"\r\n|\r|\n")
# W3C timestamp: optional hours (any digits), then exactly mm:ss.ttt; without hours
# the first field must be two digits (checked in _valid_timestamp).
_TS = r"(?:\d+:)?\d{2}:\d{2}\.\d{3}"
_TIMING = re.compile(rf"^[ \t\f]*({_TS})[ \t\f]*-->[ \t\f]*({_TS})(?![0-9])")
# A cue tag: `<`, an optional `/`, a name starting with a letter, classes, an annotation,
# up to `>` or the end of the cue (as the W3C tokenizer reads an unclosed tag); or a
# closed timestamp tag `<00:00:01.000>`. A `<` before anything else ("revenue < 5M",
# "<5M") is text.
_TAG = re.compile(r"<(?:(/?)([A-Za-z][^\s.>/]*)((?:\.[^\s.>]*)*)(?:[ \t\f\n]+([^>]*))?(?:>|$)|/>|[\d:.]+>)")
_META_LINE = re.compile(r"^(?P<key>[A-Za-z][\w -]{0,30}?)\s*[:=]\s*(?P<value>.+)$")


@dataclass
class Cue:
    """A cue as the W3C parser sees it (before tags are read or cues merged)."""

    identifier: str | None
    start_s: float
    end_s: float
    raw_text: str


def parse_vtt_cues(text: str, name: str | None = None) -> tuple[list[Cue], list[str]]:
    """The cues of a WebVTT file and the texts of its NOTE blocks before the first cue.

    Raises MalformedTranscript when the signature is missing or webvtt-py refuses it."""
    import webvtt  # only VTT files pay for it

    text = text.lstrip("\ufeff")
    if not _SIGNATURE.match(text):
        raise MalformedTranscript(name, 'not WebVTT: the file must start with "WEBVTT"')
    lines = _LINE_END.split(text.replace("\x00", "\ufffd"))
    lines = [line if "-->" not in line or _timing_ok(line) else "-->" for line in lines]
    try:
        vtt = webvtt.from_string("\n".join(lines))
        cues = [Cue(c.identifier or None, _seconds(c.start), _seconds(c.end), c.raw_text) for c in vtt.captions]
    except Exception as e:  # webvtt-py raises its own and plain errors on odd files
        raise MalformedTranscript(name, f"WebVTT parser refused the file: {e}") from None
    # Header metadata lines ("WEBVTT\nDate: ...") and NOTE blocks before the first cue.
    notes = ["\n".join(str(x) for x in (getattr(vtt, "metadata", None) or []))]
    notes += [str(n) for n in (vtt.header_comments or [])]
    return cues, notes


def parse_vtt(text: str, name: str | None = None) -> Parsed:
    """A WebVTT file's segments (cues merged into sentence runs) and header metadata."""
    cues, notes = parse_vtt_cues(text, name)
    segments: list[Segment] = []
    for cue in cues:
        segments.extend(cue_segments(cue))
    parsed = Parsed("vtt", merge_runs(segments))
    _apply_notes(parsed, notes)
    return parsed


def cue_segments(cue: Cue) -> list[Segment]:
    """A cue's text split by voice spans; speaker from the span or a `Name:` prefix."""
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    pos = 0
    raw = cue.raw_text
    for m in _TAG.finditer(raw):
        parts[-1][1].append(raw[pos : m.start()])
        pos = m.end()
        closing, tag, annotation = m.group(1), (m.group(2) or ""), m.group(4)
        if tag == "v" and not closing:
            parts.append((clean_speaker(html.unescape(annotation or "")), []))
        elif tag in ("br",):
            parts[-1][1].append("\n")
    parts[-1][1].append(raw[pos:])
    out: list[Segment] = []
    for speaker, chunks in parts:
        out.extend(segments_by_speaker(html.unescape("".join(chunks)), cue.start_s, cue.end_s, speaker))
    return out


def _timing_ok(line: str) -> bool:
    m = _TIMING.match(line)
    return m is not None and _valid_timestamp(m.group(1)) and _valid_timestamp(m.group(2))


def _valid_timestamp(ts: str) -> bool:
    fields = ts.split(":")
    if len(fields) == 2 and int(fields[0]) > 59:
        return False  # without hours, the first field is minutes
    if len(fields) == 3 and len(fields[0]) > 9:
        return False  # W3C allows any number of hour digits; webvtt-py raises past 10
    minutes, seconds = int(fields[-2]), int(fields[-1][:2])
    return minutes <= 59 and seconds <= 59


def _seconds(ts: str) -> float:
    *hm, s = ts.split(":")
    h = int(hm[0]) if len(hm) == 2 else 0
    m = int(hm[-1]) if hm else 0
    return h * 3600 + m * 60 + float(s)


def _apply_notes(parsed: Parsed, notes: list[str]) -> None:
    """Read `date:`, `title:`, `participants:` (or a bare date) from header NOTE blocks."""
    for note in notes:
        for line in note.splitlines():
            line = line.strip()
            if not line:
                continue
            m = _META_LINE.match(line)
            key = m["key"].strip().casefold() if m else ""
            value = m["value"].strip() if m else line
            if key in ("date", "meeting date", "meeting_date", "started", "started_at", "start") or not m:
                parsed.set_date(parse_date_value(value), "vtt_note")
            elif key == "title" and not parsed.title:
                parsed.title = value
            elif key in ("participants", "attendees", "speakers") and not parsed.participants:
                parsed.participants = parse_list_value(value)

"""SubRip (.srt): the `srt` library in its lenient mode, then our cue-text reading.

`srt.parse(..., ignore_errors=True)` skips blocks it cannot read (logging them) and
accepts "," or "." before the milliseconds. What it leaves to us: formatting tags
(`<i>`, `<font color=...>`, ASS overrides like `{\\an8}`), speakers written as
`Name: text`, `NAME: text` or `[Name] text`, and cues split mid-sentence (merged the
same way as WebVTT cues, so one meeting exported as .vtt and .srt hashes the same).
"""

from __future__ import annotations

import html
import re

from backchannel.extraction.formats.common import Parsed, Segment, merge_runs, segments_by_speaker
from backchannel.extraction.formats.transcript import MalformedTranscript

_TAGS = re.compile(r"</?(?:i|b|u|s|font|span)\b[^>]*>|\{\\[^}]*\}", re.IGNORECASE)
_HAS_TIMING = re.compile(r"\d+:\d{1,2}:\d{1,2}[,.]\d{1,3}\s*-->\s*\d+:\d{1,2}:\d{1,2}[,.]\d{1,3}")


def parse_srt(text: str, name: str | None = None) -> Parsed:
    """An SRT file's segments (cues split by speaker lines, merged into sentence runs)."""
    import logging

    import srt  # only SRT files pay for it

    # Skipped blocks are reported through our own error path, not as stray warnings on stderr.
    logging.getLogger("srt").setLevel(logging.ERROR)

    text = text.lstrip("\ufeff").replace("\x00", "")
    if not _HAS_TIMING.search(text):
        raise MalformedTranscript(name, "not SRT: no 'hh:mm:ss,mmm --> hh:mm:ss,mmm' timing line")
    try:
        subs = list(srt.parse(text, ignore_errors=True))
    except Exception as e:  # srt raises its own errors (and plain ones) on odd input
        raise MalformedTranscript(name, f"SRT parser refused the file: {e}") from None
    segments: list[Segment] = []
    for sub in subs:
        body = _TAGS.sub("", sub.content)
        if "&" in body and ";" in body:
            body = html.unescape(body)  # some exporters escape like HTML
        segments.extend(segments_by_speaker(body, sub.start.total_seconds(), sub.end.total_seconds()))
    return Parsed("srt", merge_runs(segments))

"""Transcript formats: which parser reads a file, by extension or by content.

Each parser takes decoded text and the file name (for error messages) and returns a
`Parsed` (segments plus what the file declares); parse.py makes the Transcript.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from backchannel.extraction.formats.common import Parsed
from backchannel.extraction.formats.json_ import parse_json
from backchannel.extraction.formats.srt import parse_srt
from backchannel.extraction.formats.text import parse_text
from backchannel.extraction.formats.vtt import parse_vtt, parse_vtt_cues

Parser = Callable[[str, "str | None"], Parsed]

PARSERS: dict[str, Parser] = {"vtt": parse_vtt, "srt": parse_srt, "text": parse_text, "json": parse_json}

EXTENSIONS: dict[str, str] = {
    ".vtt": "vtt",
    ".webvtt": "vtt",
    ".srt": "srt",
    ".txt": "text",
    ".text": "text",
    ".md": "text",
    ".markdown": "text",
    ".json": "json",
}

_SRT_HEAD = re.compile(r"\A\s*\d+[ \t]*\r?\n[ \t]*\d+:\d{2}:\d{2}[,.]\d{1,3}[ \t]*-->")


def format_for_name(name: str) -> str | None:
    """The format a file name's extension says, or None."""
    dot = name.rfind(".")
    return EXTENSIONS.get(name[dot:].casefold()) if dot >= 0 else None


def sniff_format(text: str) -> str | None:
    """The format the content itself shows (WEBVTT signature, SRT index and timing,
    JSON object or list), or None. Plain text is never sniffed: anything would pass."""
    head = text.lstrip("\ufeff")
    if re.match(r"WEBVTT(?:[ \t\r\n]|$)", head):
        return "vtt"
    if _SRT_HEAD.match(head):
        return "srt"
    stripped = head.lstrip()
    if stripped[:1] in ("{", "["):
        import json

        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        if isinstance(data, (dict, list)):
            return "json"
    return None


__all__ = ["PARSERS", "EXTENSIONS", "Parsed", "format_for_name", "sniff_format", "parse_vtt_cues"]

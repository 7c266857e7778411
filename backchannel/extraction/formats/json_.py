"""JSON transcripts: our native shape and the list shapes exports produce.

Accepted (docs/formats.md has examples):
- native: {"title", "date", "participants": [...], "utterances": [{speaker, text, start, end}]};
- a top-level object holding its items under "utterances", "segments" (Whisper-like),
  "meeting_transcripts" (QMSum) or "transcript";
- a bare list of such items.
An item is an object with text under "text", "content" or "utterance", a speaker
under "speaker", "speaker_name" or "name" (optional), and optional "start"/"end"
(seconds as numbers, or "hh:mm:ss.mmm" strings). QMSum's disfluency markup
(`{vocalsound}`, `{disfmarker}`, `{pause}`, ...) is removed from the text.
"""

from __future__ import annotations

import json
import math
import re

from backchannel.extraction.formats.common import Parsed, Segment, clean_speaker, hms_seconds, parse_list_value
from backchannel.extraction.formats.meeting_date import parse_date_value
from backchannel.extraction.formats.transcript import MalformedTranscript

ITEM_KEYS = ("utterances", "segments", "meeting_transcripts", "transcript")
TEXT_KEYS = ("text", "content", "utterance")
SPEAKER_KEYS = ("speaker", "speaker_name", "name")
DATE_KEYS = ("date", "meeting_date", "started_at")
_MARKUP = re.compile(r"\{(?:vocalsound|disfmarker|pause|gap|nonvocalsound|comment|other)[^{}]*\}|\{[a-z_]{2,20}\}")


def parse_json(text: str, name: str | None = None) -> Parsed:
    """A JSON transcript's segments and declared title, date and participants."""
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError) as e:
        raise MalformedTranscript(name, f"invalid JSON: {e}") from None
    parsed = Parsed("json")
    if isinstance(data, dict):
        items = next((data[k] for k in ITEM_KEYS if isinstance(data.get(k), list)), None)
        if items is None:
            raise MalformedTranscript(
                name, "JSON object without a list under any of " + ", ".join(f'"{k}"' for k in ITEM_KEYS)
            )
        _declared(data, parsed)
    elif isinstance(data, list):
        items = data
    else:
        raise MalformedTranscript(name, f"JSON holds a {type(data).__name__}, not an object or a list")
    segments: list[Segment] = []
    for i, item in enumerate(items):
        seg = _segment(item)
        if seg is None:
            raise MalformedTranscript(
                name, f"item {i} is not an object with text under any of " + ", ".join(f'"{k}"' for k in TEXT_KEYS)
            )
        segments.append(seg)
    parsed.segments = segments
    return parsed


def _declared(data: dict, parsed: Parsed) -> None:
    title = data.get("title")
    if isinstance(title, str) and title.strip():
        parsed.title = title.strip()
    for key in DATE_KEYS:
        if key in data:
            parsed.set_date(parse_date_value(data[key]), "json")
    people = data.get("participants")
    if isinstance(people, str):
        parsed.participants = parse_list_value(people)
    elif isinstance(people, list):
        names = [_person(p) for p in people]
        parsed.participants = [n for n in names if n]


def _person(value: object) -> str | None:
    if isinstance(value, dict):  # {"name": "Marc Dupont", "email": ...}
        value = value.get("name")
    return clean_speaker(value) if isinstance(value, (str, int)) else None


def _segment(item: object) -> Segment | None:
    if isinstance(item, str):
        return Segment(None, _MARKUP.sub(" ", item))
    if not isinstance(item, dict):
        return None
    key = next((k for k in TEXT_KEYS if k in item), None)
    text = item.get(key) if key else None
    if text is None and key is not None:
        text = ""  # {"text": null}: a silent segment, dropped with the other empty ones
    if not isinstance(text, str):
        return None
    speaker = next((item[k] for k in SPEAKER_KEYS if isinstance(item.get(k), (str, int))), None)
    return Segment(
        clean_speaker(speaker) if speaker is not None else None,
        _MARKUP.sub(" ", text),
        _seconds(item.get("start", item.get("start_time"))),
        _seconds(item.get("end", item.get("end_time"))),
    )


def _seconds(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value
        try:
            value = float(text)
        except ValueError:
            return hms_seconds(text)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return None

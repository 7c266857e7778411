"""Plain text and Markdown transcripts: `Speaker: text` lines, optional stamps, front matter.

Read line by line:
- optional front matter between `---` lines at the very top: `title:`, `date:`,
  `participants:` (inline `[A, B]` / `A, B`, or a YAML block list of `- A` lines);
- Markdown headings (`# Weekly sync`) are not speech; the first one is the title when
  the front matter gives none;
- a stamp `[hh:mm:ss]`, `(hh:mm:ss)` or bare `hh:mm:ss` (hours optional) may come
  before the name (`[00:01:02] Marc: text`) or after it (`Marc (00:01:02): text`,
  or `Marc Dupont  0:03` alone on a line, as Otter exports write it);
- `Marc: text`, `**Marc:** text`, `[Marc] text`, `MARC: text` start an utterance;
  a name line with no text (`Marc:` or `Marc 0:03`) starts one that the next lines fill;
- a line with no speaker continues the previous utterance when it follows it
  directly; after a blank line it starts an utterance with speaker None.
"""

from __future__ import annotations

import re

from backchannel.extractors.formats.common import (
    NAME_PATTERN,
    Parsed,
    Segment,
    clean_speaker,
    hms_seconds,
    is_name,
    parse_list_value,
    split_speaker,
)
from backchannel.extractors.meeting_date import parse_date_value

_TS = r"\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?"
_LEAD_STAMP = re.compile(rf"^[ \t]*(?:\[(?P<a>{_TS})\]|\((?P<b>{_TS})\)|(?P<c>{_TS})(?=[ \t]))[ \t]*(?:[-–—|][ \t]*)?(?P<rest>.*)$")
_NAME_STAMP = re.compile(
    rf"^[ \t]*(?:\*\*|__)?(?P<name>{NAME_PATTERN})(?:\*\*|__)?[ \t]*(?:\[(?P<a>{_TS})\]|\((?P<b>{_TS})\)|(?P<c>{_TS}))"
    rf"[ \t]*(?::[ \t]*(?P<rest>.*))?$"
)
_RULE = re.compile(r"^[ \t]*(?:[-*_=][ \t]*){3,}$")  # Markdown horizontal rules
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<title>.+?)[ \t#]*$")
_FRONT_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w -]*?)[ \t]*:[ \t]*(?P<value>.*)$")
_LIST_ITEM = re.compile(r"^[ \t]*-[ \t]+(?P<item>.+)$")
_DATE_KEYS = ("date", "meeting_date", "meeting date", "when", "started_at", "start")
_PEOPLE_KEYS = ("participants", "attendees", "speakers", "people")


def parse_text(text: str, name: str | None = None) -> Parsed:
    """A plain-text or Markdown transcript's segments and front matter."""
    text = text.lstrip("\ufeff").replace("\x00", "")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parsed = Parsed("text")
    start = _front_matter(lines, parsed)
    segments: list[Segment] = []
    blank_since_last = False
    for line in lines[start:]:
        if not line.strip():
            blank_since_last = True
            continue
        heading = _HEADING.match(line)
        if heading or _RULE.match(line):
            if heading:
                parsed.title = parsed.title or heading["title"].strip()
            blank_since_last = True
            continue
        speaker, body, stamp = _read_line(line)
        prev = segments[-1] if segments else None
        if speaker is None and stamp is None and prev is not None and (not blank_since_last or not prev.text):
            prev.text = f"{prev.text} {body}" if prev.text else body
        elif speaker is not None or body.strip():
            segments.append(Segment(speaker, body, stamp))
        blank_since_last = False
    parsed.segments = [s for s in segments if s.text.strip()]
    return parsed


def _read_line(line: str) -> tuple[str | None, str, float | None]:
    """(speaker, text, start seconds) for one line; text is "" on a name-only line."""
    m = _NAME_STAMP.match(line)
    if m and is_name(m["name"]) and (m["rest"] is not None or _all_capitalised(m["name"])):
        ts = m["a"] or m["b"] or m["c"]
        return clean_speaker(m["name"]), m["rest"] or "", hms_seconds(ts)
    stamp = None
    m = _LEAD_STAMP.match(line)
    if m:
        stamp = hms_seconds(m["a"] or m["b"] or m["c"])
        line = m["rest"]
    speaker, body = split_speaker(line, brackets=True)
    return speaker, body, stamp


def _all_capitalised(name: str) -> bool:
    # "Marc Dupont  0:03" is a header line; "Meeting at 10:30" is not.
    return all(w[:1].isupper() or w[:1].isdigit() or w[:1] == "(" for w in name.split())


def _front_matter(lines: list[str], parsed: Parsed) -> int:
    """Read `---` front matter into parsed; return the index of the first body line."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() != "---":
        return 0
    end = next((i for i in range(first + 1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return 0  # an opening rule with no closing one: a horizontal rule, not front matter
    keys = {m["key"].strip().casefold() for m in map(_FRONT_KEY.match, lines[first + 1:end]) if m}
    if not keys & {"title", *_DATE_KEYS, *_PEOPLE_KEYS}:
        return 0  # "---\nMarc: hi\n---": rules around speech, not front matter
    key = None
    for line in lines[first + 1:end]:
        item = _LIST_ITEM.match(line)
        if item and key in _PEOPLE_KEYS:
            name = clean_speaker(item["item"].strip().strip("\"'"))
            if name:
                parsed.participants.append(name)
            continue
        m = _FRONT_KEY.match(line)
        if not m:
            continue
        key, value = m["key"].strip().casefold(), m["value"].strip()
        if key == "title" and value:
            parsed.title = value.strip("\"'")
        elif key in _DATE_KEYS and value:
            parsed.set_date(parse_date_value(value), "front_matter")
        elif key in _PEOPLE_KEYS and value:
            parsed.participants = parse_list_value(value)
    return end + 1

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
- chat and note-taker exports: `Marc Dupont  4:02 PM` or `[4:02 PM] Marc Dupont` (Teams)
  alone on a line, Zoom's saved chat `16:02:11 From Marc Dupont to Everyone:`; a clock
  time (AM/PM) is not an offset into a recording, so it sets no start;
- a time alone on its line (Google Meet's transcript) is not speech;
- a line with no speaker continues the previous utterance when it follows it
  directly; after a blank line it starts an utterance with speaker None.
"""

from __future__ import annotations

import re

from backchannel.extraction.formats.common import (
    NAME_PATTERN,
    Parsed,
    Segment,
    clean_speaker,
    hms_seconds,
    is_name,
    parse_list_value,
    split_speaker,
)
from backchannel.extraction.formats.meeting_date import parse_date_value

# A stamp never starts inside a number: "Marc Dupont  12:45" is Marc Dupont at 12:45, not
# "Marc Dupont 1" at 2:45. An AM/PM after it makes it a clock time (a chat's), not an offset.
_TS = r"(?<!\d)\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?![\d:])"
_CLOCK = r"(?:[ \t]*(?P<ampm>[AaPp]\.?[Mm]\.?)(?![A-Za-z]))?"
_LEAD_STAMP = re.compile(
    rf"^[ \t]*(?:\[(?P<a>{_TS}){_CLOCK}\]|\((?P<b>{_TS}){_CLOCK.replace('ampm', 'ampm_b')}\)"
    rf"|(?P<c>{_TS}){_CLOCK.replace('ampm', 'ampm_c')}(?=[ \t]))[ \t]*(?:[-–—|][ \t]*)?(?P<rest>.*)$"
)
_NAME_STAMP = re.compile(
    rf"^[ \t]*(?:\*\*|__)?(?P<name>{NAME_PATTERN})(?:\*\*|__)?[ \t]*(?:\[(?P<a>{_TS}){_CLOCK}\]"
    rf"|\((?P<b>{_TS}){_CLOCK.replace('ampm', 'ampm_b')}\)|(?P<c>{_TS}){_CLOCK.replace('ampm', 'ampm_c')})"
    rf"[ \t]*(?::[ \t]*(?P<rest>.*))?$"
)
# Zoom's saved chat: "16:02:11 From Marc Dupont to Everyone:" (the message on the next
# line, or after the colon), "From Marc Dupont to Me (Direct Message):", "From Marc Dupont : hi".
_ZOOM_FROM = re.compile(r"^[ \t]*From[ \t]+(?P<name>[^:\n]+?)(?:[ \t]+to[ \t]+[^:\n]+?)?[ \t]*:[ \t]*(?P<rest>.*)$")
_STAMP_ONLY = re.compile(rf"^[ \t]*[\[(]?{_TS}{_CLOCK}[\])]?[ \t]*$")
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
        if _STAMP_ONLY.match(line):  # a time alone on its line (Google Meet's transcript): no speech
            blank_since_last = True
            continue
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
        return clean_speaker(m["name"]), m["rest"] or "", _offset(m)
    stamp = None
    m = _LEAD_STAMP.match(line)
    if m:
        stamp = _offset(m)
        line = m["rest"]
        name = _name_alone(line, clock=_is_clock(m))
        if name:  # Teams' "[4:02 PM] Marc Dupont", the message on the next lines
            return name, "", stamp
    zoom = _ZOOM_FROM.match(line)
    if zoom and is_name(zoom["name"].strip()) and _all_capitalised(zoom["name"]):
        return clean_speaker(zoom["name"].strip()), zoom["rest"], stamp
    speaker, body = split_speaker(line, brackets=True)
    return speaker, body, stamp


def _is_clock(m: re.Match[str]) -> bool:
    return bool(m["ampm"] or m["ampm_b"] or m["ampm_c"])


def _offset(m: re.Match[str]) -> float | None:
    """Seconds into the recording; None for a clock time ("4:02 PM"), which is not an offset."""
    if _is_clock(m):
        return None
    return hms_seconds(m["a"] or m["b"] or m["c"])


_NAME_ALONE = re.compile(rf"^(?:\*\*|__)?(?P<name>{NAME_PATTERN})(?:\*\*|__)?[ \t]*$")


def _name_alone(rest: str, *, clock: bool) -> str | None:
    """A speaker's name alone after a stamp: after a clock time any capitalised name, after
    an offset only a name of two or more words ("[00:01:02] Okay" is speech)."""
    m = _NAME_ALONE.match(rest)
    if not m or not is_name(m["name"]) or not _all_capitalised(m["name"]):
        return None
    if rest.rstrip()[-1:] in ".!?" or (not clock and len(m["name"].split()) < 2):
        return None
    return clean_speaker(m["name"])


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
    keys = {m["key"].strip().casefold() for m in map(_FRONT_KEY.match, lines[first + 1 : end]) if m}
    if not keys & {"title", *_DATE_KEYS, *_PEOPLE_KEYS}:
        return 0  # "---\nMarc: hi\n---": rules around speech, not front matter
    key = None
    for line in lines[first + 1 : end]:
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

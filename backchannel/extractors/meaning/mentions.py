"""Mentions in one English sentence, for the meaning stage: people, organisations, the speaker.

A capitalised run is an organisation when the meeting says so anywhere (after "at", "from",
"joined", "left", "over at", an organisation word such as "Bank" or "Council", an acronym),
a person when it is a speaker, a participant, the owner or a valid person name
(offline_names.person_name) that is not a sentence-opening word nobody else uses as a name.
Slots are what the embedding model reads instead of the names (slots.FILLERS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from backchannel.extractors.offline_names import (
    NAME_RX,
    ORG_RX,
    STOP,
    TITLE_HEADS,
    looks_like_org,
    org_name,
    person_name,
)
from backchannel.memory.text import norm_name

# Words before a capitalised run that make it a place of work.
_ORG_BEFORE = re.compile(
    r"(?:\b(?:at|from|joined|joining|join|joins|left|leaving|leaves|quit|with\s+the|for\s+the|of\s+the|over\s+at"
    r"|to\s+join|ex-|formerly\s+of|named\s+by|hired\s+by|poached\s+by|employed\s+by|works?\s+for|working\s+for"
    r"|worked\s+for)\s+(?:the\s+)?)$", re.I)
_ORG_AFTER = re.compile(r"^(?:['’]s\s+(?:new|former|chief|head|board|CEO|CTO|CFO|COO)|\s+(?:has\s+hired|hires|hired"
                        r"|names|named|appoints|appointed|taps|brought\s+in|poached))\b")
FIRST_PERSON = re.compile(r"\b(?:I|I['’](?:m|ve|ll|d)|me|my|myself|mine)\b|\b(?:[Ww]e|[Uu]s|[Oo]ur|[Mm]yself)\b")
SINGULAR_FIRST = re.compile(r"\b(?:I|I['’](?:m|ve|ll|d)|me|my|myself|mine)\b")


@dataclass(frozen=True)
class Slot:
    start: int  # offsets in the utterance text
    end: int
    name: str
    kind: str  # person | organisation


def _org_at(text: str, start: int, s1: int) -> str | None:
    m = ORG_RX.match(text, start, s1)
    if m is None or m.group(0).lower().strip(".,") in TITLE_HEADS:
        return None  # "CTO" is a title, not an organisation
    return org_name(m.group(0))


def organisations_of(texts: list[str]) -> set[str]:
    """Normalised names the meeting uses as an organisation somewhere."""
    out: set[str] = set()
    for text in texts:
        for m in NAME_RX.finditer(text):
            raw = m.group(0)
            if raw.lower() in TITLE_HEADS:
                continue
            if _ORG_BEFORE.search(text, max(0, m.start() - 24), m.start()) or looks_like_org(raw):
                org = _org_at(text, m.start(), len(text))
                if org:
                    out.add(norm_name(org))
    return out


_OPENING = re.compile(r"(?:^|[.!?:;]\s*|^\W+)$")


def mid_sentence_names(texts: list[str]) -> set[str]:
    """Normalised one-word names the meeting uses inside a sentence, or as the first word of a
    longer name: "Priya" opening a sentence is a name when "Priya Raman" or "... with Priya" is said."""
    out: set[str] = set()
    for text in texts:
        for m in NAME_RX.finditer(text):
            words = m.group(0).split()
            if len(words) > 1:
                out.add(norm_name(words[0]))
            elif not _OPENING.search(text[max(0, m.start() - 3):m.start()]):
                out.add(norm_name(words[0]))
    return out


def find(text: str, s0: int, s1: int, *, known_people: frozenset[str], organisations: set[str],
         speaker: str | None, names: set[str] | None = None) -> list[Slot]:
    """The people and organisations named in text[s0:s1], in order (the speaker's own name left out)."""
    slots: list[Slot] = []
    pos = s0
    while True:
        m = NAME_RX.search(text, pos, s1)
        if m is None:
            break
        pos = m.end()
        raw = m.group(0)
        key = norm_name(raw)
        start = m.start()
        before = _ORG_BEFORE.search(text, max(0, start - 24), start)
        if raw.lower() in TITLE_HEADS:
            continue
        if key not in known_people and (before or key in organisations or looks_like_org(raw)
                                        or _ORG_AFTER.match(text[m.end():m.end() + 30])):
            org = _org_at(text, start, s1)
            if org:
                end = start + len(org) if text.startswith(org, start) else m.end()
                slots.append(Slot(start, end, org, "organisation"))
                pos = max(pos, end)
            continue
        name = person_name(raw)
        if name is None:
            continue
        if speaker and norm_name(name) == norm_name(speaker):
            continue
        one_word = " " not in name
        if one_word and norm_name(name) not in known_people:
            opening = start == s0 or _OPENING.search(text[max(s0, start - 3):start]) is not None
            if opening and (raw.lower() in STOP or names is None or norm_name(name) not in names):
                continue  # "Rumour has it", "Honestly, ...": a capitalised opener is no name
        # "So Sophie Martin": person_name drops the opener; the slot covers the name only
        off = raw.find(name.split()[0])
        slots.append(Slot(start + max(0, off), start + max(0, off) + len(name), name, "person"))
    return slots


def masked(text: str, s0: int, s1: int, slots: list[Slot]) -> str:
    """text[s0:s1] with each slot written as the head reads it: people {P}, {P2}, ...; organisations {O}."""
    out, pos, people = [], s0, {}
    for sl in slots:
        out.append(text[pos:sl.start])
        if sl.kind == "organisation":
            out.append("{O}")
        else:
            n = people.setdefault(norm_name(sl.name), len(people))
            out.append("{P}" if n == 0 else "{P2}")
        pos = sl.end
    out.append(text[pos:s1])
    return "".join(out)

"""Offline rule for titles said right next to a person's name, as real meetings say them.

has_title: "as my colleague Chair Dai Lloyd would say", "Mayor Sadiq Khan opened it"
(a title word before a full name); "a speech researcher named Pierre Divenyi",
"an engineer called Ana Ruiz" (a title, then "named/called" and the name);
"Brett Pugh, who chairs the improvement group" (a relative clause that chairs,
leads or heads something); and the speaker's own role said in passing: "in my role as
treasurer", "I speak as a lawyer", "speaking as a parent governor", "and marketing
expert, that's me" (a seat around a table claimed).

Precision first: a title before a name needs the full name (first and last: a
surname alone, "Minister Hajdu", is too weak an entity to store), a title before
"named/called" must parse as a title (parse_title: "a guy named Bob" is none),
and "who chairs/leads" keeps what is chaired as part of the title.
"""

from __future__ import annotations

import re

from backchannel.extraction.mentions.names import (
    CAP,
    NAME,
    STOP,
    TITLE_HEADS,
    looks_like_org,
    parse_title,
    strong_title,
)
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx

# Titles that are used as a form of address before a name.
_TITLE_WORD = (
    r"(?:Prime\s+|Deputy\s+|First\s+)?Minister|Chair(?:man|woman|person)?|Senator|Councillor|Mayor"
    r"|Governor|Commissioner|Judge|Chancellor|President"
)
# The space may be lost in transcription ("MinisterGuilbeault, MinisterMcKenna").
_TITLE_BEFORE_NAME = re.compile(rf"(?<![\w'’-])(?P<t>{_TITLE_WORD})(?:\s+(?P<x>{NAME})|(?P<glued>{CAP}))")
_NAMED = re.compile(
    rf"\b(?:an?|the|our|their)\s+(?P<t>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}})\s+(?:named|called)\s+"
    rf"(?P<x>{NAME})"
)
_WHO_CHAIRS = re.compile(
    rf"(?P<x>{NAME})\s*,\s+who\s+(?:also\s+|currently\s+|now\s+)?(?P<v>chairs|leads|heads)\s+"
    r"(?P<what>(?:the|our|a)\s+[^,.;:!?()]{3,80})"
)
_UM = r"(?:\s+(?:um|uh|er|erm))?"
_MY_ROLE = re.compile(
    rf"\b(?:[Ii]n\s+my{_UM}\s+(?:role|capacity)\s+as|\bI\s+speak\s+as|\b[Ss]peaking\s+as){_UM}\s+"
    r"(?P<t>(?:an?\s+|the\s+)?[\w-]+(?:\s+[\w-]+){0,3})"
)
_ITS_ME = re.compile(
    r"(?:^|[,.;]\s*|\b[Aa]nd\s+)(?P<t>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,3})\s*,\s*"
    r"(?:it['’]s|that['’]s|it\s+is|that\s+is)\s+me\b"
)
_ROLE_OF_VERB = {"chairs": "chair", "leads": "lead", "heads": "head"}

TRIGGERS = (
    "in my",
    "speak as",
    "speaking as",
    "'s me",
    "’s me",
    "is me",
    "minister",
    "chair",
    "senator ",
    "councillor ",
    "mayor ",
    "governor ",
    "commissioner ",
    "judge ",
    "chancellor ",
    "president ",
    " named ",
    " called ",
    "who leads",
    "who heads",
)


def _person(ctx: Ctx, raw: str) -> Mention | None:
    p = ctx.person(raw)
    return None if p is None or looks_like_org(p.name) else p


def rule_named_title(ctx: Ctx) -> None:
    """'Chair Dai Lloyd' / 'a researcher named Pierre Divenyi' / 'Brett Pugh, who chairs the X group',
    and the speaker's own role (rule_my_role)."""
    rule_my_role(ctx)
    for m in _TITLE_BEFORE_NAME.finditer(ctx.text, ctx.s0, ctx.s1):
        if m.group("glued") or len(m.group("x").split()) < 2:
            # "Minister Hajdu": a surname alone is no entity to keep, unless one speaker has it
            who = ctx.by_surname(m.group("glued") or m.group("x"))
        else:
            who = _person(ctx, m.group("x"))
        if who is not None:
            title = " ".join(m.group("t").split())
            ctx.emit(
                "has_title",
                who,
                m.start(),
                m.end(),
                literal=title.lower() if title.startswith("Chair") else title,
                confidence=0.55,
            )
    for m in _NAMED.finditer(ctx.text, ctx.s0, ctx.s1):
        parsed = parse_title(m.group("t"))
        if parsed is None or parsed[2] or not strong_title(parsed[0]):
            continue
        who = _person(ctx, m.group("x"))
        if who is not None:
            ctx.emit("has_title", who, m.start(), m.end(), literal=parsed[1], confidence=0.55)
    for m in _WHO_CHAIRS.finditer(ctx.text, ctx.s0, ctx.s1):
        who = _person(ctx, m.group("x"))
        what = m.group("what").strip()
        if who is not None and len(what.split()) <= 12:
            ctx.emit(
                "has_title",
                who,
                m.start(),
                m.end(),
                literal=f"{_ROLE_OF_VERB[m.group('v')]} of {what}",
                confidence=0.55,
            )


# Seat titles of a project team that are no title heads elsewhere ("an expert" alone is praise).
_TEAM_HEADS = {"expert", "supervisor"}
_PRAISE = {"real", "true", "great", "good", "big", "total", "complete", "huge", "best", "proper", "absolute"}


def _my_title(raw: str) -> str | None:
    """The title in 'a lawyer', 'Project Supervisor and ...': the words up to the title's head."""
    words = raw.split()
    lows = [w.lower() for w in words]
    heads = [i for i, w in enumerate(lows) if w in TITLE_HEADS or w in _TEAM_HEADS]
    if not heads:
        return None
    words, lows = words[: heads[0] + 1], lows[: heads[0] + 1]
    while words and (lows[0] in ("a", "an", "the", "um", "uh") or lows[0] in STOP):
        words, lows = words[1:], lows[1:]  # "and marketing expert, it's me"
    if not words or any(w in _PRAISE for w in lows):
        return None  # "a real expert, that's me" is a boast, not a title
    if lows[-1] in _TEAM_HEADS:  # "marketing expert", "project supervisor": a qualified team seat
        ok = len(words) >= 2 and all(w.isalpha() and w not in STOP for w in lows)
        return " ".join(words) if ok else None
    parsed = parse_title(" ".join(words))
    return parsed[1] if parsed and not parsed[2] and strong_title(parsed[0]) else None


def rule_my_role(ctx: Ctx) -> None:
    """'in my role as treasurer', 'I speak as a lawyer', 'and marketing expert, that's me' -> has_title."""
    me = ctx.me()
    if me is None:
        return
    for rx in (_MY_ROLE, _ITS_ME):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            title = _my_title(m.group("t"))
            if title is not None:
                ctx.emit("has_title", me, m.start("t"), m.end(), literal=title, confidence=0.55)

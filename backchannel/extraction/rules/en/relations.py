"""Offline rules for relations between people and for commitments.

worked_with: "we worked together at Acme from 2016 to 2021", "I worked with
Sophie at Acme", "Sophie and I worked together", "my old colleague Sophie",
"Sophie was my boss at Globex"; knows: "I know Sophie well", "I've known Sophie
for years", "Marc introduced me to Sophie", "Marc knows Sophie", "I met Sophie
at Acme", "my friend Paul", "I met with Sophie last week", "I've spoken to Sophie
about it", "Sophie and I were talking about it". Commitments live in rules/en/commitments.py.
"""

from __future__ import annotations

import re

from backchannel.extraction.mentions.names import FAMILY, NAME, ORG, WORK_TIE, looks_like_org, org_name
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx
from backchannel.memory.text import norm_name

# The other half of "we", when the sentence names nobody (resolved with the whole meeting).
WE_PARTNER = "we_partner"

_ADV = r"(?:(?:also|actually|once|both|really|closely|briefly|previously|even)\s+)*"
_PAST_WORK = r"(?:worked|used\s+to\s+work|(?:have|has|had)\s+worked|['’](?:ve|d)\s+worked|were\s+colleagues)"
_AT = rf"(?:\s+(?:at|in|for|from)\s+(?:the\s+)?(?P<org>{ORG}))?"
# A name that ends its phrase: no possessive, no verb after ("I know Sophie is right" is not knowing Sophie).
_NAME_END = (
    r"(?!\s*['’]s\b)(?=\s*(?:[,.;!?—–-]|$)|\s+(?:well|personally|very|quite|pretty|really|from|since|through|"
    r"for|at|in|on|during|when|while|before|after|back|a\s+bit|a\s+little|and|too|as\s+well|socially|"
    r"professionally|last|years|ages|yesterday|recently|once|twice|a\s+few|about|earlier|this|today|"
    r"the\s+other\s+day)\b)"
)


def _org(ctx: Ctx, m: re.Match) -> str | None:
    raw = m.groupdict().get("org")
    if not raw:
        return None
    org = org_name(raw)
    if org is None or norm_name(org) in ctx.known_people:
        return None
    return org


def other_person(ctx: Ctx, start: int, end: int) -> Mention | None:
    """The one other person 'we' refers to: named in this sentence outside the
    match, else named shortly before in the utterance; None when ambiguous.
    When nobody is named, the meeting decides: `WE_PARTNER`, which the
    transcript-wide pass (addressee.py) resolves to the other person of a
    two-person meeting (or a vocative), or drops."""
    found = [p for p in (ctx.the_one_person(ctx.s0, start), ctx.the_one_person(end, ctx.s1)) if p]
    if len({norm_name(p.name) for p in found}) == 1:
        return found[0]
    if not found:
        lo = max(0, ctx.s0 - 500)
        before = ctx.the_one_person(lo, ctx.s0)
        if before is None or _opens_a_sentence(ctx, before.name, lo, ctx.s0):
            return Mention(name="we", kind=WE_PARTNER)  # "Congratulations. We worked together": nobody named
        return before
    return None


def _opens_a_sentence(ctx: Ctx, name: str, lo: int, hi: int) -> bool:
    """A one-word 'name' unknown to the meeting that opens a sentence ("Congratulations.")."""
    pos = ctx.text.find(name, lo, hi)
    return pos >= 0 and ctx.weak_name(name, pos)


def _worked(ctx: Ctx, a: Mention, b: Mention, m: re.Match, org: str | None, conf: float) -> None:
    dr = ctx.date_for(m.start(), m.end(), past=True)
    ctx.emit(
        "worked_with",
        a,
        m.start(),
        m.end(),
        obj=b,
        qualifier=org,
        dr=dr,
        valid_from=dr.start if dr else None,
        valid_to=dr.end if dr else None,
        confidence=conf,
    )


_WE_TOGETHER = re.compile(rf"\b(?:[Ww]e|[Tt]he\s+two\s+of\s+us)\s+{_ADV}{_PAST_WORK}(?:\s+together)?{_AT}")
_X_AND_I = re.compile(
    rf"(?:(?P<x>{NAME})\s+and\s+I|\bI\s+and\s+(?P<y>{NAME})|\b[Mm]e\s+and\s+(?P<z>{NAME}))\s+{_ADV}{_PAST_WORK}"
    rf"(?:\s+together)?{_AT}"
)
_I_WITH = re.compile(rf"\bI\s*{_ADV}(?:{_PAST_WORK}|work)\s+{_ADV}(?:with|alongside)\s+(?P<x>{NAME}){_NAME_END}{_AT}")
_X_WITH_Y = re.compile(
    rf"(?P<x>{NAME})\s+{_ADV}(?:worked|used\s+to\s+work|(?:has|had)\s+worked)\s+{_ADV}(?:with|alongside)\s+"
    rf"(?P<y>{NAME}){_NAME_END}{_AT}"
)
_MY_COLLEAGUE = re.compile(
    rf"(?P<x>{NAME})(?:\s*,[^,;.]{{1,80}},)?\s+(?:was|is|['’]s)\s+(?:my\s+(?:former\s+|old\s+|ex-?\s*|previous\s+)?"
    rf"{WORK_TIE}|an?\s+(?:former|old|ex-?|previous)\s*{WORK_TIE}\s+of\s+mine){_AT}"
)


_TIE_ADJ = r"(?:former\s+|old\s+|ex-?\s*|previous\s+|good\s+|close\s+|dear\s+|best\s+)?"
# "my old colleague Sophie Martin", "my friend Paul"; "Sophie Martin, my former boss at Globex"
# Family and household: "my cousin Mark Ellis", "my sister Ana" know each other.
# A work tie may say where before the name: "My manager at Deliveroo, Tom Fielding".
_TIE_AT = rf"(?:\s+(?:at|from)\s+(?:the\s+)?(?P<tie_org>{ORG})\s*,)?"
_MY_TIE_X = re.compile(
    rf"\b[Mm]y\s+{_TIE_ADJ}(?P<tie>{WORK_TIE}|friend|{FAMILY}){_TIE_AT}\s*,?\s+(?P<x>{NAME})(?!\s*['’]s\b){_AT}"
)
_X_MY_TIE = re.compile(
    rf"(?P<x>{NAME})\s*,\s*(?:who\s+was\s+|who['’]s\s+)?my\s+{_TIE_ADJ}(?P<tie>{WORK_TIE}|friend)\b{_AT}"
)


def rule_my_ties(ctx: Ctx) -> None:
    """'my old colleague Sophie Martin' -> worked_with; 'my friend Paul' -> knows."""
    me = ctx.me()
    if me is None:
        return
    for rx in (_MY_TIE_X, _X_MY_TIE):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            other = ctx.person(m.group("x"))
            if (
                other is None
                or looks_like_org(other.name)
                or (rx is _X_MY_TIE and ctx.weak_name(other.name, m.start("x")))
            ):
                continue
            tie = m.group("tie").lower()
            if tie == "friend" or re.fullmatch(FAMILY, tie):
                ctx.emit("knows", me, m.start(), m.end(), obj=other, confidence=0.65)
            else:
                tie_org = org_name(m.groupdict().get("tie_org") or "")
                _worked(ctx, me, other, m, tie_org or _org(ctx, m), 0.65)


def rule_worked_with(ctx: Ctx) -> None:
    me = ctx.me()
    for m in _WE_TOGETHER.finditer(ctx.text, ctx.s0, ctx.s1):
        if me is None or "together" not in m.group(0) and "colleagues" not in m.group(0):
            continue
        other = other_person(ctx, m.start(), m.end())
        if other and not other.is_speaker:
            _worked(ctx, me, other, m, _org(ctx, m), 0.65)
    for m in _X_AND_I.finditer(ctx.text, ctx.s0, ctx.s1):
        other = ctx.person(m.group("x") or m.group("y") or m.group("z"))
        if me and other:
            org = _org(ctx, m)
            _worked(ctx, me, other, m, org, 0.7 if org or "together" in m.group(0) else 0.55)
    for m in _I_WITH.finditer(ctx.text, ctx.s0, ctx.s1):
        other = ctx.person(m.group("x"))
        if me and other and not looks_like_org(other.name):
            _worked(ctx, me, other, m, _org(ctx, m), 0.7)
    for m in _X_WITH_Y.finditer(ctx.text, ctx.s0, ctx.s1):
        a, b = ctx.person(m.group("x")), ctx.person(m.group("y"))
        if a and b and not looks_like_org(b.name):
            _worked(ctx, a, b, m, _org(ctx, m), 0.6)
    for m in _MY_COLLEAGUE.finditer(ctx.text, ctx.s0, ctx.s1):
        other = ctx.person(m.group("x"))
        if me and other:
            _worked(ctx, me, other, m, _org(ctx, m), 0.65)


_AND_X2 = rf"(?:\s*,?\s+and\s+(?P<x2>{NAME}){_NAME_END})?"
_I_KNOW = re.compile(
    rf"\bI\s+(?:really\s+|do\s+|also\s+|actually\s+|personally\s+)?(?:know|knew)\s+(?P<x>{NAME}){_NAME_END}{_AND_X2}"
)
_KNOWN = re.compile(
    rf"(?:\bI\s?(?:['’]ve|\s+have|\s+had|['’]d)|(?P<s>{NAME})\s+(?:has|had|['’]s))\s+known\s+(?P<x>{NAME})"
    rf"{_NAME_END}{_AND_X2}"
)
_X_KNOWS = re.compile(rf"(?P<s>{NAME})\s+(?:really\s+|also\s+)?knows\s+(?P<x>{NAME}){_NAME_END}{_AND_X2}")
_MET = re.compile(rf"\bI\s+(?:first\s+|once\s+)?met\s+(?P<x>{NAME}){_NAME_END}{_AND_X2}")
# A conversation the speaker had with someone (real meetings say "I met with the
# Minister", "I've spoken with Matt Jukes about this" far more than "I know X").
_SPOKE_WITH = re.compile(
    rf"\bI\s?(?:['’]ve\s+|\s+have\s+|\s+had\s+|\s+also\s+|\s+just\s+|\s+recently\s+)*(?:seen\s+and\s+)?"
    rf"(?:met|spoken|spoke|talked|chatted)\s+(?:with|to)\s+(?P<x>{NAME}){_NAME_END}{_AND_X2}"
)
_X_AND_I_TALKED = re.compile(
    rf"(?P<x>{NAME})\s+and\s+I\s+(?:were|have\s+been|had\s+been|['’]ve\s+been)\s+(?:just\s+|already\s+)?"
    r"(?:talking|chatting|speaking)\b"
)
_FRIEND = re.compile(
    rf"(?P<x>{NAME})\s+(?:is|was|['’]s)\s+(?:a\s+(?:good\s+|old\s+|close\s+|dear\s+)?friend\s+of\s+mine|"
    r"my\s+(?:good\s+|old\s+|close\s+|best\s+)?friend)\b"
)
_INTRODUCED = re.compile(
    rf"(?:(?P<s>{NAME})|\b(?P<i>I))\s+(?:(?:has|had)\s+|['’]d\s+|kindly\s+)?introduced\s+"
    rf"(?:(?P<me>me|us)|(?P<a>{NAME}))\s+to\s+(?:(?P<me2>me|us)|(?P<b>{NAME}){_NAME_END})"
)


# Word from someone: "I get this email about midnight from Andreas", "we've been taking advice from
# Brett Pugh" (a message or advice received is contact, not just a name in the room).
_HEARD_FROM = re.compile(
    r"\b(?:I|[Ww]e)(?:\s?['’]ve|\s+have|\s+had|\s?['’]d)?(?:\s+(?:just|also|recently|been|actually))*\s+"
    r"(?:get|got|gotten|received|receive|had|have|taking|taken|took|sought|seeking|getting)\s+"
    r"(?:(?:an?|this|the|some|that|one|two|several)\s+)?"
    r"(?:(?:e-?mail|message|letter|note|text|voicemail|advice)s?)\b"
    rf"(?:\s+[\w'’-]+){{0,4}}?\s+from\s+(?P<x>{NAME})(?![\w'’-])"
    r"(?=\s*(?:[,.;!?—–-]|$)|\s+(?:saying|asking|telling|about|on|who|and|that|to|yesterday|today|last|this"
    r"|earlier)\b)"
)
# Greetings sent through someone: "say hello to Jonas Berg from me", "give Ana Ruiz my best".
_GREETINGS_TO = re.compile(
    rf"\b(?:[Ss]ay\s+(?:hello|hi)\s+to\s+(?P<x>{NAME})\s+from\s+me"
    rf"|(?:[Gg]ive|[Ss]end)\s+(?P<y>{NAME})\s+my\s+(?:best|regards|love|greetings|best\s+wishes))\b"
)
_NOT_BEFORE = re.compile(r"\b(?:not|never|no|if|whether|maybe|might)\b|n['’]t\b", re.I)


def _listed(ctx: Ctx, m: re.Match) -> list[Mention]:
    """The person named in group x, and the one in x2 ("Monica and Chandler") if any."""
    names = [m.group("x")] + ([m.group("x2")] if m.groupdict().get("x2") else [])
    return [p for p in (ctx.person(n) for n in names) if p is not None]


def rule_knows(ctx: Ctx) -> None:
    me = ctx.me()
    t0, t1 = ctx.s0, ctx.s1
    for rx, conf in ((_I_KNOW, 0.65), (_MET, 0.6), (_FRIEND, 0.65), (_SPOKE_WITH, 0.55), (_X_AND_I_TALKED, 0.55)):
        for m in rx.finditer(ctx.text, t0, t1):
            for other in _listed(ctx, m):
                if rx in (_SPOKE_WITH, _X_AND_I_TALKED) and len(other.name.split()) < 2:
                    continue  # "I talked to Liz": a first name alone is too thin an acquaintance to keep
                if me:
                    dr = ctx.date_for(m.start(), m.end(), near=30, past=True)
                    ctx.emit(
                        "knows",
                        me,
                        m.start(),
                        m.end(),
                        obj=other,
                        dr=dr,
                        valid_from=dr.start if dr else None,
                        confidence=conf,
                    )
    for m in _HEARD_FROM.finditer(ctx.text, t0, t1):
        heard = ctx.person(m.group("x"))
        # a first name alone is too thin an acquaintance to keep (as for "I talked to Liz")
        if me is None or heard is None or len(heard.name.split()) < 2 or looks_like_org(heard.name):
            continue
        if not _NOT_BEFORE.search(ctx.text, ctx.clause_start_at(m.start()), m.start("x")):
            ctx.emit("knows", me, m.start(), m.end(), obj=heard, confidence=0.5)
    for m in _GREETINGS_TO.finditer(ctx.text, t0, t1):
        greeted = ctx.person(m.group("x") or m.group("y"))
        if me and greeted is not None and not looks_like_org(greeted.name):
            ctx.emit("knows", me, m.start(), m.end(), obj=greeted, confidence=0.6)
    for rx in (_KNOWN, _X_KNOWS):
        for m in rx.finditer(ctx.text, t0, t1):
            subj = ctx.person(m.group("s")) if m.group("s") else me
            for other in _listed(ctx, m):
                if subj:
                    dr = ctx.date_for(m.start(), m.end(), near=30, past=True)
                    ctx.emit(
                        "knows",
                        subj,
                        m.start(),
                        m.end(),
                        obj=other,
                        dr=dr,
                        valid_from=dr.start if dr else None,
                        confidence=0.65,
                    )
    for m in _INTRODUCED.finditer(ctx.text, t0, t1):
        intro = me if m.group("i") else ctx.person(m.group("s"))
        a = me if m.group("me") else (ctx.person(m.group("a")) if m.group("a") else None)
        b = me if m.group("me2") else (ctx.person(m.group("b")) if m.group("b") else None)
        if not (intro and a and b):
            continue
        span = (m.start(), m.end())
        ctx.emit("knows", a, *span, obj=b, confidence=0.65)
        ctx.emit("knows", intro, *span, obj=b, confidence=0.6)
        ctx.emit("introduced", intro, *span, obj=b, confidence=0.65)

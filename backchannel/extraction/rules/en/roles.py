"""Offline rules for roles and employment: titles, works_at, left, witness lists,
self-introductions.

"Sophie Martin is the CIO of Acme", "Sophie Martin, the CTO at Acme,", "Marc
joined Acme in 2019", "Marc left Acme last year", a chair's "I'm pleased to
welcome X, chief executive of Y; Z, who is head of W, V Council", and "I'm
Sarah, the project manager" / "My name is X and I'm the Y at Z".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from backchannel.extraction.dates.en import DateRange
from backchannel.extraction.mentions.names import (
    NAME,
    ORG,
    ORG_HEADS,
    ORG_RX,
    TITLE_HEADS,
    looks_like_org,
    org_name,
    parse_title,
    person_name,
    strong_title,
)
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx
from backchannel.memory.text import norm_name

_TOK = re.compile(r"[^\s,;:]+|,")
_ADV = r"(?:(?:now|currently|still|also|actually|already|recently|just|really|then)\s+)*"


@dataclass
class Role:
    title: str | None  # surface
    canon: str | None
    former: bool
    org: str | None
    end: int  # absolute offset just past the title/org


# (start, end, text) of a word or punctuation mark, offsets absolute
Token = tuple[int, int, str]
# (surface, canonical title, former, tokens used) of a title read off tokens
TitleParse = tuple[str, str, bool, int]


def title_org(
    text: str, pos: int, end: int, *, lenient: bool = False, known_people: frozenset[str] = frozenset()
) -> Role | None:
    """Parse '[the] TITLE [at|of|with|,] [ORG]' starting at `pos` (absolute), up to `end`.

    The organisation follows 'at' (preferred), the last 'of'/'with' before the
    first comma, or a comma (a witness list: 'head of learning, Torfaen Council').
    Without `lenient`, a comma only introduces an unmistakable organisation."""
    end = min(end, pos + 400)  # a title and its organisation never run longer
    toks = [(m.start(), m.end(), m.group(0)) for m in _TOK.finditer(text, pos, end)]
    if not toks:
        return None
    comma_i = next((i for i, t in enumerate(toks) if t[2] == ","), len(toks))
    intro: tuple[int, int] | None = None
    for i in range(comma_i):
        w = toks[i][2]
        if w in ("at", "of", "with") and i + 1 < comma_i:
            j = i + 1 + (toks[i + 1][2] in ("the", "The") and i + 2 < comma_i)
            if toks[j][2][:1].isupper():
                intro = (i, j)
                if w == "at":
                    break
    comma_org = False
    if intro is None and comma_i + 1 < len(toks):
        j = comma_i + 1 + (toks[comma_i + 1][2] in ("the", "The") and comma_i + 2 < len(toks))
        if toks[j][2][:1].isupper():
            intro, comma_org = (comma_i, j), True
    title_end_i = intro[0] if intro else comma_i
    title = _title(toks, title_end_i, allow_prefix=intro is None or comma_org)
    if title is None and not (intro and intro[0] == 0 and toks[0][2] == "at"):
        return None
    if title is not None and comma_org and title[3] < title_end_i:
        intro, comma_org = None, False  # the title stopped early: the comma is not ours
    if intro is None:
        assert title is not None  # without an intro, a missing title returned None above
        surface, canon, former, _ = title
        return Role(surface, canon, former, None, _title_end(toks, title))
    org, org_end = _org_at(text, toks[intro[1]][0], end, lenient=lenient)
    if org and text.startswith(("'s", "’s"), org_end):
        org = None  # "founder of Wendy's" / "head of Marc's team": not the name we saw
    if org is None or norm_name(org) in known_people or (comma_org and not lenient and not looks_like_org(org)):
        if title is None:
            return None
        surface, canon, former, _ = title
        if comma_org and not (toks[comma_i + 1][2] in ("I", "I'm", "I’m") and title[3] == comma_i):
            return None
        return Role(surface, canon, former, None, _title_end(toks, title))  # "a senior engineer, I mostly ..."
    if title is None:
        return Role(None, None, False, org, org_end)
    return Role(title[0], title[1], title[2], org, org_end)


def _title(toks: list[Token], stop_i: int, *, allow_prefix: bool) -> TitleParse | None:
    """(surface, canon, former, n_tokens) for tokens [0, stop_i), or the longest
    prefix ending at a title head ('the Project Manager and this is ...')."""
    words = [t[2] for t in toks[:stop_i]]
    if not words:
        return None
    got = parse_title(" ".join(words))
    if got:
        return (*got, stop_i)
    if not allow_prefix:
        return None
    for k in range(min(len(words), 8), 0, -1):
        if words[k - 1].lower() in TITLE_HEADS:
            got = parse_title(" ".join(words[:k]))
            if got:
                return (*got, k)
    return None


def _title_end(toks: list[Token], title: TitleParse) -> int:
    return toks[title[3] - 1][1]


_ORG_BOUND = re.compile(r"[,;:]|\s+(?:and\s+)?(?:also\s+)?representing\b")


def _org_at(text: str, start: int, end: int, *, lenient: bool) -> tuple[str | None, int]:
    if lenient:  # a bounded clause: "Swansea city and county council" is one organisation
        b = _ORG_BOUND.search(text, start, end)
        seg = text[start : b.start() if b else end].rstrip(" .")
        org = org_name(seg, lenient=True)
        if org and seg.split()[-1].lower() in ORG_HEADS:
            return org, start + len(seg)
    m = ORG_RX.match(text, start, end)
    org = org_name(m.group(0)) if m else None
    if org is None:
        return None, start
    at = text.find(org, start, end)
    return org, (at + len(org)) if at >= 0 else start


# ---------------------------------------------------------------- emission


def _validity(dr: DateRange | None, past: bool, started: bool = False) -> tuple[date | None, date | None]:
    """(valid_from, valid_to) a date phrase gives a role. Past tense: the whole range.
    Present tense: only an open end ("since 2019" -> from; "until June" -> to); a
    point ("yesterday", "in 2019") dates the saying, not the start or end of the job."""
    if dr is None:
        return None, None
    if started:  # "became CIO last year": the role starts then
        return dr.start, None
    if past:
        return dr.start, dr.end
    return (dr.start if dr.end is None else None), (dr.end if dr.start is None else None)


def _emit_role(
    ctx: Ctx,
    subj: Mention,
    role: Role,
    start: int,
    *,
    past: bool = False,
    started: bool = False,
    confidence: float = 0.7,
    quote_span: tuple[int, int] | None = None,
    strict: bool = True,
) -> None:
    dr = ctx.date_for(start, role.end, past=past or started or role.former)
    if role.org:
        org = Mention(role.org, "organisation")
        qual = role.canon
        if role.former or (past and not (dr and dr.end)):
            ctx.emit(
                "left",
                subj,
                start,
                role.end,
                obj=org,
                qualifier=qual,
                dr=dr,
                valid_to=dr.point if dr else None,
                confidence=confidence - 0.1,
                quote_span=quote_span,
            )
        else:
            vf, vt = _validity(dr, past, started)
            ctx.emit(
                "works_at",
                subj,
                start,
                role.end,
                obj=org,
                qualifier=qual,
                dr=dr,
                valid_from=vf,
                valid_to=vt,
                confidence=confidence,
                quote_span=quote_span,
            )
    elif role.title and not role.former and not past and (not strict or strong_title(role.title)):
        ctx.emit(
            "has_title", subj, start, role.end, literal=role.canon, confidence=confidence - 0.1, quote_span=quote_span
        )


_SUBJ = rf"(?P<subj>{NAME}|\bI\b|\b[Ss]he\b|\b[Hh]e\b)"
# Verbs that start a role: "became CIO of Acme", "was appointed CIO", "has been named CTO at".
_BECAME = (
    r"(?:became|(?:has|have|['’]s|['’]ve)\s+become|(?:was|were|(?:has|have|['’]s)\s+(?:just\s+|recently\s+|now\s+)?been|just\s+been)"
    r"\s+(?:appointed|named|made|promoted\s+to|hired\s+as|elected)(?:\s+as)?|took\s+over\s+as|"
    r"(?:has|['’]s)\s+taken\s+over\s+as|stepped\s+up\s+as|started\s+as)\b"
)
_COPULA = re.compile(
    rf"{_SUBJ}(?:\s*,\s*who)?(?P<cop>\s?['’]m\b|\s?['’]s(?=\s+(?:the|a|an|our|their|now|currently|still|also|just|"
    rf"actually|recently|already)\b)|\s+{_ADV}(?P<start>{_BECAME})|\s+(?:is|am|was|has\s+been|have\s+been)\b"
    rf"|\s?['’]ve\s+been\b)\s+{_ADV}"
)


def _subject(ctx: Ctx, raw: str, pos: int) -> Mention | None:
    if raw.split()[-1] == "I":
        raw = "I"  # "And I joined ...", "Before Acme I worked ...": the name pattern took the word before
    if raw == "I":
        return ctx.me()
    if raw.lower() in ("she", "he"):
        return ctx.antecedent(pos)
    return ctx.person(raw)


_MY_TIE = re.compile(
    r"\s*(?:my|our)\s+(?:first\s+|old\s+|former\s+|direct\s+)?(?:\w+\s+)?(?:manager|boss|lead|"
    r"supervisor|mentor|director|head|colleague|editor)\b",
    re.I,
)


def rule_copula(ctx: Ctx) -> None:
    """'Sophie Martin is the CIO of Acme', 'Sophie is now CIO at Acme', 'I'm the CTO at Acme'."""
    for m in _COPULA.finditer(ctx.text, ctx.s0, ctx.s1):
        subj = _subject(ctx, m.group("subj"), m.start())
        if subj is None:
            continue
        cop = m.group("cop").strip().lower()
        clause_end = ctx.clause_end_at(m.end())
        role = title_org(ctx.text, m.end(), clause_end, known_people=ctx.known_people)
        if role is None:
            continue
        after = ctx.text[role.end : clause_end] if cop in _PRESENT else ""
        if role.title is None and not _org_is_employer(m.group(0), role.org, after, of_speaker=subj.is_speaker):
            continue
        past = cop == "was"
        started = m.group("start") is not None
        pronoun = m.group("subj").lower() in ("she", "he")
        if pronoun and role.org is None:
            continue  # "he's a teacher": too weak a link for a title alone
        if past and role.org and _MY_TIE.match(ctx.text, m.end()):
            # "she was my first manager at DHL": a tie that ended, not a job (she may still be there)
            me = ctx.me()
            if me is not None and not subj.is_speaker:
                dr = ctx.date_for(m.start(), role.end, past=True)
                ctx.emit(
                    "worked_with",
                    me,
                    m.start(),
                    role.end,
                    obj=subj,
                    qualifier=role.org,
                    dr=dr,
                    valid_from=dr.start if dr else None,
                    valid_to=dr.end if dr else None,
                    confidence=0.6,
                )
            continue
        _emit_role(
            ctx,
            subj,
            role,
            m.start(),
            past=past,
            started=started,
            confidence=0.7 if subj.is_speaker else 0.5 if pronoun else 0.65,
        )


def _org_is_employer(head: str, org: str | None, after: str = "", *, of_speaker: bool = False) -> bool:
    """'is at X' is employment only with 'now/currently/still' or an unmistakable organisation.
    The adverb may follow the organisation ('Sophie Martin is at Acme now', as offline_people
    reads "she's at Spotify now"); said of oneself that is as often where one stands ("I'm at
    Heathrow now, running late"), so the speaker must also say what they do there ("I'm at
    Orbital Freight now, running operations")."""
    if not org:
        return False
    if looks_like_org(org) or re.search(r"\b(?:now|currently|still)\s*$", head):
        return True
    now = _NOW_AFTER.match(after)
    return now is not None and (not of_speaker or _DOING_THERE.match(after, now.end()) is not None)


_PRESENT = {"is", "am", "'m", "’m", "'s", "’s"}
_NOW_AFTER = re.compile(r"\s+(?:now|currently|still)\b(?!\s+and\b)")  # not "now and then"
# A job said after the organisation: a verb of running something, or 'in', then a business function
# or a unit ("running operations", "leading the data team", "in finance", "heading up sales").
_FUNCTION = (
    r"operations|sales|marketing|finance|engineering|product|research|development|policy|procurement|"
    r"legal|communications|strategy|design|support|logistics|data|hr|it|team|group|department|division|"
    r"unit|desk|office|lab|programme|program|practice|business"
)
_DOING_THERE = re.compile(
    rf"\s*,?\s*(?:running|leading|heading(?:\s+up)?|managing|in\s+charge\s+of|working\s+in|in)"
    rf"\s+(?:the\s+|our\s+|their\s+|its\s+)?(?:[\w-]+\s+){{0,3}}?(?:{_FUNCTION})\b",
    re.I,
)


_APPOS = re.compile(rf"(?P<name>{NAME})\s*,\s*(?:who\s+is\s+|who['’]s\s+)?(?=\S)")
_APPOS_END = re.compile(r"\s*(?:$|[,;:.!?)—–-]|(?:and|who|said|says|told|will|was|is|has|had|joined|left)\b)")
_FIRST_PERSON = re.compile(r"I\b|I['’]")
_TAIL_ROLE = re.compile(r"\s*,?\s*and\s+(?:also\s+)?(?:the\s+)?(?=[a-z])")
_TAIL_REP = re.compile(rf"\s*,?\s*(?:and\s+)?(?:also\s+)?representing\s+(?:the\s+)?(?P<org>{ORG})")


def rule_appositive(ctx: Ctx, *, lenient: bool = False) -> None:
    """'Sophie Martin, the CTO at Acme, ...'; in a witness list (`lenient`), also
    'Sharon Davies, head of learning, Torfaen County Borough Council and representing ...'."""
    consumed = ctx.s0
    for m in _APPOS.finditer(ctx.text, ctx.s0, ctx.s1):
        if m.start() < consumed:
            continue  # inside the previous witness's titles ("chair, ColegauCymru, and ...")
        subj = ctx.person(m.group("name"))
        if subj is None or (not lenient and ctx.weak_name(subj.name, m.start("name"))):
            continue  # "Look, the CEO of Acme ...": a lone first word is no name
        if _FIRST_PERSON.match(ctx.text, m.end()):
            continue  # "Lucy Brennan, I'm the operations director": a first-person clause, no apposition
        clause_end = ctx.clause_end_at(m.end())
        role = title_org(ctx.text, m.end(), clause_end, lenient=lenient, known_people=ctx.known_people)
        if role is None or role.title is None:
            continue
        if not lenient and (role.org is None or not _APPOS_END.match(ctx.text, role.end)):
            continue  # "Marc, director, ..." is often a vocative; "Honestly, the CEO of Acme is ..." no apposition
        start = m.start()
        conf = 0.75 if lenient else 0.65
        _emit_role(ctx, subj, role, start, confidence=conf, strict=not lenient)
        pos = role.end
        while lenient and pos < clause_end:
            t = _TAIL_ROLE.match(ctx.text, pos, clause_end)
            if t:
                more = title_org(ctx.text, t.end(), clause_end, lenient=True, known_people=ctx.known_people)
                if more and more.title and more.end > pos:
                    _emit_role(
                        ctx,
                        subj,
                        more,
                        start,
                        confidence=conf,
                        quote_span=ctx.quote_span(start, more.end),
                        strict=False,
                    )
                    pos = more.end
                    continue
            r = _TAIL_REP.match(ctx.text, pos, clause_end)
            if r:
                org = org_name(r.group("org"))
                if org:
                    ctx.emit(
                        "mentioned_with",
                        subj,
                        start,
                        r.end(),
                        obj=Mention(org, "organisation"),
                        qualifier="representing",
                        confidence=0.45,
                    )
                pos = r.end()
                continue
            break
        consumed = pos


# ---------------------------------------------------------------- employment verbs

_EMPLOY = re.compile(
    rf"{_SUBJ}(?:\s*,\s*who)?\s+{_ADV}(?P<verb>"
    r"(?:works|work|worked|used\s+to\s+work|had\s+worked|(?:is|am|was)\s+working|['’]m\s+working"
    r"|(?:has|have)\s+been\s+working|['’]ve\s+been\s+working)\s+(?:at|for)"
    r"|(?:has\s+|have\s+|['’]ve\s+|had\s+)?(?:joined|left|quit)|moved\s+to|retired\s+from|resigned\s+from|started\s+at"
    r"|(?:has|have)\s+been\s+at|['’]ve\s+been\s+at"
    rf")\s+(?:the\s+)?(?P<org>{ORG})"
)


_FOLLOW_OK = re.compile(
    r"\s*(?:$|[,.;:!?)\]—–-]|(?:in|at|last|this|next|to|and|after|before|since|for|when|because|recently|back|"
    r"earlier|years?|months?|weeks?|ago|so|but|as|on|with|from|until|till|about|around|over|now|then|where|which|"
    r"who|yesterday|today|a|an|or|by|during|full-time|part-time|permanently|originally|straight|right|\d+|one|two|"
    r"three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|just|already|too|as\s+well|though|anyway|"
    r"still)\b)"
)
_THEN_JOIN = re.compile(rf"\s+(?:to\s+join|and\s+joined|and\s+(?:moved|went)\s+to|for)\s+(?:the\s+)?(?P<org>{ORG})")
_NOT_EMPLOYERS = {"zoom", "teams", "skype", "webex", "slack", "meet", "hangouts", "facetime"}


def rule_employ(ctx: Ctx) -> None:
    """'Marc works at Acme', 'Sophie joined Acme in 2019', 'I left Acme last year',
    'Sophie used to work for Acme', 'I've been at Acme since 2019'."""
    matches = list(_EMPLOY.finditer(ctx.text, ctx.s0, ctx.s1))
    for k, m in enumerate(matches):
        limit = matches[k + 1].start() if k + 1 < len(matches) else None
        subj = _subject(ctx, m.group("subj"), m.start())
        org = org_name(m.group("org"))
        if subj is None or org is None or norm_name(org) in ctx.known_people:
            continue
        if not _FOLLOW_OK.match(ctx.text, m.end()) or org.split()[0].lower() in _NOT_EMPLOYERS:
            continue  # "when Ross left Mark came over", "joined Marc's team", "joined Zoom"
        if person_name(org) and norm_name(org) in ctx.known_people:
            continue
        verb = " ".join(m.group("verb").split()).lower().replace("’", "'")
        o = Mention(org, "organisation")
        happened = any(
            v in verb
            for v in ("left", "quit", "retired", "resigned", "joined", "worked", "used to", "moved", "started")
        )
        dr = ctx.date_for(m.start(), m.end(), limit=limit, past=happened)
        conf = 0.7 if subj.is_speaker else 0.5 if m.group("subj").lower() in ("she", "he") else 0.65
        if any(v in verb for v in ("left", "quit", "retired", "resigned")):
            ctx.emit("left", subj, m.start(), m.end(), obj=o, dr=dr, valid_to=dr.point if dr else None, confidence=conf)
            after = next((b for a, b, _p in ctx.dates() if m.end() <= a <= m.end() + 1), m.end())
            nxt = _THEN_JOIN.match(ctx.text, after)
            new = org_name(nxt.group("org")) if nxt else None
            if new and nxt and _FOLLOW_OK.match(ctx.text, nxt.end()):
                ctx.emit(
                    "works_at",
                    subj,
                    m.start(),
                    nxt.end(),
                    obj=Mention(new, "organisation"),
                    dr=dr,
                    valid_from=dr.start if dr else None,
                    confidence=conf,
                )
        elif verb.startswith(("worked", "used to", "had worked")) or verb.startswith("was working"):
            if dr and dr.end:
                ctx.emit(
                    "works_at",
                    subj,
                    m.start(),
                    m.end(),
                    obj=o,
                    dr=dr,
                    valid_from=dr.start,
                    valid_to=dr.end,
                    confidence=conf,
                )
            else:
                ctx.emit("left", subj, m.start(), m.end(), obj=o, dr=dr, valid_to=None, confidence=conf - 0.1)
        else:
            ctx.emit(
                "works_at", subj, m.start(), m.end(), obj=o, dr=dr, valid_from=dr.start if dr else None, confidence=conf
            )


# ---------------------------------------------------------------- self-introductions

_SELF = re.compile(
    rf"(?:\bI\s?['’]m|\bI\s+am|\b[Mm]y\s+name\s+is|\b[Mm]y\s+name['’]s|\b[Tt]his\s+is)\s+(?P<name>{NAME})"
    r"(?P<after>\s*(?:[,.;!?]|$|\s+(?:and|from|with|here|speaking|the|by)\b))"
)
_SELF_TAIL = re.compile(r"\s*,?\s*(?:and\s+)?(?:I\s?['’]m\s+|I\s+am\s+)?(?:also\s+)?")
_FROM = re.compile(rf"\s*,?\s+(?:from|with)\s+(?:the\s+)?(?P<org>{ORG})")


def self_intro_name(ctx: Ctx) -> tuple[str, re.Match] | None:
    """The name the speaker gives themself in this sentence, if any."""
    if not ctx.speaker:
        return None
    for m in _SELF.finditer(ctx.text, ctx.s0, ctx.s1):
        head = m.group(0)[: m.start("name") - m.start()].lower()
        after = m.group("after").strip().lower()
        if head.startswith("this is") and after not in ("here", "speaking", "from"):
            continue  # "this is Acme's plan": only the phone-style "this is Marc speaking"
        name = person_name(m.group("name"))
        if name and len(name) <= 40:
            return name, m
    return None


def rule_self_intro(ctx: Ctx) -> None:
    """'I'm Sarah, the project manager', 'My name is X and I'm the Y at Z', 'Hi, I'm X from Y'."""
    got = self_intro_name(ctx)
    me = ctx.me()
    if got is None or me is None:  # (no speaker: no name either)
        return
    _name, m = got
    clause_end = ctx.clause_end_at(m.end("name"))
    f = _FROM.match(ctx.text, m.end("name"), clause_end)
    if f:
        org = org_name(f.group("org"))
        if org and norm_name(org) not in ctx.known_people:
            ctx.emit("works_at", me, m.start(), f.end(), obj=Mention(org, "organisation"), confidence=0.55)
        return
    t = _SELF_TAIL.match(ctx.text, m.end("name"), clause_end)
    if t and t.end() > m.end("name"):
        role = title_org(ctx.text, t.end(), clause_end, known_people=ctx.known_people)
        if role and role.title:
            _emit_role(ctx, me, role, m.start(), confidence=0.7)

"""Offline rules for how people are presented in passing: "X from Y", "our CTO, X",
"X, our head of data", "Kenji joined from Snowflake", "she's at Spotify now", and
introductions around a table ("Ben Kowalski. I'm a senior engineer").

Precision first: "X from Y" needs an unmistakable organisation unless X is the
speaker introducing themself ("Stefan Novak from Parcelio"); a title given by a
possessive ("our", "my", "their") must be a strong title and the name a full name
or a known person; "our" adds works_at only when the speaker's own organisation is
known from this meeting and unique (`our_people`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.labels import is_seat_label, label_person
from backchannel.extraction.mentions.names import (
    NAME,
    NAME_RX,
    ORG,
    ORG_HEADS,
    STOP,
    TITLE_HEADS,
    looks_like_org,
    org_name,
    parse_title,
    person_name,
    same_person,
    strong_title,
)
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.core import Ctx, sentences
from backchannel.memory.text import norm_name

_END = r"(?=\s*(?:[,.;:!?)\]—–]|$|\s+(?:who|will|is|was|has|had|said|says|asked|and|to|for|here|would|can)\b))"

# ---------------------------------------------------------------- "X from Y"

_FROM_ORG = re.compile(
    rf"(?P<name>{NAME})\s*,?\s+from\s+(?:the\s+)?(?P<org>{ORG})"
    rf"(?=\s*(?:[,.;:!?)]|$|\s+(?:and|who|is|was|will|has|here|joined|I)\b))"
)


def asks_name(text: str) -> bool:
    """An utterance that asks someone for their name ("And what's your name?")."""
    return text.rstrip().endswith("?") and _ASKS_NAME.search(text) is not None


def rule_from_org(ctx: Ctx) -> None:
    """'Priya Raman from Northwind Analytics', 'our auditor Claire Dubois from KPMG'."""
    for m in _FROM_ORG.finditer(ctx.text, ctx.s0, ctx.s1):
        subj = ctx.person(m.group("name"))
        org = org_name(m.group("org"))
        if subj is None or org is None or norm_name(org) in ctx.known_people:
            continue
        before = ctx.text[max(ctx.s0, m.start() - 20) : m.start()].lower()
        if re.search(
            r"\b(?:questions?|apologies|absence|letter|email|call|message|note|hello|hi|greetings)\s+"
            r"(?:now\s+)?(?:for\s+absence\s+)?$",
            before,
        ):
            continue  # "questions now from Dawn Bowden" is who asks, not where they work
        if not (subj.is_speaker or looks_like_org(org)):
            continue  # "John Smith from Texas": a place is no employer
        if not subj.is_speaker and " " not in subj.name and norm_name(subj.name) not in ctx.known_people:
            continue
        ctx.emit("works_at", subj, m.start(), m.end(), obj=Mention(org, "organisation"), confidence=0.55)


# ---------------------------------------------------------------- joined from, 's at

_SUBJ = rf"(?P<subj>{NAME}|\bI\b|\b[Ss]he\b|\b[Hh]e\b)"
_JOINED_FROM = re.compile(
    rf"{_SUBJ}(?:\s*,\s*who)?\s+(?:(?:just|recently|only|actually)\s+)*(?:joined(?:\s+us)?|came(?:\s+over)?"
    rf"|moved(?:\s+over)?|(?:has|have|['’]ve)\s+(?:just\s+)?(?:joined|come(?:\s+over)?))(?:\s+here)?\s+from\s+"
    rf"(?:the\s+)?(?P<org>{ORG})"
)
_USED_TO_BE = re.compile(rf"{_SUBJ}\s+used\s+to\s+be\s+(?:at|with)\s+(?:the\s+)?(?P<org>{ORG})")
_SPENT_AT = re.compile(
    rf"{_SUBJ}\s+spent\s+(?:(?:\w+|\d+)\s+){{1,3}}?(?:years?|months?)\s+(?:at|with)\s+(?:the\s+)?"
    rf"(?P<org>{ORG})"
)
_TEACHING_AT = re.compile(
    rf"{_SUBJ}\s?(?:['’]s|\s+is|['’]m|\s+am)\s+(?:now\s+|still\s+|currently\s+)?"
    rf"(?:teaching|lecturing|nursing|consulting)\s+at\s+(?:the\s+)?(?P<org>{ORG})"
)
_CALLING = re.compile(
    rf"\b(?:[Tt]hank\s+you|[Tt]hanks)\s+for\s+calling\s+(?:the\s+)?(?P<org>{ORG})"
    rf"|\b[Yy]ou['’]ve\s+reached\s+(?:the\s+)?(?P<org2>{ORG})"
)
# "Thanks for calling Mum" / "you've reached Monica and Chandler's" are no employer: a desk must follow.
_DESK = re.compile(
    r"\s+(?:customer\s+)?(?:support|service|services|help\s*desk|helpdesk|helpline|sales|billing|"
    r"reception|care|technical|tech|team|desk|line)\b",
    re.I,
)
_JOINED_AS = re.compile(
    rf"{_SUBJ}(?:\s*,\s*who)?\s+(?:has\s+|had\s+|['’]s\s+)?(?:just\s+|recently\s+)?joined\s+(?:us|the\s+(?:board|team|company|firm)"
    rf"|(?P<org>{ORG}))?(?:\s+(?:in|last|this)\s+\w+)?\s+as\s+(?:a|an|the|our)\s+(?P<title>[a-zA-Z][\w-]*(?:\s+[a-zA-Z][\w-]*){{0,4}}?)"
    rf"(?=\s*(?:[,.;:!?)]|$|\s+(?:and|in|last|this)\b))"
)
_IS_AT_NOW = re.compile(rf"{_SUBJ}\s?['’]s\s+(?P<now1>now\s+)?at\s+(?:the\s+)?(?P<org>{ORG})(?P<now2>\s+now)?")


def _subject(ctx: Ctx, raw: str, pos: int) -> Mention | None:
    if raw.split()[-1] == "I":
        raw = "I"  # "And I joined ...", "Before Parcelio I spent ...": the name pattern took the word before
    if raw == "I":
        return ctx.me()
    if raw.lower() in ("she", "he"):
        return ctx.antecedent(pos)
    return ctx.person(raw)


def rule_moves(ctx: Ctx) -> None:
    """'Kenji joined from Snowflake', 'Mia Lund, who came from Maersk', 'I just joined from Shopify'
    -> left; 'Daniel used to be at Stripe', 'I spent six years at DHL' -> left; 'she's at Spotify now' -> works_at."""
    for m in _CALLING.finditer(ctx.text, ctx.s0, ctx.s1):
        me = ctx.me()  # a call-centre greeting: "Thank you for calling Nimbus support, my name is Derek"
        org = org_name(m.group("org") or m.group("org2"))
        if org is None or not (looks_like_org(org) or _DESK.match(ctx.text, m.end())):
            continue
        if me is not None and norm_name(org) not in ctx.known_people:
            ctx.emit("works_at", me, m.start(), m.end(), obj=Mention(org, "organisation"), confidence=0.55)
    for m in _JOINED_AS.finditer(ctx.text, ctx.s0, ctx.s1):
        subj = _subject(ctx, m.group("subj"), m.start())
        title = parse_title(m.group("title"))
        if subj is None or title is None or title[2] or not strong_title(title[0]):
            continue  # "Anjali Kapoor, who joined the board in July as a non-executive director"
        org = org_name(m.group("org")) if m.group("org") else None
        if org and norm_name(org) not in ctx.known_people:
            dr = ctx.date_for(m.start(), m.end(), past=True)
            ctx.emit(
                "works_at",
                subj,
                m.start(),
                m.end(),
                obj=Mention(org, "organisation"),
                qualifier=title[1],
                dr=dr,
                valid_from=dr.start if dr else None,
                confidence=0.55,
            )
        else:
            ctx.emit("has_title", subj, m.start(), m.end(), literal=title[1], confidence=0.55)
    for rx in (_JOINED_FROM, _USED_TO_BE, _SPENT_AT, _TEACHING_AT, _IS_AT_NOW):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            subj = _subject(ctx, m.group("subj"), m.start())
            org = org_name(m.group("org"))
            if subj is None or org is None or norm_name(org) in ctx.known_people:
                continue
            o = Mention(org, "organisation")
            if rx is _TEACHING_AT:
                ctx.emit("works_at", subj, m.start(), m.end(), obj=o, confidence=0.55)
            elif rx is _IS_AT_NOW:
                if not (m.group("now1") or m.group("now2") or looks_like_org(org)):
                    continue  # "he's at Heathrow": a place, unless it is surely an organisation or "now"
                ctx.emit("works_at", subj, m.start(), m.end(), obj=o, confidence=0.55)
            else:
                dr = ctx.date_for(m.start(), m.end(), past=True)
                ctx.emit(
                    "left", subj, m.start(), m.end(), obj=o, dr=dr, valid_to=dr.point if dr else None, confidence=0.55
                )


# ---------------------------------------------------------------- titles given by a possessive

_POSS_TITLE_NAME = re.compile(
    rf"\b(?P<poss>[Oo]ur|[Mm]y|[Tt]heir|[Yy]our)\s+(?:new\s+|current\s+)?(?P<title>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){{0,5}}?)"
    rf"\s*,\s*(?P<name>{NAME}){_END}"
)
_NAME_POSS_TITLE = re.compile(
    rf"(?P<name>{NAME})\s*,\s*(?P<poss>our|my|their|your|the)\s+(?:new\s+|current\s+)?"
    rf"(?P<title>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){{0,5}}?)(?=\s*(?:[,.;:!?)]|$))"
)


_ORG_TITLE_NAME = re.compile(
    rf"(?P<org>{ORG})['’]s\s+(?:new\s+|current\s+)?(?P<title>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){{0,5}}?)"
    rf"\s*,\s*(?P<name>{NAME}){_END}"
)
_POSS_TITLE_IS_NAME = re.compile(
    rf"\b(?P<poss>[Oo]ur|[Mm]y|[Tt]heir)\s+(?:new\s+|current\s+)?(?P<title>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){{0,5}}?)"
    rf"\s+(?:is|['’]s)\s+(?:now\s+)?(?P<name>{NAME})(?=\s*(?:[,.;:!?]|$|\s+(?:who|and)\b))"
)
_UNIT = (
    r"team|group|network|unit|department|division|committee|board|office|programme|program|project|lab|"
    r"laboratory|practice|service|function|panel|forum|council|association|taskforce|task\s+force|branch|"
    r"directorate|squad|chapter|guild|desk|region|business|company|organisation|organization"
)
_I_LEAD = re.compile(
    rf"\bI\s+(?:(?:also|currently|now|still)\s+)?(?P<verb>chair|lead|run|head(?:\s+up)?|manage)\s+(?:the\s+|our\s+|a\s+)?"
    rf"(?P<what>(?:[\w'’-]+\s+){{0,4}}?(?:{_UNIT})(?:\s+(?:on|for|of)\s+[\w'’ -]{{2,40}}?)?)"
    rf"(?=\s*(?:[,.;:!?)]|$|\s+(?:and|across|in|at|which|that|so|here|there|now|too)\b))"
)
_VERB_TITLE = {"chair": "chair", "lead": "head", "run": "head", "head": "head", "head up": "head", "manage": "manager"}


def rule_i_lead(ctx: Ctx) -> None:
    """'I chair the EOTAS network', 'I lead the backend team', 'I run the platform team' -> has_title."""
    me = ctx.me()
    if me is None:
        return
    for m in _I_LEAD.finditer(ctx.text, ctx.s0, ctx.s1):
        verb = " ".join(m.group("verb").lower().split())
        what = " ".join(m.group("what").split())
        ctx.emit("has_title", me, m.start(), m.end(), literal=f"{_VERB_TITLE[verb]} of the {what}", confidence=0.55)


def _titled(ctx: Ctx, m: re.Match) -> tuple[Mention, str] | None:
    subj = ctx.person(m.group("name"))
    title = parse_title(m.group("title"))
    if subj is None or title is None or title[2] or not strong_title(title[0]):
        return None
    words = title[0].lower().split()
    if words[-1] not in TITLE_HEADS and not {"of", "for", "in"} & set(words):
        return None  # "our designer speak first, Mister X": the title ends at its head or complement
    if " at " in f" {title[0]} " or " with " in f" {title[0]} ":
        return None  # "the CTO at Acme": the role rules own titles with an organisation
    if subj.is_speaker or (" " not in subj.name and norm_name(subj.name) not in ctx.known_people):
        return None  # a lone first name after a comma is often a vocative ("Sure, Marc")
    return subj, title[1]


def _their_org(ctx: Ctx, pos: int) -> str | None:
    """The organisation "their" points back to (Ctx.their_org: this utterance, else the turns before)."""
    org = ctx.their_org(pos)
    return org.name if org else None


def rule_possessive_title(ctx: Ctx) -> None:
    """'our CTO, Daniel Moss', 'My producer, Tariq Aziz', 'Kenji Sato, our head of data platform',
    'Harriet Cole, the general counsel.' -> has_title."""
    for rx in (_POSS_TITLE_NAME, _NAME_POSS_TITLE, _POSS_TITLE_IS_NAME):
        for m in rx.finditer(ctx.text, ctx.s0, ctx.s1):
            got = _titled(ctx, m)
            if got is None:
                continue
            subj, title = got
            ctx.emit("has_title", subj, m.start(), m.end(), literal=title, confidence=0.55)
            org = _their_org(ctx, m.start()) if m.group("poss").lower() == "their" else None
            if org is not None:  # "We spoke to Greenleaf. Their COO, Ben Archer, ...": Greenleaf's COO
                ctx.emit(
                    "works_at",
                    subj,
                    m.start(),
                    m.end(),
                    obj=Mention(org, "organisation"),
                    qualifier=title,
                    confidence=0.5,
                )
    for m in _ORG_TITLE_NAME.finditer(ctx.text, ctx.s0, ctx.s1):
        got = _titled(ctx, m)  # "Estyn's chief inspector, Owen Evans", "Acme's CEO, Jane Doe"
        org = org_name(m.group("org"))
        if got is None or org is None or org.split()[0].lower() in ("he", "she", "it", "that", "there", "what", "who"):
            continue
        first_names = {k.split()[0] for k in ctx.known_people}
        if not looks_like_org(org) and (" " in org or norm_name(org) in ctx.known_people | first_names):
            continue  # "Ross Geller's personal physician, Dr. X", "Marc's manager, Paul": a person's, not a firm's
        ctx.emit(
            "works_at", got[0], m.start(), m.end(), obj=Mention(org, "organisation"), qualifier=got[1], confidence=0.5
        )


def our_people(transcript: Transcript, out: list[ExtractedAssertion]) -> list[ExtractedAssertion]:
    """'our CEO, Hannah Moreau' said by someone who works at Brightwave (as this meeting says):
    Hannah Moreau works_at Brightwave, with the title. Only when the speaker's organisation is unique."""
    orgs: dict[str, set[str]] = {}
    for a in out:
        if a.predicate == "works_at" and a.subject.is_speaker and a.object is not None:
            orgs.setdefault(a.subject.name, set()).add(norm_name(a.object.name))
    names = {norm_name(a.object.name): a.object.name for a in out if a.predicate == "works_at" and a.object}
    extra: list[ExtractedAssertion] = []
    for u in transcript.utterances:
        mine = orgs.get(u.speaker or "")
        if not mine or len(mine) != 1 or not re.search(r"\b[Oo]ur\b", u.text):
            continue
        org = names[next(iter(mine))]
        for s0, s1 in sentences(u.text):
            ctx = Ctx(utt_idx=u.idx, speaker=u.speaker, text=u.text, s0=s0, s1=s1, anchor=None, out=extra)
            for rx in (_POSS_TITLE_NAME, _NAME_POSS_TITLE, _POSS_TITLE_IS_NAME):
                for m in rx.finditer(u.text, s0, s1):
                    if m.group("poss").lower() != "our":
                        continue
                    got = _titled(ctx, m)
                    if got:
                        ctx.emit(
                            "works_at",
                            got[0],
                            m.start(),
                            m.end(),
                            obj=Mention(org, "organisation"),
                            qualifier=got[1],
                            confidence=0.5,
                        )
    return extra


# ---------------------------------------------------------------- introductions around a table

_OPENERS = (
    r"(?i:(?:hi|hello|hey|morning|good\s+(?:morning|afternoon|evening)|yes|yeah|okay|ok|and|so|um|uh|right|sure)"
    r"\b[\s,.!]*)*"
)
_TABLE_INTRO = re.compile(
    rf"^\s*{_OPENERS}(?i:(?:everyone|all|everybody)\b[\s,.!]*)?(?P<name>{NAME})(?=\s*(?:[,.;]|$|\s+(?:here|from|speaking)\b))"
)


_AFTER_OWN_NAME = re.compile(
    r"\s*[,.;]\s*I(?:['’]m|\s+am)\b|\s*,\s*I(?:\s+just|\s+work|\s+run|\s+lead|\s+head|\s+joined|\s+look\s+after|['’]ve\s+been)\b"
    r"|\s*,?\s*(?:from\s+(?:the\s+)?[A-Z]|here\b|speaking\b)"
)
_HONORIFICS = {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "lord", "lady"}  # vocatives
_NOT_INTRO_WORDS = {
    "bye",
    "goodbye",
    "good-bye",
    "poor",
    "easy",
    "meeting",
    "oh-oh",
    "dear",
    "welcome",
    "congratulations",
    "happy",
    "merry",
    "sorry",
    "thanks",
    "cheers",
    "morning",
    "night",
    "goodnight",
    "hiya",
    "yo",
}
_ASKS_NAME = re.compile(
    r"\b(?:your\s+name|who\s+(?:are\s+you|is\s+this|'s\s+this|’s\s+this)|introduce\s+yourself)\b", re.I
)


def table_intro_name(
    text: str, speaker: str | None, said_before: str, *, asked_name: bool = False
) -> tuple[str, int] | None:
    """The name a speaker opens with when introducing themself around a table ('Ben Kowalski. I'm a
    senior engineer', 'Hello, Lucy Brennan, I'm the operations director'), and where it ends. Taken only
    when it is the label's own name, or, for a seat label ('Speaker 3'), a full name nobody said before
    (`said_before`: the meeting's earlier text, casefolded; a greeting names someone already named:
    'Hi Rachel Green, thanks for ...'). The name must go on in the first person ('..., I'm the ...',
    '... from Acme', '... here'), or answer a question for it (`asked_name`: the previous utterance asked
    "what's your name?": 'Paul Wiezer . Paul Wiezer .')."""
    if not speaker:
        return None
    m = _TABLE_INTRO.match(text)
    if not m:
        return None
    name = person_name(m.group("name"))
    if not name or not name[:1].isupper():
        return None
    raw_first = m.group("name").split()[0].replace("’", "'").lower().strip(".,")
    if (
        raw_first in STOP
        or raw_first in _HONORIFICS
        or any(w.replace("’", "'").lower().strip(".,") in STOP | _NOT_INTRO_WORDS for w in name.split())
    ):
        return None  # "Bye Ben", "Poor Ross", "I’m Amanda" (the other rules read that one)
    rest = text[m.end("name") :]
    answers = asked_name and (not rest.strip(" ,.;!") or rest.lstrip(" ,.;").startswith(m.group("name")))
    if not _AFTER_OWN_NAME.match(rest) and not answers:
        return None  # "Hi Rachel Green, good to see you": a greeting; an introduction goes on in the first person
    if same_person(name, speaker) and norm_name(name) != norm_name(speaker) or norm_name(name) == norm_name(speaker):
        return name, m.end("name")
    if (
        label_person(speaker) is None
        and is_seat_label(speaker)
        and len(name.split()) >= 2
        and name.casefold() not in said_before
    ):
        return name, m.end("name")
    return None


# ---------------------------------------------------------------- a pronoun across turns

_PRONOUN = re.compile(r"\b(?:[Ss]he|[Hh]e)\b")


@dataclass
class _CarriedCtx(Ctx):
    """A sentence whose 'she'/'he' names nobody in its own utterance: the one person the
    previous turns named is the antecedent ("- Did you hear Lena left Microsoft? - Where did she
    go? - She's at Spotify now.")."""

    carried: Mention | None = None

    def antecedent(self, pos: int) -> Mention | None:
        return super().antecedent(pos) or self.carried


def _one_named(texts: list[str], speakers: set[str]) -> str | None:
    """The single person (not a speaker of the meeting) named in `texts`; None for none or several."""
    names: list[str] = []
    for text in texts:
        for m in NAME_RX.finditer(text):
            n = person_name(m.group(0))
            if not n or _NOT_A_PERSON_BEFORE.search(text, max(0, m.start() - 12), m.start()):
                continue  # "left Microsoft", "at Acme", "your Hamburg office": no person's place in the sentence
            nxt = _NEXT_WORD.match(text, m.end())
            if nxt and nxt.group(1) in ORG_HEADS:
                continue
            if not any(same_person(n, s) for s in speakers):
                names.append(n)  # a sentence-initial word counts too: a doubt means no guess
    distinct = {norm_name(n).split()[0]: n for n in names}
    if len(distinct) != 1:
        return None
    return max((n for n in names), key=len)  # "Jonas Berg" rather than a later "Jonas"


_NOT_A_PERSON_BEFORE = re.compile(
    r"\b(?:at|for|of|from|in|joined|left|quit|the|with|by|about|into|on|our|your|their|my)\s+$", re.I
)
_NEXT_WORD = re.compile(r"\s+([a-z]+)")


def pronoun_facts(
    transcript: Transcript, rules: Sequence[tuple[re.Pattern[str], Callable[[Ctx], None]]], known_people: frozenset[str]
) -> list[ExtractedAssertion]:
    """What `rules` say about 'she'/'he' when the antecedent is the one person named in the two
    previous turns and nobody in the utterance itself. Only facts about that person are kept."""
    speakers = set(transcript.speakers())
    utts = transcript.utterances
    out: list[ExtractedAssertion] = []
    anchor = transcript.meeting_date.date() if transcript.meeting_date else None
    for k, u in enumerate(utts):
        if k == 0 or not u.text or not _PRONOUN.search(u.text):
            continue
        name = _one_named([p.text for p in utts[max(0, k - 2) : k]], speakers)
        if name is None:
            continue
        carried = Mention(name, "person")
        found: list[ExtractedAssertion] = []
        for s0, s1 in sentences(u.text):
            if not _PRONOUN.search(u.text, s0, s1):
                continue
            ctx = _CarriedCtx(
                utt_idx=u.idx,
                speaker=u.speaker,
                text=u.text,
                s0=s0,
                s1=s1,
                anchor=anchor,
                out=found,
                known_people=known_people,
                carried=carried,
            )
            if ctx.the_one_person(max(0, s0 - 500), s0) is not None:
                break  # someone is named earlier in this utterance: the ordinary rules decide
            low = u.text[s0:s1].lower()
            for rx, rule in rules:
                if rx.search(low):
                    rule(ctx)
        out.extend(a for a in found if norm_name(a.subject.name) == norm_name(name))
    return out

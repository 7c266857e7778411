"""The mentions stage: who and what each sentence of a transcript names, and whom its pronouns mean.

Public API (stable; the meaning classifier and the offline rules call it):

- `find_mentions(transcript, store=None, *, owner_names=(), attendees=()) -> list[SentenceMentions]`:
  one `SentenceMentions` per sentence of every utterance (Japanese sentences are skipped),
  in order. Each carries the utterance index, the speaker label, the sentence's
  span in the utterance text, the `EntityMention`s it names and a `PronounRef` for each
  personal pronoun in it ("I", "me", "my", "we", "us", "our", "he", "him", "his", "she",
  "her", "they", "them", "their"). Spans are character offsets into `utterance.text`.
- `EntityMention(name, kind, start, end, surface, source, confirmed, vocative)`: `kind` is
  "person", "organisation" or "title"; `name` is the surface unless something exact says
  more: a first name alone is the one full name with that first name said earlier in the
  meeting, written in a speaker label, among the participants / calendar attendees / mail
  participants, or (with a store) among the people memory knows; a title is its canonical
  form ("chief operating officer" -> "COO"). `source` says what vouches for it: "text" (a
  capitalised name validated by offline_names), "speaker" (a speaker label, participant or
  attendee of this meeting), "memory" (a name or alias of an entity in `store`), "lexicon"
  (a title of offline_names' titles lexicon). `confirmed` is False for what the
  words alone do not settle: a one-word name that no one in the meeting or in memory is
  called and the first-name lexicon does not hold ("Trello", "Tango"), an acronym never
  seen at a place of work ("XML"). An unconfirmed mention is a rival for a pronoun (it
  keeps "she" open) but never its antecedent. `vocative` marks the person a turn speaks to
  ("No worries, Carla.", "Thanks for coming, Carla."): "you", never "she".
- `resolve_pronoun(pronoun, *, speaker, before, recent=(), people=()) -> PronounRef`:
  the resolver on its own, for a pronoun read elsewhere. `before` are the mentions earlier in
  the same utterance (nearest last), `recent` those of the turns just before, `people` the
  meeting's participants (speaker labels, attendees). `refers_to` is a name, or None.

Resolution, exact or nothing (None, never a guess):
- "I", "me", "my", "mine", "myself": the speaker label (None without one).
- "he"/"him"/"his", "she"/"her"/"hers": the one person named before it in this utterance,
  else, when this utterance names nobody before it, the one person named in the turns just
  before. Never the speaker, never the person the turn speaks to (a vocative); in a meeting
  of two people never either of them (to each other they are "you" and "I"). A first name in the small lexicon below with the other gender
  does not fit ("she" is not "Tom"); a name not in it fits both.
- "we"/"us"/"our": the speaker's partner, when exactly one other person is named in this
  utterance before it or in the turns just before; nobody named: in a meeting of two people
  the other one; otherwise None.
- "they"/"them"/"their"/"theirs": the one organisation named before it in this utterance,
  else in the turns just before; None when none or several are (a group of people is left
  unresolved).

Titles are the lexicon's strong ones ("CTO", "head of data", "director of policy"; "lead" or
"associate" alone are not). No person is made of numbers, currencies, peoples or places
("Seventeen Pounds", "the Canadians", "Wales", "the White Paper"). No entity is made from a
fragment: a capitalised word inside an organisation's name ("Montreal" in "the Bank of
Montreal"), a one-word name that opens its sentence and is no known person ("Happy to
help", "Most of them"), or a title word ("Director", "Chair") is never a mention.

French sentences are read with the same name rules, but their pronouns ("il", "elle",
"leur") are not resolved; Japanese sentences are skipped. A meeting of 8k words costs about
40 ms of CPU.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from backchannel.extraction.mentions.names import (
    CANONICAL_TITLES,
    CAP,
    NAME,
    NAME_RX,
    NATIONALITIES,
    NOT_ORGS,
    ORG_RX,
    TITLE_HEADS,
    looks_like_org,
    org_name,
    parse_title,
    person_name,
    strong_title,
)
from backchannel.memory.text import norm_name

if TYPE_CHECKING:
    from backchannel.extraction.formats.transcript import Transcript
    from backchannel.memory.store import Store

__all__ = [
    "EntityMention",
    "KnownNames",
    "PRONOUN_GENDER",
    "VOCATIVE_CLOSING",
    "VOCATIVE_OPENING",
    "PronounRef",
    "SentenceMentions",
    "find_mentions",
    "gender_of",
    "mentions_in",
    "organisation_spans",
    "resolve_pronoun",
]


@dataclass(frozen=True)
class EntityMention:
    name: str  # the name it resolves to (the surface unless something exact says more)
    kind: str  # person, organisation, title
    start: int  # offsets into the utterance text
    end: int
    surface: str
    source: str = "text"  # text, speaker, participant, memory, lexicon
    # False for what the words alone do not settle: a one-word capitalised name nobody in the
    # meeting or in memory is called ("Google", "Tango"), an acronym never seen at a place of
    # work ("XML", "FAQ"). Such a mention is a rival for a pronoun, never its antecedent.
    confirmed: bool = True
    vocative: bool = False  # the person the turn speaks to ("Thanks, Carla."): "you", never "she"


@dataclass(frozen=True)
class PronounRef:
    pronoun: str
    start: int
    end: int
    refers_to: str | None  # a name, or None when nothing exact decides
    kind: str | None = None  # person, organisation; None when unresolved
    candidates: tuple[str, ...] = ()  # what fitted (two or more: the reason it stayed open)


@dataclass
class SentenceMentions:
    utterance_idx: int
    speaker: str | None
    start: int
    end: int
    text: str  # the sentence
    mentions: list[EntityMention] = field(default_factory=list)
    pronouns: list[PronounRef] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[EntityMention]:
        return [m for m in self.mentions if m.kind == kind]


@dataclass
class KnownNames:
    """Names a meeting knows beyond its text: speaker labels, participants and attendees, and
    (with a store) every person's and organisation's name and alias in memory."""

    people: dict[str, str] = field(default_factory=dict)  # normalised name or alias -> full name
    organisations: dict[str, str] = field(default_factory=dict)
    speakers: frozenset[str] = frozenset()  # normalised labels and participants of this meeting
    meeting: tuple[str, ...] = ()  # the meeting's people (labels, participants), as written
    memory: frozenset[str] = frozenset()  # normalised names and aliases of the store's people
    # normalised names this meeting uses as an organisation by evidence (mentions/sentence.organisations_of)
    meeting_orgs: frozenset[str] = frozenset()
    _firsts: frozenset[str] | None = None

    def first_names(self) -> frozenset[str]:
        if self._firsts is None:
            self._firsts = frozenset(k.split()[0] for k in (*self.people, *self.speakers) if " " in k)
        return self._firsts

    def full_name(self, first: str, said: Iterable[str] = ()) -> str | None:
        """The one full name with this first name: said before in the meeting, else among the
        meeting's people, else known to memory; None when none or several fit."""
        key = norm_name(first)
        for pool in (said, self.meeting, self.people.values()):
            found = {norm_name(n): n for n in pool if " " in norm_name(n) and norm_name(n).split()[0] == key}
            if len(found) == 1:
                return next(iter(found.values()))
            if len(found) > 1:
                return None
        return None


# ---------------------------------------------------------------- gender (a small exact lexicon)

# Common first names that are one gender beyond doubt; names used for both (Alex, Sam, Kim,
# Jordan, Robin, Charlie, Andrea, ...) are left out on purpose: they fit any pronoun.
_FEMALE = set(
    """
anna ana anne annie alice amelia amy aisha ayesha beatriz carla carmen caroline catherine charlotte chloe
claire clara daniela diana elena eleanor elisa elizabeth ella emily emma eva fatima fiona grace hannah helen
ines irene isabel isabelle itziar jane jennifer jessica julia julie karen kate katherine laura lena linda
lisa lucia lucy maria marie martha mary megan mei mia michelle monica nadia natalia natasha nicole nina olivia
paula priya rachel rebecca rosa ruth sakura sara sarah sofia sophie susan tanya teresa valentina victoria
yuki zoe zara ingrid greta agnieszka camille chantal elodie amelie margaux
""".split()
)
_MALE = set(
    """
adam ahmed alan albert alejandro alessandro andrew antonio arjun ben benjamin brian carlos charles chris
christopher daniel david dmitri edward eric erik felix francesco frank george hans harry henry hiroshi ian
ivan jack jacob james javier jean john jonathan jorge jose joseph juan kenji kevin klaus lars leo liam lucas
luis marc marco marcus mark martin matthew michael miguel mohammed muhammad nathan nick nicolas oliver omar
oscar pablo patrick paul pedro peter pierre rafael rahul ravi richard robert roberto ryan samuel sean
sebastian simon stefan stephen steven thomas tim timothy tom tomas victor william yusuf
""".split()
)
# Lexicon first names that are also everyday words opening a sentence ("Mark it done", "Frank talk").
_ALSO_WORDS = {"mark", "frank", "grace", "nick", "jack"}
PRONOUN_GENDER = {
    "he": "m",
    "him": "m",
    "his": "m",
    "himself": "m",
    "she": "f",
    "her": "f",
    "hers": "f",
    "herself": "f",
}


def first_name_lexicon() -> frozenset[str]:
    """The first names whose gender the lexicon knows, lower case (the typer's training fills slots with them)."""
    return frozenset(_FEMALE | _MALE)


def gender_of(name: str) -> str | None:
    """'f' or 'm' for a first name in the lexicon, else None (fits either)."""
    first = norm_name(name).split()
    if not first:
        return None
    return "f" if first[0] in _FEMALE else "m" if first[0] in _MALE else None


# ---------------------------------------------------------------- organisations, people, titles

# Words of a capitalised run that make it no person: numbers and currencies ("Seventeen Pounds",
# "Euros"), nationalities in the plural ("Canadians"), school grades ("A-levels").
_NOT_A_PERSON_WORD = re.compile(
    r"\b(?:(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve|Thirteen|Fourteen|Fifteen|Sixteen"
    r"|Seventeen|Eighteen|Nineteen|Twenty|Thirty|Forty|Fifty|Hundred|Thousand|Million|Billion)"
    r"|Pounds?|Euros?|Dollars?|Pence|Cents?|[A-Z]-[a-z]+)\b"
)
_PEOPLES = {n + "s" for n in NATIONALITIES if n.endswith("an")} | {"brits", "scots", "danes", "swedes", "poles"}
# Nouns that end capitalised phrases which are no one's name ("United States", "White Paper").
_NOT_NAME_NOUNS = {
    "states",
    "kingdom",
    "republic",
    "peoples",
    "relations",
    "paper",
    "papers",
    "interface",
    "station",
    "ready",
    "work",
    "reaction",
    "affairs",
    "rights",
    "nations",
}
# A vocative: a name after a greeting or thanks that opens a sentence ("No worries Nadia.",
# "Thanks, Nadia,"), or a first name alone closing one ("Thanks for coming, Nadia."). After a word of
# answering ("yeah", "sure", "right") only a first name: a full name there is the answer itself ("Do you
# know anyone inside Woolworths?" - "Yeah, Mick Papadopoulos."), the one "we" and "he" then point to.
VOCATIVE_OPENING = re.compile(
    r"(?:^|(?<=[.!?])\s+)(?:(?i:thanks|thank\s+you|cheers|hi|hey|hello|morning|no\s+worries|sorry)\s*,?\s+"
    rf"|(?i:ok|okay|right|yes|yeah|well|sure|great)\s*,?\s+(?={CAP}\s*[,.!?]))(?P<v>{NAME})\s*[,.!?]"
)
VOCATIVE_CLOSING = re.compile(r",\s*(?P<v>" + CAP + r")\s*[.!?]")
# Before a name, these make it a place of work; the second set only for a one-word name.
_WORKPLACE_PREP = re.compile(r"\b(?:at|joined|left)\s+(?:the\s+)?$", re.I)
_AT_WORK = re.compile(r"\b(?:at|joined)\s+(?:the\s+)?$", re.I)  # not "left": "left Marc a message"
_ORG_PREP = re.compile(r"\b(?:for|of|from|in|the)\s+$", re.I)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s*|^\s+)$")
_ORGISH_NEXT = re.compile(r"\s+(?:Inc|Ltd|LLC|GmbH|Group|Bank|University|Council|Ministry|College)\b")
_TITLE_LEFT = {
    "chief",
    "deputy",
    "vice",
    "senior",
    "junior",
    "principal",
    "lead",
    "executive",
    "general",
    "managing",
    "acting",
    "assistant",
    "associate",
    "head",
    "regional",
    "global",
    "technical",
    "finance",
    "sales",
    "product",
    "marketing",
    "engineering",
    "data",
    "research",
    "design",
    "operations",
    "programme",
    "program",
    "project",
    "account",
    "policy",
    "interim",
    "founding",
}
_TITLE_WORDS = (
    TITLE_HEADS | _TITLE_LEFT | {w for k in CANONICAL_TITLES for w in k.replace("-", " ").split()} - {"of", "for"}
)
_COMPLEMENT_STOP = {"at", "in", "the", "and", "with", "for", "of", "on", "to", "from", "is", "was", "a", "an"}
_WORD = re.compile(r"[A-Za-z][\w-]*")


def organisation_spans(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int, str]]:
    """(start, end, name) of every organisation within text[lo:hi] that says it is one: a head
    or suffix word ("Bank of Montreal", "Globex Labs", "Acme Inc") or an acronym. The whole text
    is read once (cached): the rules ask about many windows of one utterance."""
    hi = len(text) if hi is None else hi
    return [s for s in _all_organisation_spans(text) if lo <= s[0] and s[1] <= hi]


@lru_cache(maxsize=256)
def _all_organisation_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    out = []
    for m in ORG_RX.finditer(text):
        raw = m.group(0)
        org = org_name(raw)
        if org is None or not looks_like_org(org):
            continue
        start = m.start() + raw.find(org) if org in raw else m.start()
        parts = org.split(" and ")
        if len(parts) == 2 and all(looks_like_org(x) for x in parts):  # "Halden Robotics and Orla Insurance"
            out += [
                (start, start + len(parts[0]), parts[0]),
                (start + len(org) - len(parts[1]), start + len(org), parts[1]),
            ]
            continue
        out.append((start, start + len(org), org))
    return tuple(out)


def _inside(spans: Sequence[tuple[int, int, str]], start: int, end: int) -> bool:
    return any(a <= start and end <= b and (a, b) != (start, end) for a, b, _n in spans)


def _weak_opener(text: str, start: int, name: str, known: KnownNames, said: Sequence[str] = ()) -> bool:
    """A one-word capitalised word opening its sentence that no one knows as a person (by name,
    alias or first name, or as the first name of a full name said before in the meeting)."""
    key = norm_name(name)
    if gender_of(name) is not None and key not in _ALSO_WORDS:
        return False  # "Greta sent the file": a first name of the lexicon opens sentences as a name
    return (
        " " not in name
        and key not in known.people
        and key not in known.speakers
        and key not in known.first_names()
        and not any(norm_name(n).split()[0] == key for n in said if n)
        and _SENTENCE_START.search(text, max(0, start - 4), start) is not None
    )


def _possessive_names(
    text: str, lo: int, hi: int, orgs: list[tuple[int, int, str]], known: KnownNames
) -> list[tuple[int, int, str]]:
    """The meeting's organisations whose name holds a plural possessive ("the National Police Chiefs'
    Council", sentence.organisations_of), each one span, not the two pieces either side of the apostrophe."""
    for key in known.organisations:
        if "'" not in key and "’" not in key:
            continue
        for m in re.finditer(re.escape(known.organisations[key]).replace("'", "['’]"), text[lo:hi], re.I):
            a, b = lo + m.start(), lo + m.end()
            orgs = [o for o in orgs if o[1] <= a or b <= o[0]] + [(a, b, text[a:b])]
    return sorted(orgs)


def mentions_in(
    text: str, lo: int, hi: int, known: KnownNames | None = None, said: Sequence[str] = ()
) -> list[EntityMention]:
    """People, organisations and titles named in text[lo:hi], in order of position."""
    known = known or KnownNames()
    orgs = []
    for a, b, n in organisation_spans(text, lo, hi):
        left, sep, right = n.partition(" and ")
        if sep and len(left.split()) >= 2 and not looks_like_org(left) and looks_like_org(right):
            # "Orbis Freight and Kestrel Logistics": two organisations, the first by its company only
            orgs += [(a, a + len(left), left), (b - len(right), b, right)]
        else:
            orgs.append((a, b, n))
    orgs = _possessive_names(text, lo, hi, orgs, known)
    found: list[EntityMention] = []
    for a, b, n in orgs:
        in_memory = norm_name(n) in known.organisations and norm_name(n) not in known.meeting_orgs
        acronym_only = " " not in n and n.isupper()
        confirmed = (
            in_memory or looks_like_org(n) and not acronym_only or bool(_WORKPLACE_PREP.search(text, max(0, a - 12), a))
        )
        found.append(EntityMention(n, "organisation", a, b, text[a:b], "memory" if in_memory else "text", confirmed))
    for m in ORG_RX.finditer(text, lo, hi):  # an organisation memory knows, without a head word ("Globex")
        org = org_name(m.group(0))
        if org and norm_name(org) in known.organisations and not looks_like_org(org) and org in m.group(0):
            a = m.start() + m.group(0).find(org)
            if not _inside(orgs, a, a + len(org)) and norm_name(org) not in known.people:
                orgs.append((a, a + len(org), org))
                own = norm_name(org) in known.meeting_orgs  # as the meeting writes it, not as memory does
                found.append(
                    EntityMention(
                        org if own else known.organisations[norm_name(org)],
                        "organisation",
                        a,
                        a + len(org),
                        org,
                        "text" if own else "memory",
                    )
                )
    for m in NAME_RX.finditer(text, lo, hi):
        name = person_name(m.group(0))
        if name is None:
            continue
        a = m.start() + m.group(0).find(name) if name in m.group(0) else m.start()
        b = a + len(name)
        key = norm_name(name)
        if _inside(orgs, a, b) or any((x, y) == (a, b) for x, y, _n in orgs) or key in known.organisations:
            continue  # "Montreal" of "the Bank of Montreal"; "Globex" known as a company
        person_known = key in known.people or key in known.speakers
        if (
            _ORGISH_NEXT.match(text, b)
            or not person_known
            and (
                _WORKPLACE_PREP.search(text, max(0, a - 12), a)
                or " " not in name
                and _ORG_PREP.search(text, max(0, a - 12), a)
            )
        ):
            if _WORKPLACE_PREP.search(text, max(0, a - 12), a) and key not in known.people:
                # "joined Orbis Freight", "at Globex": a place of work; sure of it when two words or more
                orgs.append((a, b, name))
                found.append(
                    EntityMention(
                        name,
                        "organisation",
                        a,
                        b,
                        name,
                        "text",
                        " " in name and _AT_WORK.search(text, max(0, a - 12), a) is not None,
                    )
                )
            continue  # "at Globex", "joined Initech", "a spreadsheet from Contoso": a place, not a person
        if _weak_opener(text, a, name, known, said):
            continue
        full = name
        if " " not in key:
            full = known.full_name(name, said) or known.people.get(key) or name
        kf = norm_name(full)
        source = (
            "speaker"
            if kf in known.speakers or key in known.speakers
            else "memory"
            if kf in known.memory or key in known.memory
            else "text"
        )
        if _NOT_A_PERSON_WORD.search(name) or any(
            t.lower() in NOT_ORGS or t.lower() in _PEOPLES or t.lower() in _NOT_NAME_NOUNS for t in name.split()
        ):
            continue  # "Seventeen Pounds", "Euros", "A-levels"; "Wales", "Industrial Design": a place or topic
        confirmed = " " in name or source != "text" or full != name or gender_of(name) is not None
        vocative = any(
            v.start("v") <= a < v.end("v")
            for rx in (VOCATIVE_OPENING, VOCATIVE_CLOSING)
            for v in rx.finditer(text, max(lo, a - 40), min(hi, b + 3))
        )
        found.append(EntityMention(full, "person", a, b, name, source, confirmed, vocative))
    for a, b in _title_runs(text, lo, hi):
        got = parse_title(text[a:b])
        if got is None or _inside(orgs, a, b) or any(x <= a < y for x, y, _n in orgs):
            continue  # "Chief Executive" of "the Office of the Chief Executive"
        if not strong_title(got[0]):
            continue  # "lead", "associate", "head" alone: too often no job
        found.append(EntityMention(got[1], "title", a, b, text[a:b], "lexicon"))
    found.sort(key=lambda e: (e.start, -e.end))
    return found


def _title_runs(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Spans of runs of title-lexicon words that hold a head word ("chief technology officer",
    "head of data"), with an "of/for X" complement of at most two words."""
    words = [(m.start(), m.end(), m.group(0).lower()) for m in _WORD.finditer(text, lo, hi)]
    out = []
    i = 0
    while i < len(words):
        if words[i][2] not in _TITLE_WORDS:
            i += 1
            continue
        j = i
        while j + 1 < len(words) and words[j + 1][2] in _TITLE_WORDS and text[words[j][1] : words[j + 1][0]].isspace():
            j += 1
        heads = [k for k in range(i, j + 1) if words[k][2] in TITLE_HEADS]
        if not heads:
            i = j + 1
            continue
        end = heads[-1]
        if end + 2 < len(words) and words[end + 1][2] in ("of", "for") and words[end + 2][2] not in _COMPLEMENT_STOP:
            end += 2
            if (
                end + 1 < len(words)
                and words[end + 1][2] not in _COMPLEMENT_STOP
                and text[words[end][1] : words[end + 1][0]] == " "
                and words[end + 1][2] not in TITLE_HEADS
            ):
                end += 1
        out.append((words[i][0], words[end][1]))
        i = max(j, end) + 1
    return out


# ---------------------------------------------------------------- pronouns

_PRONOUN_RX = re.compile(
    r"\b(?:I|me|my|mine|myself|we|us|our|ours|he|him|his|she|her|hers|they|them|their|theirs)\b", re.I
)
_FIRST_SINGULAR = {"i", "me", "my", "mine", "myself"}
_FIRST_PLURAL = {"we", "us", "our", "ours"}
_THIRD_PLURAL = {"they", "them", "their", "theirs"}


@lru_cache(maxsize=4096)
def _norm(name: str) -> str:
    return norm_name(name)


def _same(a: str, b: str) -> bool:
    """'Marc' and 'Marc Dupont' (one is the other's first tokens) may be one person."""
    ta, tb = _norm(a).split(), _norm(b).split()
    n = min(len(ta), len(tb))
    return bool(n) and ta[:n] == tb[:n]


def resolve_pronoun(
    pronoun: str,
    *,
    speaker: str | None,
    before: Sequence[EntityMention],
    recent: Sequence[EntityMention] = (),
    people: Sequence[str] = (),
    start: int = 0,
    earlier: Sequence[EntityMention] = (),
) -> PronounRef:
    """Whom `pronoun` means (see the module docstring); None when nothing exact decides. `earlier`, the
    mentions of a few turns before `recent`, is read for they/their only: an organisation stays the
    topic longer than a person ("anyone inside Woolworths?" ... two turns on ... "He runs their supply
    chain")."""
    p = pronoun.lower()
    end = start + len(pronoun)
    if p in _FIRST_SINGULAR:
        return PronounRef(pronoun, start, end, speaker, "person" if speaker else None)
    two = _two_people(tuple(people))
    if p in _THIRD_PLURAL:
        for scope in (before, recent, earlier):
            orgs = {norm_name(m.name): m for m in scope if m.kind == "organisation"}
            if orgs:
                names = tuple(sorted(m.name for m in orgs.values()))
                one = names[0] if len(names) == 1 and all(m.confirmed for m in orgs.values()) else None
                return PronounRef(pronoun, start, end, one, "organisation" if one else None, names)
        return PronounRef(pronoun, start, end, None)
    gender = PRONOUN_GENDER.get(p)
    for scope in (before, recent):
        cands: dict[str, str] = {}
        unconfirmed: set[str] = set()
        for m in scope:
            if m.kind != "person" or (speaker and _same(m.name, speaker)) or m.vocative:
                continue
            if two and any(_same(m.name, x) for x in two):
                continue  # in a meeting of two, "she" is neither of them
            if gender and gender_of(m.name) not in (None, gender):
                continue
            cands[norm_name(m.name)] = m.name
            if not m.confirmed:
                unconfirmed.add(norm_name(m.name))
        # 'Marc' and 'Marc Dupont' in one scope are one person
        merged = {k: v for k, v in cands.items() if not any(k != o and _same(k, o) and len(o) > len(k) for o in cands)}
        if merged:
            names = tuple(sorted(merged.values()))
            one = names[0] if len(names) == 1 and not set(merged) & unconfirmed else None
            return PronounRef(pronoun, start, end, one, "person" if one else None, names)
    if p in _FIRST_PLURAL and two and speaker:
        other = [x for x in two if not _same(x, speaker)]
        if len(other) == 1:
            return PronounRef(pronoun, start, end, other[0], "person", (other[0],))
    return PronounRef(pronoun, start, end, None)


@lru_cache(maxsize=64)
def _two_people(people: tuple[str, ...]) -> tuple[str, ...]:
    """The meeting's two people when it has exactly two, else ()."""
    distinct: list[str] = []
    for n in people:
        if n and not any(_same(n, d) for d in distinct):
            distinct.append(n)
    return tuple(distinct) if len(distinct) == 2 else ()


# ---------------------------------------------------------------- the stage

_RECENT_TURNS = 2


def known_names(
    transcript: Transcript,
    store: Store | None = None,
    *,
    owner_names: Sequence[str] = (),
    attendees: Sequence[str] = (),
    organisations: Iterable[str] = (),
) -> KnownNames:
    """What the meeting (labels, participants, attendees, the owner) and memory know by name;
    `organisations` are names the meeting itself uses as organisations (as written)."""
    meeting = [n for n in (*transcript.speakers(), *transcript.participants, *attendees) if n]
    people: dict[str, str] = {}
    orgs: dict[str, str] = {}
    if store is not None:
        rows = store.con.execute(
            """SELECT e.kind, e.name, e.norm, list(a.norm) FILTER (WHERE a.norm IS NOT NULL)
               FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
               WHERE e.merged_into IS NULL AND e.kind IN ('person', 'organisation')
               GROUP BY e.kind, e.name, e.norm"""
        ).fetchall()
        for kind, name, norm, alias_norms in rows:
            into = people if kind == "person" else orgs
            for key in {norm, *(alias_norms or [])}:
                into.setdefault(key, name)
    memory = frozenset(people)
    for n in (*meeting, *owner_names):
        if n:
            people.setdefault(norm_name(n), n)
    speakers = frozenset(norm_name(n) for n in (*meeting, *owner_names) if n)
    said_orgs = {norm_name(n): n for n in organisations if n and norm_name(n) not in people}
    meeting_orgs = frozenset(k for k in said_orgs if k not in orgs)
    orgs = {**said_orgs, **orgs}
    return KnownNames(
        people=people,
        organisations=orgs,
        speakers=speakers,
        meeting=tuple(meeting),
        memory=memory,
        meeting_orgs=meeting_orgs,
    )


def find_mentions(
    transcript: Transcript,
    store: Store | None = None,
    *,
    owner_names: Sequence[str] = (),
    attendees: Sequence[str] = (),
    organisations: Iterable[str] = (),
) -> list[SentenceMentions]:
    """Every English sentence's mentions and pronouns (see the module docstring). `organisations`:
    names the meeting uses as organisations elsewhere ("Valtrix hired her ..."), read as ones
    wherever they are said ("Valtrix is growing fast. Their new CFO ...")."""
    from backchannel.extraction.rules.core import sentences
    from backchannel.extraction.rules.ja.relations import is_japanese

    known = known_names(transcript, store, owner_names=owner_names, attendees=attendees, organisations=organisations)
    people = [*known.meeting]
    said: list[str] = []  # full names said so far, for a first name alone
    turns: list[list[EntityMention]] = []  # mentions of each earlier turn
    out: list[SentenceMentions] = []
    for u in transcript.utterances:
        text = u.text or ""
        recent = [m for t in turns[-_RECENT_TURNS:] for m in t]
        this_turn: list[EntityMention] = []
        for s0, s1 in sentences(text):
            if is_japanese(text[s0:s1]):
                continue
            found = mentions_in(text, s0, s1, known, said)
            sm = SentenceMentions(u.idx, u.speaker, s0, s1, text[s0:s1], found)
            for pm in _PRONOUN_RX.finditer(text, s0, s1):
                if pm.group(0) == "I" or pm.group(0).lower() != "i":
                    before = [m for m in (*this_turn, *found) if m.end <= pm.start()]
                    sm.pronouns.append(
                        resolve_pronoun(
                            pm.group(0),
                            speaker=u.speaker,
                            before=before,
                            recent=recent,
                            people=people,
                            start=pm.start(),
                        )
                    )
            this_turn.extend(found)
            said.extend(m.name for m in found if m.kind == "person" and " " in m.name)
            out.append(sm)
        turns.append(this_turn)
    return out

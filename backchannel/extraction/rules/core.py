"""Shared machinery of the offline rules: sentences, the per-sentence context, emission.

A rule sees one sentence at a time through `Ctx` and calls `Ctx.emit`, which
turns a match (absolute offsets into the utterance text) into an
`ExtractedAssertion` whose quote is the clause around the match, an exact
slice of the utterance text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from backchannel.extraction.dates.en import DateRange, can_be_due, find_date_phrases, resolve_phrase
from backchannel.extraction.mentions.names import (
    NAME_RX,
    ORG_RX,
    STOP,
    looks_like_org,
    org_name,
    person_name,
    same_person,
)
from backchannel.extraction.mentions.stage import (
    PRONOUN_GENDER,
    VOCATIVE_CLOSING,
    VOCATIVE_OPENING,
    gender_of,
    organisation_spans,
)
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.memory.text import norm_name

_ABBREV = {
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "st",
    "inc",
    "ltd",
    "co",
    "corp",
    "jr",
    "sr",
    "vs",
    "no",
    "e.g",
    "i.e",
    "etc",
    "hon",
    "rt",
    "mt",
    "gen",
    "sen",
    "rep",
    "gov",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "mx",
    "messrs",
    "approx",
    "dept",
    "fig",
    "al",
}
_SENT_END = re.compile(r"[.!?…]+(?=[\s\"'”’)\]]|$)")
_PREV_WORD = re.compile(r"([\w.]+)$")
_CLAUSE_STOP = re.compile(r"[;:]")
MAX_QUOTE = 320
_LONG, _PIECE = 900, 400
_REACH = 500
_THEIR_REACH = 160  # "their" within the utterance looks this far back
_WORD_AT = re.compile(r"[A-Za-z]+")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in `text`, whitespace trimmed; abbreviations
    ('Dr.', 'Inc.') and decimals do not end a sentence."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        if m.group(0) == ".":
            w = _PREV_WORD.search(text, max(0, m.start() - 16), m.start())
            word = w.group(1).lower() if w else ""
            if word in _ABBREV or (len(word) == 1 and word.isalpha() and word != "i"):
                continue
        end = m.end()
        _append_trimmed(text, start, end, out)
        start = end
    _append_trimmed(text, start, len(text), out)
    return out


def _append_trimmed(text: str, s: int, e: int, out: list) -> None:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    # An unpunctuated transcript is one endless "sentence": cut it into pieces at
    # spaces (a comma when there is one) so each rule's trigger test stays selective.
    while e - s > _LONG:
        cut = max(text.rfind(",", s + _PIECE // 2, s + _PIECE), text.rfind(" ", s + _PIECE // 2, s + _PIECE))
        if cut <= s:
            break
        out.append((s, cut))
        s = cut + 1
        while s < e and text[s].isspace():
            s += 1
    if e > s:
        out.append((s, e))


# The pieces of a list ("Northwind and Contoso", "A, B"), each with its offset.
_LIST_PIECE = re.compile(r"(?:(?!\s+(?:and|or|&)\s+|,).)+")
# A capitalised word that opens a sentence and is followed by a preposition: a verb said as a request
# ("Talk to X, their CFO", "Check with Y", "Reach out to Z"), not an organisation ("Northwind called").
_OPENING_VERB = re.compile(r"(?:^|[.!?]\s+)\W*(?P<w>[A-Z][a-z]+)(?=\s+(?:to|with|about|over|out|up)\b)")


@dataclass
class Ctx:
    """One sentence of one utterance, and what the rules need around it."""

    utt_idx: int
    speaker: str | None
    text: str  # the whole utterance text
    s0: int
    s1: int
    anchor: date | None
    out: list[ExtractedAssertion]
    known_people: frozenset[str] = frozenset()  # normalised names that are surely people (speakers, owner)
    # The turns just before this one (at most _REACH characters): where "he" may point when
    # this turn names nobody before it ("Tom Becker from the meetup?" / "Yes. He works at ...").
    context_before: str = ""
    # The meeting's speaker labels ("Hon. Steven Guilbeault"): whom a title and a surname alone
    # ("Minister Guilbeault") name, when exactly one speaker has that surname.
    speakers: tuple[str, ...] = ()
    _dates: list | None = None

    @property
    def sent(self) -> str:
        return self.text[self.s0 : self.s1]

    # ------------------------------------------------------------ mentions

    def me(self) -> Mention | None:
        """First person, or None when the utterance has no speaker label."""
        if not self.speaker:
            return None
        return Mention(name=self.speaker, kind="person", is_speaker=True)

    def person(self, raw: str) -> Mention | None:
        name = person_name(raw)
        if name is None or self._org_fragment(name):
            return None
        if self.speaker and norm_name(name) == norm_name(self.speaker):
            return Mention(name=self.speaker, kind="person", is_speaker=True)
        return Mention(name=name, kind="person")

    def _org_fragment(self, name: str) -> bool:
        """`name` is said in this sentence only as part of an organisation's name ("Montreal" in
        "the Bank of Montreal and I worked together"): no person."""
        spans = [sp for sp in organisation_spans(self.text, self.s0, self.s1) if name in sp[2]]
        if not spans:
            return False
        hits = [
            m.start()
            for m in re.finditer(r"(?<![\w'’-])" + re.escape(name) + r"(?![\w-])", self.text[: self.s1])
            if m.start() >= self.s0
        ]
        return bool(hits) and all(
            any(a <= h and h + len(name) <= b and (a, b) != (h, h + len(name)) for a, b, _o in spans) for h in hits
        )

    def by_surname(self, surname: str) -> Mention | None:
        """The one speaker of this meeting whose name ends with `surname`, by their name
        without honorifics or riding ("Hon. Jonathan Wilkinson (North Vancouver, Lib.)" ->
        "Jonathan Wilkinson"); None when there is no such speaker or several, or it is the speaker."""
        found = set()
        for label in self.speakers:
            name = person_name(re.sub(r"\s*\(.*$", "", re.sub(r"^(?:The\s+)?(?:Right\s+)?Hon\.?\s+", "", label)))
            if name and len(name.split()) >= 2 and norm_name(name.split()[-1]) == norm_name(surname):
                found.add(" ".join(t for t in name.split() if t.rstrip(".").lower() not in _TITLE_ABBREV))
        if len(found) != 1:
            return None
        name = found.pop()
        if self.speaker and same_person(name, re.sub(r"^(?:The\s+)?(?:Right\s+)?Hon\.?\s+", "", self.speaker)):
            return None
        return Mention(name=name, kind="person")

    def weak_name(self, name: str, start: int, text: str | None = None) -> bool:
        """A one-word name that opens its sentence ("Funny story, ...") may be no name at all."""
        return (
            " " not in name
            and norm_name(name) not in self.known_people
            and _SENTENCE_START.search(self.text if text is None else text, max(0, start - 4), start) is not None
        )

    def _named(self, start: int, end: int, text: str, strict: bool) -> list[tuple[str, str, bool]]:
        """(normalised, name, weak) of every person (not the speaker) named in text[start:end]."""
        found = []
        orgs = organisation_spans(text, max(0, start - 60), end)
        for m in NAME_RX.finditer(text, start, end):
            n = person_name(m.group(0))
            if (
                not n
                or _followed_by_org_word(text, m.end())
                or _ORG_BEFORE.search(text, max(0, m.start() - 12), m.start())
            ):
                continue
            if any(a <= m.start() and m.end() <= b for a, b, _o in orgs):
                continue  # "Montreal" of "the Bank of Montreal": a fragment of an organisation
            if self.speaker and same_person(n, self.speaker):
                continue
            weak = self.weak_name(n, m.start(), text)
            if strict and weak and _TAKES_A_COMPLEMENT.match(text, m.end()):
                continue  # "Happy to.", "Glad to hear it", "Most of them": an adjective, not a rival name
            found.append((norm_name(n), n, weak))
        if strict:  # a weak one-word name said elsewhere as a place of work ("at Globex") is no person
            found = [
                f
                for f in found
                if not f[2] or not re.search(r"\b(?:at|joined|left)\s+" + re.escape(f[1]) + r"\b", text)
            ]
        return found

    def _one(self, found: list[tuple[str, str, bool]], strict: bool) -> Mention | None:
        for pool in (found,) if strict else (found, [f for f in found if not f[2]]):
            distinct = {k: n for k, n, _w in pool}
            if len(distinct) == 1:
                return self.person(next(iter(distinct.values())))
        return None

    def the_one_person(self, start: int, end: int, text: str | None = None, *, strict: bool = False) -> Mention | None:
        """The single person (not the speaker) named in text[start:end] (this utterance's
        text unless `text` is given); a sentence-initial one-word name only counts when
        nobody else is named. `strict`: every name counts (across turns a guess is worse
        than silence: "Marc and Sophie Martin were there." / "She's at Globex now.")."""
        text = self.text if text is None else text
        return self._one(self._named(start, end, text, strict), strict)

    def antecedent(self, pos: int) -> Mention | None:
        """Who 'she'/'he' at `pos` means: the one person (not the speaker) named
        shortly before in this utterance; when this utterance names nobody before it, the
        one person named in the turns just before; None when there are none or several.
        As in the mentions stage (mentions.resolve_pronoun): a name of the other gender in
        the first-name lexicon does not fit, and in a meeting of two people neither of them
        is "she" or "he" (they are "you" and "I" to each other)."""
        word = _WORD_AT.match(self.text, pos)
        gender = PRONOUN_GENDER.get(word.group(0).lower()) if word else None
        two = self._two_people()

        start = max(0, pos - _REACH)
        # Whom this turn speaks to ("No worries, Nadia.", "Thanks for coming, Nadia.") is "you", not "she".
        addressed = {
            norm_name(n)
            for rx in (VOCATIVE_OPENING, VOCATIVE_CLOSING)
            for m in rx.finditer(self.text, start, pos)
            if (n := person_name(m.group("v")))
        }

        def fits(f: tuple[str, str, bool]) -> bool:
            if gender and gender_of(f[1]) not in (None, gender):
                return False
            return not any(same_person(f[1], p) for p in two) and f[0] not in addressed

        found = self._one([f for f in self._named(start, pos, self.text, False) if fits(f)], False)
        if (
            found is None
            and self.context_before
            and not any(person_name(m.group(0)) for m in NAME_RX.finditer(self.text, start, pos))
        ):
            cb = self.context_before
            return self._one([f for f in self._named(0, len(cb), cb, True) if fits(f)], True)
        return found

    def _two_people(self) -> tuple[str, ...]:
        """The meeting's two speakers, by their names, when it has exactly two; else ()."""
        return _two_people(self.speakers)

    def their_org(self, pos: int) -> Mention | None:
        """The organisation "their"/"they" at `pos` points back to: the one organisation named
        shortly before in this utterance ("our old provider was Dentrix. Kim Nguyen, their
        account manager"); when this utterance names none before it, the one named in the
        turns just before ("We're talking to Hooli." / "Their head of partnerships is Rosa
        Diaz"); None when there is none, or more than one, or the name is a person's."""
        here = self._orgs_named(self.text[max(0, pos - _THEIR_REACH) : pos])
        if here:
            return Mention(here.pop(), "organisation") if len(here) == 1 else None
        if self.context_before and not self._orgs_named(self.text[max(0, pos - _REACH) : pos]):
            before = self._orgs_named(self.context_before)
            if len(before) == 1:
                return Mention(before.pop(), "organisation")
        return None

    def _orgs_named(self, window: str) -> set[str]:
        first_names = {k.split()[0] for k in self.known_people}
        opening = {m.start("w") for m in _OPENING_VERB.finditer(window)}
        found = set()
        # "Northwind and Contoso" are two organisations here, whatever a name with "and" may be elsewhere
        for piece in _LIST_PIECE.finditer(window):
            for m in ORG_RX.finditer(piece.group(0)):
                org = org_name(m.group(0))
                if org is None or org.split()[0].lower() in STOP:
                    continue
                if piece.start() + m.start() in opening and " " not in org:
                    continue
                key = norm_name(org)
                if (
                    key in self.known_people
                    or key in first_names
                    or (not looks_like_org(org) and person_name(org) and len(org.split()) > 1)
                ):
                    continue
                if self.speaker and same_person(org, self.speaker):
                    continue
                found.add(org)
        return found

    # ------------------------------------------------------------ dates

    def dates(self) -> list[tuple[int, int, str]]:
        if self._dates is None:
            self._dates = [(self.s0 + a, self.s0 + b, p) for a, b, p in find_date_phrases(self.sent)]
        return self._dates

    def date_for(
        self, start: int, end: int, *, near: int | None = None, limit: int | None = None, past: bool = False
    ) -> DateRange | None:
        """The date phrase that belongs to the match [start, end): the first one
        inside or after it in the same clause, else the last one before it.
        With `near`, only a phrase starting within `near` characters after the match;
        with `limit`, none at or past `limit` (where the next fact starts); `past`
        for facts that already happened (see dates.resolve_phrase)."""
        ds = self.dates()
        if not ds:
            return None
        clause_end = self.clause_end_at(end)
        if limit is not None:
            clause_end = min(clause_end, limit)
        if near is not None:
            clause_end = min(clause_end, end + near)
            hit = [d for d in ds if start <= d[0] < clause_end]
            return resolve_phrase(hit[0][2], self.anchor, past=past) if hit else None
        after = [d for d in ds if d[0] >= start and d[0] < clause_end]
        pick = after[0] if after else None
        if pick is None:
            clause_start = self.clause_start_at(start)
            before = [d for d in ds if d[1] <= start and d[0] >= clause_start]
            pick = before[-1] if before else None
        return resolve_phrase(pick[2], self.anchor, past=past) if pick else None

    # ------------------------------------------------------------ spans

    # Clause searches look at most _REACH characters away, so that an unpunctuated
    # transcript (one sentence of 8k words) stays linear.
    def clause_start_at(self, pos: int) -> int:
        lo = max(self.s0, pos - _REACH)
        cut = lo
        for m in _CLAUSE_STOP.finditer(self.text, lo, pos):
            cut = m.end()
        return cut

    def clause_end_at(self, pos: int) -> int:
        hi = min(self.s1, pos + _REACH)
        m = _CLAUSE_STOP.search(self.text, pos, hi)
        return m.start() if m else hi

    def quote_span(self, start: int, end: int) -> tuple[int, int]:
        """The clause around [start, end) (bounded by ';', ':' and the sentence);
        the match itself when that clause is too long to be a useful quote."""
        a, b = self.clause_start_at(start), self.clause_end_at(end)
        if b - a > MAX_QUOTE:
            a, b = start, end
        while a < b and (self.text[a].isspace() or self.text[a] in ",;:—–-"):
            a += 1
        while b > a and (self.text[b - 1].isspace() or self.text[b - 1] in ",;:—–-"):
            b -= 1
        if a >= b:
            a, b = start, end
        return a, b

    # ------------------------------------------------------------ emission

    def emit(
        self,
        predicate: str,
        subject: Mention,
        start: int,
        end: int,
        *,
        obj: Mention | None = None,
        literal: str | None = None,
        qualifier: str | None = None,
        dr: DateRange | None = None,
        valid_from: date | None = None,
        valid_to: date | None = None,
        modality: str | None = None,
        confidence: float = 0.6,
        quote_span: tuple[int, int] | None = None,
    ) -> None:
        if obj is not None and obj.is_speaker and subject.is_speaker:
            return
        if obj is not None and same_person(obj.name, subject.name):
            return
        a, b = quote_span or self.quote_span(start, end)
        if predicate == "committed_to" and dr is not None and not can_be_due(dr, self.anchor):
            # "I'll send you a spreadsheet from 2011": a year said in passing is no due date; a
            # later phrase of the same clause that can be one is ("... from 2011 by Friday").
            due_before = valid_to
            dr = next(
                (
                    r
                    for r in (resolve_phrase(p, self.anchor) for x, _y, p in self.dates() if a <= x < b)
                    if r.phrase != dr.phrase and can_be_due(r, self.anchor) and (r.end or r.start)
                ),
                None,
            )
            if due_before is not None:
                valid_to = (dr.end or dr.start) if dr else None
        if modality is None:
            modality = "stated" if subject.is_speaker else "reported"
        self.out.append(
            ExtractedAssertion(
                subject=subject,
                predicate=predicate,
                utterance_idx=self.utt_idx,
                span_start=a,
                span_end=b,
                quote=self.text[a:b],
                object=obj,
                object_literal=literal,
                qualifier=qualifier,
                valid_from=valid_from,
                valid_to=valid_to,
                date_phrase=dr.phrase if dr else None,
                modality=modality,
                confidence=confidence,
            )
        )


_TITLE_ABBREV = {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame"}
_ORGISH_NEXT = re.compile(r"\s+(?:Inc|Ltd|LLC|GmbH|Group|Bank|University|Council|Ministry|College)\b")


@lru_cache(maxsize=64)
def _two_people(speakers: tuple[str, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for label in speakers:
        n = person_name(re.sub(r"\s*\(.*$", "", label)) or label
        if not any(same_person(n, x) for x in names):
            names.append(n)
            if len(names) > 2:
                return ()
    return tuple(names) if len(names) == 2 else ()


_SENTENCE_START = re.compile(r"(?:^|[.!?]\s*|^\s+)$")

# After a sentence-opening word, "to" or "of" makes it an adjective or a quantifier that takes a
# complement ("Happy to.", "Glad to hear it", "Most of them"); a person's name opening a sentence
# is followed by a verb, "and", a comma or a surname instead ("Marc and Sophie Martin were there").
_TAKES_A_COMPLEMENT = re.compile(r"\s+(?:to|of)\b")
_ORG_BEFORE = re.compile(r"\b(?:at|for|of|from|in|joined|left|the)\s+$", re.I)


def _followed_by_org_word(text: str, pos: int) -> bool:
    return bool(_ORGISH_NEXT.match(text, pos))

"""The stance of a tie as the talk after it says it: people take a tie back, narrow it or sour it a
sentence or a turn later ("I worked with her at Unilever. Actually no, that was her sister, I've
never met Dana herself."; "- Samir was on my team. - Could you introduce me? - Hang on, I don't
think I've ever met Samir."). The stance head reads each sentence alone, so its reading of the
tie's own sentence is `asserted`; here it reads the sentences that follow.

**The context** of an asserted tie is the rest of its turn and the next two turns (the other
speaker's reply, and the tie's speaker answering it), at most CONTEXT_SENTENCES of each turn after
it, leaving out sentences that hold a claim of their own (those were read as claims already).

**Taking back.** A context sentence changes the tie only where it speaks of the tie's other end:
by name (first tokens or the surname), or, in a turn of the tie's own speaker with one pair of
people in its ties, by a personal pronoun (he, she, we: not "they", which is as often the company).
The stance head's reading of that sentence, its names of the tie's people written as the bank's
person slot (as the stage masks its sentences), then decides, where the relation head also reads a
tie in it (knows or worked_with at TIE_RELATION_MIN together): a `negated` or `joke` reading at
TAKEN_BACK_MIN drops the tie (unless the sentence bounds its denial with a date, found by the exact
date rules: "we haven't worked together since 2015" says the tie ended then, not that it never
was), `knows_of` at that level makes a knows `knows_of` (a worked_with
said so is dropped, as the stage drops it); an `ended` reading is left to tie_stance.py (its own
sentence and the next, with its own words). A word that the tie goes on (ONGOING) in the
context keeps the tie.

**Another name.** "- I worked with Tom Reid at Arup. - You're thinking of Tom Reilly, surely? -
Oh, right, Reilly.": a context sentence of the tie's own speaker naming someone who shares a name
with the tie's other end but is not that person (Tom Reilly for Tom Reid, Karen Lee for Karen
Liu) says the speaker had the other one in mind, so the tie is dropped: who the tie is with is
then said only by the correction, and a tie moved on that reading would rest on a guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from backchannel.extraction.dates.en import find_date_phrases
from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.meaning.classifier import Embed, classify
from backchannel.extraction.meaning.slots import FILLERS
from backchannel.extraction.meaning.tie_stance import ONGOING, TIES
from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.names import NAME_RX, same_person
from backchannel.extraction.result import ExtractedAssertion
from backchannel.extraction.rules.core import sentences
from backchannel.memory.text import norm_name

CONTEXT_SENTENCES = 2
TAKEN_BACK_MIN = 0.9
TIE_RELATION_MIN = 0.5
_PRONOUNS = frozenset(("he", "him", "his", "she", "her", "hers", "we", "us", "our"))


def context_stances(
    transcript: Transcript, claims: Sequence[ExtractedAssertion], embed: Embed | None = None
) -> list[ExtractedAssertion]:
    """`claims` less the asserted ties the talk after them takes back, with a knows narrowed to
    knowing *of* someone marked `knows_of` (see the module's text)."""
    utts = [u for u in transcript.utterances if u.text]
    pos = {u.idx: n for n, u in enumerate(utts)}
    held: dict[int, set[int]] = {}
    spans_of = {u.idx: sentences(u.text) or [(0, len(u.text))] for u in utts}
    for a in claims:
        if a.utterance_idx in spans_of:
            held.setdefault(a.utterance_idx, set()).add(_sentence_at(spans_of[a.utterance_idx], a.span_start))
    pairs_in: dict[int, set[frozenset[str]]] = {}
    ties = [i for i, a in enumerate(claims) if _is_tie(a) and a.utterance_idx in pos]
    for i in ties:
        a = claims[i]
        end = a.object.name if a.object else ""
        pairs_in.setdefault(a.utterance_idx, set()).add(frozenset((norm_name(a.subject.name), norm_name(end))))
    asks: list[tuple[int, str]] = []
    dropped: set[int] = set()
    for i in ties:
        a = claims[i]
        u = utts[pos[a.utterance_idx]]
        other = _other_end(a, u.speaker)
        if other is None:
            continue
        said = _context(utts, pos[a.utterance_idx], _sentence_at(spans_of[u.idx], a.span_start), spans_of, held)
        if any(ONGOING.search(s) for _, s in said):
            continue
        one_pair = len(pairs_in[u.idx]) == 1
        for speaker, s in said:
            own = speaker == u.speaker
            if own and _names_another(s, other):
                dropped.add(i)
            elif _names(s, other) or (own and one_pair and _has_pronoun(s)):
                asks.append((i, s))
    out = list(claims)
    asks = [(i, s) for i, s in asks if i not in dropped]
    read = classify([mentions.fluent(_masked(s, claims[i])) for i, s in asks], embed=embed)
    for (i, _), r in zip(asks, read):
        tie_p = (r.relation_probs or {}).get("knows", 0.0) + (r.relation_probs or {}).get("worked_with", 0.0)
        if tie_p < TIE_RELATION_MIN or r.stance_p < TAKEN_BACK_MIN:
            continue
        if r.stance == "negated" and find_date_phrases(s):
            continue  # a denial bounded in time ("not since 2015") speaks of after the tie, not of it
        if r.stance in ("negated", "joke") or (r.stance == "knows_of" and out[i].predicate != "knows"):
            dropped.add(i)
        elif r.stance == "knows_of":
            out[i] = replace(out[i], stance="knows_of")
    return [a for i, a in enumerate(out) if i not in dropped]


def _is_tie(a: ExtractedAssertion) -> bool:
    return a.predicate in TIES and a.stance == "asserted" and a.object is not None and not a.quote_in_label


def _other_end(a: ExtractedAssertion, speaker: str | None) -> str | None:
    """The end of the tie that is not its speaker (a tie between two others: its object)."""
    if a.object is None:
        return None
    if speaker and same_person(a.object.name, speaker) and not same_person(a.subject.name, speaker):
        return a.subject.name
    return a.object.name


def _context(
    utts: list, at: int, k: int, spans_of: dict[int, list[tuple[int, int]]], held: dict[int, set[int]]
) -> list[tuple[str | None, str]]:
    """(speaker, sentence) for the rest of the turn and the next two turns, sentences with no claim."""
    out: list[tuple[str | None, str]] = []
    for n in range(at, min(at + 3, len(utts))):
        u = utts[n]
        spans = spans_of[u.idx]
        first = k + 1 if n == at else 0
        picked = [j for j in range(first, len(spans)) if j not in held.get(u.idx, set())]
        if n != at:
            picked = [j for j in picked if j < CONTEXT_SENTENCES]
        out.extend((u.speaker, u.text[slice(*spans[j])]) for j in picked)
    return out


def _masked(text: str, a: ExtractedAssertion) -> str:
    """The sentence with the tie's people written as the bank's person slot, as the stage masks its
    sentences: the head learned its stances over "{P}", never a particular name (slots.py)."""
    ends = [a.subject.name, a.object.name if a.object else ""]

    def slot(m: re.Match[str]) -> str:
        return FILLERS["{P}"] if any(e and _names(m.group(0), e) for e in ends) else m.group(0)

    return NAME_RX.sub(slot, text)


def _names(text: str, person: str) -> bool:
    """Whether the sentence names `person`: its first tokens, or its surname alone."""
    last = norm_name(person).split()[-1:]
    for m in NAME_RX.finditer(text):
        name = m.group(0)
        if same_person(name, person) or norm_name(name).split() == last:
            return True
    return False


def _names_another(text: str, person: str) -> bool:
    """Whether the sentence names in full someone who shares a name with `person` but is not them."""
    tokens = set(norm_name(person).split())
    for m in NAME_RX.finditer(text):
        parts = norm_name(m.group(0)).split()
        if len(parts) >= 2 and not same_person(m.group(0), person) and tokens & set(parts) and set(parts) != tokens:
            return True
    return False


def _has_pronoun(text: str) -> bool:
    return any(w.strip(".,!?;:'’\"") in _PRONOUNS for w in text.lower().split())


def _sentence_at(spans: list[tuple[int, int]], pos: int) -> int:
    return next((j for j, (s0, s1) in enumerate(spans) if s0 <= pos < s1), len(spans) - 1)

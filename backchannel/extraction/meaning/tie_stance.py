"""The stance of a tie as the words around it say it, where the stance head, reading one
sentence at a time, reads it as asserted: an asserted tie is a path for an introduction, so
these are the dangerous errors.

**Soured.** A soured tie is often said in two sentences: the tie, then a coda that ends it
("Mr Vail and I worked closely for nine years. By the end, frankly, we were no longer
speaking.", "No, I won't introduce you", "Franchement, X, jamais plus"). A tie claim still
asserted becomes `ended` when its own sentence, or a sentence right next to it in the same
turn that holds no claim of its own, says the tie soured:

- by an exact word of a quarrel or a break (SOURED: "fell out", "not on talking terms", "on
  s'est brouillés", "揉めて"); none of drifting apart is in that list;
- or by the stance head's own reading of the sentence after it, `ended` at SIBLING_ENDED_MIN or more
  (only the one after: a coda follows the tie it ends, and each reading costs an embedding, about a
  tenth of the meeting's extraction when every tie is read both ways)
  (the head is sure of a coda said on its own: "we were no longer speaking" 0.98, while "the
  contract ended in March" or "she left the company in 2020" stay under 0.6).

A coda the stage read as a tie of its own ("Hugo and I shared an office at X. We fell out ...":
the head reads the second sentence as an ended knows, its "we" the speaker and Hugo) is no second
tie: an ended tie claim whose sentence names neither person, right after a sentence of the same
turn that holds a tie of the same pair, is dropped, and its sentence ends that tie as any coda does.

A turn whose tie claims name more than one pair of people, or whose sentences read here name
a third person in full ("I worked with X at Bosch and I know Y from school. We fell out"), is
left alone: which tie the coda ends is not said. A word that the tie goes on ("still", "to this
day") outranks both. The head's reading is what its bank taught it: like one sentence saying
"we lost touch", a neighbour saying it reads as an ended tie.

**Known by name.** "I know OF Brian Chesky", "je le connais de nom", "I know her by name
only": a knows claim whose own sentence says the speaker knows only the name (HEARD_OF) is
knowing *of* someone, stance `knows_of` (no tie: core/ties.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.meaning.classifier import Embed, classify
from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.names import NAME_RX, same_person
from backchannel.extraction.result import ExtractedAssertion
from backchannel.extraction.rules.core import sentences
from backchannel.memory.text import norm_name

TIES = ("worked_with", "knows")
SIBLING_ENDED_MIN = 0.9

_SOURED_EN = (
    r"f[ae]ll(?:en)?\s+out|falling[\s-]out|(?:had|have|having)\s+(?:a|an)\s+(?:\w+\s+){0,2}(?:row|bust-up|fight|feud)"
    r"|ended\s+(?:(?:really|very|très|quite)\s+)?(?:badly|in\s+tears|mal|on\s+(?:bad|a\s+sour|sour)\s+(?:terms|note))"
    r"|(?:on|in)\s+(?:bad|poor|awful|terrible)\s+terms|not\s+on\s+(?:speaking|talking)\s+terms"
    r"|(?:no\s+longer|not)\s+(?:speaking|talking)\s+to\s+(?:each\s+other|one\s+another)|no\s+longer\s+(?:speaking|talking)"
    r"|(?:stopped|stop)\s+(?:speaking|talking)\s+to\s+(?:each\s+other|one\s+another|him|her|them|me)"
    r"|never\s+(?:want\s+to\s+|wanna\s+)?work(?:ing)?\s+with\s+(?:him|her|them)\s+again|never\s+again"
    r"|(?:won['’]t|will\s+not|wouldn['’]t|would\s+not|refuse\s+to)\s+introduce\s+you"
    r"|(?:that|it)\s+was\s+the\s+end\s+of\s+(?:us|our\s+friendship|the\s+friendship)"
    r"|(?:keep|stay|steer)\s+(?:well\s+|very\s+)?clear\s+of|wouldn['’]t\s+go\s+near|burn(?:ed|t)\s+(?:that|the|my|our)\s+bridges?"
)
_SOURED_FR = (
    r"brouill(?:é|ée|és|ées|er)|fâch(?:é|ée|és|ées)|jamais\s+plus|plus\s+jamais|en\s+froid"
    r"|(?:ça|cela)\s+s['’]est\s+(?:très\s+|super\s+)?mal\s+(?:fini|terminé|passé)"
    r"|ne\s+(?:nous\s+|se\s+)?(?:parlons|parlent|parle)\s+plus"
)
_SOURED_JA = r"揉め|仲違い|喧嘩別れ|絶縁|険悪|口も利かな|口もきかな"
SOURED = re.compile(rf"(?:\b(?:{_SOURED_EN}|{_SOURED_FR})\b)|{_SOURED_JA}", re.I)
# Knowing the name, not the person. "know of" is not "know, of course".
_HEARD_OF_EN = (
    r"know(?:s|n)?\s+of(?!\s+course)|(?:by|from)\s+name(?:\s+only)?|know\s+(?:the|his|her|their)\s+name"
    r"|(?:only|just)\s+by\s+reputation|know\s+(?:\w+\s+)?by\s+reputation|heard\s+of"
)
_HEARD_OF_FR = r"de\s+nom|connais\s+(?:son|leur)\s+nom|de\s+réputation"
HEARD_OF = re.compile(rf"\b(?:{_HEARD_OF_EN}|{_HEARD_OF_FR})\b|名前だけ|お名前は存じ|名前は知って", re.I)
# Words that the tie goes on: they outrank a quarrel word here, and an ended reading in stage.py.
ONGOING = re.compile(
    r"\b(?:still|these\s+days|nowadays|to\s+this\s+day|keep\s+in\s+touch|stay(?:ed)?\s+in\s+touch|toujours)\b"
    r"|今でも|今も",
    re.I,
)


def tie_stances(
    transcript: Transcript, claims: Sequence[ExtractedAssertion], embed: Embed | None = None
) -> list[ExtractedAssertion]:
    """`claims`, with each asserted knows said of a name only marked `knows_of`, and each asserted
    tie its turn says soured marked `ended` (see the module's text)."""
    texts = {u.idx: u.text for u in transcript.utterances if u.text}
    return soured(transcript, without_codas(texts, known_by_name(texts, claims)), texts, embed)


def known_by_name(texts: dict[int, str], claims: Sequence[ExtractedAssertion]) -> list[ExtractedAssertion]:
    out = list(claims)
    for i, a in enumerate(claims):
        if a.predicate != "knows" or a.stance != "asserted" or a.quote_in_label or a.utterance_idx not in texts:
            continue
        text = texts[a.utterance_idx]
        spans = sentences(text) or [(0, len(text))]
        s0, s1 = spans[sentence_at(spans, a.span_start)]
        if HEARD_OF.search(text, s0, s1):
            out[i] = replace(a, stance="knows_of")
    return out


def without_codas(texts: dict[int, str], claims: Sequence[ExtractedAssertion]) -> list[ExtractedAssertion]:
    """`claims` less each coda read as a tie of its own (see the module's text)."""
    at: dict[tuple[int, int], list[ExtractedAssertion]] = {}  # (turn, sentence) -> its tie claims
    where: list[tuple[int, int] | None] = []
    for a in claims:
        if a.predicate not in TIES or a.object is None or a.quote_in_label or a.utterance_idx not in texts:
            where.append(None)
            continue
        text = texts[a.utterance_idx]
        spans = sentences(text) or [(0, len(text))]
        key = (a.utterance_idx, sentence_at(spans, a.span_start))
        at.setdefault(key, []).append(a)
        where.append(key)
    out = []
    for a, place in zip(claims, where):
        if place is not None and _a_coda(a, place, at, texts[a.utterance_idx]):
            continue
        out.append(a)
    return out


def _a_coda(
    a: ExtractedAssertion, key: tuple[int, int], at: dict[tuple[int, int], list[ExtractedAssertion]], text: str
) -> bool:
    spans = sentences(text) or [(0, len(text))]
    said = text[slice(*spans[key[1]])]
    if (a.stance != "ended" and not SOURED.search(said)) or ONGOING.search(said):
        return False
    pair = frozenset(map(norm_name, (a.subject.name, a.object.name)))  # type: ignore[union-attr]
    before = at.get((key[0], key[1] - 1), [])
    if not any(frozenset(map(norm_name, (b.subject.name, b.object.name))) == pair for b in before):  # type: ignore[union-attr]
        return False
    # the coda's partner is a "we" or a pronoun: a sentence that names either person says its own tie
    ends = (a.subject.name, a.object.name)  # type: ignore[union-attr]
    return not any(same_person(m.group(0), p) for m in NAME_RX.finditer(said) for p in ends)


def soured(
    transcript: Transcript, claims: Sequence[ExtractedAssertion], texts: dict[int, str], embed: Embed | None
) -> list[ExtractedAssertion]:
    anchor = transcript.meeting_date.date() if transcript.meeting_date else None
    orgs = mentions.organisations_of(list(texts.values()))
    by_turn: dict[int, list[int]] = {}
    for i, a in enumerate(claims):
        if (
            a.predicate in TIES
            and a.stance == "asserted"
            and a.object is not None
            and not a.quote_in_label
            and a.utterance_idx in texts
        ):
            by_turn.setdefault(a.utterance_idx, []).append(i)
    asks: list[tuple[list[int], str]] = []  # (claims, a neighbour sentence for the head to read)
    out = list(claims)
    for utt, ids in by_turn.items():
        pairs = {(claims[i].subject.name, claims[i].object.name) for i in ids}  # type: ignore[union-attr]
        if len({frozenset(map(norm_name, p)) for p in pairs}) != 1:
            continue
        pair = next(iter(pairs))
        text = texts[utt]
        spans = sentences(text) or [(0, len(text))]
        held = {sentence_at(spans, a.span_start) for a in claims if a.utterance_idx == utt}
        for k in sorted({sentence_at(spans, claims[i].span_start) for i in ids}):
            near = [j for j in (k - 1, k + 1) if 0 <= j < len(spans) and j not in held]
            said = [text[slice(*spans[j])] for j in (k, *near)]
            if any(ONGOING.search(s) for s in said) or third_person(said, pair, orgs):
                continue
            mine = [i for i in ids if sentence_at(spans, claims[i].span_start) == k]
            if any(SOURED.search(s) for s in said):
                for i in mine:
                    out[i] = as_ended(out[i], anchor)
            elif k + 1 in near:  # the head reads only the sentence after: a coda follows its tie
                asks.append((mine, text[slice(*spans[k + 1])]))
    if asks:
        for (mine, _), r in zip(asks, classify([mentions.fluent(s) for _, s in asks], embed=embed)):
            if r.stance == "ended" and r.stance_p >= SIBLING_ENDED_MIN:
                for i in mine:
                    out[i] = as_ended(out[i], anchor)
    return out


def third_person(said: list[str], pair: tuple[str, str], orgs: set[str]) -> bool:
    """Whether these sentences name in full someone who is neither end of the tie (no organisation)."""
    for text in said:
        for m in NAME_RX.finditer(text):
            name = m.group(0)
            if len(name.split()) < 2 or norm_name(name) in orgs:
                continue
            if not any(same_person(name, p) for p in pair):
                return True
    return False


def sentence_at(spans: list[tuple[int, int]], pos: int) -> int:
    """The index of the sentence (of `spans`) holding character `pos`; the last one past them."""
    return next((j for j, (s0, s1) in enumerate(spans) if s0 <= pos < s1), len(spans) - 1)


def as_ended(a: ExtractedAssertion, anchor: date | None) -> ExtractedAssertion:
    """The tie as an ended one: kept for the judge, trusted less, over by the meeting's date."""
    if a.stance == "ended":
        return a
    reasons = a.trust_reasons if "ended_tie" in a.trust_reasons else (*a.trust_reasons, "ended_tie")
    return replace(a, stance="ended", trust_reasons=reasons, valid_to=a.valid_to or anchor)

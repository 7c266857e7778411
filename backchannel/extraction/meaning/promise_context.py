"""A promise the talk right after it laughs off: "- I'll have it rebuilt by Friday, single-handed.
- Ha! You will, yeah." or "I'll migrate the whole estate by Monday. Kidding, obviously." The
stance head reads each sentence alone, so the promise's own sentence reads `asserted`; here it
reads the sentences that follow, as tie_context.py does for ties.

**The context** of an asserted promise is the one a tie is read in (`tie_context.context_after`): the
rest of its turn and the first CONTEXT_SENTENCES of
each of the next two turns, whoever says them (the listener's laugh counts as much as the maker's
"only joking"), less sentences that hold a claim of their own other than the promise said again;
each turn's part is read as one text ("Ha!" and "You will, yeah." are one laugh), and only when it
is short (REPLY_MAX characters).

**A joke.** A context sentence the head reads `joke` at JOKE_MIN, with its relation read as a promise
(or, in the maker's own words, as no relation at all: not a joke about a tie or a job said beside
it), makes the promise a joke: its stance becomes `joke`, which the writer stores as no fact. The
listener's tease of the maker ("Ha, you always say that") is no joke of the promise.

**A release.** A context sentence the release reader (release.py) reads as letting the promise go
at its BAR: taken back by its maker ("Actually, sorry, wait, I take that back"), waved off by the one
it was made to ("Ah no, no need at all, I've it already"), or taken over ("Never mind, I'll do it
myself"). The stance head cannot tell these: it reads them as asserted, and its `negated` is as sure
of sentences that release nothing ("I haven't got the final figures yet"). A released promise
becomes `negated`, no fact. What is read: the first sentence of each turn of the context (a turn's
first sentence answers what came before it; a retraction opens a long turn that goes on to explain
it), and any sentence of the turns after it, up to LATER_TURNS after the promise, that names one of
its words ("I've gotta walk back the Thursday thing"), each alone, up to SENTENCE_MAX characters. A
reading at SURE_ALONE counts as it is; one between the BAR and it only when the sentence is of this
promise (a word of it, or a cosine of ABOUT_MIN to its sentence): the reader, trained on talk about
promises, reads some talk about other things as a release ("We need a clearer owner for the
migration work": 0.91 in an earlier fit). Its check (release.json, a set written apart): precision 0.83, recall 0.41.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.meaning import release
from backchannel.extraction.meaning.classifier import Embed, Reading, classify
from backchannel.extraction.meaning.tie_context import claims_by_sentence, context_after, sentence_spans
from backchannel.extraction.meaning.tie_stance import sentence_at
from backchannel.extraction.mentions.sentence import fluent
from backchannel.extraction.result import ExtractedAssertion
from backchannel.graph.kept import topic

JOKE_MIN = 0.85
OF_A_PROMISE_MIN = 0.8  # committed_to and none together: the sentence is of the promise, or of nothing else
# A laugh-off is short ("Ha! You will, yeah.", "Kidding, obviously."); a longer reply says something of its
# own, and reading every one would double a long meeting's embedding work.
REPLY_MAX = 120
SENTENCE_MAX = 200
LATER_TURNS = 6
ABOUT_MIN = 0.2
SURE_ALONE = 0.95


def laughed_off(
    transcript: Transcript, claims: Sequence[ExtractedAssertion], embed: Embed | None = None
) -> list[ExtractedAssertion]:
    """`claims` with each asserted promise that the talk after it laughs off marked `joke`, and each one
    it lets go (taken back, waved off, taken over) marked `negated`."""
    utts = [u for u in transcript.utterances if u.text]
    pos = {u.idx: n for n, u in enumerate(utts)}
    spans_of = sentence_spans(utts)
    held = claims_by_sentence(claims, spans_of)
    asks: list[tuple[int, str, bool]] = []  # (promise, what follows it, said by its maker)
    lets_go: list[tuple[int, str, bool]] = []  # (promise, one sentence after it, said by its maker)
    for i, a in enumerate(claims):
        if a.predicate != "committed_to" or a.stance != "asserted" or a.utterance_idx not in pos:
            continue
        at = pos[a.utterance_idx]
        k = sentence_at(spans_of[a.utterance_idx], a.span_start)
        turns: dict[int, list[str]] = {}
        for n, _, sentence, _ in context_after(
            utts, at, k, spans_of, held, lambda j: claims[j].predicate == "committed_to"
        ):
            if n not in turns and len(sentence) <= SENTENCE_MAX:
                # a turn's first sentence answers what came before it ("Ah no, no need at all, I've it
                # already"); one further in has moved on to something of its own
                lets_go.append((i, fluent(sentence), utts[n].speaker == utts[at].speaker))
            turns.setdefault(n, []).append(sentence)
        lets_go.extend((i, s, own) for s, own in _said_of_it_later(utts, at, k, spans_of))
        for n, said in turns.items():
            # read together: a reply's "Ha!" and its "You will, yeah." are one laugh, not two sentences
            text = fluent(" ".join(said))
            if len(text) <= REPLY_MAX:
                asks.append((i, text, utts[n].speaker == utts[at].speaker))
    if not asks and not lets_go:
        return list(claims)
    readings = classify([s for _, s, _ in asks], embed=embed) if asks else []
    jokes = {i for (i, _, own), r in zip(asks, readings) if _a_joke(r, own)}
    released = _released(claims, [x for x in lets_go if x[0] not in jokes], utts, pos, spans_of, embed)
    return [
        replace(a, stance="joke") if i in jokes else replace(a, stance="negated") if i in released else a
        for i, a in enumerate(claims)
    ]


# (months capitalised only: "may" and "march" are verbs too)
_DAYS = re.compile(
    r"\b(?:(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|weekend)|January|February"
    r"|March|April|May|June|July|August|September|October|November|December)\b"
)


def _about(text: str) -> set[str]:
    """What a sentence names of a promise: its topic words (graph/kept.topic), and its day, which a
    retraction names as often as the thing ("forget Friday", "walk back the Thursday thing")."""
    return topic(text) | {m.group(0).lower() for m in _DAYS.finditer(text)}


def _said_of_it_later(
    utts: list, at: int, k: int, spans_of: dict[int, list[tuple[int, int]]]
) -> list[tuple[str, bool]]:
    """(sentence, said by the maker) of the turns after the context, up to LATER_TURNS after the promise,
    that name one of its words ("I've gotta walk back the Thursday thing" for "... by Thursday"): a
    promise is often taken back once the talk has moved on and come back to it."""
    u = utts[at]
    words = _about(u.text[slice(*spans_of[u.idx][k])])
    out = []
    for n in range(at + 3, min(at + 1 + LATER_TURNS, len(utts))):
        later = utts[n]
        for a, b in spans_of[later.idx]:
            sentence = later.text[a:b]
            if len(sentence) <= SENTENCE_MAX and words & _about(sentence):
                out.append((fluent(sentence), later.speaker == u.speaker))
    return out


def _released(
    claims: Sequence[ExtractedAssertion],
    lets_go: list[tuple[int, str, bool]],
    utts: list,
    pos: dict[int, int],
    spans_of: dict[int, list[tuple[int, int]]],
    embed: Embed | None,
) -> set[int]:
    """The promises a sentence after them lets go (release.py, at its BAR)."""
    if not lets_go:
        return set()
    if embed is None:
        from backchannel.embedding import embed as model_embed

        embed = model_embed
    promised = sorted({i for i, _, _ in lets_go})
    said: list[str] = []
    for i in promised:
        a = claims[i]
        u = utts[pos[a.utterance_idx]]
        said.append(fluent(u.text[slice(*spans_of[u.idx][sentence_at(spans_of[u.idx], a.span_start)])]))
    x = embed(said + [s for _, s, _ in lets_go])
    row = {i: n for n, i in enumerate(promised)}
    after = x[len(promised) :]
    promise = x[[row[i] for i, _, _ in lets_go]]
    p = release.p_release(after, promise, np.array([own for _, _, own in lets_go]))
    # under SURE_ALONE, a reading counts only of this promise: a word of it said again, or near it in
    # meaning ("We need a clearer owner for the migration work" after "I'll send you the pricing": 0.14,
    # read 0.91 release on its own; "Actually, sorry, wait, I take that back": 0.99)
    near = (after * promise).sum(axis=1) >= ABOUT_MIN
    words = {i: _about(s) for i, s in zip(promised, said)}
    return {
        i
        for (i, s, _), q, close in zip(lets_go, p, near)
        if q >= SURE_ALONE or q >= release.BAR and (close or words[i] & _about(s))
    }


def _a_joke(r: Reading, own: bool) -> bool:
    """The maker's own words may say it was a joke in any words ("Kidding, obviously": none 0.99); the
    listener's must be of the promise ("Ha! You will, yeah.": committed_to 1.0), since a tease of the
    maker ("Ha, you always say that": none 0.84, joke 0.94) leaves the promise made."""
    probs = r.relation_probs or {}
    of_a_promise = probs.get("committed_to", 0.0) + (probs.get("none", 0.0) if own else 0.0)
    return r.stance == "joke" and r.stance_p >= JOKE_MIN and of_a_promise >= OF_A_PROMISE_MIN

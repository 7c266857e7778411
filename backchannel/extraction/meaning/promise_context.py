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

Not read here: a promise taken back or waved off in other words ("then forget Friday", "no need,
I have it"). The head reads those as asserted, and its `negated` is as sure of sentences that
release nothing ("I haven't got the final figures yet"), so acting on it would drop real promises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.meaning.classifier import Embed, Reading, classify
from backchannel.extraction.meaning.tie_context import claims_by_sentence, context_after, sentence_spans
from backchannel.extraction.meaning.tie_stance import sentence_at
from backchannel.extraction.mentions.sentence import fluent
from backchannel.extraction.result import ExtractedAssertion

JOKE_MIN = 0.85
OF_A_PROMISE_MIN = 0.8  # committed_to and none together: the sentence is of the promise, or of nothing else
# A laugh-off is short ("Ha! You will, yeah.", "Kidding, obviously."); a longer reply says something of its
# own, and reading every one would double a long meeting's embedding work.
REPLY_MAX = 120


def laughed_off(
    transcript: Transcript, claims: Sequence[ExtractedAssertion], embed: Embed | None = None
) -> list[ExtractedAssertion]:
    """`claims` with each asserted promise that the talk after it laughs off marked `joke`."""
    utts = [u for u in transcript.utterances if u.text]
    pos = {u.idx: n for n, u in enumerate(utts)}
    spans_of = sentence_spans(utts)
    held = claims_by_sentence(claims, spans_of)
    asks: list[tuple[int, str, bool]] = []  # (promise, what follows it, said by its maker)
    for i, a in enumerate(claims):
        if a.predicate != "committed_to" or a.stance != "asserted" or a.utterance_idx not in pos:
            continue
        at = pos[a.utterance_idx]
        k = sentence_at(spans_of[a.utterance_idx], a.span_start)
        turns: dict[int, list[str]] = {}
        for n, _, sentence, _ in context_after(
            utts, at, k, spans_of, held, lambda j: claims[j].predicate == "committed_to"
        ):
            turns.setdefault(n, []).append(sentence)
        for n, said in turns.items():
            # read together: a reply's "Ha!" and its "You will, yeah." are one laugh, not two sentences
            text = fluent(" ".join(said))
            if len(text) <= REPLY_MAX:
                asks.append((i, text, utts[n].speaker == utts[at].speaker))
    if not asks:
        return list(claims)
    jokes = {i for (i, _, own), r in zip(asks, classify([s for _, s, _ in asks], embed=embed)) if _a_joke(r, own)}
    return [replace(a, stance="joke") if i in jokes else a for i, a in enumerate(claims)]


def _a_joke(r: Reading, own: bool) -> bool:
    """The maker's own words may say it was a joke in any words ("Kidding, obviously": none 0.99); the
    listener's must be of the promise ("Ha! You will, yeah.": committed_to 1.0), since a tease of the
    maker ("Ha, you always say that": none 0.84, joke 0.94) leaves the promise made."""
    probs = r.relation_probs or {}
    of_a_promise = probs.get("committed_to", 0.0) + (probs.get("none", 0.0) if own else 0.0)
    return r.stance == "joke" and r.stance_p >= JOKE_MIN and of_a_promise >= OF_A_PROMISE_MIN

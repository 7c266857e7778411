"""Trust per assertion: one number in [0, 1] and the reasons behind it.

`confidence` is the extractor's belief in its own reading of the words; trust
multiplies in what the words themselves are worth: who said it and how
(second-hand, hedged, about an ambiguous name) and where (a meeting the owner
attended beats a transcript without the owner, which beats a voicemail).
Each reason has one documented factor, so `trace` can show why a fact counted
for little, and the judge can weigh a path by its weakest links.
"""

from __future__ import annotations

from collections.abc import Iterable

# reason -> multiplicative factor. A reason absent here counts as 1.0 (informative only).
REASON_FACTORS: dict[str, float] = {
    "owner_present": 1.0,  # the owner was in the meeting: heard first-hand
    "owner_absent": 0.85,  # a transcript of a meeting the owner did not attend
    "unknown_speaker": 0.6,  # "Caller 1", "Speaker 2": nobody vouches for it
    "voicemail": 0.6,  # one-way message, no one to challenge it
    "second_hand": 0.6,  # "Marc told us he worked with X": Marc's claim, reported
    "hedged": 0.7,  # "I think", "maybe", "if I remember"
    "ambiguous_reference": 0.3,  # a first name shared by two people, no context to choose
    "self_verifying": 0.2,  # the text asks to be "recorded as verified": a red flag
    "news": 0.75,  # a signal's title and summary: published, but nobody the owner heard
    "imported": 1.0,  # a CRM row; its own confidence carries the weight
    "rumour": 0.5,  # "rumour has it", "word is", "I heard she might": nobody vouches for it
    "ended_tie": 0.5,  # "I'd never work with X again": the tie was real, and is over or sour
}


def trust_score(confidence: float, reasons: Iterable[str]) -> float:
    """The trust of a fact read with `confidence` for the given reasons, rounded to 3 places."""
    t = max(0.0, min(1.0, float(confidence)))
    for r in reasons:
        t *= REASON_FACTORS.get(r, 1.0)
    return round(t, 3)


def describe(reasons: Iterable[str]) -> str:
    """Human words for `trace` and `show`: 'second-hand, owner absent'."""
    return ", ".join(r.replace("_", " ") for r in reasons)

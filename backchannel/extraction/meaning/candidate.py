"""A sentence (or a window, or a clause) of a transcript as the meaning stage reads it, and what
every filler of its slots needs: the quote it gives and whether a rule already said the fact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.names import same_person
from backchannel.extraction.mentions.stage import PronounRef
from backchannel.extraction.result import ExtractedAssertion, Mention


@dataclass
class Candidate:
    utt_idx: int
    speaker: str | None
    text: str
    s0: int
    s1: int
    w0: int  # the window embedded (a long sentence is cut around its mentions)
    w1: int
    slots: list[mentions.Slot]
    masked: str
    refs: tuple[PronounRef, ...] = ()  # the pronouns of the window resolved by the mentions stage
    part: bool = False  # one clause of a sentence that is also read whole
    # a clause of a contrast ("X, but Y"): where its whole sentence starts, and whether it is the "but" side
    contrast_of: int | None = None
    after_but: bool = False
    # the organisations the whole sentence names, when it was cut at a semicolon into clauses
    sentence_orgs: tuple[str, ...] = ()


def quote(c: Candidate) -> tuple[int, int]:
    a, b = c.w0, c.w1
    while a < b and c.text[a] in " ,;:—–-":
        a += 1
    while b > a and c.text[b - 1] in " ,;:—–-":
        b -= 1
    return a, b


def covered(
    rules: Sequence[ExtractedAssertion],
    c: Candidate,
    predicate: str,
    subject: Mention,
    obj: Mention | None,
    *,
    current: bool = False,
) -> bool:
    """Whether a rule already said this (same sentence, predicate, subject and object); `current`: and said
    it as a fact of now (no end date)."""
    for a in rules:
        if a.utterance_idx != c.utt_idx or not (c.s0 <= a.span_start < c.s1):
            continue
        if current and (a.predicate != predicate or a.valid_to is not None):
            continue
        if predicate == "committed_to" and a.predicate == "committed_to":
            return True
        if a.predicate in (predicate, "left" if predicate == "works_at" else predicate) and (
            a.subject.is_speaker == subject.is_speaker
            and same_person(a.subject.name, subject.name)
            or a.subject.is_speaker
            and subject.is_speaker
        ):
            if obj is None or a.object is None or same_person(a.object.name, obj.name):
                return True
    return False

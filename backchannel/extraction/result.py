"""What an extractor (offline rules or a model) hands to the writer.

Names are surface strings; the writer resolves them to entities. Quotes are
verbatim slices of one utterance's text: `utterance.text[span_start:span_end] == quote`
(of its speaker label instead when `quote_in_label`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass
class Mention:
    name: str  # surface form, or the speaker label for first person
    kind: str  # person, organisation, role
    is_speaker: bool = False  # first person: resolves to the utterance's speaker


@dataclass
class ExtractedAssertion:
    subject: Mention
    predicate: str  # see core.vocabulary.PREDICATES: role, works_at, worked_with, knows, ...
    utterance_idx: int
    span_start: int
    span_end: int
    quote: str
    object: Mention | None = None
    object_literal: str | None = None
    qualifier: str | None = None  # works_at: the title ("CIO"); worked_with: where ("Acme")
    valid_from: date | None = None
    valid_to: date | None = None
    date_phrase: str | None = None
    modality: str = "stated"
    confidence: float = 0.6
    # Why this fact deserves less trust than its confidence (keys of memory.trust.REASON_FACTORS).
    trust_reasons: tuple[str, ...] = ()
    # committed_to: whom the promise was made to; None when not said or not known.
    recipient: Mention | None = None
    # The quote is a slice of the utterance's speaker label, not of its text: what a label
    # such as "Hon. Patty Hajdu (Minister of Health)" says (mentions/labels.py).
    quote_in_label: bool = False
    # How the words hold the claim (core.vocabulary.STANCES): asserted, rumour, reported, ended
    # reach the writer; negated, hypothetical, joke and exercise claims are dropped before it.
    stance: str = "asserted"

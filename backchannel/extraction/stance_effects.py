"""What a claim's stance does to it (core.vocabulary.STANCES), for any extractor that
classifies stances (the model path today): one table, so a fact negated by a model and
one negated by the offline claim pass end the same way.

- negated, hypothetical, joke, exercise: the words do not hold the fact; it is dropped
  (the offline claim pass drops the same claims, rules/claims.py);
- rumour: kept, trust reason `hedged`;
- reported: kept as the quoted person's claim, modality `reported`, reason `second_hand`;
- ended: a job that ended becomes `left`; an ended tie is kept with its stance, for the judge;
- knows_of: knowing *of* someone is no tie, and is stored as what it is: a knows kept with
  that stance (every reader of ties leaves it out, core/ties.py); a worked_with or introduced
  read under it is dropped (nobody works with a name).
"""

from __future__ import annotations

from dataclasses import replace

from backchannel.core.vocabulary import STANCES
from backchannel.extraction.result import ExtractedAssertion

NOT_HELD = frozenset({"negated", "hypothetical", "joke", "exercise"})
TIES = frozenset({"knows", "worked_with", "introduced"})


def apply_stance(a: ExtractedAssertion) -> ExtractedAssertion | None:
    """The assertion as its stance leaves it, or None when the words do not hold it."""
    stance = a.stance if a.stance in STANCES else "asserted"
    if stance in NOT_HELD or (stance == "knows_of" and a.predicate in TIES and a.predicate != "knows"):
        return None
    if stance == "rumour" and "hedged" not in a.trust_reasons:
        return replace(a, trust_reasons=(*a.trust_reasons, "hedged"))
    if stance == "reported":
        reasons = a.trust_reasons if "second_hand" in a.trust_reasons else (*a.trust_reasons, "second_hand")
        modality = a.modality if a.modality == "commitment" else "reported"
        return replace(a, trust_reasons=reasons, modality=modality)
    if stance == "ended" and a.predicate == "works_at":
        return replace(a, predicate="left", qualifier=None, valid_to=a.valid_to or a.valid_from, valid_from=None)
    return a

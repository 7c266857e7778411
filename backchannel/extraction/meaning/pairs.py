"""A sentence that names one person and two organisations, read once per organisation.

"Zalando poaches Adidas e-commerce chief Sofia Brandt as its new chief operating officer": the head
reads a sentence as one relation, and fill puts one organisation in it, the first or the one its
words mark (a former employer, a hire). The other organisation's fact was lost; two thirds of the
dev2 split's missed employments that had a candidate were sentences of this kind (mostly news).
Here such a sentence is read again with only one organisation written as the slot, the other left as
its name, for each organisation: the head, trained on sentences with one organisation slot, reads
whether *that* organisation is where the person works or has left. Only those two readings are
taken from the pair readings (a tie or a promise is the whole sentence's reading).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from backchannel.extraction.meaning.candidate import Candidate
from backchannel.extraction.meaning.heard import as_slots
from backchannel.extraction.mentions import sentence as mentions
from backchannel.memory.text import norm_name

PAIR_RELATIONS = ("works_at", "left")


def pair_candidates(cands: Sequence[Candidate]) -> list[Candidate]:
    """For each whole-sentence candidate naming a person and two or more organisations, one candidate
    per organisation with only that one as a slot (its other mentions of the same name too)."""
    out = []
    for c in cands:
        if c.part or c.contrast_of is not None or not any(s.kind == "person" for s in c.slots):
            continue
        names = list(dict.fromkeys(norm_name(s.name) for s in c.slots if s.kind == "organisation"))
        if len(names) < 2:
            continue
        for name in names:
            slots = [s for s in c.slots if s.kind != "organisation" or norm_name(s.name) == name]
            masked = mentions.masked(c.text, c.w0, c.w1, slots, as_slots(c.refs, slots, c.text))
            out.append(replace(c, slots=slots, masked=masked, part=True))
    return out

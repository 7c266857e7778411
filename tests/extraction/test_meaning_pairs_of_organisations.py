"""A sentence naming a person and two organisations is read once per organisation (meaning/pairs.py),
through the real offline extractor and the shipped head. The sentences were written for this file
and are in no suite or evaluation split."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance


def jobs(line: str) -> set[tuple[str, str, str]]:
    t = Transcript([Utterance(0, "Newsdesk", line)], "text", meeting_date=datetime(2026, 4, 14))
    return {
        (a.subject.name, a.predicate, a.object.name)
        for a in offline.extract(t, owner_names=["Alex Moreau"])
        if a.predicate in ("works_at", "left") and a.object is not None
    }


def test_the_organisation_the_first_reading_left_out_is_read_on_its_own():
    found = jobs("Ingrid Solberg, who spent a decade at Halvorsen Energy, now runs treasury at Northwind Capital.")
    assert ("Ingrid Solberg", "works_at", "Northwind Capital") in found, found


def test_a_move_between_two_organisations_keeps_both_ends():
    found = jobs("Tamsin Rhee is leaving Quillon Bank for a role at Arden Pay, people familiar with the matter said.")
    assert {("Tamsin Rhee", "left", "Quillon Bank"), ("Tamsin Rhee", "works_at", "Arden Pay")} <= found, found
    # a departure under way: she is still at Quillon Bank until it happens (test_departure_to_come.py)
    assert ("Tamsin Rhee", "works_at", "Quillon Bank") in found

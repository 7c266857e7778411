"""A promise the talk after it laughs off (meaning/promise_context.py), through the real offline
extractor with the shipped head. The sentences were written for this file and are in no suite or
evaluation split."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance


def _promises(*turns: tuple[str, str]) -> list[tuple[str, str | None, str]]:
    t = Transcript(
        [Utterance(i, who, text) for i, (who, text) in enumerate(turns)],
        "text",
        meeting_date=datetime(2026, 6, 2, 9, 30),
    )
    return [
        (a.subject.name, a.object_literal, a.stance)
        for a in offline.extract(t, owner_names=["Alex Moreau"])
        if a.predicate == "committed_to"
    ]


ASKED = ("Maeve Quinn", "So when will the whole archive be digitised?")
PROMISED = ("Alex Moreau", "I'll have the whole archive digitised by Monday, Maeve.")


def test_a_promise_the_listener_laughs_off_is_a_joke():
    assert _promises(ASKED, PROMISED, ("Maeve Quinn", "Ha! You will, yeah.")) == [
        ("Alex Moreau", "have the whole archive digitised", "joke")
    ]


def test_a_promise_its_maker_calls_a_joke_is_no_fact():
    # the rules' claim context already drops a maker's "kidding"; this one must not bring it back
    found = _promises(ASKED, PROMISED, ("Alex Moreau", "Kidding, obviously."))
    assert all(stance == "joke" for _, _, stance in found), found


@pytest.mark.parametrize(
    "after",
    [
        ("Maeve Quinn", "Perfect, thanks."),
        ("Maeve Quinn", "Monday works. Send it to the shared inbox."),
        ("Maeve Quinn", "Haha brilliant, cheers."),  # a laugh of relief, not at the promise
    ],
)
def test_a_promise_the_reply_takes_as_meant_stays(after):
    found = _promises(ASKED, PROMISED, after)
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "asserted")], found


def test_a_listeners_tease_of_the_maker_leaves_the_promise_made():
    found = _promises(ASKED, PROMISED, ("Maeve Quinn", "Ha, you always say that."))
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "asserted")], found

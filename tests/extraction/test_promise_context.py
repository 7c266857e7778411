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


# A promise let go after it (release.py). The reader's recall on new wordings is low (release.json's check:
# 0.41 at its bar): most releases first written for this file read under it ("Actually, forget Monday, I
# can't do it": 0.23; "Oh, and I have to walk back the Monday thing": 0.73; "Oh, don't bother, the
# council scanned the lot last month"). The cases here are the ones it reads.
@pytest.mark.parametrize(
    "after",
    [
        [("Maeve Quinn", "Grand."), ("Alex Moreau", "Actually, hang on, I take that back, I can't get it done.")],
    ],
)
def test_a_promise_let_go_in_the_talk_after_it_is_no_fact(after):
    found = _promises(ASKED, PROMISED, *after)
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "negated")], found


@pytest.mark.parametrize(
    "after",
    [
        ("Maeve Quinn", "No rush at all, the end of the month is fine."),
        ("Maeve Quinn", "No, no, Monday's perfect, go for it."),
        ("Maeve Quinn", "Don't forget the maps in the basement."),
        # short acknowledgements, none of them among the reader's training lines (an earlier fit read
        # "Sounds good." as a release at 0.97)
        ("Maeve Quinn", "Works for me."),
        ("Maeve Quinn", "Sounds like a plan."),
        ("Maeve Quinn", "Okay, good."),
    ],
)
def test_a_promise_relaxed_or_added_to_stays_made(after):
    found = _promises(ASKED, PROMISED, after)
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "asserted")], found


def test_a_promise_taken_back_once_the_talk_has_come_back_to_it_is_no_fact():
    found = _promises(
        ASKED,
        PROMISED,
        ("Maeve Quinn", "Lovely. And the reading room?"),
        ("Alex Moreau", "Open again in May."),
        ("Maeve Quinn", "Good."),
        ("Alex Moreau", "Actually, I take back what I said about Monday, the archive won't be done."),
    )
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "negated")], found
    # a later sentence on another matter lets nothing go
    found = _promises(
        ASKED,
        PROMISED,
        ("Maeve Quinn", "Lovely."),
        ("Alex Moreau", "Open again in May."),
        ("Maeve Quinn", "Good."),
        ("Alex Moreau", "Forget the reading room, it's shut."),
    )
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "asserted")], found


def test_the_release_weights_say_how_they_were_made():
    import json

    import numpy as np

    from backchannel.extraction.meaning import release

    meta = json.loads((release.HERE / "release.json").read_text())
    check = meta["check_written_apart_never_trained_on"]
    assert meta["examples"]["lines"] > 300 and check["examples"] > 100 and meta["bar"] == release.BAR
    w, b, _ = release._weights()
    assert np.isfinite(w).all() and np.isfinite(b)


def test_a_promise_taken_back_by_its_day_later_in_the_meeting_is_no_fact():
    found = _promises(
        ASKED,
        PROMISED,
        ("Maeve Quinn", "Lovely. And the reading room?"),
        ("Alex Moreau", "Open again in May."),
        ("Maeve Quinn", "Good."),
        ("Alex Moreau", "Oh, and I take back what I said about Monday, sorry."),
    )
    assert [(s, stance) for s, _, stance in found] == [("Alex Moreau", "negated")], found

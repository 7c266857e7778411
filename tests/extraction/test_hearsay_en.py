"""English hearsay (rules/claim_words.HEARSAY in rules/claims.py): a claim about someone else passed on
from what others say ("word is", "the word in Leeds is", "rumour has it", "I hear", "apparently") is a
rumour, whose organisation is no reason to write to them; "I heard from her" is a tie, not hearsay.
Fresh sentences, in no suite and not in the evaluation set."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance


def facts(line: str, meaning: bool = True) -> set[tuple[str, str, str | None, str]]:
    t = Transcript(
        [Utterance(0, "Alex Moreau", "Any news from the north?"), Utterance(1, "Dana Kerr", line)],
        "text",
        meeting_date=datetime(2026, 4, 14, 10, 0),
    )
    return {
        (a.predicate, a.subject.name, a.object.name if a.object else None, a.stance)
        for a in offline.extract(t, owner_names=["Alex Moreau"], meaning=meaning)
        if a.predicate in ("works_at", "left")
    }


@pytest.mark.parametrize(
    "line",
    [
        "The word in Leeds is Rhona Baxter has left Tesco.",
        "Word is Rhona Baxter has joined Asda.",
        "I hear Rhona Baxter has joined Asda.",
        "Apparently Rhona Baxter joined Asda in March.",
    ],
)
@pytest.mark.parametrize("meaning", [False, True])
def test_a_move_passed_on_from_what_others_say_is_a_rumour(line, meaning):
    found = facts(line, meaning)
    assert found and all(stance == "rumour" for *_, stance in found), found


def test_a_move_told_first_hand_stays_asserted():
    found = facts("I heard from Rhona Baxter last week. She joined Asda in March.")
    assert ("works_at", "Rhona Baxter", "Asda", "asserted") in found, found

"""A delivery promised as what the listener will have ("You'll have the signed lease by Thursday"):
the speaker makes it, to the one spoken to. Every sentence here is new (in no evaluation split,
bench bank or other test). Real parser types, the real offline extractor and its head."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 3, 10, 14, 0)  # a Tuesday


def promises_of(line: str, asked: str = "Could you help us out on the paperwork side?") -> list:
    t = Transcript(
        [Utterance(0, "Priya Nair", asked), Utterance(1, "Callum Reid", line)],
        "text",
        title="Call",
        meeting_date=MEETING,
        participants=["Priya Nair", "Callum Reid"],
    )
    return [a for a in extract(t, owner_names=["Priya Nair"]) if a.predicate == "committed_to"]


@pytest.mark.parametrize(
    ("line", "thing", "due"),
    [
        ("You'll have the signed lease by Thursday, no problem.", "the signed lease", date(2026, 3, 12)),
        ("You will receive the board minutes within a week.", "the board minutes", date(2026, 3, 17)),
        ("We'll have the reconciled ledger back to you by Friday.", "the reconciled ledger", date(2026, 3, 13)),
    ],
)
def test_a_delivery_said_as_the_listeners_is_the_speakers_promise_to_them(line, thing, due):
    (a,) = promises_of(line)
    assert a.subject.name == "Callum Reid" and a.subject.is_speaker
    assert a.object_literal == thing
    assert a.recipient is not None and a.recipient.name == "Priya Nair"
    if due is not None:
        assert a.valid_to is not None and a.valid_to == due


@pytest.mark.parametrize(
    "line",
    [
        "You'll have to ask the landlord about the deposit.",  # an obligation of the listener's
        "You'll get used to the new portal after a week or so.",  # a prediction
        "You'll have seen the lease already, I imagine.",  # a perfect: done, nothing to deliver
        "You'll have a lovely time in Porto next month.",  # a wish
        "We'll have a new finance director by April.",  # news of the speaker's side, nothing goes to the listener
        "If the bank agrees, you'll have the signed lease by Thursday.",  # a condition
    ],
)
def test_what_the_listener_will_have_or_do_of_their_own_is_no_promise(line):
    assert promises_of(line) == []

"""A tie's coda said by pronoun, read by tie_context.py through the real offline extractor and the
shipped head: the pronouns that stand for the tie's people are written as the person slot before
the head reads the sentence (tie_pronouns.py), an `ended` reading anywhere in the context ends
the tie, a later claim of the same two people narrows it, and a denial bounded in time keeps it.
Both sides are measured: codas that end or narrow a tie, and codas after which it must stay.
The sentences were written for this file and are in no suite or evaluation split."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning.tie_pronouns import resolve_pronouns
from backchannel.extraction.meaning.tie_verdict import _bounded


def _ties(*turns: tuple[str, str], name: str) -> list[tuple]:
    t = Transcript(
        [Utterance(i, who, text) for i, (who, text) in enumerate(turns)],
        "text",
        meeting_date=datetime(2026, 3, 9, 14, 0),
    )
    return [
        (a.predicate, a.stance)
        for a in offline.extract(t, owner_names=["Alex Moreau"])
        if a.predicate in ("worked_with", "knows") and name in (a.subject.name, a.object.name if a.object else "")
    ]


def test_pronouns_of_the_tie_are_written_as_the_slot():
    assert resolve_pronouns("I read her column, we've never met.", "Alex", True) == (
        "I read Alex's column, Alex and I have never met."
    )
    assert resolve_pronouns("I saw her at Davos, he says.", "Alex", False) == "I saw Alex at Davos, Alex says."
    assert resolve_pronouns("We shared a flat.", "Alex", False) == "We shared a flat."
    assert resolve_pronouns("I never worked with her directly.", "Alex", True) == "I never worked with Alex directly."


def test_a_span_up_to_now_bounds_a_denial_and_a_plain_denial_is_unbounded():
    assert _bounded("I haven't rung him in years.")
    assert _bounded("We've not been in touch since the Madrid offsite.")
    assert _bounded("She doesn't answer my texts any more.")
    assert not _bounded("I've never set eyes on him.")
    assert not _bounded("Come to think of it, I don't believe we ever met.")


def test_a_coda_by_pronoun_two_sentences_on_ends_the_tie():
    ties = _ties(
        (
            "Alex Moreau",
            "Ruth Adeyemi and I ran the audit practice at Mazars together. She hired half the team."
            " Then she blamed me for the Corby write-off in front of the partners, and we haven't said a word to each other since.",
        ),
        name="Ruth Adeyemi",
    )
    assert ties and all(s == "ended" for _, s in ties), ties


def test_a_coda_by_pronoun_narrows_a_knows_to_knowing_of():
    ties = _ties(
        ("Alex Moreau", "Anyone at Halvorsen Shipping?"),
        (
            "Maya Lindqvist",
            "I know Sigrid Berg, she's their CFO. To be fair, I've only listened to her interviews, we've never met.",
        ),
        name="Sigrid Berg",
    )
    assert ties and all(s == "knows_of" for _, s in ties), ties


def test_a_later_turn_that_says_knowing_of_narrows_the_first_knows():
    ties = _ties(
        ("Maya Lindqvist", "I know Sigrid Berg at Halvorsen Shipping."),
        ("Alex Moreau", "Could you put in a word?"),
        ("Maya Lindqvist", "Hmm, I only really know her from her newsletter, we've never had a conversation."),
        name="Sigrid Berg",
    )
    assert ties and all(s == "knows_of" for _, s in ties), ties


@pytest.mark.parametrize(
    "coda",
    [
        "I haven't seen him since his leaving do.",  # a silence since a point: a dormant tie
        "We haven't spoken in a couple of years, he moved to Perth.",
        "I didn't enjoy working with him much.",  # soured at most: the tie was
        "He was a tough boss, but fair.",
        "He never answered the last message I sent him.",  # an act denied, not the tie
        "He probably wouldn't remember me now.",
        "We still play five-a-side on Thursdays.",
    ],
)
def test_a_coda_that_says_the_tie_was_keeps_it(coda):
    ties = _ties(
        ("Ines Ferreira", f"I worked with Owen Pryce at Atkins for four years. {coda}"),
        name="Owen Pryce",
    )
    assert ties and all(s in ("asserted", "ended") for _, s in ties), ties
    if "still" in coda or "since" in coda or "couple of years" in coda:
        assert all(s == "asserted" for _, s in ties), ties


def test_a_coda_after_a_tie_and_a_third_person_named_in_full_is_left_alone():
    ties = _ties(
        (
            "Ines Ferreira",
            "I worked with Owen Pryce at Atkins and I used to play squash with Kwame Boateng. We fell out last spring.",
        ),
        name="Owen Pryce",
    )
    assert ties and all(s == "asserted" for _, s in ties), ties


@pytest.mark.parametrize(
    "coda",
    [
        "I've listened to her podcast as well, it's excellent.",  # knowing of her work, besides knowing her
        "You'll have come across her name, she's on every panel.",
        "She'd hardly recognise me now, mind you.",
        "She probably doesn't remember me.",
    ],
)
def test_a_coda_that_adds_to_a_knows_keeps_it_a_tie(coda):
    ties = _ties(("Ines Ferreira", f"I know Bronwen Tate from the Cardiff office. {coda}"), name="Bronwen Tate")
    assert ties and all(s == "asserted" for _, s in ties), ties


def test_a_denied_working_together_keeps_a_knows():
    ties = _ties(
        ("Ines Ferreira", "I know Owen Pryce from the rowing club. I've never actually worked with him, mind."),
        name="Owen Pryce",
    )
    assert ("knows", "asserted") in ties, ties


def test_a_plain_denial_of_the_tie_still_drops_it():
    ties = _ties(
        ("Alex Moreau", "Does anyone know Owen Pryce at Atkins?"),
        ("Ines Ferreira", "Owen Pryce and I go back years."),
        ("Alex Moreau", "Great, from where?"),
        ("Ines Ferreira", "Sorry, no, scratch that. I've never actually met him, I had his brother in mind."),
        name="Owen Pryce",
    )
    assert ties == [], ties


def test_a_denial_of_liking_the_work_keeps_the_tie_as_ended():
    ties = _ties(
        (
            "Ines Ferreira",
            "I worked with Owen Pryce at Atkins for four years. I never liked working under him.",
        ),
        name="Owen Pryce",
    )
    assert ties and all(s == "ended" for _, s in ties), ties

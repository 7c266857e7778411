"""A tie taken back by the talk after it (meaning/tie_context.py), through the real offline
extractor with the shipped head: a later sentence of the turn, or the next turns, that deny the tie
or name someone else with a like name drop it; one that only elaborates or confirms keeps it.
The sentences were written for this file and are in no suite or evaluation split."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning.tie_context import _names, _names_another


def _ties(*turns: tuple[str, str]) -> list[tuple]:
    t = Transcript(
        [Utterance(i, who, text) for i, (who, text) in enumerate(turns)],
        "text",
        meeting_date=datetime(2026, 5, 4, 9, 30),
    )
    return [
        (a.subject.name, a.predicate, a.object.name if a.object else None, a.stance)
        for a in offline.extract(t, owner_names=["Alex Moreau"])
        if a.predicate in ("worked_with", "knows")
    ]


def _with(ties: list[tuple], name: str) -> list[tuple]:
    return [f for f in ties if name in (f[0], f[2])]


def test_a_tie_denied_in_the_speakers_next_turn_is_dropped():
    ties = _ties(
        ("Alex Moreau", "Greenfield Water just appointed Lukas Brandt as their CTO."),
        ("Ines Ferreira", "Oh, Lukas Brandt was on my team at Siemens for two years."),
        ("Alex Moreau", "Brilliant, would you put us in touch?"),
        ("Ines Ferreira", "Wait. I don't think I've ever actually met Lukas, I'm confusing him with someone."),
    )
    assert _with(ties, "Lukas Brandt") == [], ties


def test_a_tie_whose_speaker_takes_up_a_like_name_is_dropped():
    ties = _ties(
        ("Ines Ferreira", "Lukas Brandt is speaking at the Porto conference."),
        ("Alex Moreau", "I worked with Lukas Brandt at Accenture, years ago."),
        ("Ines Ferreira", "Are you sure you don't mean Lukas Bremer? Brandt was always at Siemens."),
        ("Alex Moreau", "Ah, yes, Lukas Bremer, that's who I mean."),
    )
    assert [f for f in ties if f[2] == "Lukas Brandt" or f[0] == "Lukas Brandt"] == [], ties


@pytest.mark.parametrize(
    "after",
    [
        # elaborating, with the pronoun and the name: the tie stays
        ("Ines Ferreira", "Yes, he is great. Lukas taught me half of what I know about water networks."),
        # naming a third person who is not a like name
        ("Ines Ferreira", "That's right, he hired Marta Gomes last spring."),
        # going on
        ("Ines Ferreira", "We still talk most weeks, actually."),
    ],
)
def test_a_tie_the_next_turns_only_confirm_stays(after):
    ties = _ties(
        ("Alex Moreau", "Who do you know at Greenfield Water?"),
        ("Ines Ferreira", "Lukas Brandt, their CTO. I worked with Lukas for six years at Siemens."),
        ("Alex Moreau", "Six years, really?"),
        after,
    )
    assert _with(ties, "Lukas Brandt") or _with(ties, "Lukas"), ties
    assert all(f[3] == "asserted" for f in ties), ties


def test_a_sentence_names_a_person_by_first_name_or_surname_and_not_by_a_like_name():
    assert _names("I never met Brandt, in fact.", "Lukas Brandt")
    assert _names("Lukas was never there.", "Lukas Brandt")
    assert not _names("Marta was never there.", "Lukas Brandt")
    assert _names_another("Oh, you mean Lukas Bremer.", "Lukas Brandt")
    assert not _names_another("Lukas Brandt, yes.", "Lukas Brandt")
    assert not _names_another("Marta Gomes joined too.", "Lukas Brandt")


def test_a_denial_bounded_by_a_date_keeps_the_tie_it_follows():
    ties = _ties(
        ("Alex Moreau", "Who do you know at Mott MacDonald?"),
        ("Ines Ferreira", "I worked with Dorota Sikora there for years. We haven't worked together since 2019."),
    )
    assert ("Ines Ferreira", "worked_with", "Dorota Sikora", "asserted") in _with(ties, "Dorota Sikora")


@pytest.mark.parametrize(
    "coda",
    [
        "I haven't exchanged a single word with him since the arbitration.",
        # read mostly as a sentence of talking (none 0.89), surely ended (0.96)
        "I haven't said a word to him since the court case.",
    ],
)
def test_an_estrangement_said_after_the_tie_ends_it(coda):
    """A sure `ended` reading ends the tie even where the head reads the sentence as one of talking
    more than of knowing (tie_context._of_the_tie)."""
    ties = _ties(
        ("Alex Moreau", "Didn't you build something with the fellow who runs payments at Allegro?"),
        ("Ines Ferreira", f"Piotr Nowak. We built the billing platform together, years back. {coda}"),
    )
    found = _with(ties, "Piotr Nowak")
    assert found and all(f[3] == "ended" for f in found), ties


def test_a_tie_followed_by_a_short_silence_stays():
    ties = _ties(
        ("Alex Moreau", "Who do you know at Allegro?"),
        (
            "Ines Ferreira",
            "Piotr Nowak, I worked with Piotr Nowak for years at Allegro. I haven't seen him since Tuesday.",
        ),
    )
    assert ("Ines Ferreira", "worked_with", "Piotr Nowak", "asserted") in _with(ties, "Piotr Nowak"), ties


def test_a_tie_a_contrast_ends_in_the_same_sentence_is_ended():
    """ "X I know from ..., but we are not on speaking terms": the whole reads as no relation, its first
    clause as the tie and its "but" clause as how the tie stands (meaning/stage.py _contrast_parts)."""
    ties = _ties(
        ("Alex Moreau", "Hello."),
        ("Marta Silva", "Tobias Lang I know from the Siemens days, but we are not on speaking terms since the audit."),
    )
    found = _with(ties, "Tobias Lang")
    assert found and all(f[3] == "ended" for f in found), ties


def test_a_contrast_that_says_they_never_met_leaves_knowing_of():
    ties = _ties(
        ("Alex Moreau", "Hello."),
        ("Marta Silva", "I have admired Ines Duarte's work for years, but I have never met her."),
    )
    assert all(f[3] == "knows_of" for f in _with(ties, "Ines Duarte")), ties

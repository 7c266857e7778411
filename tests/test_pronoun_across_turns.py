"""A 'he'/'she' that points back across turns (offline extractor, Ctx.antecedent's strict
look at the previous turns): a sentence-opening adjective ("Glad to.", "Keen to ...") is no
rival person, while a sentence-opening name still is. Real parser rules; no model."""

from __future__ import annotations

from datetime import datetime

from backchannel.extractors.offline import extract
from backchannel.extractors.transcript import Transcript, Utterance

MEETING = datetime(2026, 5, 4, 10, 0)


def transcript(lines) -> Transcript:
    return Transcript([Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)], "text", title="Sync",
                      meeting_date=MEETING)


def works_at(t: Transcript) -> set[tuple[str, str]]:
    return {(a.subject.name, a.object.name) for a in extract(t) if a.predicate == "works_at" and a.object}


def test_an_opening_adjective_in_the_turn_before_is_no_rival_for_the_pronoun():
    t = transcript([
        ("Nadia Haddad", "Glad to. And I ran into Martin Keller at the trade fair, we go way back."),
        ("Ben Ortega", "Martin Keller who used to sail with you?"),
        ("Nadia Haddad", "Exactly. He works at Umbrella Robotics now, running their lab."),
    ])
    assert ("Martin Keller", "Umbrella Robotics") in works_at(t)


def test_a_quantifier_opening_the_turn_before_is_no_rival_either():
    t = transcript([
        ("Ines Roth", "Most of the board came. Carla Ruiz gave the keynote."),
        ("Ines Roth", "She works at Cyberdyne Systems."),
    ])
    assert ("Carla Ruiz", "Cyberdyne Systems") in works_at(t)


def test_an_opening_first_name_still_makes_the_pronoun_ambiguous():
    t = transcript([
        ("Ines Roth", "Maria and Lena Ortiz both came to the launch."),
        ("Ben Ortega", "She works at Initech now."),  # Maria or Lena: no guess
        ("Ines Roth", "Keen to meet them. Omar visited Jack Stein last week."),
        ("Ben Ortega", "He works at Soylent Labs now."),  # Omar (a name before a verb) or Jack: no guess
    ])
    got = works_at(t)
    assert not [w for w in got if w[1] in ("Initech", "Soylent Labs")], got

"""A 'he'/'she' that points back across turns (offline extractor, Ctx.antecedent's strict
look at the previous turns): a sentence-opening adjective ("Glad to.", "Keen to ...") is no
rival person, while a sentence-opening name still is. Real parser rules; no model."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 5, 4, 10, 0)


def transcript(lines) -> Transcript:
    return Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)], "text", title="Sync", meeting_date=MEETING
    )


def works_at(t: Transcript) -> set[tuple[str, str]]:
    return {(a.subject.name, a.object.name) for a in extract(t) if a.predicate == "works_at" and a.object}


def test_an_opening_adjective_in_the_turn_before_is_no_rival_for_the_pronoun():
    t = transcript(
        [
            ("Nadia Haddad", "Glad to. And I ran into Martin Keller at the trade fair, we go way back."),
            ("Ben Ortega", "Martin Keller who used to sail with you?"),
            ("Nadia Haddad", "Exactly. He works at Umbrella Robotics now, running their lab."),
        ]
    )
    assert ("Martin Keller", "Umbrella Robotics") in works_at(t)


def test_a_quantifier_opening_the_turn_before_is_no_rival_either():
    t = transcript(
        [
            ("Ines Roth", "Most of the board came. Carla Ruiz gave the keynote."),
            ("Ines Roth", "She works at Cyberdyne Systems."),
        ]
    )
    assert ("Carla Ruiz", "Cyberdyne Systems") in works_at(t)


def test_an_opening_first_name_still_makes_the_pronoun_ambiguous():
    t = transcript(
        [
            ("Ines Roth", "Maria and Lena Ortiz both came to the launch."),
            ("Ben Ortega", "She works at Initech now."),  # Maria or Lena: no guess
            ("Ines Roth", "Keen to meet them. Omar visited Jack Stein last week."),
            ("Ben Ortega", "He works at Soylent Labs now."),  # Omar (a name before a verb) or Jack: no guess
        ]
    )
    got = works_at(t)
    assert not [w for w in got if w[1] in ("Initech", "Soylent Labs")], got


def facts(t: Transcript) -> set[tuple]:
    return {
        (a.subject.name, a.predicate, a.object.name if a.object else a.object_literal, a.qualifier)
        for a in extract(t, owner_names=("Nadia Haddad",))
    }


def test_we_after_a_third_person_named_is_that_person_not_the_other_one_in_the_room():
    t = transcript(
        [
            ("Nadia Haddad", "I bumped into Oskar Lindqvist at the airport."),
            ("Ben Ortega", "No way. We worked together at Vandelay for ages."),
        ]
    )
    got = {f for f in facts(t) if f[1] == "worked_with"}
    assert got == {("Ben Ortega", "worked_with", "Oskar Lindqvist", "Vandelay")}, got


def test_we_after_two_people_named_is_left_unresolved():
    t = transcript(
        [
            ("Nadia Haddad", "I bumped into Oskar Lindqvist and Mei Tanaka at the airport."),
            ("Ben Ortega", "No way. We worked together at Vandelay for ages."),
        ]
    )
    assert not [f for f in facts(t) if f[1] == "worked_with"]


def test_we_with_nobody_named_in_a_meeting_of_two_is_the_other_one():
    t = transcript(
        [
            ("Nadia Haddad", "Good to see you again after all this time."),
            ("Ben Ortega", "Likewise. We worked together at Vandelay years ago."),
        ]
    )
    assert ("Ben Ortega", "worked_with", "Nadia Haddad", "Vandelay") in facts(t)


def test_she_in_a_meeting_of_two_is_never_one_of_the_two():
    t = transcript(
        [
            ("Nadia Haddad", "Morning Ben, sorry, the train was late."),
            ("Ben Ortega", "No worries Nadia. She works at Vandelay Industries now, by the way."),
        ]
    )
    assert not [f for f in facts(t) if f[1] == "works_at"]


def test_the_pronoun_of_one_gender_skips_a_name_of_the_other():
    t = transcript(
        [
            ("Ines Roth", "Thomas Weber and Ingrid Holm came by the stand."),
            ("Ben Ortega", "She works at Soylent Labs now."),
            ("Ines Roth", "A name we don't know the gender of: Kim Osei and Ingrid Holm."),
            ("Ben Ortega", "She joined Initech in May."),  # Kim fits "she" too: no guess
        ]
    )
    got = works_at(t)
    assert ("Ingrid Holm", "Soylent Labs") in got
    assert not [w for w in got if w[1] == "Initech"], got


def test_an_apposition_pronoun_is_the_name_it_follows():
    t = transcript(
        [
            ("Nadia Haddad", "Julia Stein sends her regards."),
            ("Ben Ortega", "Have you met Tariq Aziz? Tariq Aziz, he's the head of research at Wayne Biotech."),
        ]
    )
    assert ("Tariq Aziz", "Wayne Biotech") in works_at(t)
    assert not [w for w in works_at(t) if w[0] == "Julia Stein"]


def test_their_points_to_the_one_organisation_named_in_the_turn_before():
    t = transcript(
        [
            ("Nadia Haddad", "We've been talking to Stark Logistics about the pilot."),
            ("Ben Ortega", "Their head of partnerships is Yusuf Demir, right?"),
        ]
    )
    assert ("Yusuf Demir", "Stark Logistics") in works_at(t)


def test_their_after_two_organisations_named_is_left_unresolved():
    t = transcript(
        [
            ("Nadia Haddad", "We've been talking to Stark Logistics and Wayne Biotech about the pilot."),
            ("Ben Ortega", "Their head of partnerships is Yusuf Demir, right?"),
        ]
    )
    assert not [w for w in works_at(t) if w[0] == "Yusuf Demir"]


def test_she_is_not_the_person_the_turn_speaks_to():
    t = transcript(
        [
            ("Nadia Haddad", "Hi all."),
            ("Ben Ortega", "Morning."),
            ("Ines Roth", "No worries Carla. She works at Vandelay Industries now."),  # Carla is "you" here
            ("Ines Roth", "Thanks for coming, Carla. She joined Soylent Labs in May."),
            ("Ines Roth", "I met Carla Ruiz. She works at Cyberdyne Systems now."),  # named, not addressed
        ]
    )
    got = works_at(t)
    assert not [w for w in got if w[1] in ("Vandelay Industries", "Soylent Labs")], got
    assert ("Carla Ruiz", "Cyberdyne Systems") in got


def test_his_points_back_to_the_one_named_before_and_not_past_a_person_of_his():
    from datetime import datetime

    from backchannel.extraction import offline
    from backchannel.extraction.formats.transcript import Transcript, Utterance

    def ties(line: str) -> set[tuple[str, str, str]]:
        t = Transcript(
            [Utterance(0, "Alex Moreau", "Anyone at Brightwell?"), Utterance(1, "Rosa Quint", line)],
            "text",
            meeting_date=datetime(2026, 4, 14),
        )
        return {
            (a.subject.name, a.predicate, a.object.name)
            for a in offline.extract(t, owner_names=["Alex Moreau"])
            if a.predicate in ("knows", "worked_with") and a.object is not None
        }

    assert ("Rosa Quint", "knows", "Cormac Lyle") in ties("Cormac Lyle, yes. I was a bridesmaid at his wedding.")
    # his brother is someone else: no tie with Cormac
    assert not ties("Cormac Lyle? I shared a flat with his younger brother in Galway.")


# "their" reaches back further than "he"/"she": an organisation stays the topic for a few turns. New
# sentences, in no split or bank.
def _asked_about(org_turn: str) -> list[tuple[str, str]]:
    return [
        ("Ruth Okafor", org_turn),
        ("Dev Malhotra", "Yeah, Tomasz Wierzbicki. We rowed in the same eight at university."),
        ("Ruth Okafor", "Oh nice. What does he do these days?"),
        ("Dev Malhotra", "He runs their whole logistics operation."),
    ]


def test_their_points_to_the_one_organisation_asked_about_a_few_turns_before():
    t = transcript(_asked_about("Random question, do you know anyone inside Hargreaves Logistics?"))
    assert ("Tomasz Wierzbicki", "Hargreaves Logistics") in works_at(t)


def test_their_stays_open_when_two_organisations_were_asked_about():
    t = transcript(_asked_about("Do you know anyone inside Hargreaves Logistics or Dunmore Bank?"))
    assert not {o for s, o in works_at(t) if s == "Tomasz Wierzbicki"}


def test_he_does_not_reach_as_far_back_as_their():
    t = transcript(
        [
            ("Ruth Okafor", "Marta Quinn introduced us, years ago."),
            ("Dev Malhotra", "Right, at the conference."),
            ("Ruth Okafor", "It was a good conference."),
            ("Dev Malhotra", "The best one in years."),
            ("Dev Malhotra", "He works at Hargreaves Logistics now."),
        ]
    )
    assert not works_at(t)


def test_a_full_name_given_as_the_answer_is_no_one_spoken_to():
    # "Yeah, NAME." answering a question names the one asked about; "we" then is the speaker and them,
    # not the speaker and the one asking (a first name alone after "yeah" may still be spoken to)
    t = transcript(_asked_about("Random question, do you know anyone inside Hargreaves Logistics?"))
    ties = {(a.subject.name, a.object.name) for a in extract(t) if a.predicate in ("knows", "worked_with")}
    assert ties == {("Dev Malhotra", "Tomasz Wierzbicki")}


def test_its_is_resolved_as_their_and_its_span_is_the_word_said():
    from backchannel.extraction.mentions.pronouns import pronoun_refs

    line = "Its chief design officer is Maya Goldberg, I think."
    t = transcript([("Ines Roth", "We pitched Quillon Bank last week."), ("Ben Ortega", line)])
    refs = pronoun_refs(t, frozenset({"Ines Roth", "Ben Ortega"}), {"quillon bank"})
    its = [r for r in refs.get(1, []) if line[r.start : r.end].lower() == "its"]
    # read as "their": the organisation named before; its slot ends where the word does, so masking it
    # keeps "chief design officer" whole
    assert [r.refers_to for r in its] == ["Quillon Bank"], refs.get(1)

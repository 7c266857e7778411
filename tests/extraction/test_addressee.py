"""The transcript-wide pass (addressee.py) for "we": in a two-person meeting "we worked
together" is the speaker and the other person; with nobody named among more people, or a
sentence-opening word such as "Congratulations", nothing is guessed."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 3, 1, 9, 0)


def worked_with(lines):
    t = Transcript([Utterance(i, sp, x) for i, (sp, x) in enumerate(lines)], "text", meeting_date=MEETING)
    return [
        (a.subject.name, a.object.name, a.qualifier)
        for a in extract(t, owner_names=["Alex Moreau", "Alex"])
        if a.predicate == "worked_with"
    ]


def test_we_in_a_two_person_meeting_is_the_other_person():
    assert worked_with(
        [
            ("Sofia Rossi", "I joined Northwind last year."),
            ("Alex Moreau", "Congratulations. We worked together at Globex for three years."),
        ]
    ) == [("Alex Moreau", "Sofia Rossi", "Globex")]


def test_we_among_several_people_with_nobody_named_says_nothing():
    assert (
        worked_with(
            [
                ("Sofia Rossi", "Hi."),
                ("Bob Stone", "Hello."),
                ("Alex Moreau", "Congratulations. We worked together at Globex for three years."),
            ]
        )
        == []
    )


def test_a_vocative_names_the_other_half_of_we():
    assert worked_with(
        [
            ("Sofia Rossi", "Hi."),
            ("Bob Stone", "Hello."),
            ("Alex Moreau", "Sofia, we worked together at Globex, remember?"),
            ("Sofia Rossi", "Of course."),
        ]
    ) == [("Alex Moreau", "Sofia", "Globex")]  # the writer resolves it


def test_a_name_in_the_sentence_still_wins():
    assert worked_with(
        [("Sofia Rossi", "Hi."), ("Alex Moreau", "Sophie Martin? We worked together at Acme between 2016 and 2021.")]
    ) == [("Alex Moreau", "Sophie Martin", "Acme")]


def test_we_partner_ingested(home: Path, store):
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import ingest_file

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\n')
    f = home / "sofia lunch.txt"
    f.write_text(
        """---
date: 2026-03-01
---
Sofia Rossi: It has been a while. I joined Northwind last year as VP of Data.
Alex Moreau: Congratulations. We worked together at Globex for three years, I still miss that team.
""",
        encoding="utf-8",
    )
    assert ingest_file(store, load_settings(paths), f).status == "ingested"
    rows = store.query(
        """SELECT s.name AS subject, o.name AS object, a.qualifier, a.valid_from FROM assertions a
           JOIN entities s ON s.id = a.subject_id JOIN entities o ON o.id = a.object_id
           WHERE a.predicate = 'worked_with'"""
    )
    assert [(r["subject"], r["object"], r["qualifier"], r["valid_from"]) for r in rows] == [
        ("Alex Moreau", "Sofia Rossi", "Globex", date(2023, 3, 1))
    ]
    assert store.scalar("SELECT count(*) FROM entities WHERE name IN ('we', 'Congratulations')") == 0


def recipients(lines):
    t = Transcript([Utterance(i, sp, x) for i, (sp, x) in enumerate(lines)], "text", meeting_date=MEETING)
    return [
        (a.subject.name, a.recipient.name if a.recipient else None)
        for a in extract(t, owner_names=["Alex Moreau", "Alex"])
        if a.predicate == "committed_to"
    ]


THREE = [("Priya Raman", "The figures don't add up, please recheck."), ("Tom Weller", "Agreed.")]


def test_a_reply_word_heading_the_sentence_is_not_the_addressee():
    # 'Noted' opens the sentence like a vocative would; the meeting's Priya, closing it, is who is meant
    assert recipients(
        [*THREE, ("Alex Moreau", "Noted, Priya. I'll get the corrected figures over to you by Monday.")]
    ) == [("Alex Moreau", "Priya Raman")]


def test_a_name_closing_the_sentence_before_is_taken_only_when_it_is_one_of_the_meeting():
    # 'their CFO, Dana' is an apposition, not an address: with three people in the room, no one is guessed
    assert recipients(
        [*THREE, ("Alex Moreau", "I had lunch with their CFO, Dana. I'll send you the notes from it tomorrow.")]
    ) == [("Alex Moreau", None)]


def _promised(lines):
    t = Transcript([Utterance(i, sp, x) for i, (sp, x) in enumerate(lines)], "text", meeting_date=MEETING)
    return [
        (a.subject.name, a.recipient.name if a.recipient else None)
        for a in extract(t, owner_names=["Alex Moreau", "Alex"])
        if a.predicate == "committed_to"
    ]


def test_a_request_two_turns_back_names_the_addressee_when_the_turn_between_asks_nothing():
    asked = ("Ruth Adeyemi", "We still have no figures for the depot refit. Can you get us those?")
    aside = ("Colin Shaw", "And the Leeds depot on its own, ideally, Chair.")
    answer = ("Alex Moreau", "Understood. I'll send you the refit figures, depot by depot, by next Friday.")
    assert _promised([asked, aside, answer]) == [("Alex Moreau", "Ruth Adeyemi")]
    # The turn between asks too: it is the nearest request that is answered.
    asking_aside = ("Colin Shaw", "Could you split out the Leeds depot as well?")
    assert _promised([asked, asking_aside, answer]) == [("Alex Moreau", "Colin Shaw")]
    # The promise's speaker spoke in between: the old request was answered then, "you" stays open.
    spoke = ("Alex Moreau", "Let me check what we have.")
    assert _promised([asked, spoke, aside, answer]) == [("Alex Moreau", None)]


def test_a_turn_said_to_the_maker_is_not_stepped_over_to_an_older_request():
    asked = ("Ruth Adeyemi", "Colin, can you get the depot refit figures to Bea?")
    remark = ("Bea Lindqvist", "Yes, the refit figures would help a lot with the audit.")
    answer = ("Colin Shaw", "Sure. I'll send you the refit figures by next Friday.")
    # Ruth asked for Bea, and Bea spoke last: "you" is Bea, never Ruth, whose request was for someone else
    assert _promised([asked, remark, answer]) == [("Colin Shaw", "Bea Lindqvist")]
    # Ruth's request names nobody: Bea's turn answers Colin, and "you" stays open
    unnamed = ("Ruth Adeyemi", "Colin, can you get the depot refit figures sorted?")
    assert _promised([unnamed, remark, answer]) == [("Colin Shaw", None)]


def test_a_request_made_on_someone_s_behalf_is_owed_to_them_when_they_speak_next():
    answer = ("Dev Malhotra", "Sure thing. I'll get the revised floor plans over to you by Thursday.")
    for asked in (
        "Dev, Mona's going to need the revised floor plans before the site visit.",
        "One more thing, Dev: Mona will be wanting the floor plans for the landlord, please.",
        "Dev, could you send Mona the revised floor plans?",
    ):
        said = [
            ("Pat Okafor", asked),
            ("Mona Haddad", "That would be a real help, the landlord visits Friday."),
            answer,
        ]
        assert _promised(said) == [("Dev Malhotra", "Mona Haddad")], asked
    # what is promised said as a pronoun points back to what was asked for
    said = [
        ("Pat Okafor", "Dev, Mona's going to need the revised floor plans before the site visit."),
        ("Mona Haddad", "Honestly, that would save me a day."),
        ("Dev Malhotra", "Yep. I'll dig them out tonight and send them across to you."),
    ]
    assert _promised(said) == [("Dev Malhotra", "Mona Haddad")]
    # the one named is not who spoke next: nothing is guessed
    said = [("Pat Okafor", "Dev, Mona's going to need the revised floor plans."), ("Lee Wong", "Same for me."), answer]
    assert _promised(said) == [("Dev Malhotra", None)]
    # asked for something else than what is promised: not this request
    said = [
        ("Pat Okafor", "Dev, Mona's going to need a parking permit."),
        ("Mona Haddad", "Yes, that would be handy."),
        answer,
    ]
    assert _promised(said) == [("Dev Malhotra", None)]


def test_a_you_said_to_several_is_the_owner_when_the_owner_is_in_the_meeting():
    said = [
        ("Priya Raman", "Where are we on the paperwork, Tom?"),
        ("Tom Weller", "I'll send you both the signed lease by the end of the week."),
        ("Alex Moreau", "Great, thanks Tom."),
    ]
    assert _promised(said) == [("Tom Weller", "Alex Moreau")]
    said[1] = ("Tom Weller", "I'll send all of you the signed lease by the end of the week.")
    assert _promised(said) == [("Tom Weller", "Alex Moreau")]

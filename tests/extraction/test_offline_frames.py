"""Offline recall toward 3x the baseline on the development set: promises recognised by their
frame (offline_pledges.py), titles before a surname, "their CFO, X", French titles without an
organisation, word received from someone, family ties, greetings sent through someone.
Every sentence here is new (none is from bench/devset); each rule has sentences it must not
fire on. Real parser types and the real offline extractor; no model."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract
from backchannel.extraction.rules.en.pledges import lemma

MEETING = datetime(2026, 3, 10, 14, 0)


def run(*lines: tuple[str, str]):
    t = Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)], "text", title="Meeting", meeting_date=MEETING
    )
    return extract(t)


def facts(out, predicate: str) -> set[tuple[str, str]]:
    return {(a.subject.name, a.object.name if a.object else a.object_literal) for a in out if a.predicate == predicate}


MINISTER = "Hon. Jane Roe (Minister of Transport)"


# ---------------------------------------------------------------- promises by their frame


def test_a_promise_in_any_action_verb():
    out = run(
        ("Omar", "I'll migrate the old tables to the new cluster."),
        ("Omar", "I 'm gonna repaint the meeting room on Friday ."),
        ("Omar", "And then at some point I 'll merge them all and tag a release ."),
        ("Omar", "I'm happy to work with the caretaker on the heating problem."),
        ("Omar", "I look forward to meeting the residents' association next month."),
        ("Omar", "So the next step is to calibrate the humidity sensors."),
    )
    got = facts(out, "committed_to")
    assert ("Omar", "migrate the old tables to the new cluster") in got
    assert ("Omar", "repaint the meeting room") in got  # the due date is not part of the promise
    assert ("Omar", "merge them all and tag a release") in got  # a pronoun with more said after it
    assert ("Omar", "work with the caretaker on the heating problem") in got
    assert ("Omar", "meet the residents' association") in got
    assert ("Omar", "calibrate the humidity sensors") in got
    due = {a.object_literal: a.valid_to for a in out if a.predicate == "committed_to"}
    assert due["repaint the meeting room"] == date(2026, 3, 13)


def test_policy_promises_of_an_office_holder():
    out = run(
        (MINISTER, "So, we'll be introducing a levy on single-use cups, as I said, from next year."),
        (MINISTER, "At the first opportunity, we will bring in a cap on bus fares."),
        (MINISTER, "We will make a statutory provision for the 'safe routes' scheme."),
    )
    got = facts(out, "committed_to")
    assert (MINISTER, "introduce a levy on single-use cups") in got  # "as I said" is no reported speech
    assert (MINISTER, "bring in a cap on bus fares") in got
    assert (MINISTER, "make a statutory provision for the safe routes scheme") in got


@pytest.mark.parametrize(
    "speaker,text",
    [
        ("Ben", "We'll migrate the database over the summer."),  # "we" of someone with no role: the room talking
        ("Ben", "I'll just raise another point while I remember."),  # an act of the meeting
        (MINISTER, "I think we'll save money with that."),  # a forecast
        (MINISTER, "I'm sure we'll pick up some of that as we go."),
        (MINISTER, "Otherwise we'll reach some very uneven outcomes."),
        (MINISTER, "The question is how we are going to fund the new depots."),
        ("Ben", "I'll change the subject now."),
        ("Ben", "I will be sharing my time with the member for Leeds."),
        ("Ben", "I'll do that."),  # a bare pronoun says nothing to follow up
        ("Ben", "I'll fix it later."),
        ("Ben", "I'll review the figures."),  # an everyday verb still needs a due date
        ("Ben", "I'll reach out to you soon."),
        ("Ben", "If we get the grant, I'll hire two technicians."),
        ("Ben", "I won't migrate the tables this year."),
        ("Ben", "Will I migrate the tables, do you think?"),
        ("Ben", "I'll think about the budget."),
        ("Ben", "I'll go first, then Ana will present the design."),
        (MINISTER, "We will consider the rules that are needed for the scheme."),
    ],
)
def test_what_the_frame_does_not_take_for_a_promise(speaker, text):
    assert not [a for a in run(("Ana", "Hello."), (speaker, text)) if a.predicate == "committed_to"], text


def test_two_promises_in_one_sentence_and_a_repeated_one():
    out = run(
        ("Nora", "Dev will send you the checklist by Monday, and I'll introduce you to Priya Shah."),
        ("Nora", "We're done. I'll migrate the old tables."),
        ("Nora", "Right, so I'll migrate the old tables and I'll tell you when."),
    )
    got = [o for s, o in facts(out, "committed_to") if s == "Nora"]
    assert "introduce you to Priya Shah" in got
    assert [
        a.object_literal for a in out if a.predicate == "committed_to" and a.object_literal.startswith("migrate")
    ] == ["migrate the old tables"]  # said once


def test_an_everyday_verb_with_a_question_as_its_object():
    out = run(
        ("The Chair", "We'll check what happened with the clock."), ("Ana", "I'll check what they mean by latency.")
    )
    assert facts(out, "committed_to") == {
        ("The Chair", "check what happened with the clock"),
        ("Ana", "check what they mean by latency"),
    }


def test_a_callback_within_the_hour_is_due_the_same_day():
    out = run(("Agent", "I'll call you back within the hour."))
    (a,) = [a for a in out if a.predicate == "committed_to"]
    assert a.object_literal == "call you back" and a.valid_to == date(2026, 3, 10)


def test_a_name_in_apposition_keeps_its_comma():
    out = run(
        ("Host", "Our analyst, Priya Shah, will follow up with you about the invoice."),
        ("Host", "Thanks, Priya, will do."),
    )
    assert facts(out, "committed_to") == {("Priya Shah", "follow up with you about the invoice")}


def test_progressive_forms_go_back_to_their_base():
    assert [
        lemma(w)
        for w in (
            "setting",
            "making",
            "reflecting",
            "providing",
            "continuing",
            "writing",
            "creating",
            "ensuring",
            "opening",
            "visiting",
            "treating",
        )
    ] == ["set", "make", "reflect", "provide", "continue", "write", "create", "ensure", "open", "visit", "treat"]


# ---------------------------------------------------------------- titles and employers


def test_a_title_before_a_surname_names_the_one_speaker_with_it():
    out = run(
        ("Hon. Maria Lopez", "Thank you."),
        ("Mr. Tom Reed (Halton, Lib.)", "I have worked closely with Minister Lopez on this."),
        ("Mr. Tom Reed (Halton, Lib.)", "MinisterLopez and MinisterBrown were appointed to the group."),
    )
    titles = facts(out, "has_title")
    assert ("Maria Lopez", "Minister") in titles
    assert not any("Brown" in s for s, _t in titles)  # no speaker is called Brown: a surname alone stays out


def test_a_surname_two_speakers_share_names_nobody():
    out = run(
        ("Hon. Maria Lopez", "Thank you."),
        ("Hon. Ana Lopez", "Thanks."),
        ("Mr. Tom Reed", "I agree with Minister Lopez."),
    )
    assert not facts(out, "has_title")


def test_their_title_belongs_to_the_one_organisation_named_before():
    out = run(
        ("Ana", "We met Northwind last week. Their CFO, Laura Kim, was there."),
        ("Ana", "We met Northwind and Contoso. Their CFO, Tom Berg, was there."),
    )
    works = facts(out, "works_at")
    assert ("Laura Kim", "Northwind") in works
    assert not any(s == "Tom Berg" for s, _o in works)  # two organisations: whose CFO is not said


def test_french_titles_without_an_organisation():
    out = run(
        ("Paul Girard", "Bonjour à tous, je suis Paul Girard, directeur financier."),
        ("Léa Blanc", "Et moi, je suis cheffe de projet depuis janvier."),
        ("Paul Girard", "Je vous présente notre directrice technique, Sandrine Morel."),
        ("Marc Petit", "Je ne suis pas chef de projet, je suis stagiaire."),
    )
    assert facts(out, "has_title") == {
        ("Paul Girard", "directeur financier"),
        ("Léa Blanc", "cheffe de projet"),
        ("Sandrine Morel", "directrice technique"),
    }


# ---------------------------------------------------------------- people


def test_word_received_from_someone_is_contact():
    out = run(
        ("Ana", "I got an email from Owen Price yesterday about the lease."),
        ("Ben", "We've been taking advice from Carla Diaz on procurement."),
        ("Ana", "I never got a message from Priya Shah."),
        ("Ana", "I got an email from Andreas about it."),  # a first name alone is too thin
        ("Ana", "Maybe we had a letter from Tom Reed, I can't remember."),
    )
    assert facts(out, "knows") == {("Ana", "Owen Price"), ("Ben", "Carla Diaz")}


def test_greetings_sent_through_someone_and_family_ties():
    out = run(
        ("Ana", "Say hello to Owen Price from me when you see him."),
        ("Ana", "Say hello to everyone from me."),
        ("Ben", "My cousin Carla Diaz is moving to Leeds."),
        ("Ben", "My sister thinks so too."),
        ("Ana", "My supervisor at Arup, Tom Reed, signed it off."),
    )
    assert facts(out, "knows") == {("Ana", "Owen Price"), ("Ben", "Carla Diaz")}
    assert facts(out, "worked_with") == {("Ana", "Tom Reed")}

"""Real meetings: the chair a committee thanks, and an offer said as "I can + action". Every
sentence here is new (none is from bench/devset). Real parser types and the real offline
extractor."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.addressed_chair import addressed_chair
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 3, 10, 14, 0)


def transcript(*lines: tuple[str, str]) -> Transcript:
    return Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)], "text", title="Meeting", meeting_date=MEETING
    )


def titles(out) -> set[tuple[str, str]]:
    return {(a.subject.name, a.object_literal or "") for a in out if a.predicate == "has_title"}


def promises(out) -> set[tuple[str, str]]:
    return {(a.subject.name, a.object_literal or "") for a in out if a.predicate == "committed_to"}


def test_the_member_thanked_as_chair_is_the_one_who_called_them():
    t = transcript(
        ("Morag Ellis MSP", "Next, questions from Tariq Shah."),
        ("Tariq Shah MSP", "Thank you, Convener. How many pupils left the scheme last year?"),
        ("Dr Helen Rees", "About four hundred, and most of them moved to colleges."),
        ("Morag Ellis MSP", "Thank you. Anne Clarke has the next question."),
        ("Anne Clarke MSP", "Thanks very much, Convener. Is the funding ring-fenced?"),
    )
    assert ("Morag Ellis", "Chair") in titles(extract(t))
    got = addressed_chair(t)
    assert [(a.subject.name, a.quote, a.utterance_idx) for a in got] == [("Morag Ellis", "Thank you, Convener.", 1)]
    (a,) = got
    # the quote is the thanks, said by the member (not by the chair: the subject is no speaker of it)
    assert t.utterances[1].text[a.span_start : a.span_end] == a.quote and not a.subject.is_speaker


def test_thanks_that_name_several_people_give_no_chair():
    t = transcript(
        ("Owen Price", "Let me ask about the buses."),
        ("Nia Jones", "Thank you, Chair. The buses run on time."),
        ("Carys Lloyd", "I have a point on trains."),
        ("Rhys Evans", "Thank you, Chair. The trains do not."),
    )
    assert addressed_chair(t) == []  # two speakers each thanked once: no one is the chair for sure


def test_a_label_that_says_the_chair_needs_no_second_title():
    t = transcript(
        ("The Chair (Ms. Ruth Kane)", "Mr. Doyle, you have the floor."),
        ("Mr. Liam Doyle", "Thank you, Madam Chair. My question is on ferries."),
    )
    assert addressed_chair(t) == []


def test_thanks_after_a_witness_is_no_vote():
    t = transcript(
        ("Dr Helen Rees", "The figures are in the annex."),
        ("Tariq Shah MSP", "Okay. That is helpful. Thank you, Convener."),
    )
    assert addressed_chair(t) == []  # the thanks does not open the turn: it closes an exchange


def test_an_offer_said_with_i_can_is_a_promise_when_it_names_a_deliverable():
    out = extract(
        transcript(
            ("Grad D", "I can write the report by Friday."),
            ("Grad D", "I can see the spectrum from here."),
            ("Grad D", "I can tell you what happened."),
            ("Grad D", "If you want, I can draft the agenda."),
        )
    )
    got = promises(out)
    assert ("Grad D", "write the report") in got
    assert not any(o.startswith(("see", "tell", "draft")) for _s, o in got)  # an ability, a telling, a condition

"""Five things the mentions stage and the slot filling read, each on sentences written for this file
only (in no bank file, story or split of the evaluation set), through the real embedding model and the
shipped weights:

- an organisation that hires, poaches or lures someone is an organisation, and so is the one they were
  hired away from ("Revolut has poached X from Monzo": mentions/sentence.py, HIRED_FROM and _ORG_AFTER);
  the one they came from is a past employer (fill.py);
- the person an organisation names or hires is the one who joins, not the one they succeed, who retires;
- a lone first name after the noun of a tie ("my sister Carla", "my cousin Arjun") or before an
  honorific ("Pooja ma'am") is a person, whether or not the names lexicon knows it;
- a name that opens a sentence and is described by a relative clause ("X, who runs Y at Z, ...") is the
  subject, not the one spoken to;
- the organisation after a verb of joining is where someone goes, even when the head reads "left"."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning import stage
from backchannel.extraction.mentions import sentence as mentions

OWNER = ("Alex Moreau",)


def _extract(*lines: tuple[str | None, str]):
    t = Transcript(
        utterances=[Utterance(idx=i, speaker=s, text=x) for i, (s, x) in enumerate(lines)],
        format="text",
        meeting_date=datetime(2026, 11, 3, 10, 0),
    )
    return offline.extract(t, owner_names=OWNER)


def _facts(out, predicate: str) -> set[tuple[str, str]]:
    return {(a.subject.name, a.object.name) for a in out if a.predicate == predicate and a.object is not None}


def _named(text: str, kind: str) -> list[str]:
    """The names of `kind` the mentions stage finds in `text`, said by someone who is no party to it."""
    slots = mentions.find(text, 0, len(text), known_people=frozenset(), organisations=set(), speaker="Rina Das")
    return [s.name for s in slots if s.kind == kind]


def _news(text: str):
    return _extract((None, text))


def test_an_organisation_that_poaches_someone_and_the_one_it_poached_from():
    out = _news("Larchmont Capital has poached Ines Okafor from Brevik, where she ran credit risk.")
    assert ("Ines Okafor", "Larchmont Capital") in _facts(out, "works_at")
    assert ("Ines Okafor", "Brevik") in _facts(out, "left") | _facts(out, "works_at")
    assert ("Ines Okafor", "Larchmont Capital") not in _facts(out, "left")


def test_joining_one_organisation_from_another():
    out = _news("Tomasz Wrobel joins Quillfeather from Ardmoor as chief operating officer.")
    assert ("Tomasz Wrobel", "Quillfeather") in _facts(out, "works_at")
    assert ("Tomasz Wrobel", "Quillfeather") not in _facts(out, "left")


def test_the_one_named_joins_and_the_one_succeeded_is_not_given_the_new_job_as_left():
    out = _news(
        "Pennick Hollis has named Maren Solberg as finance director, succeeding Ewan Blair, who retires in May."
    )
    assert ("Maren Solberg", "Pennick Hollis") in _facts(out, "works_at")
    assert ("Maren Solberg", "Pennick Hollis") not in _facts(out, "left")


@pytest.mark.parametrize(
    "text,person",
    [
        ("My niece Odalys just started at Brightfern, on the design side.", "Odalys"),
        ("My flatmate Tobiah got taken on at Carrowmore last spring.", "Tobiah"),
        ("Our old mentor, Ysolde, still sends me articles.", "Ysolde"),
        ("Lakshmi ma'am was my team lead in Zenvora for three years.", "Lakshmi"),
        ("Ask Venkat sir, he signs off on these.", "Venkat"),
    ],
)
def test_a_lone_first_name_after_the_noun_of_a_tie_or_before_an_honorific_is_a_person(text, person):
    assert _named(text, "person") == [person]


def test_a_lone_word_with_no_tie_noun_before_it_stays_no_one():
    text = "Odalys just started at Brightfern, on the design side."
    assert not _named(text, "person")


def test_the_job_of_a_relative_named_by_first_name_is_theirs_not_the_speakers():
    out = _extract(
        ("Alex Moreau", "Anyone we know there?"), ("Rina Das", "My niece Odalys just started at Brightfern.")
    )
    assert ("Odalys", "Brightfern") in _facts(out, "works_at")
    assert ("Rina Das", "Brightfern") not in _facts(out, "works_at")
    assert ("Rina Das", "Odalys") in _facts(out, "knows")


def test_a_word_the_meeting_writes_in_lower_case_is_no_name_after_a_tie_noun():
    out = _extract(
        ("Alex Moreau", "my friend will be there too, and honestly will is the word."),
        ("Rina Das", "My friend Will said he'd come along to Brightfern."),
    )
    assert not [a for a in out if a.subject.name == "Will" or (a.object is not None and a.object.name == "Will")]


def test_a_name_described_by_a_relative_clause_is_the_subject_not_addressed():
    out = _extract(
        ("Alex Moreau", "Who should I talk to?"),
        ("Megan Hale", "Corin Vasquez, who looks after supplier contracts at Dunmore Rail, is your best bet."),
    )
    assert ("Corin Vasquez", "Dunmore Rail") in _facts(out, "works_at")
    assert ("Megan Hale", "Dunmore Rail") not in _facts(out, "works_at")


def test_the_organisation_someone_is_joining_is_where_they_go():
    out = _news("Halvard Ek left Norrstad in March and is said to be joining Fjellvik.")
    assert ("Halvard Ek", "Fjellvik") not in _facts(out, "left")


def test_the_one_succeeded_has_left_unless_their_going_is_still_to_come():
    gone = _news("Brackwater Mills names Ilse Varga chief executive after the abrupt exit of Tobin Rees.")
    assert ("Ilse Varga", "Brackwater Mills") in _facts(gone, "works_at")
    assert ("Tobin Rees", "Brackwater Mills") in _facts(gone, "left")
    going = _news("Brackwater Mills names Ilse Varga chief executive, succeeding Tobin Rees, who retires in June.")
    assert ("Tobin Rees", "Brackwater Mills") in _facts(going, "works_at")
    assert ("Tobin Rees", "Brackwater Mills") not in _facts(going, "left")


def test_of_two_organisations_the_one_left_or_come_from_is_past():
    out = _extract(
        ("Alex Moreau", "How long have you been there?"),
        ("Rina Das", "Two years back I left Corveth Systems and took up the platform role at Ilmari Labs."),
    )
    assert ("Rina Das", "Corveth Systems") in _facts(out, "left")
    assert ("Rina Das", "Ilmari Labs") in _facts(out, "works_at")
    assert ("Rina Das", "Ilmari Labs") not in _facts(out, "left")


@pytest.mark.parametrize(
    "text,org",
    [
        ("Rumour is Ottilie Brand is leaving Harrowgate for Pellucid next month.", "Pellucid"),
        ("Quenby finance chief Darius Holm is said to be weighing an offer.", "Quenby"),
        ("Wilmer Osei is retiring from Castlebrook after twenty years.", "Castlebrook"),
        ("The board of Tamsworth said it would name a new chair in May.", "Tamsworth"),
    ],
)
def test_one_word_organisations_known_by_the_words_around_them(text, org):
    assert org in _named(text, "organisation")


def test_leaving_one_organisation_for_another():
    out = _news("Rumour is Ottilie Brand is leaving Harrowgate for Pellucid next month.")
    assert ("Ottilie Brand", "Pellucid") in _facts(out, "works_at")
    assert ("Ottilie Brand", "Pellucid") not in _facts(out, "left")


@pytest.mark.parametrize(
    "text",
    [
        "I'll send you the rollout plan by Thursday, provided procurement clears it.",
        "Let me share the audit findings with you next week, assuming the board agrees.",
        "We'll publish the revised tariffs in May, subject to the regulator's approval.",
    ],
)
def test_a_promise_with_a_condition_after_it_is_no_promise_yet(text):
    out = _extract(("Alex Moreau", "Can you get me that?"), ("Rina Das", text))
    assert not [a for a in out if a.predicate == "committed_to"]


def test_a_promise_with_no_condition_is_kept():
    out = _extract(("Alex Moreau", "Can you get me that?"), ("Rina Das", "I'll send you the rollout plan by Thursday."))
    assert [a.subject.name for a in out if a.predicate == "committed_to"] == ["Rina Das"]


def test_a_first_name_of_someone_at_the_table_is_that_person():
    t = Transcript(
        utterances=[
            Utterance(idx=0, speaker="Alex Moreau", text="Tell me about the team."),
            Utterance(
                idx=1, speaker="Heather Quinn", text="Oswin is being modest, he ran all of analytics at Corvane."
            ),
            Utterance(idx=2, speaker="Oswin Achterberg", text="Ha, for a while."),
        ],
        format="text",
        meeting_date=datetime(2026, 11, 3, 10, 0),
        participants=["Alex Moreau", "Heather Quinn", "Oswin Achterberg"],
    )
    known = frozenset({"alex moreau", "heather quinn", "oswin achterberg"})
    said = [c for c in stage.candidates(t, known, set()) if c.utt_idx == 1]
    assert said and [s.name for s in said[0].slots if s.kind == "person"] == ["Oswin Achterberg"]


def test_no_departure_for_someone_the_sentence_puts_there_now():
    out = _extract(
        ("Alex Moreau", "Any news from them?"),
        ("Tom Becker", "Oh, Mireille Achard is the COO of Dunvale now, she replaced their old operations lead."),
    )
    assert ("Mireille Achard", "Dunvale") in _facts(out, "works_at")
    assert ("Mireille Achard", "Dunvale") not in _facts(out, "left")

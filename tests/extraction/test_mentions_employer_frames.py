"""Organisations and people the meaning stage's slots find by the words around a name (mentions/sentence.py):
"in" for a place of work, an office's town after its employer, a lowercase "ex-", a town named as an
employer by a verb of hiring, and a lone name paired with the speaker. Fresh sentences, in no suite and
not in the evaluation set; no model."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions import sentence as slots_of
from backchannel.extraction.mentions.pronouns import pronoun_refs


def slots(text: str, known: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    orgs = slots_of.organisations_of([text])
    found = slots_of.find(
        text,
        0,
        len(text),
        known_people=known,
        organisations=orgs,
        speaker=None,
        lowercase=slots_of.lowercase_words([text]),
    )
    return [(s.name, s.kind) for s in found]


def organisations(text: str) -> list[str]:
    return [name for name, kind in slots(text) if kind == "organisation"]


def test_in_after_a_verb_of_being_or_working_is_a_place_of_work():
    assert organisations("My cousin Vikram is in Capgemini only, six years now.") == ["Capgemini"]
    assert organisations("I was working alongside Rohan Pillai in Mphasis itself, then came here.") == ["Mphasis"]
    assert organisations("He's in Zoho now, heading their payroll product.") == ["Zoho"]
    assert organisations("We were in the same batch in Genpact, both of us freshers.") == ["Genpact"]


def test_in_before_a_place_a_topic_a_month_or_a_thing_is_no_employer():
    assert organisations("She was in Chennai for the whole conference week.") == []
    assert organisations("I was in Procurement then, before the restructure.") == []
    assert organisations("The figure is in Appendix C of the draft.") == []
    assert organisations("It's in Confluence somewhere, I'll find it.") == []
    assert organisations("We were in Lisbon together last spring.") == []


def test_an_office_town_after_the_employer_is_cut_off_and_a_named_college_keeps_it():
    assert organisations("We sat in the same office in Mindtree Bangalore for two years.") == ["Mindtree"]
    assert organisations("She lectures at Trinity College Dublin these days.") == ["Trinity College Dublin"]


def test_a_lowercase_ex_before_a_name_makes_it_a_former_employer():
    assert slots("They brought in Farah Siddiqui, she is ex-Flipkart.") == [
        ("Farah Siddiqui", "person"),
        ("Flipkart", "organisation"),
    ]


def test_a_town_is_an_employer_only_after_a_verb_of_hiring():
    assert organisations("Stellan Voss joins from Geneva, where he ran the reinsurance desk.") == ["Geneva"]
    assert organisations("He left Geneva in May and moved back to the coast.") == []
    assert organisations("I spent a week in Geneva with the audit team.") == []


def test_a_lone_name_paired_with_the_speaker_is_a_person():
    assert slots("Me and Anouk shared a desk for the whole migration.") == [("Anouk", "person")]
    assert slots("Torvald and I ran the night shift together at the depot.") == [("Torvald", "person")]


def test_a_lone_word_paired_with_the_speaker_that_is_a_place_or_a_common_word_is_no_person():
    assert slots("London and I never got along, honestly.") == []
    assert slots("Security and I agreed on it, and security signed it off.") == []
    assert slots("Torvald ran the night shift at the depot.") == []
    assert ("Lisbon", "person") not in slots("The Bank of Lisbon and I settled the loan last year.")


def test_an_organisations_name_goes_on_past_a_plural_possessive_to_its_head_word():
    assert organisations("We met the Royal Pharmacists' Association twice this term.") == [
        "Royal Pharmacists' Association"
    ]
    assert organisations("That was the Harrisons' house on the hill.") == []


def test_their_after_an_organisation_named_with_a_possessive_is_the_whole_organisation():
    text = "We have met the Royal Pharmacists' Association twice. Their chair has been very helpful."
    t = Transcript([Utterance(0, "Gwen Lloyd", text)], "text", title="Call", meeting_date=datetime(2026, 5, 6, 10, 0))
    refs = pronoun_refs(t, frozenset({"gwen lloyd"}), slots_of.organisations_of([text]))
    assert [(r.pronoun, r.refers_to) for r in refs[0]] == [("their", "Royal Pharmacists' Association")]

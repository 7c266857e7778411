"""The meaning stage's mechanisms around the head (backchannel/extraction/meaning/stage.py, fill.py
and mentions/sentence.py): which sentences reach it, what it reads, how the slots are filled.

Every sentence here is written for this test only (in no bank file, no story, no dev or test split
of the evaluation set), through the real embedding model and the shipped weights."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning import stage
from backchannel.extraction.mentions import sentence as mentions

OWNER = ("Alex Moreau",)


def _meeting(*lines: tuple[str | None, str], people: tuple[str, ...] = ()) -> Transcript:
    return Transcript(
        utterances=[Utterance(idx=i, speaker=s, text=x) for i, (s, x) in enumerate(lines)],
        format="text",
        meeting_date=datetime(2026, 11, 3, 10, 0),
        participants=list(people),
    )


def _facts(t: Transcript) -> set[tuple]:
    return {
        (a.subject.name, a.predicate, a.object.name if a.object else a.object_literal)
        for a in offline.extract(t, owner_names=OWNER)
    }


# ---------------------------------------------------------------- what the head reads


def test_hesitations_and_repeated_words_are_gone_from_what_the_head_reads():
    assert mentions.fluent("So I, uh, I moved to, um, to the the Oslo team, er, last spring.") == (
        "So I moved to the Oslo team last spring."
    )
    assert mentions.fluent("We had had enough.") == "We had enough."  # a word said twice, whatever it is
    assert mentions.fluent("Nothing to clean here.") == "Nothing to clean here."


def test_a_first_name_beside_its_full_name_is_one_slot():
    text = "Me and Tomasz, uh, Tomasz Wrobel, we ran the depot in Gdansk."
    slots = mentions.find(text, 0, len(text), known_people=frozenset(), organisations=set(), speaker="Ola Berg")
    assert {s.name for s in slots if s.kind == "person"} == {"Tomasz Wrobel"}
    assert "{P2}" not in mentions.masked(text, 0, len(text), slots)


def test_an_employer_before_a_title_and_a_name_is_an_organisation():
    text = "Former Unilever CFO Dana Whitt joins Brightline Robotics as president."
    slots = mentions.find(text, 0, len(text), known_people=frozenset(), organisations=set(), speaker=None)
    assert [(s.name, s.kind) for s in slots] == [
        ("Unilever", "organisation"),
        ("Dana Whitt", "person"),
        ("Brightline Robotics", "organisation"),
    ]
    text = "Ex-Siemens engineer Lotte Brandt joins the board."
    slots = mentions.find(text, 0, len(text), known_people=frozenset(), organisations=set(), speaker=None)
    assert ("Siemens", "organisation") in [(s.name, s.kind) for s in slots]
    # a person named to a post is no organisation ("X named acting CEO")
    text = "Deputy Rosa Lindqvist named acting CEO."
    slots = mentions.find(text, 0, len(text), known_people=frozenset(), organisations=set(), speaker=None)
    assert [s.kind for s in slots] == ["person"]


def test_a_sentence_naming_two_organisations_is_also_read_clause_by_clause():
    text = "He's left Vattenfall, he's at Orsted now, as their head of trading."
    orgs = [
        mentions.Slot(text.index("Vattenfall"), text.index("Vattenfall") + 10, "Vattenfall", "organisation"),
        mentions.Slot(text.index("Orsted"), text.index("Orsted") + 6, "Orsted", "organisation"),
    ]
    parts = [text[a:b] for a, b in stage._parts(text, 0, len(text), orgs)]
    assert parts == ["He's left Vattenfall", "he's at Orsted now, as their head of trading."]
    assert stage._parts(text, 0, len(text), orgs[:1]) == []  # one organisation: read whole only


# ---------------------------------------------------------------- slots filled by resolved pronouns


def test_she_is_the_one_person_named_in_the_turn_before():
    t = _meeting(
        ("Alex Moreau", "Have you come across Pilar Ortega?"),
        ("Ines Duarte", "Yes! She's head of logistics at Maersk these days, really sharp."),
    )
    assert ("Pilar Ortega", "works_at", "Maersk") in _facts(t)


def test_she_stays_unresolved_when_two_people_fit():
    t = _meeting(
        ("Alex Moreau", "Pilar Ortega and Jana Novak came to the demo."),
        ("Ines Duarte", "She's running logistics at Maersk these days."),
    )
    assert not [f for f in _facts(t) if f[1] == "works_at" and f[2] == "Maersk"]


def test_their_is_the_organisation_named_before():
    t = _meeting(
        ("Alex Moreau", "We've had a few calls with Halvorsen Group this quarter."),
        ("Ines Duarte", "Oh, they've just brought in Dmitri Sokol as their head of procurement."),
    )
    assert ("Dmitri Sokol", "works_at", "Halvorsen Group") in _facts(t)


def test_we_is_the_one_person_named_just_before():
    t = _meeting(
        ("Alex Moreau", "Do you remember Farid Haddad?"),
        ("Ines Duarte", "Farid, of course. We were on the same desk at Rabobank for years."),
    )
    facts = _facts(t)
    assert ("Ines Duarte", "worked_with", "Farid Haddad") in facts


# ---------------------------------------------------------------- promises, titles, former employers


def test_a_promise_after_a_false_start_or_inside_a_frame():
    t = _meeting(
        ("Ines Duarte", "I'll, er, let me — I'll send the signed lease over to you by Monday."),
        ("Alex Moreau", "Great."),
    )
    assert [f for f in _facts(t) if f[1] == "committed_to" and "lease" in f[2]]
    t = _meeting(
        ("Ines Duarte", "What I'll do, Alex, is send you the revised tender pack on Thursday."),
        ("Alex Moreau", "Perfect."),
    )
    assert [f for f in _facts(t) if f[1] == "committed_to" and "tender pack" in f[2]]


def test_a_title_the_speaker_gives_themself():
    t = _meeting(
        ("Ines Duarte", "Honestly, I'm only the acting finance director until they find someone."),
        ("Alex Moreau", "Understood."),
    )
    assert [f for f in _facts(t) if f[0] == "Ines Duarte" and f[1] == "has_title"]
    # a title of some other time is not claimed
    t = _meeting(
        ("Ines Duarte", "I'm going to be the finance director, apparently, from next year."),
        ("Alex Moreau", "Congratulations."),
    )
    assert not [f for f in _facts(t) if f[0] == "Ines Duarte" and f[1] == "has_title"]


def test_a_former_employer_is_left_and_the_other_is_the_employer():
    t = _meeting((None, "Ex-Siemens engineer Lotte Brandt joins Fenwick Robotics as chief technology officer."))
    facts = _facts(t)
    assert ("Lotte Brandt", "works_at", "Fenwick Robotics") in facts
    assert ("Lotte Brandt", "left", "Siemens") in facts


def test_still_at_is_no_departure_and_a_departure_to_come_is_not_yet_one():
    t = _meeting(
        ("Alex Moreau", "Did Bram ever leave Philips?"),
        ("Ines Duarte", "No, no. He's still at Philips, running the lighting unit."),
    )
    assert not [f for f in _facts(t) if f[1] == "left"]
    t = _meeting((None, "Corvane Systems confirms finance chief Malik Osei will step down in June."))
    assert not [f for f in _facts(t) if f[1] == "left"]


def test_a_surname_alone_is_the_full_name_said_before():
    text = "Brightline Robotics appoints Tove Lindgren as chief operating officer. Lindgren joins from Ericsson."
    names = mentions.first_names([text])
    assert names["lindgren"] == "Tove Lindgren" and names["tove"] == "Tove Lindgren"
    s0 = text.index("Lindgren joins")
    slots = mentions.find(
        text, s0, len(text), known_people=frozenset(), organisations={"ericsson"}, speaker=None, names=names
    )
    assert [(s.name, s.kind) for s in slots] == [("Tove Lindgren", "person"), ("Ericsson", "organisation")]
    # two people share the surname: it names neither
    assert mentions.first_names(["Tove Lindgren met Erik Lindgren."])["lindgren"] is None


def test_the_one_hired_is_the_person_after_the_hiring_verb():
    t = _meeting(
        (None, "Marlowe Foods promotes Ada Quist to chief financial officer, succeeding Piet Hols, who retires in May.")
    )
    out = offline.extract(t, owner_names=OWNER)
    jobs = {(a.subject.name, a.qualifier) for a in out if a.predicate == "works_at"}
    assert ("Ada Quist", "CFO") in jobs
    # the one succeeded keeps his job until May (fill._SUCCEEDS, _TO_GO): no new title, no departure yet
    assert ("Piet Hols", "CFO") not in jobs
    assert ("Piet Hols", "left", "Marlowe Foods") not in _facts(t)


def test_a_statement_said_with_a_question_mark_is_read_and_a_question_is_not():
    assert stage._QUESTION.match("Do you know Marta Vidal at Iberdrola?")
    assert stage._QUESTION.match("So, um, is she still at Iberdrola?")
    assert not stage._QUESTION.match("I think she's the CFO at Iberdrola now?")
    assert not stage._QUESTION.match("She's at Iberdrola, something like that?")


def test_a_possessive_pronoun_is_no_subject_and_used_to_is_past():
    t = _meeting(
        ("Alex Moreau", "How is Greta Holm these days?"),
        ("Ines Duarte", "Fine. Her cousin Bo still works at Ikea though."),
    )
    assert not [f for f in _facts(t) if f[0] == "Greta Holm" and f[2] == "Ikea"]
    t = _meeting(("Ines Duarte", "Jonas Brandt used to be at Klarna, so he knows payments."), ("Alex Moreau", "Noted."))
    facts = _facts(t)
    assert ("Jonas Brandt", "works_at", "Klarna") not in facts


@pytest.mark.parametrize(
    "sentence",
    [
        "Sophie Martin and I still talk; I worked with Sophie Martin at Globex for five years.",
        "Karl Weber and I still talk every month.",
        "I've known Karl Weber for ages, we keep in touch.",
        "Karl Weber and I are still close these days.",
    ],
)
def test_a_tie_said_to_go_on_is_never_read_as_ended(sentence):
    out = offline.extract(_meeting(("Alex Moreau", "Hi."), ("Marc Dupont", sentence)), owner_names=OWNER)
    ties = [a for a in out if a.predicate in ("knows", "worked_with") and a.subject.name == "Marc Dupont"]
    assert ties and not [a for a in ties if a.stance == "ended" and a.predicate == "knows"]


def test_an_ended_tie_without_a_word_that_it_goes_on_stays_ended():
    out = offline.extract(
        _meeting(
            ("Alex Moreau", "Hi."), ("Marc Dupont", "Karl Weber and I fell out years ago, we haven't spoken since.")
        ),
        owner_names=OWNER,
    )
    assert not [a for a in out if a.predicate == "knows" and a.stance == "asserted"]


# ---------------------------------------------------------------- two facts from one sentence


def _employment(t: Transcript) -> set[tuple]:
    return {f for f in _facts(t) if f[1] in ("works_at", "left")}


def test_a_tie_at_an_organisation_says_where_both_worked():
    said = (("Alex Moreau", "Hi."), ("Marc Dupont", "Priya Nair and I worked together at Halden Robotics."))
    assert {("Marc Dupont", "left", "Halden Robotics"), ("Priya Nair", "left", "Halden Robotics")} <= _employment(
        _meeting(*said)
    )
    # said of now, it is where both work now; with the years, the stint is dated
    t = _meeting(("Alex Moreau", "Hi."), ("Marc Dupont", "Karl Weber and I work together at Acme."))
    assert {("Marc Dupont", "works_at", "Acme"), ("Karl Weber", "works_at", "Acme")} <= _employment(t)
    out = offline.extract(
        _meeting(("Alex Moreau", "Hi."), ("Marc Dupont", "I worked with Karl Weber at Acme from 2015 to 2019.")),
        owner_names=OWNER,
    )
    stints = [a for a in out if a.predicate == "works_at" and a.object and a.object.name == "Acme"]
    assert {a.subject.name for a in stints} == {"Marc Dupont", "Karl Weber"}
    assert all(a.valid_to is not None and a.valid_to.year == 2019 for a in stints)


def test_a_tie_carries_no_employment_it_does_not_say():
    # one under the other, in the past: the tie is over, neither stint need be
    t = _meeting(("Alex Moreau", "Hi."), ("Marc Dupont", "Bo Lind was my manager at Orla Insurance."))
    assert ("Marc Dupont", "worked_with", "Bo Lind") in _facts(t) and not _employment(t)
    # unless another turn places the manager there now: then that is where they work
    t = _meeting(
        ("Alex Moreau", "Bo Lind works at Orla Insurance, I think."),
        ("Marc Dupont", "Bo Lind was my manager at Orla Insurance."),
    )
    assert not [f for f in _employment(t) if f[1] == "left"]
    # a tie denied carries nothing
    t = _meeting(("Alex Moreau", "Hi."), ("Marc Dupont", "I never worked with Karl Weber at Acme."))
    assert not _employment(t)


def test_a_name_corrected_in_the_same_breath_is_replaced():
    t = _meeting(
        ("Alex Moreau", "Hi."),
        ("Marc Dupont", "Tove Lindgren was in my squad at Corvane - no, sorry, that was Erik Sund."),
    )
    ties = {f for f in _facts(t) if f[1] == "worked_with"}
    assert ("Marc Dupont", "worked_with", "Erik Sund") in ties
    assert ("Marc Dupont", "worked_with", "Tove Lindgren") not in ties


def test_a_departure_to_come_says_where_they_work_until_then():
    t = _meeting((None, "Corvane Systems confirms finance chief Malik Osei will step down in June."))
    assert ("Malik Osei", "works_at", "Corvane Systems") in _facts(t)
    assert not [f for f in _facts(t) if f[1] == "left"]


def test_a_clause_after_a_semicolon_takes_the_organisation_of_its_sentence():
    t = _meeting(
        (
            None,
            "Marlowe Foods chief executive Ada Quist will retire in June; finance chief Piet Hols named interim CEO.",
        )
    )
    assert ("Piet Hols", "works_at", "Marlowe Foods") in _facts(t)
    # the next item of a list is not employed where the item before it is
    t = _meeting(
        ("Chair", "We welcome Ana Ruiz, director of policy at the Home Office; and Tom Bale, head of analysis.")
    )
    assert ("Tom Bale", "works_at", "Home Office") not in _facts(t)


def test_news_of_an_appointment_is_no_reported_speech_without_someone_reporting_it():
    out = offline.extract(_meeting((None, "Halden Robotics promotes Ines Duarte to chief operating officer.")))
    hired = [a for a in out if a.predicate == "works_at" and a.subject.name == "Ines Duarte"]
    assert hired and all(a.stance == "asserted" and "second_hand" not in a.trust_reasons for a in hired)


def test_a_promise_said_with_hesitations_keeps_its_deliverable():
    t = _meeting(
        ("Alex Moreau", "Hi."),
        ("Marc Dupont", "I'll, um, let me — I'll get the, the signed lease back to you by, uh, Thursday."),
    )
    promises = [a for a in offline.extract(t, owner_names=OWNER) if a.predicate == "committed_to"]
    assert promises and all("signed lease" in a.object_literal and "," not in a.object_literal for a in promises)
    assert {a.valid_to.isoformat() for a in promises if a.valid_to} == {"2026-11-05"}  # the Thursday after


@pytest.mark.parametrize(
    "said",
    [
        # a word said again across a filler: "the, um, the"
        "I'll get the, um, the tenancy papers back to you by Thursday.",
        # the Irish and Scottish "em", and a tag after the promise
        "I'll have the, em, the tenancy papers, with the annex in them, back to you by Thursday, so I will.",
    ],
)
def test_a_promise_with_a_word_said_again_across_a_filler_keeps_its_deliverable(said):
    t = _meeting(("Alex Moreau", "Hi."), ("Marc Dupont", said))
    promises = [a for a in offline.extract(t, owner_names=OWNER) if a.predicate == "committed_to"]
    assert promises and all("tenancy papers" in a.object_literal for a in promises), promises
    assert {a.valid_to.isoformat() for a in promises if a.valid_to} == {"2026-11-05"}


def test_a_lower_case_em_is_a_hesitation_and_a_capitalised_one_a_name():
    assert mentions.fluent("I'll send the, em, the deck.") == "I'll send the deck."
    assert mentions.fluent("Em said she would call.") == "Em said she would call."


# ---------------------------------------------------------------- who the parties are


def test_the_subject_of_a_relative_clause_is_its_noun_not_the_speaker():
    t = _meeting(
        ("Alex Moreau", "Hi."),
        ("Marc Dupont", "I'm so grateful to the paramedics who work at Lakeside Ambulance Trust."),
        ("Marc Dupont", "And I admire everyone who worked with Tove Lindgren on the flood appeal."),
    )
    facts = _facts(t)
    assert not [f for f in facts if f[0] == "Marc Dupont" and f[1] in ("works_at", "worked_with", "knows")]


def test_the_speaker_naming_themself_or_a_role_said_as_a_name_is_no_other_half_of_a_tie():
    t = _meeting(
        ("Alex Moreau", "Go ahead."),
        ("Speaker B", "Well, my name is Ilse Maren, but we're a group of four here."),
        ("Speaker B", "In my role as Site Coordinator I've worked alongside every crew."),
    )
    ties = {f for f in _facts(t) if f[1] in ("worked_with", "knows")}
    assert not [f for f in ties if "Ilse Maren" in (f[0], f[2]) or "Site Coordinator" in (f[0], f[2])]


def test_a_we_beside_a_named_partner_or_about_them_is_not_the_other_person_of_the_meeting():
    t = _meeting(
        ("Alex Moreau", "And the Nairobi pilot?"),
        ("Jonas Berg", "We ran the Nairobi pilot together, me and Wanjiru, um, back in 2019."),
        ("Jonas Berg", "We should put Tom Hale and Rita Oduya in touch, though I hardly know either of them."),
    )
    assert not [f for f in _facts(t) if f[1] in ("worked_with", "knows") and "Alex Moreau" in (f[0], f[2])]


def test_who_only_tells_is_no_party_and_a_soured_tie_ends_no_job():
    t = _meeting(
        ("Alex Moreau", "Where is she now?"),
        ("Jonas Berg", "Earlier I told you Rita Oduya is at Barclays, no sorry, my mistake, she is at Lloyds."),
        ("Jonas Berg", "Tom Hale I know from Unilever days, but we stopped speaking after that dispute."),
    )
    facts = _facts(t)
    assert ("Jonas Berg", "worked_with", "Rita Oduya") not in facts
    assert not [f for f in facts if f[1] == "left" and f[2] == "Unilever"]


@pytest.mark.parametrize(
    "text",
    [
        "Sure, I'll follow up on that.",
        "Yep, I'll circle back with you about it.",
        "I'll update the tracker once I see any sign of progress there.",
    ],
)
def test_a_promise_with_no_thing_promised_or_under_a_doubted_event_is_none(text):
    t = _meeting(("Alex Moreau", "Can you?"), ("Marc Dupont", text))
    assert not [f for f in _facts(t) if f[1] == "committed_to"]


def test_a_name_opening_its_sentence_before_a_lower_case_title_is_described_not_addressed():
    t = _meeting(
        ("Alex Moreau", "Who should we talk to at Ørsted, Tadhg?"),
        (
            "Tadhg Byrne",
            "Oh, I know the one. Saoirse Kelleher, head of offshore contracts, Ørsted. She runs all of it.",
        ),
    )
    assert ("Saoirse Kelleher", "works_at", "Ørsted") in _facts(t)
    # said to her: no fact of her
    t = _meeting(
        ("Alex Moreau", "Hello."),
        ("Tadhg Byrne", "Morning."),
        ("Dara Walsh", "Saoirse Kelleher, thanks for joining, Ørsted is keen on this."),
    )
    assert not [f for f in _facts(t) if f[0] == "Saoirse Kelleher"]


def test_an_organisation_someone_represents_is_not_their_employer():
    said = "Emer Nolan, head of policy, {} the Irish Farmers Association, will speak first."
    represents = _facts(_meeting(("Chair", "Welcome."), ("Dara Walsh", said.format("representing"))))
    assert not [f for f in represents if f[0] == "Emer Nolan" and f[1] == "works_at"], represents
    works = _facts(_meeting(("Chair", "Welcome."), ("Dara Walsh", said.format("at"))))
    assert ("Emer Nolan", "works_at", "Irish Farmers Association") in works

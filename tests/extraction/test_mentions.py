"""The mentions stage (extraction/mentions/stage.py): people, organisations and titles per sentence,
with spans into the utterance text, and pronouns resolved only when one candidate fits.
Real transcripts and a real DuckDB store; no model."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions import sentence as slots_of
from backchannel.extraction.mentions.pronouns import pronoun_refs
from backchannel.extraction.mentions.stage import (
    EntityMention,
    SentenceMentions,
    find_mentions,
    gender_of,
    resolve_pronoun,
)
from backchannel.memory import entities

WHEN = datetime(2026, 6, 3, 9, 30)


def meeting(*lines: tuple[str | None, str], participants: list[str] | None = None) -> Transcript:
    return Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)],
        "text",
        title="Call",
        meeting_date=WHEN,
        participants=participants or [],
    )


def named(found: list[SentenceMentions], kind: str) -> list[str]:
    return [m.name for s in found for m in s.mentions if m.kind == kind]


def pronouns(found: list[SentenceMentions]) -> list[tuple[str, str | None]]:
    return [(p.pronoun, p.refers_to) for s in found for p in s.pronouns]


def test_spans_are_exact_slices_of_the_utterance_text():
    t = meeting(("Aoife Byrne", "Last week I met Dmitri Volkov. He is the chief operating officer at Halden Robotics."))
    found = find_mentions(t)
    text = t.utterances[0].text
    for s in found:
        assert text[s.start : s.end] == s.text
        for m in s.mentions:
            assert text[m.start : m.end] == m.surface
    assert named(found, "person") == ["Dmitri Volkov"]
    assert named(found, "organisation") == ["Halden Robotics"]
    assert named(found, "title") == ["COO"]  # the lexicon's canonical title


def test_no_entity_from_a_fragment_an_opener_or_a_title_word():
    t = meeting(
        ("Aoife Byrne", "Happy to. Most of the panel came from the Bank of Valletta."),
        ("Tevita Fifita", "Director, may I add something? Grateful, the Department for Transport sent a note."),
    )
    found = find_mentions(t)
    people = named(found, "person")
    assert not {"Happy", "Most", "Valletta", "Director", "Transport", "Grateful"} & set(people), people
    assert {"Bank of Valletta", "Department for Transport"} <= set(named(found, "organisation"))


def test_first_person_is_the_speaker_and_unlabelled_text_leaves_it_open():
    found = find_mentions(meeting(("Aoife Byrne", "My team and I will send it."), (None, "I will send it.")))
    assert pronouns(found) == [("My", "Aoife Byrne"), ("I", "Aoife Byrne"), ("I", None)]


def test_she_is_the_one_person_named_before_and_open_when_two_fit():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "Greta Lund ran the audit. She found the gap."),
            ("Tevita Fifita", "Greta Lund and Paula Reyes both did. She wrote it up."),
        )
    )
    refs = [p for s in found for p in s.pronouns if p.pronoun == "She"]
    assert refs[0].refers_to == "Greta Lund"
    assert refs[1].refers_to is None and set(refs[1].candidates) == {"Greta Lund", "Paula Reyes"}


def test_gender_decides_only_for_a_name_in_the_lexicon():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "Tomas Berg and Greta Lund came. She stayed late."),
            ("Aoife Byrne", "Robin Hale and Greta Lund came. She stayed late."),
        )
    )
    she = [p.refers_to for s in found for p in s.pronouns if p.pronoun == "She"]
    assert she == ["Greta Lund", None]  # "Robin" fits either: no guess
    assert gender_of("Tomas Berg") == "m" and gender_of("Robin Hale") is None


def test_in_a_meeting_of_two_she_is_neither_of_them_and_we_is_the_other_one():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "Thanks for making time, Tevita."),
            ("Tevita Fifita", "Of course. She said we should talk."),
        )
    )
    assert ("She", None) in pronouns(found)
    assert ("we", "Aoife Byrne") in pronouns(found)


def test_we_after_a_third_person_is_that_person_or_nobody():
    one = find_mentions(
        meeting(("Aoife Byrne", "I had coffee with Kwame Mensah."), ("Tevita Fifita", "We shared an office for years."))
    )
    two = find_mentions(
        meeting(
            ("Aoife Byrne", "I had coffee with Kwame Mensah and Lina Haddad."),
            ("Tevita Fifita", "We shared an office for years."),
        )
    )
    assert ("We", "Kwame Mensah") in pronouns(one)
    assert ("We", None) in pronouns(two)


def test_their_is_the_one_organisation_named_in_the_recent_turns():
    one = find_mentions(
        meeting(("Aoife Byrne", "We pitched to Halden Robotics on Monday."), ("Tevita Fifita", "Their board liked it."))
    )
    two = find_mentions(
        meeting(
            ("Aoife Byrne", "We pitched to Halden Robotics and Orla Insurance."),
            ("Tevita Fifita", "Their board liked it."),
        )
    )
    assert ("Their", "Halden Robotics") in pronouns(one)
    assert ("Their", None) in pronouns(two)


def test_a_first_name_is_the_one_full_name_said_before_or_known_as_a_participant():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "Sanjay Rao joined us from Orla Insurance."),
            ("Tevita Fifita", "Sanjay told me. Did Wen reply?"),
            participants=["Aoife Byrne", "Tevita Fifita", "Wen Zhou"],
        )
    )
    people = [(m.surface, m.name, m.source) for s in found for m in s.mentions if m.kind == "person"]
    assert ("Sanjay", "Sanjay Rao", "text") in people
    assert ("Wen", "Wen Zhou", "speaker") in people


def test_memory_names_aliases_and_organisations_known_without_a_head_word(store):
    kofi = entities.create(store, "Kofi Asante", "person")
    entities.add_alias(store, kofi.id, "KA")
    entities.create(store, "Brightwater", "organisation")
    found = find_mentions(meeting(("Aoife Byrne", "Kofi sent the brief. Brightwater signed it.")), store)
    got = {(m.surface, m.name, m.kind, m.source) for s in found for m in s.mentions}
    assert ("Kofi", "Kofi Asante", "person", "memory") in got
    assert ("Brightwater", "Brightwater", "organisation", "memory") in got
    assert not [m for m in got if m[0] == "Brightwater" and m[2] == "person"]


def test_resolve_pronoun_on_its_own():
    before = [EntityMention("Greta Lund", "person", 0, 10, "Greta Lund")]
    assert resolve_pronoun("her", speaker="Aoife Byrne", before=before).refers_to == "Greta Lund"
    assert resolve_pronoun("him", speaker="Aoife Byrne", before=before).refers_to is None  # Greta: "she"
    assert resolve_pronoun("I", speaker=None, before=before).refers_to is None
    org = [EntityMention("Orla Insurance", "organisation", 0, 14, "Orla Insurance")]
    ref = resolve_pronoun("their", speaker="Aoife Byrne", before=[], recent=org)
    assert (ref.refers_to, ref.kind) == ("Orla Insurance", "organisation")


def test_what_the_words_alone_do_not_settle_is_a_rival_never_an_antecedent():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "We moved the whole thing onto Trello. She hated it."),  # Trello: no one known by it
            ("Aoife Byrne", "Wiremu sent the file. He was quick."),  # a name alone, not in the lexicon: open too
            ("Aoife Byrne", "Greta sent the file. She was quick."),  # a lexicon first name counts
            ("Aoife Byrne", "The XML came back. Their reply was short."),  # an acronym never seen as a workplace
        )
    )
    got = pronouns(found)
    assert ("She", None) in got and ("He", None) in got and ("She", "Greta") in got and ("Their", None) in got
    people = {m.name: m.confirmed for s in found for m in s.mentions if m.kind == "person"}
    assert people.get("Trello") is False and people.get("Greta") is True


def test_numbers_currencies_peoples_and_places_are_no_people():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "It cost them Seventeen Pounds, said the Canadians in Wales."),
            ("Aoife Byrne", "Ask about the White Paper and the A-levels."),
        )
    )
    assert named(found, "person") == []


def test_the_person_a_turn_speaks_to_is_you_not_she():
    found = find_mentions(
        meeting(
            ("Aoife Byrne", "Hi all."),
            ("Kwame Mensah", "Hello."),
            ("Tevita Fifita", "No worries Greta. She sent it anyway."),
            ("Tevita Fifita", "I asked Greta Lund. She sent it anyway."),
        )
    )
    assert [p.refers_to for s in found for p in s.pronouns if p.pronoun == "She"] == [None, "Greta Lund"]
    assert [m.vocative for s in found for m in s.mentions if m.kind == "person"] == [True, False]


# ---------------------------------------------------------------- the meaning stage's slots (mentions/sentence.py)


def slots(*lines: tuple[str | None, str]) -> list[tuple[str, str]]:
    """(name, kind) of every slot the meaning stage would mask in the meeting, read the way
    meaning/stage.py reads it (the meeting's organisations, first names and lower-case words)."""
    t = meeting(*lines)
    texts = [u.text for u in t.utterances]
    orgs = slots_of.organisations_of(texts)
    names = slots_of.first_names(texts, orgs)
    lowercase = slots_of.lowercase_words(texts)
    known = frozenset(sp.lower() for sp, _ in lines if sp)
    out = []
    for u in t.utterances:
        found = slots_of.find(
            u.text,
            0,
            len(u.text),
            known_people=known,
            organisations=orgs,
            speaker=u.speaker,
            names=names,
            lowercase=lowercase,
        )
        out += [(x.name, x.kind) for x in found]
    return out


def test_no_slot_from_a_piece_of_a_longer_name():
    got = slots(
        ("Mairead Quinn", "Good morning, and welcome to the Families, Older People and Housing Committee."),
        ("Mairead Quinn", "The housing budget for older people is on the agenda."),
        ("Mairead Quinn", "We have Idris Vaughan, principal of Tilbury and Grange College, with us."),
        (
            "Mairead Quinn",
            "The Regional Fire Chiefs' Council wrote to us, and so did the Moss Research and Design Centre.",
        ),
    )
    names = {n for n, _k in got}
    assert not {"Older People", "Housing Committee", "Grange College", "Regional Fire Chiefs", "Council"} & names, got
    assert not {"Design Centre", "Moss Research"} & names, got
    assert ("Tilbury and Grange College", "organisation") in got
    assert ("Idris Vaughan", "person") in got


def test_an_acronym_or_a_head_word_alone_is_no_organisation_without_evidence():
    got = slots(
        ("Mairead Quinn", "We still need more PPE on the night shift, and the FFT numbers look off."),
        ("Mairead Quinn", "I'll write to the Council about the Board's letter."),
        ("Odile Brandt", "The Northern Freight Authority replied; the NFA wants a meeting."),
        ("Odile Brandt", "Kasimir Lindqvist joined the NFA in May."),
    )
    orgs = [n for n, k in got if k == "organisation"]
    assert not {"PPE", "FFT", "Council", "Board"} & set(orgs), got
    got = slots(
        ("Mairead Quinn", "We left it at the KPX level, and the KPX networks will pick it up."),
        ("Mairead Quinn", "I hope the Hope to Heal Cymru project reports to the Deputy Minister for Rural Affairs."),
    )
    assert [n for n, k in got if k == "organisation"] == [], got  # a kind of thing, a piece, a portfolio
    assert "NFA" in orgs and "Northern Freight Authority" in orgs  # spelled out by the meeting


def test_a_phrase_of_common_words_capitalised_is_no_person():
    got = slots(
        ("Mairead Quinn", "The report from Social Care landed, and Ravi Anand read it."),
        ("Mairead Quinn", "Our social care spend keeps rising."),
    )
    people = [n for n, k in got if k == "person"]
    assert people == ["Ravi Anand"], got


def test_places_of_work_said_around_hesitations_ampersands_and_old_days():
    got = slots(
        ("Soren Falk", "I, uh, I left, um, Brightwell in 2019, after the merger."),
        ("Soren Falk", "Then I was at H&M for three years, on the buying side."),
        ("Soren Falk", "Petra Hollis I know from Zentrix days, she's great."),
        ("Soren Falk", "She is CFO in Dabrel now, and she's the one who brought me into Corvana."),
        ("Soren Falk", "Halvard has moved to the NHB since, I think."),
        ("Soren Falk", "Word is Quillon's about to make Edda Rask their CFO, and Bo Lind is going to Marvex as COO."),
    )
    orgs = {n for n, k in got if k == "organisation"}
    assert {"Brightwell", "H&M", "Zentrix", "Dabrel", "Corvana", "NHB", "Quillon", "Marvex"} <= orgs, got


def test_an_organisation_named_before_is_their_and_never_her():
    t = meeting(
        ("Odile Brandt", "Do you know Ines Moreau?"),
        ("Soren Falk", "She was at Corvana before, and then Valtrix hired her as head of risk."),
        ("Soren Falk", "Valtrix is growing fast. Their new CFO is Tomasz Lis."),
    )
    texts = [u.text for u in t.utterances]
    refs = pronoun_refs(t, frozenset({"odile brandt", "soren falk"}), slots_of.organisations_of(texts))
    said = {(r.pronoun, r.refers_to) for r in refs[1]}
    assert ("her", "Ines Moreau") in said and ("she", "Ines Moreau") in said
    assert [(r.pronoun, r.refers_to) for r in refs[2]] == [("their", "Valtrix")]


def test_their_stays_open_when_two_organisations_fit():
    t = meeting(
        ("Soren Falk", "Corvana and Valtrix both hired from Brightwell last year."),
        ("Odile Brandt", "Their offer was better."),
    )
    texts = [u.text for u in t.utterances]
    refs = pronoun_refs(t, frozenset({"odile brandt", "soren falk"}), slots_of.organisations_of(texts))
    assert [r for r in refs.get(1, []) if r.pronoun == "their"] == []  # only resolved pronouns are kept


def test_a_first_name_is_the_full_name_said_before_in_the_meeting():
    got = slots(
        ("Odile Brandt", "I had lunch with Itziar Etxeberria on Tuesday."),
        ("Soren Falk", "Oh, Itziar came over from Initech last spring, didn't she?"),
    )
    assert ("Itziar Etxeberria", "person") in got[1:] and ("Initech", "organisation") in got, got

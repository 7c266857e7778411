"""The writer: one transaction per source, idempotent by content, entity resolution."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.writer import QuoteMismatch, write_source
from backchannel.memory import entities

OWNER = ["Alex Moreau", "Alex"]


def transcript(lines, participants=(), date=datetime(2025, 9, 18, 8, 30)) -> Transcript:
    return Transcript(
        utterances=[Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)],
        format="text",
        title="Coffee",
        meeting_date=date,
        meeting_date_origin="front_matter",
        participants=list(participants),
    )


def quote_of(t: Transcript, idx: int, phrase: str) -> dict:
    start = t.utterances[idx].text.index(phrase)
    return {"utterance_idx": idx, "span_start": start, "span_end": start + len(phrase), "quote": phrase}


def test_marc_resolves_to_marc_dupont_among_participants(store):
    t = transcript(
        [("Marc", "Sophie Martin and I worked together at Globex."), ("Alex", "Nice.")],
        participants=["Marc Dupont", "Alex Moreau"],
    )
    a = ExtractedAssertion(
        Mention("Marc", "person", is_speaker=True),
        "worked_with",
        object=Mention("Sophie Martin", "person"),
        qualifier="Globex",
        **quote_of(t, 0, "Sophie Martin and I worked together at Globex"),
    )
    r = write_source(store, t, [a], owner_names=OWNER, extractor="test")
    assert r.created and r.assertions == 1
    marc = entities.find(store, "Marc Dupont")
    assert len(marc) == 1 and entities.find(store, "Marc")[0].id == marc[0].id
    row = store.query("SELECT * FROM assertions")[0]
    assert row["subject_id"] == marc[0].id == row["speaker_id"]
    assert row["said_at"] == datetime(2025, 9, 18, 8, 30)
    alex = entities.owner(store)
    assert alex.name == "Alex Moreau"
    speakers = store.query("SELECT speaker, speaker_id FROM utterances ORDER BY idx")
    assert speakers[1]["speaker_id"] == alex.id


def test_same_content_twice_is_stored_once(store):
    t = transcript([("Marc Dupont", "Hello there.")])
    assert write_source(store, t, [], owner_names=OWNER, extractor="test").created
    again = transcript([("marc dupont", "Hello   there. ")])  # same after normalisation
    r = write_source(store, again, [], owner_names=OWNER, extractor="test")
    assert not r.created
    assert store.scalar("SELECT count(*) FROM sources") == 1
    assert store.scalar("SELECT count(*) FROM utterances") == 1


def test_bad_quote_leaves_no_partial_rows(store):
    t = transcript([("Marc Dupont", "I know Sophie Martin well.")])
    bad = ExtractedAssertion(
        Mention("Marc Dupont", "person", True),
        "knows",
        object=Mention("Sophie Martin", "person"),
        utterance_idx=0,
        span_start=0,
        span_end=5,
        quote="I know Sophie",
    )
    with pytest.raises(QuoteMismatch):
        write_source(store, t, [bad], owner_names=OWNER, extractor="test")
    for table in ("sources", "utterances", "assertions", "events"):
        assert store.scalar(f"SELECT count(*) FROM {table}") == 0, table
    assert entities.find(store, "Sophie Martin") == []


def test_seat_labels_stay_local_unless_self_introduced(store):
    t = transcript([("Speaker 2", "I'm Sarah, the project manager."), ("Speaker 3", "Hi.")])
    write_source(store, t, [], owner_names=OWNER, extractor="test", self_intros={"Speaker 2": "Sarah"})
    sarah = entities.find(store, "Sarah")
    assert len(sarah) == 1
    assert entities.find(store, "Speaker 2") == []  # a seat, not a global alias
    assert entities.find(store, "Speaker 3 (Coffee)")


def test_a_name_with_a_note_in_brackets_is_that_person(store):
    # Hansard style: the same speaker as "Hon. Bill Blair" and "Hon. Bill Blair (Minister of ...)".
    t = transcript(
        [
            ("Hon. Bill Blair", "Thank you."),
            ("Hon. Bill Blair (Minister of Public Safety and Emergency Preparedness)", "Indeed."),
            ("The Chair (Hon. Anthony Rota (Nipissing, Lib.))", "Order."),
            ("The Acting Chair", "Next."),
        ]
    )
    write_source(store, t, [], owner_names=OWNER, extractor="test")
    blair = entities.find(store, "Hon. Bill Blair")
    assert len(blair) == 1
    noted = entities.find(store, "Hon. Bill Blair (Minister of Public Safety and Emergency Preparedness)")
    assert [e.id for e in noted] == [blair[0].id]
    assert entities.find(store, "The Chair") == []  # a seat stays local to its source
    assert entities.find(store, "The Acting Chair") == [] and entities.find(store, "The Acting Chair (Coffee)")


def test_speaker_is_distinct_from_subject_for_reported_facts(store):
    t = transcript([("Julie Bernard", "Sophie Martin is now the CIO of Acme.")])
    a = ExtractedAssertion(
        Mention("Sophie Martin", "person"),
        "works_at",
        object=Mention("Acme", "organisation"),
        qualifier="CIO",
        modality="reported",
        **quote_of(t, 0, "Sophie Martin is now the CIO of Acme"),
    )
    write_source(store, t, [a], owner_names=OWNER, extractor="test")
    row = store.query("""SELECT s.name subj, o.name obj, sp.name speaker, a.qualifier FROM assertions a
                         JOIN entities s ON s.id=a.subject_id JOIN entities o ON o.id=a.object_id
                         JOIN entities sp ON sp.id=a.speaker_id""")[0]
    assert row == {"subj": "Sophie Martin", "obj": "Acme", "speaker": "Julie Bernard", "qualifier": "CIO"}
    assert entities.find(store, "Acme")[0].kind == "organisation"


def test_title_and_start_of_one_job_become_one_fact(store):
    t = transcript(
        [("Julie Bernard", "Sophie Martin is now the CIO of Acme, she joined Acme in March.")],
        date=datetime(2026, 10, 2),
    )
    sophie, acme = Mention("Sophie Martin", "person"), Mention("Acme", "organisation")
    titled = ExtractedAssertion(
        sophie,
        "works_at",
        object=acme,
        qualifier="CIO",
        modality="reported",
        **quote_of(t, 0, "Sophie Martin is now the CIO of Acme"),
    )
    dated = ExtractedAssertion(
        sophie,
        "works_at",
        object=acme,
        modality="reported",
        confidence=0.7,
        valid_from=datetime(2026, 3, 1).date(),
        date_phrase="in March",
        **quote_of(t, 0, "she joined Acme in March"),
    )
    other = ExtractedAssertion(
        sophie,
        "works_at",
        object=acme,
        qualifier="board member",
        modality="reported",
        **quote_of(t, 0, "Sophie Martin is now the CIO"),
    )
    write_source(store, t, [titled, dated, other], owner_names=OWNER, extractor="test")
    rows = store.query(
        "SELECT qualifier, valid_from, quote, span_start, span_end, confidence, date_phrase FROM assertions ORDER BY id"
    )
    assert len(rows) == 2  # the CIO fact with its start date; a different title stays separate
    merged = rows[0]
    assert merged["qualifier"] == "CIO" and str(merged["valid_from"]) == "2026-03-01"
    assert merged["quote"] == "Sophie Martin is now the CIO of Acme, she joined Acme in March"
    assert t.utterances[0].text[merged["span_start"] : merged["span_end"]] == merged["quote"]
    assert merged["confidence"] == 0.7 and merged["date_phrase"] == "in March"
    assert rows[1]["qualifier"] == "board member"


def test_an_organisation_is_not_taken_for_a_person(store):
    first = transcript([("Julie Bernard", "Sophie Martin is the CIO of Acme.")])
    write_source(
        store,
        first,
        [
            ExtractedAssertion(
                Mention("Sophie Martin", "person"),
                "works_at",
                object=Mention("Acme", "organisation"),
                qualifier="CIO",
                **quote_of(first, 0, "Sophie Martin is the CIO of Acme"),
            )
        ],
        owner_names=OWNER,
        extractor="test",
    )
    second = transcript([("Marc Dupont", "I know Acme well.")], date=datetime(2025, 10, 1))
    r = write_source(
        store,
        second,
        [
            ExtractedAssertion(
                Mention("Marc Dupont", "person", True),
                "knows",
                object=Mention("Acme", "person"),
                **quote_of(second, 0, "I know Acme well"),
            )
        ],
        owner_names=OWNER,
        extractor="test",
    )
    assert r.assertions == 0
    assert [e.kind for e in entities.find(store, "Acme")] == ["organisation"]

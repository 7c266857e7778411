"""Entity resolution that respects the meeting, on real ingests: a full name said in this
meeting beats a first-name alias learned elsewhere; a first name shared by two known people,
with nothing in the meeting to choose, is linked with reason ambiguous_reference."""

from __future__ import annotations

import pytest

from backchannel.memory import entities
from backchannel.memory.trust import trust_score
from tests.memory.test_trust import facts, ingest, vtt
from tests.memory.test_trust import settings as settings  # noqa: F401  (a fixture: pytest finds it by this name)


def _links(store, sid, predicate):
    return [r for r in facts(store, sid, predicate)]


def _two_hannahs(store, settings, tmp_path):
    """Meeting A teaches 'Hannah' as an alias of Hannah Meyer; meeting B names Hannah Schulz."""
    ingest(
        store,
        settings,
        tmp_path,
        "2026-01-10 a.vtt",
        vtt(
            "2026-01-10 09:00",
            ("Alex Moreau", "Welcome, Hannah Meyer."),
            ("Hannah Meyer", "Thanks. I work at Globex."),
            ("Marc Dupont", "I worked with Hannah at Globex."),
        ),
    )
    ingest(
        store,
        settings,
        tmp_path,
        "2026-01-11 b.vtt",
        vtt("2026-01-11 09:00", ("Alex Moreau", "Hi."), ("Marc Dupont", "Hannah Schulz is the CTO of Hooli.")),
    )
    meyer, schulz = entities.find(store, "Hannah Meyer")[0], entities.find(store, "Hannah Schulz")[0]
    assert meyer.id in {e.id for e in entities.find(store, "Hannah")}  # the alias learned in meeting A
    return meyer, schulz


def test_a_full_name_said_in_this_meeting_beats_an_alias_learned_elsewhere(store, settings, tmp_path):
    meyer, schulz = _two_hannahs(store, settings, tmp_path)
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-01-12 c.vtt",
        vtt(
            "2026-01-12 09:00",
            ("Alex Moreau", "Who runs tech at Hooli?"),
            ("Marc Dupont", "Hannah Schulz does. I worked with Hannah at Initech for years."),
        ),
    )
    (row,) = _links(store, sid, "worked_with")
    assert row["object"] == "Hannah Schulz" and "ambiguous_reference" not in row["trust_reasons"]


def test_namesakes_with_no_context_make_an_ambiguous_link(store, settings, tmp_path):
    meyer, schulz = _two_hannahs(store, settings, tmp_path)
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-01-13 d.vtt",
        vtt(
            "2026-01-13 09:00",
            ("Alex Moreau", "Anyone at Hooli?"),
            ("Marc Dupont", "I worked with Hannah at Initech for years."),
        ),
    )
    (row,) = _links(store, sid, "worked_with")
    assert row["object"] in ("Hannah Meyer", "Hannah Schulz")
    assert row["trust_reasons"] == ["ambiguous_reference"]
    assert row["trust"] == pytest.approx(trust_score(row["confidence"], ["ambiguous_reference"]))
    event = [e for e in store.events(limit=100) if e["kind"] == "source_ingested" and e["data"]["source_id"] == sid]
    assert event[0]["data"]["ambiguous_references"] == {"hannah": ["Hannah Meyer", "Hannah Schulz"]}
    assert not entities.find(store, "Hannah", "person") or all(
        e.id in (meyer.id, schulz.id) for e in entities.find(store, "Hannah", "person")
    )


def test_a_namesake_present_in_the_meeting_is_the_one_meant(store, settings, tmp_path):
    meyer, schulz = _two_hannahs(store, settings, tmp_path)
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-01-14 e.vtt",
        vtt(
            "2026-01-14 09:00",
            ("Hannah Schulz", "Hello all."),
            ("Marc Dupont", "I worked with Hannah at Initech for years."),
        ),
    )
    (row,) = _links(store, sid, "worked_with")
    assert row["object"] == "Hannah Schulz" and row["trust_reasons"] == ["owner_absent"]


def test_one_person_by_that_first_name_resolves_as_before(store, settings, tmp_path):
    ingest(
        store,
        settings,
        tmp_path,
        "2026-01-10 a.vtt",
        vtt(
            "2026-01-10 09:00",
            ("Alex Moreau", "Welcome, Hannah Meyer."),
            ("Hannah Meyer", "Thanks."),
            ("Marc Dupont", "I worked with Hannah at Globex."),
        ),
    )
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-01-15 f.vtt",
        vtt("2026-01-15 09:00", ("Alex Moreau", "Anyone at Hooli?"), ("Marc Dupont", "I know Hannah well.")),
    )
    (row,) = _links(store, sid, "knows")
    assert row["object"] == "Hannah Meyer" and row["trust_reasons"] == []


def test_a_recipient_is_exported_and_unlinked_on_erasure(store):
    """recipient_id is personal data like subject and object: `export` shows the promise
    made to someone, `forget` leaves the promise and removes the link to them."""
    from datetime import datetime

    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.formats.transcript import Transcript, Utterance
    from backchannel.extraction.result import ExtractedAssertion, Mention
    from backchannel.extraction.writer import write_source
    from backchannel.memory import erasure
    from backchannel.ops import OpEnv
    from backchannel.ops.privacy_ops import export_entity

    text = "Fatima, I'll send you the quote by Friday."
    t = Transcript(
        [Utterance(0, "Alex Moreau", text), Utterance(1, "Fatima Zahra", "Thanks.")],
        "text",
        title="Call",
        meeting_date=datetime(2026, 5, 4, 10),
    )
    clause = "I'll send you the quote by Friday"
    start = text.index(clause)
    promise = ExtractedAssertion(
        Mention("Alex Moreau", "person", is_speaker=True),
        "committed_to",
        0,
        start,
        start + len(clause),
        clause,
        object_literal="send you the quote",
        modality="commitment",
        recipient=Mention("Fatima Zahra", "person"),
    )
    write_source(store, t, [promise], owner_names=["Alex Moreau"], extractor="test")
    fatima = entities.find(store, "Fatima Zahra")[0]
    paths = resolve_paths().ensure()
    env = OpEnv(store=store, settings=load_settings(paths), paths=paths)
    exported = export_entity(env, "Fatima Zahra")
    assert [a["object_literal"] for a in exported["assertions"]] == ["send you the quote"]
    assert exported["assertions"][0]["recipient"] == "Fatima Zahra"
    erasure.forget(store, fatima.id)
    rows = store.query("SELECT object_literal, recipient_id FROM assertions WHERE predicate = 'committed_to'")
    assert rows == [{"object_literal": "send you the quote", "recipient_id": None}]


def test_he_in_a_later_turn_is_the_one_person_the_turns_before_named(store, settings, tmp_path):
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-02-01 review.vtt",
        vtt(
            "2026-02-01 09:00",
            ("Alex Moreau", "Priya, thanks for joining."),
            ("Priya Nair", "I know Tom Becker well, we studied together."),
            ("Alex Moreau", "Tom Becker from the robotics meetup?"),
            ("Priya Nair", "Yes. He works at Stark Industries now."),
        ),
    )
    assert [(r["subject"], r["object"]) for r in _links(store, sid, "works_at")] == [("Tom Becker", "Stark Industries")]


def test_he_after_turns_naming_two_people_stays_unresolved(store, settings, tmp_path):
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-02-02 review.vtt",
        vtt(
            "2026-02-02 09:00",
            ("Alex Moreau", "Did you see Tom Becker and Paul Weber?"),
            ("Priya Nair", "Yes. He works at Stark Industries now."),
        ),
    )
    assert _links(store, sid, "works_at") == []


def test_a_first_name_of_someone_absent_links_to_the_one_person_memory_knows_by_it(store, settings, tmp_path):
    """Meeting A names Ioana Petrescu in full and never alone; meeting B, without her, says only
    "Ioana": the one person memory knows by that first name, not a new person called Ioana."""
    ingest(
        store,
        settings,
        tmp_path,
        "2026-02-01 a.vtt",
        vtt("2026-02-01 09:00", ("Alex Moreau", "Hi."), ("Marc Dupont", "Ioana Petrescu is the CTO of Hooli.")),
    )
    (ioana,) = entities.find(store, "Ioana Petrescu")
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-02-05 b.vtt",
        vtt("2026-02-05 09:00", ("Alex Moreau", "Any news?"), ("Marc Dupont", "Ioana left Hooli last week.")),
    )
    rows = _links(store, sid, "left")
    assert [r["subject"] for r in rows] == ["Ioana Petrescu"]
    assert [e.id for e in entities.find(store, "Ioana", "person")] == [ioana.id]  # now her alias


def test_a_first_name_nobody_known_holds_is_still_a_new_person(store, settings, tmp_path):
    ingest(
        store,
        settings,
        tmp_path,
        "2026-02-01 a.vtt",
        vtt("2026-02-01 09:00", ("Alex Moreau", "Hi."), ("Marc Dupont", "Ioana Petrescu is the CTO of Hooli.")),
    )
    sid = ingest(
        store,
        settings,
        tmp_path,
        "2026-02-05 b.vtt",
        vtt("2026-02-05 09:00", ("Alex Moreau", "Any news?"), ("Marc Dupont", "Radu left Hooli last week.")),
    )
    assert [r["subject"] for r in _links(store, sid, "left")] == ["Radu"]
    assert not entities.find(store, "Ioana Radu")

"""Supersession: a later holder of a title closes the earlier one's validity;
nothing is deleted and as-of queries answer history."""

from __future__ import annotations

from datetime import date, datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.writer import write_source
from backchannel.memory import entities, supersede


def add(store, subject, predicate, obj, qualifier=None, said=None, valid_from=None, valid_to=None):
    aid = store.scalar(
        "INSERT INTO assertions (subject_id, predicate, object_id, qualifier, said_at, valid_from, valid_to, modality)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 'stated') RETURNING id",
        [subject, predicate, obj, qualifier, said, valid_from, valid_to],
    )
    supersede.apply(store, [aid])
    return aid


def who(store, acme, title, when):
    return [r["subject_id"] for r in supersede.as_of(store, "works_at", acme, title, when)]


def test_later_cio_closes_the_earlier_one_and_history_stays(store):
    acme = entities.create(store, "Acme", "organisation").id
    alice, bob, carol = (entities.create(store, n, "person").id for n in ("Alice", "Bob", "Carol"))
    a1 = add(store, alice, "works_at", acme, "CIO", said=datetime(2023, 3, 10, 9))
    a2 = add(store, bob, "works_at", acme, "cio", said=datetime(2025, 1, 20, 9), valid_from=date(2024, 11, 1))
    old = store.query("SELECT valid_to, superseded_by, superseded_at FROM assertions WHERE id = ?", [a1])[0]
    assert old["valid_to"] == date(2024, 11, 1) and old["superseded_by"] == a2 and old["superseded_at"] is not None
    assert store.scalar("SELECT count(*) FROM assertions") == 2  # nothing deleted

    assert who(store, acme, "CIO", date(2024, 6, 1)) == [alice]
    assert who(store, acme, "CIO", date(2025, 6, 1)) == [bob]
    assert who(store, acme, "CIO", date(2022, 6, 1)) == []  # before anyone was said to hold it
    assert who(store, acme, "CTO", date(2025, 6, 1)) == []

    # an older meeting ingested late slots in between: it closes Alice, Bob closes it
    a3 = add(store, carol, "works_at", acme, "CIO", said=datetime(2024, 2, 1))
    assert who(store, acme, "CIO", date(2023, 6, 1)) == [alice]
    assert who(store, acme, "CIO", date(2024, 6, 1)) == [carol]
    assert who(store, acme, "CIO", date(2025, 6, 1)) == [bob]
    rows = {r["id"]: r for r in supersede.history(store, "works_at", acme, "CIO")}
    assert list(rows) == [a1, a3, a2]
    assert rows[a1]["valid_to"] == date(2024, 2, 1) and rows[a1]["superseded_by"] == a3
    assert rows[a3]["valid_to"] == date(2024, 11, 1) and rows[a3]["superseded_by"] == a2
    assert rows[a2]["valid_to"] is None and rows[a2]["superseded_at"] is None


def test_same_holder_restated_or_no_title_is_not_superseded(store):
    acme = entities.create(store, "Acme", "organisation").id
    alice, bob = (entities.create(store, n, "person").id for n in ("Alice", "Bob"))
    add(store, alice, "works_at", acme, "CIO", said=datetime(2023, 3, 10))
    add(store, alice, "works_at", acme, "CIO", said=datetime(2024, 3, 10))  # restated
    add(store, bob, "works_at", acme, None, said=datetime(2024, 5, 1))  # works there, no title
    assert store.scalar("SELECT count(*) FROM assertions WHERE superseded_at IS NOT NULL") == 0
    assert set(who(store, acme, None, date(2024, 6, 1))) == {alice, bob}


def test_left_closes_works_at(store):
    acme = entities.create(store, "Acme", "organisation").id
    dan = entities.create(store, "Dan", "person").id
    w = add(store, dan, "works_at", acme, "CFO", said=datetime(2022, 1, 5))
    left = add(store, dan, "left", acme, said=datetime(2024, 9, 1), valid_to=date(2024, 6, 30))
    row = store.query("SELECT valid_to, superseded_by FROM assertions WHERE id = ?", [w])[0]
    assert row == {"valid_to": date(2024, 6, 30), "superseded_by": left}
    assert who(store, acme, "CFO", date(2024, 1, 1)) == [dan]
    assert who(store, acme, "CFO", date(2024, 7, 1)) == []


def test_writer_applies_supersession_per_source(store):
    def meeting(day, name):
        text = f"{name} is the CIO of Acme now."
        t = Transcript([Utterance(0, "Marc", text)], "text", title=f"m{day}", meeting_date=datetime(2025, day, 1))
        a = ExtractedAssertion(
            Mention(name, "person"),
            "works_at",
            0,
            0,
            len(text),
            text,
            object=Mention("Acme", "organisation"),
            qualifier="CIO",
            modality="reported",
        )
        write_source(store, t, [a], owner_names=["Me"], extractor="test")

    meeting(2, "Sophie Martin")
    meeting(5, "Paul Leroy")
    acme = entities.find(store, "Acme", "organisation")[0].id
    names = {
        r["subject_id"]: entities.get(store, r["subject_id"]).name
        for r in supersede.history(store, "works_at", acme, "CIO")
    }
    march = supersede.as_of(store, "works_at", acme, "CIO", date(2025, 3, 1))
    june = supersede.as_of(store, "works_at", acme, "CIO", date(2025, 6, 1))
    assert [names[r["subject_id"]] for r in march] == ["Sophie Martin"]
    assert [names[r["subject_id"]] for r in june] == ["Paul Leroy"]
    assert march[0]["valid_to"] == date(2025, 5, 1) and march[0]["quote"] == "Sophie Martin is the CIO of Acme now."


def test_merging_two_names_of_one_organisation_orders_its_title_holders_and_split_undoes_it(store):
    from backchannel.memory import merges

    acme, acme_corp = (
        entities.create(store, "Acme", "organisation").id,
        entities.create(store, "Acme Corp", "organisation").id,
    )
    robert, sophie = (
        entities.create(store, "Robert Petit", "person").id,
        entities.create(store, "Sophie Martin", "person").id,
    )
    old = add(store, robert, "works_at", acme_corp, "CIO", said=datetime(2024, 5, 2, 9))
    new = add(store, sophie, "works_at", acme, "CIO", said=datetime(2026, 10, 2, 9), valid_from=date(2026, 3, 1))
    assert who(store, acme_corp, "CIO", date(2026, 11, 1)) == [robert]  # two organisations: no order yet

    mid = merges.merge(store, acme, acme_corp, reason="same company")
    assert who(store, acme, "CIO", date(2025, 1, 1)) == [robert]
    assert who(store, acme, "CIO", date(2026, 11, 1)) == [sophie]
    row = store.query("SELECT valid_to, superseded_by FROM assertions WHERE id = ?", [old])[0]
    assert row == {"valid_to": date(2026, 3, 1), "superseded_by": new}

    merges.split(store, f"M{mid}")
    row = store.query("SELECT valid_to, superseded_at, superseded_by FROM assertions WHERE id = ?", [old])[0]
    assert row == {"valid_to": None, "superseded_at": None, "superseded_by": None}
    assert who(store, acme_corp, "CIO", date(2026, 11, 1)) == [robert]


def test_one_query_per_source_orders_two_new_holders_among_an_older_one(store):
    """apply_source (the writer's path: the source's rows and the organisation's title
    holders read in one query) closes exactly what `apply` row by row closes."""
    alice, bob, carol = (entities.create(store, n, "person").id for n in ("Alice", "Bob", "Carol"))

    def setup(org_name, source_id):
        org = entities.create(store, org_name, "organisation").id
        old = add(store, alice, "works_at", org, "CIO", said=datetime(2023, 3, 10))
        new = [
            store.scalar(
                "INSERT INTO assertions (subject_id, predicate, object_id, qualifier, said_at, valid_from, modality,"
                " source_id) VALUES (?, 'works_at', ?, ?, ?, ?, 'stated', ?) RETURNING id",
                [who_id, org, q, said, start, source_id],
            )
            for who_id, q, said, start in (
                (carol, "C.I.O.", datetime(2025, 5, 1), None),
                (bob, "cio", datetime(2025, 5, 1), date(2024, 1, 15)),
            )
        ]
        return org, [old, *new]

    acme, by_source = setup("Acme", "S1")
    globex, by_row = setup("Globex", "S2")
    closed_by_source = supersede.apply_source(store, "S1", [acme, acme])
    closed_by_row = supersede.apply(store, by_row[1:])
    # Carol closes Alice and Bob; Bob then tightens Alice. (Row by row, Bob's row was read before
    # Carol closed it, so its close is done again and counted twice; the rows end the same.)
    assert closed_by_source == 3 and closed_by_row == 4

    def chain(org, ids):
        rows = {r["id"]: r for r in supersede.history(store, "works_at", org, "CIO")}
        return [
            (rows[i]["valid_to"], ids.index(rows[i]["superseded_by"]) if rows[i]["superseded_by"] else None)
            for i in ids
        ]

    assert (
        chain(acme, by_source) == chain(globex, by_row) == [(date(2024, 1, 15), 2), (None, None), (date(2025, 5, 1), 1)]
    )
    assert who(store, acme, "CIO", date(2024, 6, 1)) == [bob]
    assert supersede.apply_source(store, "S1", [acme]) == 0  # applied again: nothing left to close
    # One closing per assertion closed, both ways, keeping the end it had before its first close
    # (Alice's closed twice in S1: by Carol, then tightened by Bob).
    closings = store.con.execute("SELECT assertion_id, valid_to_before FROM assertion_closings").fetchall()
    closed = [ids[0] for ids in (by_source, by_row)] + [ids[2] for ids in (by_source, by_row)]
    assert sorted(closings) == sorted((i, None) for i in closed)

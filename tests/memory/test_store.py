"""The DuckDB store: named migrations once each, the event log, one transaction per source."""

from __future__ import annotations

import pytest

from backchannel.memory import Store, StoreLocked, entities


def test_migrations_apply_once(home, tmp_path):
    db = tmp_path / "m.duckdb"
    with Store.open(db) as s:
        first = s.applied_migrations()
        assert "0001_core" in first
    with Store.open(db) as s:
        assert s.migrate() == []
        assert s.applied_migrations() == first


def test_event_log_idempotency_key(store):
    assert store.append_event("step", {"n": 1}, run_id="R1", key="R1:step") is not None
    assert store.append_event("step", {"n": 2}, run_id="R1", key="R1:step") is None
    rows = store.events(run_id="R1")
    assert len(rows) == 1 and rows[0]["data"] == {"n": 1}


def test_transaction_rolls_back_everything(store):
    with pytest.raises(RuntimeError):
        with store.transaction():
            entities.create(store, "Half Written", "person")
            raise RuntimeError("boom")
    assert entities.find(store, "Half Written") == []


def test_entity_lookup_is_case_and_accent_insensitive(store):
    e = entities.create(store, "Sophie Martín", "person")
    entities.add_alias(store, e.id, "Sophie")
    assert [x.id for x in entities.find(store, "sophie martin")] == [e.id]
    assert [x.id for x in entities.find(store, "SOPHIE")] == [e.id]
    assert entities.find(store, "Sophie", kind="organisation") == []


def test_owner_is_created_once(store):
    a = entities.ensure_owner(store, "Alex Moreau", ["Alex"])
    b = entities.ensure_owner(store, "Alex Moreau", ["Alex", "AM"])
    assert a.id == b.id and a.is_owner
    assert set(entities.aliases(store, a.id)) >= {"Alex Moreau", "Alex", "AM"}


def test_second_writer_is_refused_with_clear_error(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "locked.duckdb"
    Store.open(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,time; c=duckdb.connect({str(db)!r}); print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked, match="another process"):
            Store.open(db)
    finally:
        holder.kill()
        holder.wait()


def test_find_many_matches_find_for_every_name(store):
    sophie = entities.create(store, "Sophie Martín", "person")
    entities.add_alias(store, sophie.id, "Sophie")
    acme = entities.create(store, "Acme", "organisation")
    entities.create(store, "Sophie", "organisation")  # same surface, other kind
    names = ["sophie martin", "SOPHIE", "Acme", "nobody here", ""]
    many = entities.find_many(store, names)
    for n in names[:-1]:
        from backchannel.memory.text import norm_name

        assert many[norm_name(n)] == entities.find(store, n), n
    assert [e.id for e in many["acme"]] == [acme.id]
    assert many["nobody here"] == []


def test_single_threaded_runs_on_one_thread_and_gives_the_setting_back(store):
    threads = lambda: int(store.scalar("SELECT current_setting('threads')"))  # noqa: E731
    store.con.execute("SET threads = 3")
    with store.single_threaded():
        assert threads() == 1
        with store.single_threaded():  # nested (an mbox inside a mail ingest): still one thread
            assert threads() == 1
        assert threads() == 1
    assert threads() == 3
    try:
        with store.single_threaded():
            raise RuntimeError("a failing message")
    except RuntimeError:
        pass
    assert threads() == 3  # given back after a failure too


def test_a_batch_is_one_transaction_and_a_failed_unit_rolls_all_of_it_back(store):
    from backchannel.memory.store import BatchFailed

    store.con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text VARCHAR)")
    with store.batch():
        with store.transaction():  # joins the batch's transaction: no BEGIN of its own
            store.con.execute("INSERT INTO notes VALUES (1, 'one')")
        store.insert_rows("notes", ["id", "text"], [(2, "two")], defer=True)
        assert store.held_value("notes", "id", 2, "text") == "two"  # held, not in the table yet
        assert store.scalar("SELECT count(*) FROM notes") == 1
        assert store.per_batch("k", lambda: [1]) is store.per_batch("k", lambda: [2])
    assert store.held_value("notes", "id", 2, "text") is None
    assert store.con.execute("SELECT id, text FROM notes ORDER BY id").fetchall() == [(1, "one"), (2, "two")]

    with pytest.raises(BatchFailed), store.batch():
        with store.transaction():
            store.con.execute("INSERT INTO notes VALUES (3, 'three')")
        try:
            with store.transaction():
                store.con.execute("INSERT INTO notes VALUES (4, 'four')")
                raise ValueError("a unit fails after writing")
        except ValueError:
            pass  # caught by the unit's caller: the batch still knows, and keeps nothing
    assert store.scalar("SELECT count(*) FROM notes") == 2
    with store.transaction():  # a plain transaction again afterwards
        store.con.execute("INSERT INTO notes VALUES (5, 'five')")
    assert store.scalar("SELECT count(*) FROM notes") == 3


def test_insert_rows_keeps_order_and_converts_each_value_as_its_column_type(store):
    from datetime import date, datetime, timedelta, timezone

    from backchannel.memory.store import StoreError

    cols = [
        "subject_id",
        "predicate",
        "object_id",
        "object_literal",
        "said_at",
        "valid_from",
        "recorded_at",
        "confidence",
        "modality",
        "source_id",
        "utterance_idx",
        "span_start",
        "span_end",
        "quote",
        "extractor",
        "trust",
        "trust_reasons",
        "stance",
    ]
    aware = datetime(2026, 3, 5, 11, 0, tzinfo=timezone(timedelta(hours=2)))
    rows = [
        (
            900 + i,
            "knows",
            None,
            None,
            aware if i % 2 else None,
            date(2020, 1, 1) if i % 3 else None,
            datetime(2026, 3, 5, 12, 0),
            1 if i == 0 else 0.5,
            "stated",
            "S1",
            i,
            0,
            4,
            "said",
            "offline",
            0.25,
            ["second_hand"] if i % 2 else [],
            "rumour" if i == 4 else "asserted",
        )
        for i in range(600)
    ]
    with store.transaction():
        store.insert_rows("assertions", cols, rows)
    got = store.con.execute(
        "SELECT subject_id, said_at, valid_from, confidence, trust_reasons, stance::VARCHAR"
        " FROM assertions WHERE source_id = 'S1' ORDER BY id"
    ).fetchall()
    assert [g[0] for g in got] == [900 + i for i in range(600)]  # ids from the sequence follow the rows
    assert got[1] == (901, datetime(2026, 3, 5, 9, 0), date(2020, 1, 1), 0.5, ["second_hand"], "asserted")
    assert got[0][1:4] == (None, None, 1.0) and got[0][4] == [] and got[4][5] == "rumour"
    with pytest.raises(StoreError, match="no column nope"):
        store.insert_rows("assertions", ["nope"], [(1,)])
    with pytest.raises(StoreError, match="does not have the 2 columns"):
        store.insert_rows("aliases", ["entity_id", "alias"], [(1, "a", "extra")])
    with pytest.raises(Exception, match="ENUM"):  # a stance the column's ENUM lacks is refused, as a parameter is
        with store.transaction():
            store.insert_rows("assertions", cols, [rows[0][:-1] + ("maybe",)])
    assert store.con.execute("SELECT count(*) FROM assertions WHERE source_id = 'S1'").fetchone()[0] == 600

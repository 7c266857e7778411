"""Email written several messages to a transaction (extraction/mail/batch.py): the same
memory as one message per transaction, row for row; a failure inside a batch rolls it
back and replays it one message per transaction, so the messages before the bad one are
stored once and nothing after it is half-written."""

from __future__ import annotations

import duckdb
import pytest

from backchannel.config import load_settings, resolve_paths
from backchannel.extraction.mail.batch import ingest_messages
from backchannel.memory import Store
from tests.support import mail_fixtures as fx


def _settings(home):
    (home / "config.toml").write_text('[owner]\nname = "Alex Moreau"\nemail = "alex@example.com"\n')
    return load_settings(resolve_paths().ensure())


def _messages(datas: list[bytes]) -> list:
    return [(f"test#{n}", (lambda d=d: d)) for n, d in enumerate(datas, 1)]


def _memory(store: Store) -> dict[str, list]:
    """Everything ingest writes, without row ids and clock times (ids are named by what they point to)."""
    q = lambda sql: sorted(tuple(map(str, r)) for r in store.con.execute(sql).fetchall())  # noqa: E731
    return {
        "entities": q("SELECT kind, name, norm, is_owner, merged_into IS NULL FROM entities"),
        "aliases": q(
            "SELECT e.name, a.alias, a.norm, a.source_id FROM aliases a JOIN entities e ON e.id = a.entity_id"
        ),
        "sources": q(
            "SELECT id, content_hash, path, title, format, meeting_date, participants, utterance_count,"
            " assertion_count, extractor, trust_reasons FROM sources"
        ),
        "utterances": q(
            "SELECT u.source_id, u.idx, u.speaker, e.name, u.text FROM utterances u"
            " LEFT JOIN entities e ON e.id = u.speaker_id"
        ),
        "assertions": q(
            "SELECT s.name, a.predicate, o.name, a.object_literal, a.qualifier, sp.name, a.quote,"
            " a.valid_from, a.valid_to, a.superseded_at IS NULL, b.quote, a.trust, a.source_id"
            " FROM assertions a JOIN entities s ON s.id = a.subject_id"
            " LEFT JOIN entities o ON o.id = a.object_id LEFT JOIN entities sp ON sp.id = a.speaker_id"
            " LEFT JOIN assertions b ON b.id = a.superseded_by"
        ),
        "mail_messages": q(
            "SELECT message_id, source_id, sender, recipients, sent_at, subject, origin FROM mail_messages"
        ),
        "events": q("SELECT kind, key, data FROM events WHERE kind = 'source_ingested'"),
    }


def test_batched_memory_is_row_for_row_the_one_by_one_memory(home, tmp_path):
    settings = _settings(home)
    # People recur across messages (resolved against the batch's own new entities), a
    # Message-ID comes twice in one batch, bad messages sit among good ones.
    same_id_again = fx.REPLY.replace(b"Subject:", b"X-Copy: yes\nSubject:")
    datas = [*fx.GOOD, fx.INTRO, same_id_again, *fx.BAD, *fx.numbered(12), *fx.numbered(3, domain="other.example")]
    alone, batched = Store.open(tmp_path / "alone.duckdb"), Store.open(tmp_path / "batched.duckdb")
    try:
        one_by_one = ingest_messages(alone, settings, _messages(datas), size=1)
        in_batches = ingest_messages(batched, settings, _messages(datas), size=7)
        summary = lambda outs: [(o.path, o.status, o.source_id, o.assertions, o.error) for o in outs]  # noqa: E731
        assert summary(in_batches) == summary(one_by_one)
        statuses = [o.status for o in in_batches]
        assert statuses.count("failed") == 2 and statuses.count("skipped") == 2  # INTRO again, REPLY's copy
        assert statuses.count("ingested") == len(datas) - 4
        want, got = _memory(alone), _memory(batched)
        for table in want:
            assert got[table] == want[table], table
        assert len(want["mail_messages"]) == len(datas) - 4 and len(want["events"]) == len(datas) - 4
    finally:
        alone.close()
        batched.close()


def test_a_failure_inside_a_batch_is_replayed_one_message_per_transaction(home, tmp_path):
    settings = _settings(home)
    datas = fx.numbered(6)
    scratch = Store.open(tmp_path / "scratch.duckdb")
    third = ingest_messages(scratch, settings, _messages(datas[2:3]))[0].source_id
    scratch.close()
    store = Store.open(tmp_path / "memory.duckdb")
    try:
        # A row already where the third message's first utterance goes: its write fails (a real
        # constraint of the real file), as a bug in the writer would.
        store.con.execute("INSERT INTO utterances (source_id, idx, text) VALUES (?, 0, 'in the way')", [third])
        with pytest.raises(duckdb.ConstraintException):
            ingest_messages(store, settings, _messages(datas), size=6)
        # The batch rolled back, then one per transaction: the two before are stored once, nothing after.
        stored = [r[0] for r in store.con.execute("SELECT origin FROM mail_messages ORDER BY origin").fetchall()]
        assert stored == ["test#1", "test#2"]
        assert store.scalar("SELECT count(*) FROM sources") == 2
        assert store.scalar("SELECT count(*) FROM utterances WHERE source_id = ?", [third]) == 1
        counts = store.con.execute(
            "SELECT s.assertion_count, count(a.id) FROM sources s LEFT JOIN assertions a"
            " ON a.source_id = s.id GROUP BY s.id, s.assertion_count"
        ).fetchall()
        assert all(n == c for n, c in counts)
        # Fixed, the same messages again: the first two are known, the rest stored, none twice.
        store.con.execute("DELETE FROM utterances WHERE source_id = ? AND text = 'in the way'", [third])
        again = ingest_messages(store, settings, _messages(datas), size=6)
        assert [o.status for o in again] == ["skipped"] * 2 + ["ingested"] * 4
        assert store.scalar("SELECT count(DISTINCT message_id) FROM mail_messages") == 6
        assert store.scalar("SELECT count(*) FROM sources") == 6
    finally:
        store.close()

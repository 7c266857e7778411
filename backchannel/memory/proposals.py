"""The proposals table: its one writer, and its plain reads.

A proposal is created by the wake pipeline (pending), moved by the owner's verdicts
(ops/feedback_ops.py) and by delivery (delivery/outbox.py: delivered, sent, a snooze
that ends). Every statement that changes a row is here, so its life cycle reads in
one place. None of these functions opens a transaction: each runs inside the
caller's, as it did before it moved here (a proposal, its event and its outbox rows
commit together).

Analytical reads stay with their feature: the feedback stats (ops/feedback_ops.py),
the calibration examples (engine/calibrate.py), the outbox's reconciliation and
snooze queries (they join outbox and feedback), erasure (memory/erasure.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backchannel.memory.store import Store, utcnow

# -- writes ------------------------------------------------------------------


def next_id(store: Store) -> str:
    """A new proposal id, P-<n>, from the proposal_numbers sequence."""
    return f"P-{store.scalar('SELECT nextval(?)', ['proposal_numbers'])}"


def insert_pending(
    store: Store,
    pid: str,
    *,
    run_id: str,
    dedupe_key: str,
    kind: str,
    entity_ids: list[int],
    title: str,
    body: str,
    score: float,
    why: str,
    evidence_json: str,
    action_json: str | None,
    action_hash: str | None,
    now: datetime,
) -> None:
    """A new pending proposal (the caller holds the transaction with its event and outbox rows)."""
    store.con.execute(
        """INSERT INTO proposals (id, run_id, dedupe_key, kind, entity_ids, title, body, score, why, evidence,
               action, action_hash, status, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)""",
        [
            pid,
            run_id,
            dedupe_key,
            kind,
            entity_ids,
            title,
            body,
            score,
            why,
            evidence_json,
            action_json,
            action_hash,
            now,
            now,
        ],
    )


def set_status(store: Store, pid: str, status: str) -> None:
    """The owner's verdict (accepted, dismissed, snoozed, approved)."""
    store.con.execute("UPDATE proposals SET status = ?, updated_at = ? WHERE id = ?", [status, utcnow(), pid])


def set_action(store: Store, pid: str, action_json: str, action_hash: str) -> None:
    """The outbound action as the owner edited and approved it."""
    store.con.execute(
        "UPDATE proposals SET action = ?, action_hash = ?, updated_at = ? WHERE id = ?",
        [action_json, action_hash, utcnow(), pid],
    )


def end_snooze(store: Store, pid: str, now: datetime) -> None:
    """A snooze whose time came: pending again (only if still snoozed)."""
    store.con.execute(
        "UPDATE proposals SET status = 'pending', updated_at = ? WHERE id = ? AND status = 'snoozed'", [now, pid]
    )


def mark_sent(store: Store, pid: str) -> None:
    """Its approved action went out."""
    store.con.execute("UPDATE proposals SET status = 'sent', updated_at = ? WHERE id = ?", [utcnow(), pid])


def mark_delivered(store: Store, pid: str) -> None:
    """Every channel told the owner (only a pending proposal becomes delivered)."""
    store.con.execute(
        "UPDATE proposals SET status = 'delivered', updated_at = ? WHERE id = ? AND status = 'pending'", [utcnow(), pid]
    )


# -- plain reads -------------------------------------------------------------


def row(store: Store, pid: str) -> dict[str, Any] | None:
    """The stored row as it is (JSON columns still text), or None."""
    rows = store.query("SELECT * FROM proposals WHERE id = ?", [pid])
    return rows[0] if rows else None


def listing(store: Store, status: str | None, limit: int) -> list[dict[str, Any]]:
    """Rows newest first, optionally of one status."""
    sql = "SELECT * FROM proposals"
    params: list[Any] = []
    if status:
        sql += " WHERE status = ?"
        params.append(status)
    sql += f" ORDER BY created_at DESC, id DESC LIMIT {max(1, int(limit))}"
    return store.query(sql, params)


def id_for(store: Store, run_id: str, dedupe_key: str) -> str | None:
    """The proposal a run made for a dedupe key (a resumed run finds it)."""
    return store.scalar("SELECT id FROM proposals WHERE run_id = ? AND dedupe_key = ?", [run_id, dedupe_key])


def newest_with_keys(store: Store, keys: list[str], since: datetime) -> dict[str, tuple[Any, ...]]:
    """For each dedupe key, (id, status, created_at) of its newest proposal since `since`
    (one query for a wake's candidates; the gate's per-wake reads)."""
    return {
        r[0]: tuple(r[1:])
        for r in store.con.execute(
            """SELECT dedupe_key, id, status, created_at FROM proposals WHERE dedupe_key = ANY(?) AND created_at >= ?
           QUALIFY row_number() OVER (PARTITION BY dedupe_key ORDER BY created_at DESC, id DESC) = 1""",
            [keys, since],
        ).fetchall()
    }


def count_since(store: Store, since: datetime) -> int | None:
    """How many proposals were created since `since` (naive UTC)."""
    return store.scalar("SELECT count(*) FROM proposals WHERE created_at >= ?", [since])


def last_created(store: Store) -> datetime | None:
    """When the newest proposal was created (naive UTC), or None."""
    return store.scalar("SELECT max(created_at) FROM proposals")


def counts_by_status(store: Store) -> dict[str, int]:
    return {
        r["status"]: int(r["n"])
        for r in store.query("SELECT status, count(*) AS n FROM proposals GROUP BY status ORDER BY status")
    }


def about_entities(store: Store, ids: list[int]) -> list[dict[str, Any]]:
    """Proposals that name any of `ids` (a privacy export)."""
    return store.query(
        "SELECT id, kind, title, status, created_at FROM proposals "
        "WHERE list_has_any(entity_ids, ?) ORDER BY created_at",
        [ids],
    )

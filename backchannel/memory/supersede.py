"""Supersession: a later functional fact closes an earlier one instead of
deleting it, so history stays queryable.

Functional facts here:
- `works_at` with a title qualifier: one holder of a title at an organisation
  ("X is the CIO of Acme"). When a different person is said to hold it later,
  the earlier holder's assertion gets `valid_to` (the later one's start) and
  `superseded_at` / `superseded_by`.
- `left`: "X left Acme" closes X's open `works_at` Acme assertions from before.

"Later" compares when each fact started being true: `valid_from`, else the day
it was said (`said_at`). Order of ingestion does not matter: an older meeting
ingested after a newer one gets closed by the newer fact. Nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from backchannel.memory import assertions
from backchannel.memory.store import Store, utcnow

_COLS = (
    "id, subject_id, predicate, object_id, object_literal, qualifier, speaker_id, said_at, valid_from,"
    " valid_to, superseded_at, superseded_by, confidence, modality, source_id, utterance_idx, quote,"
    " date_phrase"
)


def _start(row: dict[str, Any]) -> date | None:
    if row["valid_from"] is not None:
        return row["valid_from"]
    said = row["said_at"]
    return said.date() if isinstance(said, datetime) else said


def _norm_q(q: str | None) -> str:
    return " ".join((q or "").casefold().replace(".", "").split())


# Closes decided in one pass, written together (`_write`) before the store is read again.
_Closes = list[tuple[int, date | None, int]]


def _close(closes: _Closes, old: dict[str, Any], new: dict[str, Any], end: date | None) -> bool:
    """End `old` at `end`, superseded by `new`; an old fact already closed later
    than `end` is tightened. False when nothing changed (it ended by then anyway).
    The dicts change now, the rows at `_write`."""
    cur = old["valid_to"]
    if cur is not None and (end is None or cur <= end):
        return False
    closes.append((old["id"], end, new["id"]))
    old["valid_to"], old["superseded_by"] = end, new["id"]
    old["superseded_at"] = old["superseded_at"] or utcnow()
    return True


def _write(store: Store, closes: _Closes) -> None:
    assertions.close_many(store, closes)
    closes.clear()


def _rows(store: Store, where: str, params: list[Any]) -> list[dict[str, Any]]:
    return store.query(f"SELECT {_COLS} FROM assertions WHERE {where} ORDER BY id", params)


def _title_holders(store: Store, a: dict[str, Any], closes: _Closes, titled: list[dict[str, Any]] | None = None) -> int:
    """Order `a` among the other holders of its title: it closes the ones that
    started before it and is closed by the first that started after it. `titled`: the
    titled works_at rows of `a`'s organisation, already read (else they are read here)."""
    n = 0
    if titled is None:
        _write(store, closes)  # the read sees the closes made so far
        titled = _rows(
            store,
            "predicate = 'works_at' AND object_id = ? AND qualifier IS NOT NULL AND subject_id <> ? AND id <> ?",
            [a["object_id"], a["subject_id"], a["id"]],
        )
    others = [
        r
        for r in titled
        if r["object_id"] == a["object_id"]
        and r["subject_id"] != a["subject_id"]
        and r["id"] != a["id"]
        and _norm_q(r["qualifier"]) == _norm_q(a["qualifier"])
    ]
    a_start = _start(a)
    if a_start is None:
        return 0
    for o in sorted(others, key=lambda r: (_start(r) or date.min, r["id"])):
        o_start = _start(o)
        if o_start is None or o_start == a_start:
            continue  # no order between them: keep both, let a person sort it out
        if o_start < a_start:
            n += _close(closes, o, a, a_start)
        else:
            n += _close(closes, a, o, o_start)
    return n


def _departure(store: Store, a: dict[str, Any], closes: _Closes) -> int:
    end = a["valid_to"] or _start(a)
    n = 0
    _write(store, closes)  # the read sees the closes made so far
    for o in _rows(
        store, "predicate = 'works_at' AND subject_id = ? AND object_id = ?", [a["subject_id"], a["object_id"]]
    ):
        o_start = _start(o)
        if end is not None and o_start is not None and o_start <= end:
            n += _close(closes, o, a, end)
    return n


def may_close(predicate: str, object_id: int | None, qualifier: str | None) -> bool:
    """Whether a new assertion like this one can supersede another (what `apply` looks at)."""
    return object_id is not None and (predicate == "left" or (predicate == "works_at" and bool(qualifier)))


def apply_source(store: Store, source_id: str, titled_objects: Sequence[int] = ()) -> int:
    """`apply` for every assertion of one source just written. `titled_objects`: the
    organisations its titled works_at name; their other title holders come in the same
    query (one, not two per source: an email signature is a titled works_at)."""
    rows = _rows(
        store,
        "(source_id = ? AND object_id IS NOT NULL AND predicate IN ('works_at', 'left'))"
        " OR (predicate = 'works_at' AND qualifier IS NOT NULL AND list_contains(?, object_id))",
        [source_id, sorted(set(titled_objects))],
    )
    new = [
        r
        for r in rows
        if r["source_id"] == source_id and r["object_id"] is not None and r["predicate"] in ("works_at", "left")
    ]
    # Dicts shared between `new` and `titled`: a close made for one is seen by the next, as a
    # fresh read would see it.
    titled = [r for r in rows if r["predicate"] == "works_at" and r["qualifier"] is not None]
    return _apply_rows(store, new, titled)


def apply(store: Store, assertion_ids: Sequence[int]) -> int:
    """Apply supersession for newly written assertions; returns how many older
    assertions were closed. Runs inside the caller's transaction (the writer's)."""
    if not assertion_ids:
        return 0
    return _apply_rows(
        store,
        _rows(
            store,
            "id IN (SELECT unnest(?::BIGINT[])) AND object_id IS NOT NULL AND predicate IN ('works_at', 'left')",
            [list(assertion_ids)],
        ),
    )


def _apply_rows(store: Store, new: list[dict[str, Any]], titled: list[dict[str, Any]] | None = None) -> int:
    n, closes = 0, _Closes()
    for a in new:
        if a["predicate"] == "works_at" and a["qualifier"]:
            n += _title_holders(store, a, closes, titled)
        elif a["predicate"] == "left":
            n += _departure(store, a, closes)
    _write(store, closes)
    return n


def as_of(store: Store, predicate: str, object_id: int, qualifier: str | None, when: date) -> list[dict[str, Any]]:
    """Assertions of `predicate` about `object_id` (and qualifier, case-insensitive)
    that held on `when`: started on or before it (valid_from, else said_at) and not
    ended by then (valid_to after it, or open). "Who was CIO of Acme on 2024-06-01?"
    is as_of(store, "works_at", acme_id, "CIO", date(2024, 6, 1)). Newest start first."""
    rows = _rows(store, "predicate = ? AND object_id = ?", [predicate, object_id])
    out = []
    for r in rows:
        if qualifier is not None and _norm_q(r["qualifier"]) != _norm_q(qualifier):
            continue
        start = _start(r)
        if start is not None and start > when:
            continue
        if r["valid_to"] is not None and r["valid_to"] <= when:
            continue
        out.append(r)
    out.sort(key=lambda r: (_start(r) or date.min, r["id"]), reverse=True)
    return out


def history(store: Store, predicate: str, object_id: int, qualifier: str | None = None) -> list[dict[str, Any]]:
    """Every holder over time, oldest first, superseded ones included."""
    rows = [
        r
        for r in _rows(store, "predicate = ? AND object_id = ?", [predicate, object_id])
        if qualifier is None or _norm_q(r["qualifier"]) == _norm_q(qualifier)
    ]
    rows.sort(key=lambda r: (_start(r) or date.min, r["id"]))
    return rows

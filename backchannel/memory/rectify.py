"""Rectification: the owner corrects or retracts an assertion.

A correction never overwrites: the old row is superseded (`superseded_at`,
`superseded_by`) by a new row that carries the corrected fields, the owner as its
speaker, `extractor = 'owner'`, full confidence and trust, and no quote (the owner's
word is its evidence). A retraction supersedes the row with no successor. Both are
written to `assertion_changes` with who, when, why and the fields as they were; the
graph index, the judge and `ask` read only rows that are not superseded, so they use
the correction from the next read on. Runs in one transaction.
"""

from __future__ import annotations

import json
from typing import Any

from backchannel.memory import entities
from backchannel.memory.store import Store, StoreError, utcnow

CORRECTABLE = ("predicate", "object_id", "object_literal", "qualifier", "valid_from", "valid_to", "subject_id")
_COPIED = (
    "subject_id",
    "predicate",
    "object_id",
    "object_literal",
    "qualifier",
    "valid_from",
    "valid_to",
    "modality",
    "recipient_id",
    "stance",  # a corrected date of an ended tie, or of knowing *of* someone, makes it no plain tie
)


class RectifyError(StoreError):
    """A correction that cannot be made (no such assertion, already superseded, nothing changed)."""


def _current(store: Store, assertion_id: int) -> dict[str, Any]:
    rows = store.query("SELECT * FROM assertions WHERE id = ?", [assertion_id])
    if not rows:
        raise RectifyError(f"no assertion #{assertion_id}")
    row = rows[0]
    if row["superseded_at"] is not None:
        later = f" by #{row['superseded_by']}" if row["superseded_by"] else ""
        raise RectifyError(f"assertion #{assertion_id} is already superseded{later}; correct the current one")
    return row


def _before(row: dict[str, Any]) -> str:
    # The fields, not the quote: the words stay on the superseded row itself, where erasure and
    # the retention sweep find them; the history holds no text of anyone's.
    return json.dumps(
        {k: row[k] for k in (*CORRECTABLE, "speaker_id", "said_at", "confidence", "source_id")}, default=str
    )


def correct(
    store: Store, assertion_id: int, changes: dict[str, Any], *, owner_name: str, reason: str | None, via: str
) -> int:
    """Supersede `assertion_id` by a copy with `changes` (keys of CORRECTABLE); returns the new id."""
    unknown = set(changes) - set(CORRECTABLE)
    if unknown:
        raise RectifyError(f"cannot correct {', '.join(sorted(unknown))}; only {', '.join(CORRECTABLE)}")
    with store.transaction():
        old = _current(store, assertion_id)
        new = {k: old[k] for k in _COPIED}
        new.update(changes)
        if all(new[k] == old[k] for k in changes):
            raise RectifyError(f"assertion #{assertion_id} already says that")
        if new["object_id"] is not None and new["object_literal"] is not None and "object_literal" not in changes:
            new["object_literal"] = None
        if "object_literal" in changes and changes["object_literal"] is not None and "object_id" not in changes:
            new["object_id"] = None
        me = entities.owner(store)
        now = utcnow()
        new.update(
            speaker_id=me.id if me else None,
            said_at=now,
            recorded_at=now,
            confidence=1.0,
            trust=1.0,
            trust_reasons=["owner_correction"],
            extractor="owner",
            quote=None,
            span_start=None,
            span_end=None,
            date_phrase=None,
            modality="stated" if old["modality"] != "commitment" else "commitment",
        )
        cols = list(new)
        new_id = store.scalar(
            f"INSERT INTO assertions ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)}) RETURNING id",
            [new[c] for c in cols],
        )
        store.con.execute(
            "UPDATE assertions SET superseded_at = ?, superseded_by = ? WHERE id = ?", [now, new_id, assertion_id]
        )
        _record(store, assertion_id, "correct", int(new_id), reason, owner_name, via, _before(old))
        store.append_event(
            "assertion.corrected",
            {"assertion_id": assertion_id, "new_id": int(new_id), "fields": sorted(changes), "via": via},
        )
    return int(new_id)


def retract(store: Store, assertion_id: int, *, owner_name: str, reason: str, via: str) -> None:
    """Supersede `assertion_id` with no successor: it stops being a current fact."""
    if not reason or not reason.strip():
        raise RectifyError("a retraction needs a reason")
    with store.transaction():
        old = _current(store, assertion_id)
        now = utcnow()  # one clock for both: date.today() was the local date, beside a UTC supersession
        store.con.execute(
            "UPDATE assertions SET superseded_at = ?, valid_to = coalesce(valid_to, ?) WHERE id = ?",
            [now, now.date() if old["valid_to"] is None else old["valid_to"], assertion_id],
        )
        _record(store, assertion_id, "retract", None, reason, owner_name, via, _before(old))
        store.append_event("assertion.retracted", {"assertion_id": assertion_id, "via": via})


def _record(
    store: Store,
    assertion_id: int,
    action: str,
    new_id: int | None,
    reason: str | None,
    owner_name: str,
    via: str,
    before: str,
) -> None:
    store.con.execute(
        "INSERT INTO assertion_changes (assertion_id, action, new_id, reason, changed_by, via, before, changed_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [assertion_id, action, new_id, reason, owner_name, via, before, utcnow()],
    )


def history(store: Store, assertion_id: int) -> list[dict[str, Any]]:
    """Every change made to this assertion and to the ones it replaced or that replaced it, oldest first."""
    chain, frontier = {assertion_id}, [assertion_id]
    while frontier:
        rows = store.con.execute(
            "SELECT assertion_id, new_id FROM assertion_changes WHERE list_contains($1, assertion_id) "
            "OR list_contains($1, new_id)",
            [frontier],
        ).fetchall()
        found = {x for r in rows for x in r if x is not None} - chain
        chain |= found
        frontier = sorted(found)
    return store.query(
        "SELECT id, assertion_id, action, new_id, reason, changed_by, via, before, changed_at "
        "FROM assertion_changes WHERE list_contains(?, assertion_id) ORDER BY changed_at, id",
        [sorted(chain)],
    )

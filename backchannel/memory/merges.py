"""Entity merges and splits: every merge is logged in `entity_merges` with
exactly what moved, so that a split puts back exactly that.

A merge never deletes: the merged entity stays, with `merged_into` set; its
aliases, the assertions that name it (as subject, object or speaker) and the
utterances it spoke move to the kept entity. An alias the kept entity already
has stays where it was (the table is keyed by entity and alias) and comes back
with the split anyway.

Merges nest: after merging B into A and then A into C, split the later merge
(A from C) before the earlier one; a split refuses while its kept entity is
itself merged away. Rows that moved and were later repointed elsewhere are left
where they are.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from backchannel.memory import entities
from backchannel.memory.store import Store, utcnow


class MergeError(Exception):
    """A merge or split that cannot be done; the message says why."""


@contextlib.contextmanager
def _maybe_transaction(store: Store, own: bool) -> Iterator[None]:
    if own:
        with store.transaction():
            yield
    else:
        yield


def _live(store: Store, entity_id: int) -> dict[str, Any]:
    rows = store.query("SELECT id, kind, name, is_owner, merged_into FROM entities WHERE id = ?", [entity_id])
    if not rows:
        raise MergeError(f"no entity {entity_id}")
    if rows[0]["merged_into"] is not None:
        raise MergeError(f"entity {entity_id} ({rows[0]['name']}) was already merged into {rows[0]['merged_into']}")
    return rows[0]


def _ids(store: Store, sql: str, params: list[Any]) -> list[int]:
    return [r[0] for r in store.con.execute(sql, params).fetchall()]


def merge(
    store: Store,
    keep_id: int,
    merge_id: int,
    method: str = "user",
    reason: str | None = None,
    score: float | None = None,
    *,
    transaction: bool = True,
) -> int:
    """Merge entity `merge_id` into `keep_id`; returns the id of the entity_merges row.

    Pass transaction=False when already inside the caller's transaction.
    """
    if keep_id == merge_id:
        raise MergeError("cannot merge an entity into itself")
    with _maybe_transaction(store, transaction):
        keep, gone = _live(store, keep_id), _live(store, merge_id)
        if keep["kind"] != gone["kind"]:
            raise MergeError(f"cannot merge a {gone['kind']} ({gone['name']}) into a {keep['kind']} ({keep['name']})")
        if gone["is_owner"]:
            raise MergeError(f"{gone['name']} is the owner: merge the other entity into it instead")
        moved: dict[str, Any] = {
            "aliases": [
                r[0]
                for r in store.con.execute(
                    "SELECT norm FROM aliases WHERE entity_id = ? AND norm NOT IN"
                    " (SELECT norm FROM aliases WHERE entity_id = ?) ORDER BY norm",
                    [merge_id, keep_id],
                ).fetchall()
            ],
            "subject": _ids(store, "SELECT id FROM assertions WHERE subject_id = ? ORDER BY id", [merge_id]),
            "object": _ids(store, "SELECT id FROM assertions WHERE object_id = ? ORDER BY id", [merge_id]),
            "speaker": _ids(store, "SELECT id FROM assertions WHERE speaker_id = ? ORDER BY id", [merge_id]),
            "utterances": [
                list(r)
                for r in store.con.execute(
                    "SELECT source_id, idx FROM utterances WHERE speaker_id = ? ORDER BY source_id, idx", [merge_id]
                ).fetchall()
            ],
        }
        if moved["aliases"]:
            store.con.execute(
                "UPDATE aliases SET entity_id = ? WHERE entity_id = ? AND norm IN (SELECT unnest(?::VARCHAR[]))",
                [keep_id, merge_id, moved["aliases"]],
            )
        for col in ("subject", "object", "speaker"):
            if moved[col]:
                store.con.execute(
                    f"UPDATE assertions SET {col}_id = ? WHERE id IN (SELECT unnest(?::BIGINT[]))",
                    [keep_id, moved[col]],
                )
        if moved["utterances"]:
            store.con.execute("UPDATE utterances SET speaker_id = ? WHERE speaker_id = ?", [keep_id, merge_id])
        store.con.execute("UPDATE entities SET merged_into = ? WHERE id = ?", [keep_id, merge_id])
        moved["supersession"] = _supersede_after_merge(store, keep_id, moved["subject"] + moved["object"])
        mid = store.scalar(
            "INSERT INTO entity_merges (kept_id, merged_id, method, score, reason, moved, merged_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [keep_id, merge_id, method, score, reason, json.dumps(moved), utcnow()],
        )
        store.append_event(
            "entity_merged",
            {"merge_id": mid, "kept_id": keep_id, "merged_id": merge_id, "method": method, "reason": reason},
        )
        return int(mid)


def _supersede_after_merge(store: Store, keep_id: int, moved_ids: list[int]) -> list[list[Any]]:
    """Two organisations that were one may have had two holders of one title: let
    supersession order them now. Returns the prior state of every assertion it
    changed ([id, valid_to, superseded_at, superseded_by], JSON-able) so a split
    restores it exactly."""
    from backchannel.memory import supersede

    ids = _ids(
        store,
        "SELECT id FROM assertions WHERE (object_id = ? OR subject_id = ?)"
        " AND predicate IN ('works_at', 'left') ORDER BY id",
        [keep_id, keep_id],
    )
    if not set(ids) & set(moved_ids):
        return []
    cols = "id, CAST(valid_to AS VARCHAR), CAST(superseded_at AS VARCHAR), superseded_by"
    scope = f"SELECT {cols} FROM assertions WHERE predicate = 'works_at' AND (object_id = ? OR subject_id = ?)"
    before = {r[0]: list(r) for r in store.con.execute(scope, [keep_id, keep_id]).fetchall()}
    supersede.apply(store, ids)
    after = {r[0]: list(r) for r in store.con.execute(scope, [keep_id, keep_id]).fetchall()}
    return [before[i] for i in sorted(before) if after.get(i) != before[i]]


def find_merge(store: Store, entity_id_or_merge_id: int | str) -> dict[str, Any]:
    """The open merge that `M<n>` names, or the latest open merge of entity <n> merged away."""
    ref = str(entity_id_or_merge_id).strip()
    if ref[:1] in ("M", "m") and ref[1:].isdigit():
        rows = store.query("SELECT * FROM entity_merges WHERE id = ?", [int(ref[1:])])
        if not rows:
            raise MergeError(f"no merge {ref}")
        if rows[0]["undone_at"] is not None:
            raise MergeError(f"merge {ref} was already split")
        return rows[0]
    if not ref.isdigit():
        raise MergeError(f"expected an entity id or a merge id like M3, got {ref!r}")
    rows = store.query(
        "SELECT * FROM entity_merges WHERE merged_id = ? AND undone_at IS NULL ORDER BY id DESC LIMIT 1", [int(ref)]
    )
    if not rows:
        raise MergeError(f"entity {ref} is not merged into anything (to split a merge by its id, write M<id>)")
    return rows[0]


def split(store: Store, entity_id_or_merge_id: int | str, *, transaction: bool = True) -> int:
    """Undo one merge exactly; returns the entity id that is live again."""
    with _maybe_transaction(store, transaction):
        m = find_merge(store, entity_id_or_merge_id)
        keep_id, gone_id = m["kept_id"], m["merged_id"]
        if store.scalar("SELECT merged_into FROM entities WHERE id = ?", [keep_id]) is not None:
            raise MergeError(f"entity {keep_id} was merged again later: split that merge first")
        moved = json.loads(m["moved"]) if isinstance(m["moved"], str) else m["moved"]
        if moved["aliases"]:
            store.con.execute(
                "UPDATE aliases SET entity_id = ? WHERE entity_id = ? AND norm IN (SELECT unnest(?::VARCHAR[]))",
                [gone_id, keep_id, moved["aliases"]],
            )
        for col in ("subject", "object", "speaker"):
            if moved[col]:
                store.con.execute(
                    f"UPDATE assertions SET {col}_id = ? WHERE {col}_id = ? AND id IN (SELECT unnest(?::BIGINT[]))",
                    [gone_id, keep_id, moved[col]],
                )
        for source_id, idx in moved["utterances"]:
            store.con.execute(
                "UPDATE utterances SET speaker_id = ? WHERE source_id = ? AND idx = ? AND speaker_id = ?",
                [gone_id, source_id, idx, keep_id],
            )
        for aid, valid_to, superseded_at, superseded_by in moved.get("supersession", []):
            # What the merge closed (the two were one holder of a title), opened again as it was.
            store.con.execute(
                "UPDATE assertions SET valid_to = ?, superseded_at = ?, superseded_by = ? WHERE id = ?",
                [valid_to, superseded_at, superseded_by, aid],
            )
        store.con.execute("UPDATE entities SET merged_into = NULL WHERE id = ?", [gone_id])
        store.con.execute("UPDATE entity_merges SET undone_at = ? WHERE id = ?", [utcnow(), m["id"]])
        store.append_event("entity_split", {"merge_id": m["id"], "kept_id": keep_id, "restored_id": gone_id})
        return int(gone_id)


def history(store: Store, entity_id: int | None = None) -> list[dict[str, Any]]:
    """Merges, newest first; for one entity, those it took part in."""
    sql = "SELECT id, kept_id, merged_id, method, score, reason, merged_at, undone_at FROM entity_merges"
    params: list[Any] = []
    if entity_id is not None:
        sql += " WHERE kept_id = ? OR merged_id = ?"
        params = [entity_id, entity_id]
    return store.query(sql + " ORDER BY id DESC", params)


def resolve_ref(store: Store, ref: str) -> int:
    """An entity id from what a user typed: a number, or a name/alias matching one live entity."""
    ref = ref.strip()
    if ref.isdigit():
        e = entities.get(store, int(ref))
        if e is None:
            raise MergeError(f"no entity {ref}")
        return int(ref) if store.scalar("SELECT merged_into FROM entities WHERE id = ?", [int(ref)]) is None else e.id
    found = entities.find(store, ref)
    if not found:
        raise MergeError(f"no entity named {ref!r}")
    if len(found) > 1:
        raise MergeError(
            f"{ref!r} names {len(found)} entities (" + ", ".join(f"{e.id}: {e.name}" for e in found) + "); use the id"
        )
    return found[0].id

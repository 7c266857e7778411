"""The signals table, its one writer: external signals stored once by id with the
organisations they mention (the signal wake, daemon/pipeline.py), linked again when
memory learns an organisation (daemon/reevaluate.py). Matching text to
organisations is the trigger's (triggers/signals.py); this module only stores."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backchannel.memory.store import Store, utcnow


def organisations(store: Store) -> list[tuple[int, list[str]]]:
    """(id, [name, aliases...]) of every live organisation, as match_orgs takes them."""
    rows = store.con.execute(
        """SELECT e.id, e.name, list(DISTINCT a.alias) FILTER (WHERE a.alias IS NOT NULL)
           FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
           WHERE e.kind = 'organisation' AND e.merged_into IS NULL GROUP BY e.id, e.name ORDER BY e.id"""
    ).fetchall()
    return [(int(r[0]), [r[1], *[a for a in (r[2] or []) if a != r[1]]]) for r in rows]


def insert(store: Store, sid: str, *, source: str, title: str, summary: Any, url: Any,
           published_at: datetime | None, org_ids: list[int], org_matches_json: str) -> None:
    """The signal, once: a second insert of the same id changes nothing. One transaction."""
    with store.transaction():
        store.con.execute(
            """INSERT INTO signals (id, source, title, summary, url, published_at, org_ids, seen_at, org_matches)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING""",
            [sid, source, title, summary, url, published_at, org_ids, utcnow(), org_matches_json],
        )


def relink(store: Store, sid: str, org_ids: list[int], org_matches_json: str) -> None:
    """New organisations found in an old signal."""
    store.con.execute("UPDATE signals SET org_ids = ?, org_matches = ?, relinked_at = ? WHERE id = ?",
                      [org_ids, org_matches_json, utcnow(), sid])


def recent(store: Store, since: datetime) -> list[dict[str, Any]]:
    """Signals published (or seen, without a date) since `since`, newest first."""
    return store.query(
        """SELECT id, title, summary, url, published_at, org_ids FROM signals
           WHERE coalesce(published_at, seen_at) >= ? ORDER BY coalesce(published_at, seen_at) DESC""",
        [since])

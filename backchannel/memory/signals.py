"""The signals table, its one writer: external signals stored once by id with the
organisations they mention (the signal wake, engine/wakes/signal.py), linked again when
memory learns an organisation (engine/reevaluate.py). Matching text to
organisations is the trigger's (triggers/signals.py); this module only stores."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backchannel.memory.store import Store, utcnow


def organisations(store: Store, *, besides: str | None = None) -> list[tuple[int, list[str]]]:
    """(id, [name, aliases...]) of every live organisation, as match_orgs takes them.
    `besides` (a news item's own source id): leave out the organisations that source
    alone made known (first seen there, in no assertion of another source), so a news
    item is never linked to an organisation only because it names it itself."""
    rows = store.con.execute(
        """SELECT e.id, e.name, list(DISTINCT a.alias) FILTER (WHERE a.alias IS NOT NULL)
           FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
           WHERE e.kind = 'organisation' AND e.merged_into IS NULL GROUP BY e.id, e.name ORDER BY e.id"""
    ).fetchall()
    mine = _only_from(store, besides) if besides else set()
    return [(int(r[0]), [r[1], *[a for a in (r[2] or []) if a != r[1]]]) for r in rows if int(r[0]) not in mine]


def _only_from(store: Store, source_id: str) -> set[int]:
    """Organisations first seen in `source_id` and in no assertion of another source."""
    first = {
        int(r[0])
        for r in store.con.execute(
            """SELECT e.id FROM entities e JOIN aliases f ON f.entity_id = e.id AND f.norm = e.norm
           WHERE e.kind = 'organisation' AND f.source_id = ?""",
            [source_id],
        ).fetchall()
    }
    if not first:
        return set()
    elsewhere = {
        int(r[0])
        for r in store.con.execute(
            """SELECT x.subject_id FROM assertions x WHERE x.source_id <> ? AND x.subject_id = ANY(?::BIGINT[])
           UNION SELECT x.object_id FROM assertions x WHERE x.source_id <> ? AND x.object_id = ANY(?::BIGINT[])""",
            [source_id, sorted(first), source_id, sorted(first)],
        ).fetchall()
        if r[0] is not None
    }
    return first - elsewhere


def news_only_organisations(store: Store) -> dict[str, set[int]]:
    """{news source id: the organisations only that source made known} (see `organisations`)."""
    rows = store.con.execute(
        """SELECT f.source_id, e.id FROM entities e
           JOIN aliases f ON f.entity_id = e.id AND f.norm = e.norm
           JOIN sources s ON s.id = f.source_id AND s.format = 'news'
           WHERE e.kind = 'organisation' AND e.merged_into IS NULL
             AND NOT EXISTS (SELECT 1 FROM assertions x WHERE (x.subject_id = e.id OR x.object_id = e.id)
                             AND x.source_id <> f.source_id)"""
    ).fetchall()
    out: dict[str, set[int]] = {}
    for sid, eid in rows:
        out.setdefault(str(sid), set()).add(int(eid))
    return out


def utterances_saying(
    store: Store, names: list[str], *, source_id: str | None = None, limit: int = 500
) -> list[tuple[str, int, str | None, str]]:
    """(source_id, idx, speaker, text) of utterances of sources other than news items
    (of `source_id` only, when given) whose text holds one of `names` as written (case
    kept: a proper name), a coarse filter the caller checks word by word."""
    if not names:
        return []
    import re

    pattern = "|".join(re.escape(n) for n in names)
    return [
        (str(r[0]), int(r[1]), r[2], str(r[3]))
        for r in store.con.execute(
            """SELECT u.source_id, u.idx, u.speaker, u.text FROM utterances u JOIN sources s ON s.id = u.source_id
           WHERE s.format <> 'news' AND (CAST(? AS VARCHAR) IS NULL OR u.source_id = ?)
             AND regexp_matches(u.text, ?) ORDER BY u.source_id, u.idx LIMIT ?""",
            [source_id, source_id, pattern, limit],
        ).fetchall()
    ]


def stored(store: Store, sid: str) -> dict[str, Any] | None:
    """The stored signal's organisations (what a resumed run must see, not a fresh match)."""
    row = store.con.execute("SELECT org_ids, org_matches FROM signals WHERE id = ?", [sid]).fetchone()
    if row is None:
        return None
    return {"org_ids": sorted(int(i) for i in (row[0] or [])), "org_matches": row[1]}


def insert(
    store: Store,
    sid: str,
    *,
    source: str,
    title: str,
    summary: Any,
    url: Any,
    published_at: datetime | None,
    org_ids: list[int],
    org_matches_json: str,
) -> None:
    """The signal, once: a second insert of the same id changes nothing. One transaction."""
    with store.transaction():
        store.con.execute(
            """INSERT INTO signals (id, source, title, summary, url, published_at, org_ids, seen_at, org_matches)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING""",
            [sid, source, title, summary, url, published_at, org_ids, utcnow(), org_matches_json],
        )


def relink(store: Store, sid: str, org_ids: list[int], org_matches_json: str) -> None:
    """New organisations found in an old signal."""
    store.con.execute(
        "UPDATE signals SET org_ids = ?, org_matches = ?, relinked_at = ? WHERE id = ?",
        [org_ids, org_matches_json, utcnow(), sid],
    )


def recent(store: Store, since: datetime) -> list[dict[str, Any]]:
    """Signals published (or seen, without a date) since `since`, newest first."""
    return store.query(
        """SELECT id, title, summary, url, published_at, org_ids FROM signals
           WHERE coalesce(published_at, seen_at) >= ? ORDER BY coalesce(published_at, seen_at) DESC""",
        [since],
    )

"""Entities and their aliases. Lookups are case- and accent-insensitive."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backchannel.core.vocabulary import ENTITY_KINDS
from backchannel.memory.store import Store, StoreError, utcnow
from backchannel.memory.text import norm_name


@dataclass(frozen=True)
class Entity:
    id: int
    kind: str
    name: str
    is_owner: bool = False


def _row(r: tuple) -> Entity:
    return Entity(id=r[0], kind=r[1], name=r[2], is_owner=bool(r[3]))


def get(store: Store, entity_id: int) -> Entity | None:
    """The live entity for an id, following merges."""
    seen = set()
    while entity_id is not None and entity_id not in seen:
        seen.add(entity_id)
        r = store.con.execute(
            "SELECT id, kind, name, is_owner, merged_into FROM entities WHERE id = ?", [entity_id]
        ).fetchone()
        if r is None:
            return None
        if r[4] is None:
            return _row(r)
        entity_id = r[4]
    return None


def find(store: Store, name: str, kind: str | None = None) -> list[Entity]:
    """Live entities whose name or an alias matches `name` (normalised)."""
    n = norm_name(name)
    sql = """
        SELECT DISTINCT e.id, e.kind, e.name, e.is_owner FROM entities e
        LEFT JOIN aliases a ON a.entity_id = e.id
        WHERE e.merged_into IS NULL AND (e.norm = ? OR a.norm = ?)
    """
    params: list = [n, n]
    if kind:
        sql += " AND e.kind = ?"
        params.append(kind)
    return [_row(r) for r in store.con.execute(sql + " ORDER BY e.id", params).fetchall()]


def find_by_first_name(store: Store, first: str) -> list[Entity]:
    """People whose name starts with this one word ("Sophie" -> "Sophie Martin")."""
    n = norm_name(first)
    if not n or " " in n:
        return []
    rows = store.con.execute(
        """SELECT id, kind, name, is_owner FROM entities
           WHERE kind = 'person' AND merged_into IS NULL AND starts_with(norm, ?) ORDER BY id""",
        [n + " "],
    ).fetchall()
    return [_row(r) for r in rows]


def find_many(store: Store, names: list[str] | set[str]) -> dict[str, list[Entity]]:
    """`find` for many names in one query: normalised name -> live entities (by id)."""
    norms = sorted({norm_name(n) for n in names} - {""})
    out: dict[str, list[Entity]] = {n: [] for n in norms}
    if not norms:
        return out
    rows = store.con.execute(
        """SELECT DISTINCT m.norm, e.id, e.kind, e.name, e.is_owner FROM entities e
           LEFT JOIN aliases a ON a.entity_id = e.id,
           (SELECT unnest(?::VARCHAR[]) AS norm) m
           WHERE e.merged_into IS NULL AND (e.norm = m.norm OR a.norm = m.norm)
           ORDER BY e.id""",
        [norms],
    ).fetchall()
    for n, *rest in rows:
        out[n].append(_row(tuple(rest)))
    return out


def create(store: Store, name: str, kind: str, *, source_id: str | None = None, is_owner: bool = False) -> Entity:
    if kind not in ENTITY_KINDS:
        raise ValueError(f"unknown entity kind {kind!r}")
    eid = store.scalar(
        "INSERT INTO entities (kind, name, norm, is_owner, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
        [kind, name, norm_name(name), is_owner, utcnow()],
    )
    n = norm_name(name)
    if n:  # a new entity has no alias yet: no look-up, no ON CONFLICT (each costs a statement per email)
        store.con.execute(
            "INSERT INTO aliases (entity_id, alias, norm, source_id, created_at) VALUES (?, ?, ?, ?, ?)",
            [eid, name, n, source_id, utcnow()],
        )
    return Entity(eid, kind, name, is_owner)


class NewEntities:
    """Entities created inside one transaction, written together by `flush`: one statement
    for their rows and one for their first aliases, not two per entity (a meeting brings
    dozens of new people and organisations; each single-row INSERT ... RETURNING costs as
    much as the multi-row one).

    Ids are the ones the `entity_ids` sequence would have given them one by one: the first
    new entity draws `nextval` (so it is known before any row is written, for the rows that
    point at it), the next ones take the following numbers, and `flush` draws those too,
    checking it got exactly them (the store has one writer; anything else drawing in between
    is an error that rolls the transaction back). Rows written before the caller's COMMIT,
    in its transaction: a crash leaves all of them or none, as before."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._rows: list[tuple[Any, ...]] = []  # (id, kind, name, norm, is_owner, created_at)
        self._aliases: dict[tuple[int, str], tuple[Any, ...]] = {}  # (entity_id, norm) -> alias row
        self._by_id: dict[int, Entity] = {}

    def create(self, name: str, kind: str, *, source_id: str | None = None) -> Entity:
        if kind not in ENTITY_KINDS:
            raise ValueError(f"unknown entity kind {kind!r}")
        if self._rows:
            eid = self._rows[-1][0] + 1
        else:
            eid = self.store.scalar("SELECT nextval('entity_ids')")
        n = norm_name(name)
        self._rows.append((eid, kind, name, n, False, utcnow()))
        e = Entity(eid, kind, name, False)
        self._by_id[eid] = e
        self.add_alias(eid, name, source_id=source_id)
        return e

    def get(self, entity_id: int) -> Entity | None:
        """A new entity not flushed yet (None for any other id)."""
        return self._by_id.get(entity_id)

    def add_alias(self, entity_id: int, alias: str, *, source_id: str | None = None) -> None:
        """An alias of a new entity: held with it (the first spelling of a norm wins, as
        `add_alias` keeps the first)."""
        n = norm_name(alias)
        if n:
            self._aliases.setdefault((entity_id, n), (entity_id, alias, n, source_id, utcnow()))

    def __len__(self) -> int:
        return len(self._rows)

    def flush(self) -> int:
        """Write the held entities and their aliases; how many entities were written."""
        rows = self._rows
        if not rows:
            return 0
        if len(rows) > 1:
            drawn = self.store.scalar(
                "SELECT list(v ORDER BY v) FROM (SELECT nextval('entity_ids') AS v FROM range(?))", [len(rows) - 1]
            )
            if list(drawn) != [r[0] for r in rows[1:]]:
                raise StoreError(f"entity ids were drawn by someone else while this writer held {rows[0][0]}")
        self.store.insert_rows("entities", ["id", "kind", "name", "norm", "is_owner", "created_at"], rows)
        insert_aliases(self.store, list(self._aliases.values()))
        self._rows, self._aliases, self._by_id = [], {}, {}
        return len(rows)


def add_alias(store: Store, entity_id: int, alias: str, *, source_id: str | None = None) -> None:
    n = norm_name(alias)
    if not n:
        return
    # A look-up costs a third of an INSERT ... ON CONFLICT, and most aliases are already there
    # (the owner's names at every ingest, a correspondent's address at every message).
    # fetchall: a result left unfinished would block the connection's next register().
    if store.con.execute("SELECT 1 FROM aliases WHERE entity_id = ? AND norm = ?", [entity_id, n]).fetchall():
        return
    store.con.execute(
        "INSERT INTO aliases (entity_id, alias, norm, source_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [entity_id, alias, n, source_id, utcnow()],
    )


def insert_aliases(store: Store, rows: list[tuple[Any, ...]], *, skip_existing: bool = False) -> None:
    """(entity_id, alias, norm, source_id, created_at) rows in one statement: the caller
    checked which are new (mail ingest). `skip_existing` guards one added since the check."""
    if not rows:
        return
    if not skip_existing:
        store.insert_rows("aliases", ["entity_id", "alias", "norm", "source_id", "created_at"], rows)
        return
    store.con.execute(
        "INSERT INTO aliases (entity_id, alias, norm, source_id, created_at) VALUES "
        + ", ".join("(?, ?, ?, ?, ?)" for _ in rows)
        + " ON CONFLICT DO NOTHING",
        [v for row in rows for v in row],
    )


def aliases(store: Store, entity_id: int) -> list[str]:
    return [
        r[0]
        for r in store.con.execute(
            "SELECT alias FROM aliases WHERE entity_id = ? ORDER BY created_at, alias", [entity_id]
        ).fetchall()
    ]


def owner(store: Store) -> Entity | None:
    r = store.con.execute(
        "SELECT id, kind, name, is_owner FROM entities WHERE is_owner AND merged_into IS NULL ORDER BY id LIMIT 1"
    ).fetchone()
    return _row(r) if r else None


def ensure_owner(store: Store, name: str, alias_list: list[str] | tuple[str, ...] = ()) -> Entity:
    """The owner entity, created from config on first use; config aliases are added each time."""
    # One query for the owner and the names it already has: this runs at every ingest
    # (each email message is one). A join, not a correlated subquery: a third of the cost.
    rows = store.con.execute(
        """SELECT e.id, e.kind, e.name, e.is_owner, a.norm FROM entities e
           LEFT JOIN aliases a ON a.entity_id = e.id
           WHERE e.is_owner AND e.merged_into IS NULL"""
    ).fetchall()
    first = min((row[0] for row in rows), default=None)  # the oldest owner, as owner() picks
    r = next((row for row in rows if row[0] == first), None)
    if r is not None:
        r = (*r[:4], [row[4] for row in rows if row[0] == first and row[4] is not None])
    if r is None:
        me, have = create(store, name, "person", is_owner=True), {norm_name(name)}
    else:
        me, have = _row(r[:4]), set(r[4] or [])
    for a in (name, *alias_list):
        if norm_name(a) not in have:
            add_alias(store, me.id, a)
    return me


def all_entities(store: Store, kind: str | None = None) -> list[dict]:
    sql = """
        SELECT e.id, e.kind, e.name, e.is_owner,
               list(DISTINCT a.alias ORDER BY a.alias) FILTER (WHERE a.alias IS NOT NULL) AS aliases,
               (SELECT count(*) FROM assertions s WHERE s.subject_id = e.id OR s.object_id = e.id) AS assertion_count
        FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
        WHERE e.merged_into IS NULL {kind}
        GROUP BY e.id, e.kind, e.name, e.is_owner ORDER BY e.kind, e.name
    """.format(kind="AND e.kind = ?" if kind else "")
    return store.query(sql, [kind] if kind else [])

"""The one DuckDB file. Opening it applies pending named migrations once each.

DuckDB allows one read-write process or many read-only ones, never both: the
daemon holds the file while it runs and the CLI talks to it over the local API.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from backchannel.core.timeutil import db_now as utcnow  # naive UTC, the TIMESTAMP form; importers use this name


class StoreError(Exception):
    pass


class BatchFailed(StoreError):
    """A unit inside `Store.batch()` failed: the batch was rolled back, nothing of it kept."""


class StoreLocked(StoreError):
    """Another process holds the database file."""


def migration_files() -> list[tuple[str, str]]:
    pkg = resources.files("backchannel.memory") / "migrations"
    items = sorted((p.name, p.read_text(encoding="utf-8")) for p in pkg.iterdir() if p.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), sql) for name, sql in items]


class Batch:
    """The state of an open `Store.batch()`: whether a unit failed, the rows held until
    its commit (`insert_rows(defer=True)`, `append_event(defer=True)`), and values its
    units share (`Store.per_batch`)."""

    def __init__(self) -> None:
        self.failed = False
        self.held: dict[tuple[str, tuple[str, ...]], list[tuple]] = {}
        self.events: list[tuple[str, dict[str, Any] | None, str | None, str | None]] = []
        self.shared: dict[Any, Any] = {}

    def held_value(self, table: str, column: str, value: Any, want: str) -> Any:
        """`want` of a held row of `table` whose `column` is `value` (None: none held)."""
        for (name, columns), rows in self.held.items():
            if name == table and column in columns and want in columns:
                i, j = columns.index(column), columns.index(want)
                for row in rows:
                    if row[i] == value:
                        return row[j]
        return None


class Store:
    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self.con = con
        self.path = path
        self.read_only = read_only
        self._batch: Batch | None = None  # the open `batch()`, whose transaction `transaction()` joins
        self._types: dict[str, dict[str, str]] = {}  # insert_rows' column types, per table

    @classmethod
    def open(cls, path: Path | str, read_only: bool = False) -> Store:
        path = Path(path)
        if read_only and not path.exists():
            raise StoreError(f"no database at {path}; run `backchannel init` first")
        path.parent.mkdir(parents=True, exist_ok=True)
        config: dict[str, str | bool | int | float | list[str]] = {
            "autoinstall_known_extensions": "false",
            "autoload_known_extensions": "false",
        }
        try:
            if not read_only and path.with_name(path.name + ".rewrite-pending").exists():
                # An erasure committed but the file was not rewritten yet (a crash): finish it first.
                from backchannel.memory.erasure import complete_pending_rewrite

                complete_pending_rewrite(path)
            con = duckdb.connect(str(path), read_only=read_only, config=config)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise StoreLocked(f"{path} is held by another process (is the daemon running?): {exc}") from None
            raise StoreError(f"cannot open {path}: {exc}") from None
        con.execute("SET TimeZone = 'UTC'")
        store = cls(con, path, read_only)
        if not read_only:
            store.migrate()
        return store

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- migrations -------------------------------------------------------
    def migrate(self) -> list[str]:
        self._types.clear()
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"
        )
        done = {r[0] for r in self.con.execute("SELECT name FROM schema_migrations").fetchall()}
        applied = []
        for name, sql in migration_files():
            if name in done:
                continue
            with self.transaction():
                self.con.execute(sql)
                self.con.execute("INSERT INTO schema_migrations VALUES (?, ?)", [name, utcnow()])
            applied.append(name)
        return applied

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]

    # -- transactions and helpers -----------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._batch is not None:  # inside batch(): its one transaction holds these statements
            try:
                yield self.con
            except BaseException:
                self._batch.failed = True  # rows of this unit may be written: only the whole batch can go
                raise
            return
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            raise
        else:
            self.con.execute("COMMIT")

    @contextlib.contextmanager
    def batch(self) -> Iterator[Batch]:
        """One transaction for several units of work that would each be a `transaction()`
        (email: many messages, ~15 small statements each; a COMMIT is the dearest of them).
        Inside, `transaction()` opens none of its own and a unit that fails in it marks the
        batch `failed`: its rows may already be written among the others' and DuckDB has no
        savepoints, so the batch is rolled back whole (BatchFailed at its end, or any exception
        leaving it) and the caller replays it one unit per transaction (extraction/mail/batch.py).
        A kill -9 leaves the whole batch or nothing of it."""
        if self._batch is not None:
            raise StoreError("a batch is already open")
        state = Batch()
        self.con.execute("BEGIN TRANSACTION")
        self._batch = state
        try:
            yield state
        except BaseException:
            self._batch = None
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            raise
        if state.failed:  # never a silent loss: the caller learns the batch is gone
            self._batch = None
            self.con.execute("ROLLBACK")
            raise BatchFailed("a unit of the batch failed: the batch was rolled back, replay it unit by unit")
        try:
            self._batch = None  # the held rows go in now, one statement per table for the whole batch
            for (table, columns), rows in state.held.items():
                self.insert_rows(table, columns, rows)
            self.append_events(state.events)
        except BaseException:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def held_value(self, table: str, column: str, value: Any, want: str) -> Any:
        """`Batch.held_value` of the open batch (None outside one): a row written in this
        batch but not inserted yet, for the look-ups that must see it (a content hash, a
        Message-ID met twice in one batch)."""
        return None if self._batch is None else self._batch.held_value(table, column, value, want)

    def per_batch(self, key: Any, make: Callable[[], Any]) -> Any:
        """`make()`, once per open batch for `key` (every call outside one): for a value
        no unit of the batch changes, such as the owner's entity."""
        if self._batch is None:
            return make()
        if key not in self._batch.shared:
            self._batch.shared[key] = make()
        return self._batch.shared[key]

    @contextlib.contextmanager
    def single_threaded(self) -> Iterator[None]:
        """DuckDB on one thread for a run of small statements (email ingest: ~15 per message).
        Its worker threads cost more than they give on tiny queries: measured, a third less CPU
        per message (bench/mail.py). The previous setting comes back after, for analytic reads."""
        before = self.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
        if int(before) == 1:
            yield
            return
        self.con.execute("SET threads = 1")
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                self.con.execute(f"SET threads = {int(before)}")

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row)) for row in cur.fetchall()]

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        row = self.con.execute(sql, params or []).fetchone()
        return None if row is None else row[0]

    def aggregate(self, sql: str, params: Sequence[Any] | None = None) -> tuple[Any, ...]:
        """The one row an aggregate query (count, max...) always returns."""
        row = self.con.execute(sql, params or []).fetchone()
        if row is None:
            raise StoreError(f"an aggregate query returned no row: {sql[:80]}")
        return tuple(row)

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, defer: bool = False
    ) -> None:
        """Bulk insert in one statement, the rows passed as one list per column and unnested
        (`INSERT ... SELECT unnest(?::T[]), ...`): ~9x less CPU than a multi-row VALUES of the
        same rows (a parameter per value), the rows in their order (ids from a DEFAULT sequence
        follow it) and each value converted as a parameter of the column's type would be.
        `defer`: inside `batch()`, the rows are held and inserted with the other units' just
        before its commit (for rows nothing reads back in the meantime but `held_value`)."""
        if not rows:
            return
        if defer and self._batch is not None:
            self._batch.held.setdefault((table, tuple(columns)), []).extend(tuple(r) for r in rows)
            return
        types = self._column_types(table)
        unknown = [c for c in columns if c not in types]
        if unknown:
            raise StoreError(f"insert into {table}: no column {', '.join(unknown)}")
        if any(len(r) != len(columns) for r in rows):
            raise StoreError(f"insert into {table}: a row does not have the {len(columns)} columns {list(columns)}")
        unnested = ", ".join(f"unnest(?::{types[c]}[])" for c in columns)
        self.con.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT {unnested}", [list(values) for values in zip(*rows)]
        )

    def _column_types(self, table: str) -> dict[str, str]:
        """Column -> the SQL type its values are passed as (an ENUM as VARCHAR: the insert
        converts it, and rejects a value the ENUM lacks, as it does a VARCHAR parameter)."""
        if table not in self._types:
            rows = self.con.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = 'main' AND table_name = ?",
                [table],
            ).fetchall()
            if not rows:
                raise StoreError(f"no table {table}")
            self._types[table] = {c: ("VARCHAR" if t.startswith("ENUM(") else t) for c, t in rows}
        return self._types[table]

    # -- the event log ----------------------------------------------------
    def append_event(
        self,
        kind: str,
        data: dict[str, Any] | None = None,
        *,
        run_id: str | None = None,
        key: str | None = None,
        defer: bool = False,
    ) -> int | None:
        """Append to the event log. With an idempotency `key`, a second append of the
        same key is a no-op and returns None. `defer`: inside `batch()`, appended with the
        batch's other events just before its commit (returns None)."""
        if defer and self._batch is not None:
            self._batch.events.append((kind, data, run_id, key))
            return None
        # One statement, not a look-up then an insert: `key` is UNIQUE, and a wake appends
        # dozens of events (each look-up cost ~1.5 ms at 1M assertions).
        return self.scalar(
            "INSERT INTO events (occurred_at, run_id, kind, key, data) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (key) DO NOTHING RETURNING seq",
            [utcnow(), run_id, kind, key, json.dumps(data or {}, default=str)],
        )

    def append_events(self, rows: Sequence[tuple[str, dict[str, Any] | None, str | None, str | None]]) -> None:
        """Append several (kind, data, run_id, key) events in one statement; a key
        already in the log is skipped, as in `append_event`."""
        if not rows:
            return
        now = utcnow()
        values = ", ".join("(?, ?, ?, ?, ?)" for _ in rows)
        params: list[Any] = []
        for kind, data, run_id, key in rows:
            params += [now, run_id, kind, key, json.dumps(data or {}, default=str)]
        self.con.execute(
            f"INSERT INTO events (occurred_at, run_id, kind, key, data) VALUES {values} ON CONFLICT (key) DO NOTHING",
            params,
        )

    def events(self, run_id: str | None = None, kind: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        where, params = [], []
        if run_id:
            where.append("run_id = ?")
            params.append(run_id)
        if kind:
            where.append("kind = ?")
            params.append(kind)
        sql = "SELECT seq, occurred_at, run_id, kind, key, data FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY seq LIMIT {int(limit)}"
        rows = self.query(sql, params)
        for r in rows:
            r["data"] = json.loads(r["data"]) if r["data"] else {}
        return rows

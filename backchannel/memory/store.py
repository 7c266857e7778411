"""The one DuckDB file. Opening it applies pending named migrations once each.

DuckDB allows one read-write process or many read-only ones, never both: the
daemon holds the file while it runs and the CLI talks to it over the local API.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb


class StoreError(Exception):
    pass


class StoreLocked(StoreError):
    """Another process holds the database file."""


def migration_files() -> list[tuple[str, str]]:
    pkg = resources.files("backchannel.memory") / "migrations"
    items = sorted((p.name, p.read_text(encoding="utf-8")) for p in pkg.iterdir() if p.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), sql) for name, sql in items]


def utcnow() -> datetime:
    """Naive UTC, the form every TIMESTAMP column holds."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Store:
    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self.con = con
        self.path = path
        self.read_only = read_only

    @classmethod
    def open(cls, path: Path | str, read_only: bool = False) -> "Store":
        path = Path(path)
        if read_only and not path.exists():
            raise StoreError(f"no database at {path}; run `backchannel init` first")
        path.parent.mkdir(parents=True, exist_ok=True)
        config: dict[str, str | bool | int | float | list[str]] = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=config)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise StoreLocked(
                    f"{path} is held by another process (is the daemon running?): {exc}"
                ) from None
            raise StoreError(f"cannot open {path}: {exc}") from None
        con.execute("SET TimeZone = 'UTC'")
        store = cls(con, path, read_only)
        if not read_only:
            store.migrate()
        return store

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- migrations -------------------------------------------------------
    def migrate(self) -> list[str]:
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

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], chunk: int = 400) -> None:
        """Bulk insert with multi-row VALUES: an order of magnitude faster than executemany."""
        if not rows:
            return
        cols = ", ".join(columns)
        one = "(" + ", ".join("?" for _ in columns) + ")"
        for i in range(0, len(rows), chunk):
            part = rows[i : i + chunk]
            sql = f"INSERT INTO {table} ({cols}) VALUES " + ", ".join(one for _ in part)
            self.con.execute(sql, [v for row in part for v in row])

    # -- the event log ----------------------------------------------------
    def append_event(self, kind: str, data: dict[str, Any] | None = None, *, run_id: str | None = None,
                     key: str | None = None) -> int | None:
        """Append to the event log. With an idempotency `key`, a second append of the
        same key is a no-op and returns None."""
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
        self.con.execute(f"INSERT INTO events (occurred_at, run_id, kind, key, data) VALUES {values}"
                         " ON CONFLICT (key) DO NOTHING", params)

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

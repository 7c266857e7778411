"""Durable runs: every wake is a run (a row in `runs`) whose steps are appended to
the event log with idempotency keys.

A step's key is `<run_id>:<step>` unless the caller gives a content key (e.g. a
proposal's dedupe key), so replaying a run after a crash turns completed steps
into no-ops. After a crash, `recover()` finds runs left `running`: those whose
wake can be replayed are handed back for resumption under the same run id; the
others are closed with a reason.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from backchannel.core.wake import Wake
from backchannel.memory.store import Store, utcnow

# Wakes whose handler is safe to run again: every write they make is keyed.
REPLAYABLE = {"sweep", "manual", "meeting_soon", "signal", "calendar", "inbox", "retention"}


class Interrupted(Exception):
    """The daemon is stopping: the run stays `running` and resumes at the next start."""


def new_run_id() -> str:
    """'R' + time-ordered hex (ns clock) + 4 random hex digits."""
    return f"R{time.time_ns():016x}{secrets.token_hex(2)}"


@dataclass
class WakeRecord:
    """A wake as the pipeline needs it; built from core.wake.Wake or from a run row."""

    kind: str
    key: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None

    @classmethod
    def of(cls, wake: Any) -> WakeRecord:
        if isinstance(wake, WakeRecord):
            return wake
        if isinstance(wake, dict):
            return cls(wake["kind"], wake.get("key"), dict(wake.get("payload") or {}), wake.get("created_at"))
        return cls(
            wake.kind,
            getattr(wake, "key", None),
            dict(getattr(wake, "payload", None) or {}),
            getattr(wake, "created_at", None),
        )


def decided_by(settings: Any) -> dict[str, Any]:
    """What shapes a wake's decisions besides memory: the code's version and the settings
    the gate, judge and sweep read. Kept with the run so a replay can say what changed."""
    from backchannel import __version__

    m, c = settings.models, settings.calendar
    return {
        "code": __version__,
        "gate": settings.gate.model_dump(mode="json"),
        "models": {"extract": m.extract, "sweep": m.sweep, "draft": m.draft},
        "calendar": {"horizon_days": c.horizon_days, "lead_hours": c.lead_hours},
        "scope": settings.scope.model_dump(mode="json"),
        "timezone": settings.owner.timezone,
    }


def start(
    store: Store, wake: WakeRecord, run_id: str | None = None, *, clock: datetime | None = None, settings: Any = None
) -> str:
    """Create the run row (status running) unless `run_id` already exists (a resumption).
    `clock`: the `now` the run decides with; `settings`: recorded as `decided_by`."""
    if run_id and store.scalar("SELECT 1 FROM runs WHERE id = ?", [run_id]):
        store.append_event("run.resumed", {"wake_kind": wake.kind}, run_id=run_id)
        return run_id
    run_id = run_id or new_run_id()
    basis = json.dumps(decided_by(settings), default=str) if settings is not None else None
    with store.transaction():
        store.con.execute(
            "INSERT INTO runs (id, wake_kind, wake_key, wake_payload, status, started_at, clock_at, decided_by)"
            " VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
            [run_id, wake.kind, wake.key, json.dumps(wake.payload, default=str), utcnow(), clock, basis],
        )
        store.append_event(
            "run.started", {"wake_kind": wake.kind, "wake_key": wake.key}, run_id=run_id, key=f"{run_id}:started"
        )
    return run_id


class EventLog(Protocol):
    """What records a run's steps: the store, or `HeldEvents` holding them for one write."""

    def append_event(
        self, kind: str, data: dict[str, Any] | None = None, *, run_id: str | None = None, key: str | None = None
    ) -> int | None: ...


class HeldEvents:
    """Event-log appends held in memory and written in one transaction by `flush()`.

    The gate's and the judge's records of a sweep's candidates are many small
    appends; one commit each cost ~5-8 ms at 1M assertions. They are held here and
    written together (before a draft, with a proposal, at the end of the loop).
    Losing them in a crash loses nothing: a resumed run gates and judges again, and
    their idempotency keys make a replay a no-op. Has `append_event` like Store, so
    `step()` and `gate.record()` take it in the store's place."""

    def __init__(self, store: Store):
        self.store = store
        self._held: dict[str, tuple[str, dict[str, Any] | None, str | None]] = {}  # key -> (kind, data, run_id)

    def append_event(
        self, kind: str, data: dict[str, Any] | None = None, *, run_id: str | None = None, key: str | None = None
    ) -> int | None:
        if key is None:
            key = f"held:{run_id}:{kind}:{len(self._held)}:{secrets.token_hex(4)}"
        if key in self._held:
            return None  # the same step twice before a flush: a no-op, as in the store
        self._held[key] = (kind, data, run_id)
        return 0

    def flush(self, *, in_open_transaction: bool = False) -> None:
        """Write what is held: in one transaction of its own, or in the caller's."""
        if not self._held:
            return
        held, self._held = self._held, {}
        if in_open_transaction:
            self._write(held)
            return
        with self.store.transaction():
            self._write(held)

    def _write(self, held: dict[str, tuple[str, dict[str, Any] | None, str | None]]) -> None:
        # One statement for all: inserted in the order they were held, so `seq` keeps it.
        self.store.append_events(
            [
                (kind, data, run_id, None if key.startswith("held:") else key)
                for key, (kind, data, run_id) in held.items()
            ]
        )


def step(
    store: EventLog, run_id: str, name: str, data: dict[str, Any] | None = None, *, key: str | None = None
) -> bool:
    """Record step `name` of a run. Returns False when its key was already recorded."""
    k = key or f"{run_id}:{name}"
    return store.append_event(name, data or {}, run_id=run_id, key=k) is not None


def done_step(store: Store, run_id: str, name: str) -> dict[str, Any] | None:
    """The data of step `name` if this run already recorded it (for resumption)."""
    rows = store.query("SELECT data FROM events WHERE key = ?", [f"{run_id}:{name}"])
    if not rows:
        return None
    return json.loads(rows[0]["data"]) if rows[0]["data"] else {}


def event_seq(store: Store, key: str) -> int | None:
    """The sequence number of the event recorded under `key`, or None."""
    seq = store.scalar("SELECT seq FROM events WHERE key = ?", [key])
    return int(seq) if seq is not None else None


def kinds_made(store: Store, run_id: str, kind: str) -> set[str]:
    """The keys of the events of `kind` this run recorded (a resumed run skips them)."""
    rows = store.con.execute("SELECT key FROM events WHERE run_id = ? AND kind = ?", [run_id, kind]).fetchall()
    return {str(k) for (k,) in rows}


def add_counts(store: Store, run_id: str, touched: int = 0, excerpts: int = 0) -> None:
    store.con.execute(
        "UPDATE runs SET assertions_touched = assertions_touched + ?, excerpts_sent = excerpts_sent + ? WHERE id = ?",
        [int(touched or 0), int(excerpts or 0), run_id],
    )


def finish(store: Store, run_id: str, status: str = "done", reason: str | None = None) -> None:
    with store.transaction():
        store.con.execute(
            "UPDATE runs SET status = ?, reason = ?, finished_at = ? WHERE id = ? AND status = 'running'",
            [status, reason, utcnow(), run_id],
        )
        store.append_event(
            "run.finished", {"status": status, "reason": reason}, run_id=run_id, key=f"{run_id}:finished"
        )


def unfinished(store: Store) -> list[dict[str, Any]]:
    rows = store.query(
        "SELECT id, wake_kind, wake_key, wake_payload, started_at FROM runs WHERE status = 'running' ORDER BY started_at"
    )
    for r in rows:
        r["wake_payload"] = json.loads(r["wake_payload"]) if r["wake_payload"] else {}
    return rows


def recover(store: Store) -> list[tuple[str, WakeRecord]]:
    """Runs left `running` by a crash: return (run_id, wake) for those to resume,
    and close the others with the reason they cannot be replayed."""
    resume: list[tuple[str, WakeRecord]] = []
    for r in unfinished(store):
        wake = WakeRecord(r["wake_kind"], r["wake_key"], r["wake_payload"])
        reason = _not_replayable(wake)
        if reason:
            finish(store, r["id"], "closed", f"interrupted by a crash or stop; {reason}")
        else:
            store.append_event("run.recovered", {"wake_kind": wake.kind}, run_id=r["id"], key=f"{r['id']}:recovered")
            resume.append((r["id"], wake))
    return resume


def record_request(store: Store, wake: Wake) -> bool:
    """Make a requested wake (`backchannel wake sweep`) durable before the user is told
    it is queued: event `wake.requested`, keyed by the wake's key. False if already there."""
    return store.append_event("wake.requested", wake.to_dict(), key=wake.key) is not None


def pending_requests(store: Store) -> list[dict[str, Any]]:
    """The requested wakes (as their dicts) that never got a run. Called after
    `recover()`: a request whose run started is resumed or closed there, and one
    whose run finished is done with, so neither is handed out again."""
    rows = store.query(
        """SELECT e.data FROM events e WHERE e.kind = 'wake.requested'
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.wake_key = e.key) ORDER BY e.seq"""
    )
    return [json.loads(r["data"]) for r in rows]


def _not_replayable(wake: WakeRecord) -> str | None:
    if wake.kind not in REPLAYABLE:
        return f"a {wake.kind!r} wake is not replayable"
    if wake.kind == "inbox":
        path = wake.payload.get("path")
        if not path or not Path(path).exists():
            # The file moves only after its commit: gone means its work is done.
            return "its file was already moved to processed/ or failed/"
    return None


def recent(store: Store, limit: int = 10, asks: bool | None = None) -> list[dict[str, Any]]:
    """The latest runs, newest first; `asks` True: only `ask` runs (with their question),
    False: only wakes, None: both."""
    where = {True: "WHERE wake_kind = 'ask'", False: "WHERE wake_kind <> 'ask'", None: ""}[asks]
    rows = store.query(
        "SELECT id, wake_kind, wake_key, status, reason, started_at, finished_at, assertions_touched, excerpts_sent, "
        f"wake_payload FROM runs {where} ORDER BY started_at DESC LIMIT {int(limit)}"
    )
    for r in rows:
        payload = r.pop("wake_payload")
        if asks:
            try:
                r["question"] = (json.loads(payload) if payload else {}).get("question")
            except ValueError:
                r["question"] = None
    return rows

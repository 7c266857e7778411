"""The governed edges: the `edges` table (its one writer), and what every edge shares:
the stop it raises when a limit of `[edges.*]` is crossed, and the wording of that reason.

An edge row says who acted (`actor`), what it could reach (`may_reach`) and did reach
(`reached`), what crossed (excerpts, bytes, tokens), what it spent, and the ids of the
records that survive it (`evidence`: event seqs, model_calls ids, outbox ids, assertion
ids). The four places that govern an edge (graph/edge_guard.py, agent/models.py,
delivery/outbox.py, web/mcp_server.py) check their limits *before* anything crosses, and
write one row whether it crossed, failed or was stopped.

Rows are written through whatever connection the caller hands in: the gateway's
autocommit cursor (so a caller's rollback cannot erase a model call's record, as for
`model_calls`), or the store inside the caller's transaction.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from backchannel.memory.store import utcnow

if TYPE_CHECKING:
    from backchannel.memory.store import Store


class EdgeStopped(Exception):
    """A limit of `[edges.NAME]` stopped the edge before anything crossed. The run it
    happened in ends with `reason` (status failed), and the edge row says the same."""

    def __init__(self, edge: str, reason: str):
        self.edge = edge
        self.reason = reason
        super().__init__(f"stopped at edge {edge}: {reason}")


def over(edge: str, key: str, would: int, limit: int | None, unit: str) -> str | None:
    """The reason a crossing of `would` units breaks `[edges.EDGE] KEY = limit`, or None."""
    if limit is None or would <= limit:
        return None
    return f"{would} {unit} would cross; [edges.{edge}] {key} = {limit}"


def outside(edge: str, names: Iterable[str], patterns: Sequence[str] | None) -> str | None:
    """The reason a name is not in `[edges.EDGE] may_reach` (shell patterns), or None."""
    if patterns is None:
        return None
    for name in names:
        if not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return f"{name} is not in [edges.{edge}] may_reach = {json.dumps(list(patterns))}"
    return None


def reachable(names: Iterable[str], patterns: Sequence[str] | None) -> list[str]:
    """The names `patterns` allows (all of them when there are none)."""
    return [n for n in names if patterns is None or any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def count_quotes(value: Any) -> int:
    """Evidence quotes in a JSON-like value: the non-empty `quote` fields, at any depth."""
    n, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("quote"):
                n += 1
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return n


def json_bytes(value: Any) -> int:
    """The size of a value as the JSON that carries it (UTF-8)."""
    return len(json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":")).encode())


@dataclass
class Crossing:
    """One edge row before it is written."""

    edge: str
    actor: str
    target: str
    may_reach: list[str]
    reached: list[str]
    run_id: str | None = None
    excerpts: int = 0
    bytes: int = 0
    tokens: int = 0
    spent: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, list[Any]] = field(default_factory=dict)
    dedupe_key: str | None = None
    proposal_id: str | None = None
    outcome: str = "ok"  # ok, failed, stopped
    reason: str | None = None

    def stop(self, reason: str) -> Crossing:
        self.outcome, self.reason = "stopped", reason
        return self


_COLUMNS = (
    "run_id",
    "edge",
    "actor",
    "target",
    "may_reach",
    "reached",
    "excerpts",
    "bytes",
    "tokens",
    "spent",
    "evidence",
    "dedupe_key",
    "proposal_id",
    "outcome",
    "reason",
    "created_at",
)


def record(con: Any, c: Crossing) -> int:
    """Write one edge row with `con` (a connection or cursor); returns its id."""
    values = [
        c.run_id,
        c.edge,
        c.actor[:200],
        c.target[:200],
        [str(x) for x in c.may_reach],
        [str(x) for x in c.reached],
        int(c.excerpts),
        int(c.bytes),
        int(c.tokens),
        json.dumps(c.spent, default=str),
        json.dumps(c.evidence, default=str),
        c.dedupe_key,
        c.proposal_id,
        c.outcome,
        (c.reason or "")[:1000] or None,
        utcnow(),
    ]
    row = con.execute(
        f"INSERT INTO edges ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)}) RETURNING id", values
    ).fetchone()
    return int(row[0])


def last_id(store: Store) -> int:
    """The newest edge row's id (0 when none): the rows a step writes come after it."""
    return int(store.scalar("SELECT coalesce(max(id), 0) FROM edges") or 0)


def tag(store: Store, run_id: str, after: int, *, dedupe_key: str, proposal_id: str | None = None) -> None:
    """Mark the run's rows written after row `after` as serving one candidate (its judge
    and draft calls), so a proposal's trace shows its own edges."""
    store.con.execute(
        "UPDATE edges SET dedupe_key = coalesce(dedupe_key, ?), proposal_id = coalesce(proposal_id, ?)"
        " WHERE run_id = ? AND id > ?",
        [dedupe_key, proposal_id, run_id, int(after)],
    )


def _rows(store: Store, where: str, params: list[Any]) -> list[dict[str, Any]]:
    rows = store.query(f"SELECT id, {', '.join(_COLUMNS)} FROM edges WHERE {where} ORDER BY id", params)
    for r in rows:
        r["spent"] = json.loads(r["spent"]) if r.get("spent") else {}
        r["evidence"] = json.loads(r["evidence"]) if r.get("evidence") else {}
        r["may_reach"] = list(r.get("may_reach") or [])
        r["reached"] = list(r.get("reached") or [])
        r["created_at"] = r["created_at"].isoformat() if r.get("created_at") else None
    return rows


def has_table(store: Store) -> bool:
    return bool(store.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = 'edges'"))


def for_run(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every edge row of one run, in the order they were written."""
    return _rows(store, "run_id = ?", [run_id]) if has_table(store) else []


def for_proposal(store: Store, run_id: str, proposal_id: str, dedupe_key: str) -> list[dict[str, Any]]:
    """The edges behind one proposal: its run's rows that served no one candidate (the
    sweep's program and model), and those that served this one (judge, draft, delivery)."""
    if not has_table(store):
        return []
    return _rows(
        store,
        "(run_id = ? AND dedupe_key IS NULL AND proposal_id IS NULL)"
        " OR (run_id = ? AND dedupe_key = ?) OR proposal_id = ?",
        [run_id, run_id, dedupe_key, proposal_id],
    )


def stopped(store: Store, run_id: str, after: int = 0) -> dict[str, Any] | None:
    """The run's first stopped edge row (after row `after`), if one was."""
    rows = (
        _rows(store, "run_id = ? AND id > ? AND outcome = 'stopped'", [run_id, int(after)]) if has_table(store) else []
    )
    return rows[0] if rows else None

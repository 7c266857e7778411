"""The sweep step of a run: the sweeper role (prepared skills or generated code, in the
sandbox, against the guarded graph API) finds candidates; the run records them once.

A resumed run reads its candidates back from the recorded step instead of sweeping
again; `tag` tells apart several sweeps of one run (those an ingest's re-evaluation
starts). An introduction rests on the most trusted assertion of each link, and a
commitment names its maker and recipient, before anything is recorded.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.crashpoints import crash_point
from backchannel.engine import judge_kinds, runs
from backchannel.memory.assertions import load_evidence_many
from backchannel.memory.edges import EdgeStopped
from backchannel.memory.store import Store

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway
    from backchannel.graph.api import GraphAPI
    from backchannel.graph.types import Candidate


def graph_api(store: Store, settings: Settings) -> GraphAPI:
    """The graph API a sweep's program reads, limited to `[scope] sweep`."""
    from backchannel.graph import api as api_mod

    return api_mod.GraphAPI(store, settings, scopes=settings.scope.sweep)


def run_sweep(
    store: Store,
    settings: Settings,
    paths: Paths,
    *,
    run_id: str,
    gateway: Gateway | None,
    context: dict[str, Any],
    tag: str | None = None,
    abandon: threading.Event | None = None,
) -> list[Candidate]:
    """The sweep step, or its recorded result when this run already swept. Raises
    `runs.Interrupted` when `abandon` was set meanwhile (the daemon killed the sandbox to
    exit: a cut-short sweep is no result), `EdgeStopped` when the program edge stopped it."""
    from backchannel.graph import types

    name = f"sweep.done:{tag}" if tag else "sweep.done"
    done = runs.done_step(store, run_id, name)
    if done is not None:
        return [types.Candidate.from_dict(c) for c in done.get("candidates", [])]
    from backchannel.agent import sweeper
    from backchannel.graph.edge_guard import GuardedAPI

    api = GuardedAPI(graph_api(store, settings), settings.edges.program)  # the program edge
    result = sweeper.sweep(context, api=api, settings=settings, paths=paths, gateway=gateway, run_id=run_id)
    if abandon is not None and abandon.is_set():
        raise runs.Interrupted()
    stats = dict(result.sandbox_stats or {})
    cands = list(result.candidates)
    for c in cands:
        if c.kind == "introduction" and c.evidence_ids:
            c.evidence_ids = judge_kinds.strongest_links(store, c.evidence_ids)
    promises = [c for c in cands if c.kind == "commitment"]
    for c, ev in zip(promises, load_evidence_many(store, promises)):
        c.entities = judge_kinds.commitment_entities(store, c.entities, ev)  # the maker and the recipient
    touched = int(stats.get("assertions_touched") or stats.get("rows") or 0)
    with store.transaction():
        runs.add_counts(store, run_id, touched=touched)
        runs.step(
            store,
            run_id,
            "sweep.done",
            key=f"{run_id}:{name}",
            data={
                "context": context,
                "skill": result.skill,
                "code": result.code,
                "attempts": result.attempts,
                "sandbox_stats": stats,
                "errors": list(result.errors or []),
                "candidates": [c.to_dict() for c in cands],
            },
        )
        seq = runs.event_seq(store, f"{run_id}:{name}")
        api.record(store, run_id, result.skill, stats, [i for c in cands for i in (c.evidence_ids or [])], seq)
    crash_point("sweep.after_commit")
    if api.stopped:
        raise EdgeStopped("program", api.stopped)
    return cands

"""The retention sweep as a durable run (wake kind `retention`): scheduled by
`[retention] schedule`, or asked for with `backchannel retention sweep`.

Steps, each keyed in the event log under the run's id:
1. `retention.planned`: the cutoffs, computed once from the wake's time. A resumed run
   reads them back, so it erases exactly what the first attempt meant to, never more.
2. `retention.erased`: the erasure (memory/retention.py) and this step commit in one
   transaction. Just before it, a rewrite-pending marker is written beside the file.
   A kill -9 before the commit leaves everything (the resumed run erases it then); after
   it, the step is there and a resumed run does not erase again.
3. The file rewrite, which needs the file closed: the caller (the CLI, or the daemon,
   which closes and reopens its store) does it when the run asks (`detail["rewrite"]`);
   if it never gets there, the next `Store.open` finds the marker and rewrites first.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backchannel.config import Settings
from backchannel.core.crashpoints import crash_point
from backchannel.engine import runs
from backchannel.memory import erasure, retention
from backchannel.memory.store import Store


def cutoffs_for(settings: Settings, now: datetime) -> retention.Cutoffs:
    r = settings.retention
    return retention.Cutoffs.of(
        now,
        utterances_days=r.utterances_days,
        assertions_days=r.assertions_days,
        proposals_days=r.proposals_days,
        runs_days=r.runs_days,
        keep_quotes=r.keep_quotes,
    )


def sweep(store: Store, settings: Settings, run_id: str, now: datetime) -> dict[str, Any]:
    """Steps 1 and 2 for run `run_id`; returns {"cutoffs", "counts", "resumed"}."""
    planned = runs.done_step(store, run_id, "retention.planned")
    if planned is None:
        cut = cutoffs_for(settings, now)
        runs.step(store, run_id, "retention.planned", cut.to_dict())
    else:
        cut = retention.Cutoffs.from_dict(planned)
    erased = runs.done_step(store, run_id, "retention.erased")
    if erased is not None:
        return {"cutoffs": cut.to_dict(), "counts": erased, "resumed": True}
    marker = erasure.pending_marker(store.path)
    already = marker.exists()  # an earlier erasure's rewrite still to do: leave its marker
    erasure.mark_rewrite_pending(store.path)
    with store.transaction():
        counts = retention.apply(store, cut, keep_run=run_id)
        crash_point("retention.before_commit")
        runs.step(store, run_id, "retention.erased", counts)
    crash_point("retention.after_erase")
    if not any(counts.values()) and not already:
        marker.unlink(missing_ok=True)  # nothing was erased: no rewrite needed
    return {"cutoffs": cut.to_dict(), "counts": counts, "resumed": False}


def unfinished_run(store: Store) -> str | None:
    """The id of a retention run a crash left running (the CLI resumes it)."""
    rid = store.scalar(
        "SELECT id FROM runs WHERE wake_kind = 'retention' AND status = 'running' ORDER BY started_at LIMIT 1"
    )
    return str(rid) if rid else None

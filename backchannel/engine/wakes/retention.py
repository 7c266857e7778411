"""A `retention` wake: the retention sweep (engine/retention_run.py). It erases, so the
caller rewrites the database file after the run (`detail.rewrite`)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from backchannel.core.wake import Wake
from backchannel.engine.wakes.kind import Kind, WakeRequest, nothing_missing

if TYPE_CHECKING:
    from backchannel.engine.run import Run


def handle(run: Run) -> None:
    from backchannel.engine import retention_run
    from backchannel.memory.erasure import pending_marker

    done = retention_run.sweep(run.store, run.settings, run.run_id, run.now)
    run.outcome.detail.update(retention=done, rewrite=pending_marker(run.store.path).exists())


def manual_wake(now: datetime) -> Wake:
    return Wake("retention", key=f"retention:{now.isoformat()}", payload={"reason": "manual"}, created_at=now)


# In-process the retention operation runs it itself (it resumes an unfinished sweep first).
REQUEST = WakeRequest("retention", nothing_missing, keyed=manual_wake)
WAKE = Kind(("retention",), handle, REQUEST)

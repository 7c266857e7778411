"""A `sweep` wake (the schedule) or a `manual` one (`backchannel wake sweep`): sweep
memory for anything worth proposing now, with the wake's payload as context."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from backchannel.config import Paths, Settings
from backchannel.core.timeutil import aware_now
from backchannel.core.wake import Wake
from backchannel.engine.wakes.kind import Kind, WakeRequest, nothing_missing

if TYPE_CHECKING:
    from backchannel.engine.run import Run


def handle(run: Run) -> None:
    run.sweep_and_propose({**run.wake.payload, "wake": "sweep", "trigger": run.wake.kind})


def manual_wake(now: datetime) -> Wake:
    return Wake("manual", key=f"manual:{now.isoformat()}", payload={"reason": "manual"}, created_at=now)


def collect(settings: Settings, paths: Paths) -> list[Wake]:
    return [manual_wake(aware_now())]


REQUEST = WakeRequest("sweep", nothing_missing, collect=collect, keyed=manual_wake, needs_triggers=False)
WAKE = Kind(("sweep", "manual"), handle, REQUEST)

"""The retention schedule: at each `[retention] schedule` time (a crontab line, in the
owner's time zone) it enqueues a `retention` wake keyed by the scheduled minute, nothing
more. The sweep runs in the daemon's consumer like every wake; the daemon rewrites the
database file after it. Idle when no retention period is set."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from backchannel.config.privacy import RetentionSettings
from backchannel.core.wake import Wake
from backchannel.triggers.schedule import cron_trigger
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, cancel_task, enqueue

log = logging.getLogger(__name__)


def configured(settings: RetentionSettings) -> bool:
    return any(
        v is not None
        for v in (settings.utterances_days, settings.assertions_days, settings.proposals_days, settings.runs_days)
    )


def retention_key(when: datetime) -> str:
    return "retention:" + when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")


class RetentionTrigger:
    def __init__(
        self, settings: RetentionSettings, queue: asyncio.Queue, clock: Clock = SYSTEM_CLOCK, timezone: str = "UTC"
    ) -> None:
        self.settings = settings
        self._queue = queue
        self._clock = clock
        self._tz = ZoneInfo(timezone)
        self._task: asyncio.Task | None = None
        self.fired = 0
        cron_trigger(settings.schedule, self._tz)  # a bad line fails at start, naming itself

    def next_fire(self, after: datetime) -> datetime | None:
        fire = cron_trigger(self.settings.schedule, self._tz).get_next_fire_time(None, after)
        return fire.astimezone(UTC) if fire else None

    def fire(self, when: datetime) -> Wake:
        wake = Wake(
            "retention",
            key=retention_key(when),
            payload={"reason": "schedule", "scheduled": when.isoformat()},
            created_at=self._clock.now(),
        )
        enqueue(self._queue, wake)
        self.fired += 1
        return wake

    async def _run(self) -> None:
        while True:
            when = self.next_fire(self._clock.now())
            if when is None:
                return
            # Sleep in slices: a laptop's suspend or a clock change moves the wall clock under us.
            while (left := (when - self._clock.now()).total_seconds()) > 0:
                await self._clock.sleep(min(left, 300.0))
            try:
                self.fire(when)
            except Exception:  # noqa: BLE001 - one failed enqueue must not stop the schedule
                log.exception("retention wake failed to enqueue")

    def start(self) -> None:
        if self._task is None and configured(self.settings):
            self._task = asyncio.get_running_loop().create_task(self._run(), name="retention-schedule")

    async def stop(self) -> None:
        await cancel_task(self._task)
        self._task = None

    async def reload(self, settings: RetentionSettings, timezone: str) -> None:
        if settings == self.settings and ZoneInfo(timezone) == self._tz:
            return
        await self.stop()
        self.settings, self._tz = settings, ZoneInfo(timezone)
        cron_trigger(settings.schedule, self._tz)
        self.start()

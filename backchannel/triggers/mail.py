"""The mail schedule: every `[mail] sync_interval_s` (and once at start) it enqueues a
`mail` wake, nothing more. The sync itself (IMAP, the store) runs in the daemon's
consumer, in queue order, like every other wake (DESIGN rules 1 and 2)."""

from __future__ import annotations

import asyncio
import logging

from backchannel.config.sections import MailSettings
from backchannel.core.wake import Wake
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, cancel_task, enqueue

log = logging.getLogger(__name__)


class MailTrigger:
    def __init__(self, settings: MailSettings, queue: asyncio.Queue, clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self._queue = queue
        self._clock = clock
        self._task: asyncio.Task | None = None
        self.fired = 0

    @property
    def active(self) -> bool:
        return bool(self.settings.enabled and self.settings.host)

    def fire(self, reason: str = "schedule") -> Wake:
        now = self._clock.now()
        wake = Wake("mail", key=f"mail:{now.isoformat()}", payload={"reason": reason}, created_at=now)
        enqueue(self._queue, wake)
        self.fired += 1
        return wake

    async def _run(self) -> None:
        while True:
            try:
                self.fire()
            except Exception:  # noqa: BLE001 - one failed enqueue must not stop the schedule
                log.exception("mail wake failed to enqueue")
            await self._clock.sleep(max(1.0, float(self.settings.sync_interval_s)))

    def start(self) -> None:
        if self._task is None and self.active:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="mail-schedule")

    async def stop(self) -> None:
        await cancel_task(self._task)
        self._task = None

    async def reload(self, settings: MailSettings) -> None:
        if settings == self.settings:
            return
        await self.stop()
        self.settings = settings
        self.start()

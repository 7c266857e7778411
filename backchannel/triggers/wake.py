"""What every trigger shares: the injectable `Clock`, the one helper that
enqueues a `Wake`, the bounded memory of keys already enqueued, and task cancel.

Triggers never touch the database: they only put Wakes on the asyncio queue the
daemon gives them; its single consumer is the one writer (DESIGN rules 1 and 2).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from datetime import datetime
from typing import Protocol

from backchannel.core.timeutil import aware_now
from backchannel.core.wake import Wake

log = logging.getLogger(__name__)


class Clock(Protocol):
    """Time as triggers see it, injectable so tests can jump the wall clock."""

    def now(self) -> datetime:
        """Wall-clock time, aware, UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps (and, on Linux, stops during suspend)."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return aware_now()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()


def enqueue(queue: asyncio.Queue, wake: Wake) -> None:
    """Put a wake on the queue without blocking the caller; a full (bounded)
    queue gets it as soon as there is room, in order of arrival."""
    try:
        queue.put_nowait(wake)
    except asyncio.QueueFull:
        asyncio.get_running_loop().create_task(queue.put(wake))
    log.debug("wake enqueued", extra={"wake_kind": wake.kind, "wake_key": wake.key})


class SeenKeys:
    """A bounded memory of keys already enqueued by this process (oldest forgotten
    first). Only to avoid flooding the queue: the daemon's event log is the
    durable idempotency check across restarts."""

    def __init__(self, limit: int = 50_000) -> None:
        self._keys: OrderedDict[str, None] = OrderedDict()
        self._limit = limit

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: str) -> bool:
        """Remember `key`; True when it was new."""
        if key in self._keys:
            self._keys.move_to_end(key)
            return False
        self._keys[key] = None
        if len(self._keys) > self._limit:
            self._keys.popitem(last=False)
        return True

    def discard(self, key: str) -> None:
        self._keys.pop(key, None)


async def cancel_task(task: asyncio.Task | None) -> None:
    """Cancel a trigger's background task and wait for it to end."""
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass

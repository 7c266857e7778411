"""The typed `Wake` every trigger enqueues, the injectable `Clock`, and the one
helper triggers use to enqueue.

Triggers never touch the database: they only put Wakes on the asyncio queue the
daemon gives them; its single consumer is the one writer (DESIGN rules 1 and 2).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol, get_args

from backchannel.timeutil import as_aware_utc, aware_now

log = logging.getLogger(__name__)

WakeKind = Literal["sweep", "inbox", "meeting_soon", "signal", "calendar", "signals", "ask", "manual", "mail"]
WAKE_KINDS: frozenset[str] = frozenset(get_args(WakeKind))


@dataclass(frozen=True)
class Wake:
    """One reason to wake the daemon. `key` is its idempotency key: the daemon
    handles a given key once, across restarts (e.g. "sweep:2026-11-29T08:00",
    "inbox:<sha256>", "meeting_soon:<uid>:<start iso>", "signal:<id>")."""

    kind: WakeKind
    key: str
    payload: dict[str, Any] = field(default_factory=dict)
    created_at: datetime = field(default_factory=aware_now)

    def __post_init__(self) -> None:
        if self.kind not in WAKE_KINDS:
            raise ValueError(f"unknown wake kind {self.kind!r}; expected one of {sorted(WAKE_KINDS)}")
        if not self.key:
            raise ValueError("a wake needs a non-empty idempotency key")
        if self.created_at.tzinfo is None:
            raise ValueError("Wake.created_at must be timezone-aware")
        # Normalise to UTC; frozen, so through object.__setattr__.
        object.__setattr__(self, "created_at", self.created_at.astimezone(timezone.utc))
        # Fail at the trigger, not later in the consumer, when a payload is not JSON-able.
        json.dumps(self.payload)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "payload": self.payload,
            "created_at": self.created_at.isoformat(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Wake":
        created = data.get("created_at")
        return cls(
            kind=data["kind"],
            key=data["key"],
            payload=dict(data.get("payload") or {}),
            created_at=as_aware_utc(datetime.fromisoformat(created)) if created else aware_now(),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> "Wake":
        return cls.from_dict(json.loads(text))


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


async def cancel_task(task: "asyncio.Task | None") -> None:
    """Cancel a trigger's background task and wait for it to end."""
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass

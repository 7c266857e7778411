"""The Wake type every trigger enqueues."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import pytest

from backchannel.core.wake import Wake
from backchannel.triggers.wake import SYSTEM_CLOCK, SeenKeys, enqueue


def test_round_trip_and_utc():
    paris = timezone(timedelta(hours=1))
    w = Wake(
        "meeting_soon",
        key="meeting_soon:u1:2026-12-03T09:00:00+00:00",
        payload={"uid": "u1", "attendees": ["Marc Dupont"]},
        created_at=datetime(2026, 11, 29, 9, 0, tzinfo=paris),
    )
    assert w.created_at == datetime(2026, 11, 29, 8, 0, tzinfo=UTC) and w.created_at.utcoffset() == timedelta(0)
    back = Wake.from_json(w.to_json())
    assert back == w
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.key = "other"  # frozen


def test_validation():
    with pytest.raises(ValueError, match="unknown wake kind"):
        Wake("nap", key="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="idempotency key"):
        Wake("sweep", key="")
    with pytest.raises(ValueError, match="timezone-aware"):
        Wake("sweep", key="k", created_at=datetime(2026, 1, 1))
    with pytest.raises(TypeError):
        Wake("manual", key="k", payload={"when": datetime.now()})  # not JSON-able
    assert Wake("manual", key="manual:1").created_at.tzinfo is not None


def test_system_clock_and_enqueue_on_bounded_queue():
    assert SYSTEM_CLOCK.now().tzinfo == UTC
    assert SYSTEM_CLOCK.monotonic() > 0

    async def main():
        q: asyncio.Queue = asyncio.Queue(maxsize=1)
        enqueue(q, Wake("manual", key="a"))
        enqueue(q, Wake("manual", key="b"))  # full: delivered once there is room
        first = await q.get()
        await SYSTEM_CLOCK.sleep(0.01)
        second = await asyncio.wait_for(q.get(), 1)
        return first.key, second.key

    assert asyncio.run(main()) == ("a", "b")


def test_seen_keys_is_bounded():
    s = SeenKeys(limit=3)
    assert s.add("a") and not s.add("a")
    for k in "bcd":
        s.add(k)
    assert "a" not in s and len(s) == 3 and "d" in s

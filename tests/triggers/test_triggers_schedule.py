"""The schedule trigger: real APScheduler firing, and the suspend catch-up
driven by a fake clock (a real class, no mocks)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest
from apscheduler.events import EVENT_JOB_EXECUTED, JobExecutionEvent

from backchannel.config.sections import ScheduleSettings
from backchannel.core.wake import Wake
from backchannel.triggers.schedule import ScheduleTrigger, fire_times_between, sweep_key


class FakeClock:
    """Wall and monotonic clocks the test moves by hand; `sleep` waits until
    the test has advanced the monotonic clock far enough."""

    def __init__(self, wall: datetime, mono: float = 1000.0) -> None:
        self.wall = wall
        self.mono = mono

    def now(self) -> datetime:
        return self.wall

    def monotonic(self) -> float:
        return self.mono

    def advance(self, wall_s: float, mono_s: float | None = None) -> None:
        self.wall += timedelta(seconds=wall_s)
        self.mono += wall_s if mono_s is None else mono_s

    async def sleep(self, seconds: float) -> None:
        target = self.mono + seconds
        while self.mono < target:
            await asyncio.sleep(0.01)


def drain(q: asyncio.Queue) -> list[Wake]:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def test_sweep_key_precision():
    assert sweep_key(datetime(2026, 11, 29, 8, 0, tzinfo=UTC)) == "sweep:2026-11-29T08:00"
    paris = datetime(2026, 11, 29, 9, 0, tzinfo=timezone(timedelta(hours=1)))
    assert sweep_key(paris) == "sweep:2026-11-29T08:00"
    assert sweep_key(datetime(2026, 11, 29, 8, 0, 1, 250_000, tzinfo=UTC)) == "sweep:2026-11-29T08:00:01.250"


def test_interval_job_fires_repeatedly():
    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = ScheduleTrigger(ScheduleSettings(sweep=[], interval_s=0.3), q)
        trig.start()
        try:
            assert trig.scheduler is not None
            opts = trig.scheduler.get_job("sweep-interval")
            assert (opts.coalesce, opts.max_instances, opts.misfire_grace_time) == (True, 1, 6 * 3600)
            await asyncio.sleep(1.05)
        finally:
            trig.shutdown()
        return drain(q)

    wakes = asyncio.run(main())
    assert 2 <= len(wakes) <= 4
    assert all(w.kind == "sweep" and not w.payload["catch_up"] for w in wakes)
    assert len({w.key for w in wakes}) == len(wakes)
    times = [datetime.fromisoformat(w.payload["scheduled_for"]) for w in wakes]
    # Keyed by scheduled time: multiples of the interval apart (coalesced if the loop lagged).
    steps = [(b - a).total_seconds() / 0.3 for a, b in zip(times, times[1:])]
    assert all(round(x) >= 1 and abs(x - round(x)) < 0.05 for x in steps)


def test_cron_job_next_fire_and_misfire_run_within_grace():
    """A cron job whose run was missed two hours ago (the machine slept) runs
    once when APScheduler looks again, keyed by the missed time; with a 1 s
    grace (APScheduler's default) the same run would be dropped."""

    async def main(grace_s: int):
        q: asyncio.Queue = asyncio.Queue()
        trig = ScheduleTrigger(ScheduleSettings(sweep=["* * * * *", "0 0 1 1 *"], misfire_grace_s=grace_s), q)
        trig.start()
        try:
            nxt = trig.next_fire_times()
            now = datetime.now(UTC)
            assert len(nxt) == 2 and all(t > now for t in nxt)
            assert nxt[0] - now <= timedelta(seconds=61) and nxt[0].second == 0
            missed_at = (now - timedelta(hours=2)).replace(second=0, microsecond=0)
            # The yearly job: its next fire after missed_at is months away, so
            # the coalesced run is exactly the missed one.
            trig.scheduler.modify_job("sweep-cron-1", next_run_time=missed_at)
            for _ in range(40):  # the wakeup is immediate; allow for a loaded machine
                await asyncio.sleep(0.02)
                if not q.empty():
                    break
            await asyncio.sleep(0.1)
        finally:
            trig.shutdown()
        # The every-minute job fires on its own when the run straddles a
        # minute boundary; only the yearly job's missed run is under test.
        return missed_at, [w for w in drain(q) if w.payload["job"] == "sweep-cron-1"]

    missed_at, wakes = asyncio.run(main(6 * 3600))
    assert [w.key for w in wakes] == [sweep_key(missed_at)]

    _, dropped = asyncio.run(main(1))
    assert dropped == []


def test_catch_up_after_suspend_once_and_not_doubled_by_apscheduler():
    # Monday 2026-11-30 07:00 in Paris (06:00 UTC); sweeps at 08:00 and 12:00 Paris.
    clock = FakeClock(datetime(2026, 11, 30, 6, 0, tzinfo=UTC))
    q: asyncio.Queue = asyncio.Queue()
    trig = ScheduleTrigger(
        ScheduleSettings(sweep=["0 8 * * 1-5", "0 12 * * 1-5"]), q, clock=clock, timezone="Europe/Paris"
    )
    assert trig.check_wallclock() is None  # first look only primes

    clock.advance(60)  # an ordinary minute: no jump
    assert trig.check_wallclock() is None

    clock.advance(6 * 3600, mono_s=60)  # lid closed 07:01 -> 13:01 Paris
    wake = trig.check_wallclock()
    assert wake is not None and wake.payload["catch_up"] is True
    assert wake.payload["missed"] == 2  # 08:00 and 12:00 Paris...
    assert wake.key == "sweep:2026-11-30T11:00"  # ...one wake, for the latest (12:00 Paris = 11:00 UTC)
    # APScheduler's own coalesced misfire runs for the same gap now arrive: suppressed.
    for job, t in (
        ("sweep-cron-1", datetime(2026, 11, 30, 11, 0, tzinfo=UTC)),
        ("sweep-cron-0", datetime(2026, 11, 30, 7, 0, tzinfo=UTC)),
    ):
        trig._on_event(JobExecutionEvent(EVENT_JOB_EXECUTED, job, "default", t))
    # The next look sees no jump.
    clock.advance(60)
    assert trig.check_wallclock() is None
    assert [w.key for w in drain(q)] == ["sweep:2026-11-30T11:00"]

    # The next regular fire is a normal wake.
    trig._on_event(
        JobExecutionEvent(EVENT_JOB_EXECUTED, "sweep-cron-0", "default", datetime(2026, 12, 1, 7, 0, tzinfo=UTC))
    )
    assert [w.key for w in drain(q)] == ["sweep:2026-12-01T07:00"]


def test_no_catch_up_when_apscheduler_already_ran_for_the_gap():
    clock = FakeClock(datetime(2026, 11, 30, 6, 0, tzinfo=UTC))
    q: asyncio.Queue = asyncio.Queue()
    trig = ScheduleTrigger(ScheduleSettings(sweep=["0 8 * * 1-5"]), q, clock=clock, timezone="Europe/Paris")
    trig.check_wallclock()
    clock.advance(3 * 3600, mono_s=30)
    # APScheduler's timer happened to fire first after resume.
    trig._on_event(
        JobExecutionEvent(EVENT_JOB_EXECUTED, "sweep-cron-0", "default", datetime(2026, 11, 30, 7, 0, tzinfo=UTC))
    )
    assert trig.check_wallclock() is None
    assert [w.key for w in drain(q)] == ["sweep:2026-11-30T07:00"]


def test_missed_sweep_older_than_grace_is_not_caught_up():
    clock = FakeClock(datetime(2026, 11, 30, 6, 0, tzinfo=UTC))
    q: asyncio.Queue = asyncio.Queue()
    trig = ScheduleTrigger(
        ScheduleSettings(sweep=["0 8 * * 1-5"], misfire_grace_s=3600), q, clock=clock, timezone="Europe/Paris"
    )
    trig.check_wallclock()
    clock.advance(10 * 3600, mono_s=10)  # 08:00 Paris is now 9 h late, grace 1 h
    assert trig.check_wallclock() is None
    assert drain(q) == []


def test_suspend_with_no_fire_in_gap_and_interval_gap_counts():
    clock = FakeClock(datetime(2026, 11, 28, 10, 0, tzinfo=UTC))  # Saturday
    q: asyncio.Queue = asyncio.Queue()
    trig = ScheduleTrigger(ScheduleSettings(sweep=["0 8 * * 1-5"]), q, clock=clock)
    trig.check_wallclock()
    clock.advance(5 * 3600, mono_s=5)  # weekend: nothing scheduled in the gap
    assert trig.check_wallclock() is None
    # An interval trigger over a long gap: counted with a cap, one wake.
    settings = ScheduleSettings(sweep=[], interval_s=0.5)
    t2 = ScheduleTrigger(settings, q, clock=clock)
    trig_obj = t2._triggers[0][1]
    now = datetime.now(UTC) + timedelta(seconds=1)  # interval triggers start at real creation time
    times = fire_times_between(trig_obj, now, now + timedelta(seconds=10))
    assert len(times) in (19, 20, 21)
    wake = t2.catch_up(now, now + timedelta(hours=3))
    assert wake is not None and wake.payload["missed"] >= 10_000


def test_restart_catch_up_and_reload():
    async def main():
        clock = FakeClock(datetime.now(UTC))
        q: asyncio.Queue = asyncio.Queue()
        trig = ScheduleTrigger(ScheduleSettings(sweep=["* * * * *"]), q, clock=clock)
        # The daemon was down for ~5 minutes since its last sweep.
        trig.start(last_fire=clock.now() - timedelta(minutes=5, seconds=30))
        try:
            restart = drain(q)
            assert len(restart) == 1 and restart[0].payload["reason"] == "restart"
            assert restart[0].payload["missed"] in (5, 6)
            with pytest.raises(ValueError, match="not a valid crontab"):
                trig.reload(ScheduleSettings(sweep=["61 * * * *"]))
            assert trig.running and [j.id for j in trig.scheduler.get_jobs()] == ["sweep-cron-0"]
            trig.reload(ScheduleSettings(sweep=["0 9 * * *", "30 17 * * 1"]))
            await asyncio.sleep(0.05)
            assert trig.running and len(trig.next_fire_times()) == 2
        finally:
            trig.shutdown()
            await asyncio.sleep(0.05)
        assert not trig.running

    asyncio.run(main())


def test_crontab_weekday_numbers_are_standard():
    """APScheduler 3 reads weekday numbers with 0 = Monday; crontab (and our
    config) means 0 = Sunday. "1-5" must be Monday to Friday."""
    from zoneinfo import ZoneInfo

    from backchannel.triggers.schedule import cron_trigger, crontab_weekdays

    assert crontab_weekdays("1-5") == "mon,tue,wed,thu,fri"
    assert crontab_weekdays("0") == crontab_weekdays("7") == "sun"
    assert crontab_weekdays("*/2") == "sun,tue,thu,sat"
    assert crontab_weekdays("sat,sun") == "sat,sun"
    with pytest.raises(ValueError):
        crontab_weekdays("8")
    trig = cron_trigger("0 8 * * 1-5", ZoneInfo("Europe/Paris"))
    # From Saturday 2026-11-28: the next fire is Monday 30th 08:00 Paris, not Saturday.
    sat = datetime(2026, 11, 28, 0, 0, tzinfo=UTC)
    assert trig.get_next_fire_time(None, sat) == datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
    sunday = cron_trigger("30 9 * * 0", ZoneInfo("UTC")).get_next_fire_time(None, sat)
    assert sunday.weekday() == 6

"""The periodic sweep: APScheduler 3.11 `AsyncIOScheduler` plus a wall-clock
watch so a laptop waking from suspend catches up exactly once.

How APScheduler 3.11 behaves, and why the code below is shaped this way:
- Jobs live in the in-memory job store, rebuilt from config at every start.
- Its default misfire grace is 1 s: a run late by more than that is dropped
  with only a log line (EVENT_JOB_MISSED). Sweeps missed during a suspend must
  still run, so the grace is `settings.misfire_grace_s` (hours), with
  `coalesce=True` (many missed fires -> one run) and `max_instances=1`.
- AsyncIOScheduler sleeps with `loop.call_later`, i.e. on the monotonic clock,
  which on Linux does not advance during suspend: after a resume its timer
  fires late by the length of the suspend. The wall-clock watch notices that
  wall time moved much further than monotonic time, enqueues one catch-up
  sweep for the latest fire time passed in the gap, and calls
  `scheduler.wakeup()` so APScheduler re-evaluates at once.
- The job function cannot see the time it was scheduled for; the
  EVENT_JOB_EXECUTED event carries it (`scheduled_run_time`). So the job is a
  no-op coroutine and the listener turns each fire that APScheduler counted
  (after its grace check) into a Wake keyed by that scheduled time. The
  catch-up and APScheduler's own coalesced misfire run therefore share the
  key space "sweep:<scheduled time>", and each suppresses the other.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.events import EVENT_JOB_EXECUTED, EVENT_JOB_MISSED, JobExecutionEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from backchannel.config.sections import ScheduleSettings
from backchannel.core.timeutil import as_aware_utc
from backchannel.core.wake import Wake
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, SeenKeys, enqueue

log = logging.getLogger(__name__)

_TINY = timedelta(microseconds=1)
_MAX_COUNT = 10_000  # stop counting missed fires past this (a 0.3 s interval over a long suspend)


def sweep_key(fire_time: datetime) -> str:
    """The idempotency key of a scheduled fire: minute precision for cron times
    ("sweep:2026-11-29T08:00", UTC), millisecond precision otherwise."""
    t = as_aware_utc(fire_time)
    if t.second == 0 and t.microsecond == 0:
        return "sweep:" + t.strftime("%Y-%m-%dT%H:%M")
    return "sweep:" + t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}"


_DOW_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")  # crontab numbering: 0 and 7 are Sunday


def crontab_weekdays(field: str) -> str:
    """The day-of-week field of a crontab line, rewritten with day names.

    APScheduler 3.x's `CronTrigger.from_crontab` passes the field through with
    ITS numbering, 0 = Monday (documented "historical mistake", fixed only in
    4.x), so "0 8 * * 1-5" would run Tuesday to Saturday. Names mean the same
    to both, so numbers (0/7 = Sunday, as in crontab) become explicit names."""
    if field == "*":
        return field
    out: list[str] = []
    for item in field.split(","):
        rng, _, step_s = item.partition("/")
        step = int(step_s) if step_s else 1
        if step < 1:
            raise ValueError(f"bad step in day-of-week {field!r}")
        if rng == "*":
            lo, hi = 0, 6
        elif rng.isdigit():
            lo = hi = int(rng)
            if step_s:
                hi = 7  # "n/step" means n, n+step, ... to the end of the week
        elif "-" in rng and all(p.isdigit() for p in rng.split("-", 1)):
            lo, hi = (int(p) for p in rng.split("-", 1))
        elif not any(c.isdigit() for c in rng):
            out.append(item)  # names ("mon-fri", "sat") mean the same to both
            continue
        else:
            raise ValueError(f"cannot mix day numbers and names in {field!r}")
        if not (0 <= lo <= 7 and 0 <= hi <= 7 and lo <= hi):
            raise ValueError(f"day-of-week out of range in {field!r}")
        for n in range(lo, hi + 1, step):
            if _DOW_NAMES[n] not in out:
                out.append(_DOW_NAMES[n])
    return ",".join(out)


def cron_trigger(expr: str, tz: ZoneInfo) -> CronTrigger:
    """`CronTrigger.from_crontab` with standard crontab weekday numbers."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
    fields[4] = crontab_weekdays(fields[4])
    return CronTrigger.from_crontab(" ".join(fields), timezone=tz)


def build_triggers(settings: ScheduleSettings, tz: ZoneInfo) -> list[tuple[str, BaseTrigger]]:
    """(job id, trigger) for every cron string and the optional interval.
    A malformed cron string raises ValueError naming it."""
    triggers: list[tuple[str, BaseTrigger]] = []
    for i, expr in enumerate(settings.sweep):
        try:
            trig = cron_trigger(expr, tz)
        except ValueError as exc:
            raise ValueError(f"[schedule] sweep[{i}] = {expr!r} is not a valid crontab line: {exc}") from exc
        triggers.append((f"sweep-cron-{i}", trig))
    if settings.interval_s:
        if settings.interval_s <= 0:
            raise ValueError("[schedule] interval_s must be positive")
        triggers.append(("sweep-interval", IntervalTrigger(seconds=settings.interval_s, timezone=tz)))
    return triggers


def fire_times_between(
    trigger: BaseTrigger, since: datetime, until: datetime, limit: int = _MAX_COUNT
) -> list[datetime]:
    """Fire times of `trigger` in (since, until], at most `limit` of them (the
    earliest); callers that need the latest use `last_fire_between`."""
    out: list[datetime] = []
    t = trigger.get_next_fire_time(None, since + _TINY)
    while t is not None and as_aware_utc(t) <= as_aware_utc(until) and len(out) < limit:
        out.append(t)
        t = trigger.get_next_fire_time(t, t + _TINY)
    return out


def last_fire_between(trigger: BaseTrigger, since: datetime, until: datetime) -> tuple[datetime | None, int]:
    """The latest fire time in (since, until] and how many there were (capped)."""
    times = fire_times_between(trigger, since, until)
    if len(times) < _MAX_COUNT:
        return (times[-1] if times else None), len(times)
    # Too many to walk (a short interval over a long gap): walk back from the end.
    tail_since = until - timedelta(days=1)
    tail = fire_times_between(trigger, max(since, tail_since), until)
    return (tail[-1] if tail else times[-1]), _MAX_COUNT


class ScheduleTrigger:
    """Enqueues `Wake("sweep", key=sweep_key(scheduled time))` on the schedule
    in `[schedule]`. `start()` needs a running event loop."""

    def __init__(
        self,
        settings: ScheduleSettings,
        queue: asyncio.Queue,
        clock: Clock = SYSTEM_CLOCK,
        timezone: str | None = None,
    ) -> None:
        self._settings = settings
        self._queue = queue
        self._clock = clock
        self._default_tz = timezone
        self._scheduler: AsyncIOScheduler | None = None
        self._triggers: list[tuple[str, BaseTrigger]] = []
        self._watch_task: asyncio.Task | None = None
        self._seen = SeenKeys()
        # Scheduled times already turned into wakes, and gaps already caught up:
        # together they keep APScheduler's misfire run and the catch-up from doubling.
        self._emitted: deque[datetime] = deque(maxlen=256)
        self._covered: deque[tuple[datetime, datetime]] = deque(maxlen=64)
        self._last_look: tuple[datetime, float] | None = None
        self.tz = self._resolve_tz(settings)
        self._triggers = build_triggers(settings, self.tz)

    # -- lifecycle -------------------------------------------------------

    def _resolve_tz(self, settings: ScheduleSettings) -> ZoneInfo:
        return ZoneInfo(settings.timezone or self._default_tz or "UTC")

    @property
    def running(self) -> bool:
        return self._scheduler is not None

    @property
    def scheduler(self) -> AsyncIOScheduler | None:
        """The live APScheduler instance (None when stopped); for status and tests."""
        return self._scheduler

    def start(self, last_fire: datetime | None = None) -> None:
        """Build the jobs from config and start. `last_fire`, when the daemon
        knows it (the scheduled time of the last sweep in its log), catches up
        once on fires missed while the daemon was not running."""
        if self._scheduler is not None:
            return
        self._triggers = build_triggers(self._settings, self.tz)  # fresh from config at every start
        sched = AsyncIOScheduler(
            timezone=self.tz,
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": int(self._settings.misfire_grace_s),
            },
        )
        for job_id, trig in self._triggers:
            sched.add_job(self._tick, trigger=trig, id=job_id, name=job_id, replace_existing=True)
        sched.add_listener(self._on_event, EVENT_JOB_EXECUTED | EVENT_JOB_MISSED)
        sched.start()
        self._scheduler = sched
        self._last_look = None
        self._watch_task = asyncio.get_running_loop().create_task(self._watch_wallclock(), name="schedule-wallclock")
        if last_fire is not None:
            self.catch_up(as_aware_utc(last_fire), self._clock.now(), reason="restart")
        log.info("schedule started", extra={"jobs": [j for j, _ in self._triggers], "timezone": str(self.tz)})

    def shutdown(self) -> None:
        if self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None
        if self._scheduler is not None:
            sched, self._scheduler = self._scheduler, None
            if sched.running:
                sched.shutdown(wait=False)

    def reload(self, settings: ScheduleSettings, timezone: str | None = None) -> None:
        """Apply new settings (SIGHUP); `timezone` is the (new) owner's. A bad cron
        string or zone raises before anything changes, so the running schedule
        stays as it was."""
        default_tz = timezone or self._default_tz
        tz = ZoneInfo(settings.timezone or default_tz or "UTC")
        triggers = build_triggers(settings, tz)
        was_running = self.running
        self.shutdown()
        self._settings, self.tz, self._triggers, self._default_tz = settings, tz, triggers, default_tz
        if was_running:
            self.start()

    # -- status ----------------------------------------------------------

    def next_fire_times(self) -> list[datetime]:
        """Upcoming scheduled sweeps, one per job, sorted, in UTC."""
        times: list[datetime] = []
        if self._scheduler is not None:
            for job in self._scheduler.get_jobs():
                if job.next_run_time is not None:
                    times.append(as_aware_utc(job.next_run_time))
        if not times:  # not started yet, or APScheduler has not computed them yet
            now = self._clock.now().astimezone(self.tz)
            for _, trig in self._triggers:
                t = trig.get_next_fire_time(None, now)
                if t is not None:
                    times.append(as_aware_utc(t))
        return sorted(times)

    # -- firing ----------------------------------------------------------

    async def _tick(self) -> None:
        """The APScheduler job: deliberately empty, see the module docstring
        (the listener, which knows the scheduled time, enqueues the wake)."""
        return None

    def _on_event(self, event: JobExecutionEvent) -> None:
        if event.code == EVENT_JOB_MISSED:
            log.warning(
                "scheduled sweep missed beyond the misfire grace",
                extra={"job": event.job_id, "scheduled_for": as_aware_utc(event.scheduled_run_time).isoformat()},
            )
            return
        self.emit_scheduled(event.scheduled_run_time, job_id=event.job_id)

    def emit_scheduled(self, fire_time: datetime, job_id: str = "") -> Wake | None:
        """Turn one scheduled fire into a wake, unless a catch-up already
        covered it or its key was already enqueued."""
        t = as_aware_utc(fire_time)
        for lo, hi in self._covered:
            if lo < t <= hi:
                log.info("scheduled sweep already covered by a catch-up", extra={"scheduled_for": t.isoformat()})
                return None
        return self._emit(t, {"scheduled_for": t.isoformat(), "job": job_id, "catch_up": False})

    def _emit(self, t: datetime, payload: dict[str, Any]) -> Wake | None:
        key = sweep_key(t)
        if not self._seen.add(key):
            log.info("duplicate sweep suppressed", extra={"wake_key": key})
            return None
        self._emitted.append(t)
        wake = Wake("sweep", key=key, payload=payload, created_at=self._clock.now())
        enqueue(self._queue, wake)
        return wake

    # -- suspend / restart catch-up ---------------------------------------

    def catch_up(self, since: datetime, until: datetime, reason: str = "clock jump") -> Wake | None:
        """One sweep wake for the latest fire time in (since, until], if any
        and still within the misfire grace; none if one was already enqueued
        for a fire in that gap. Later APScheduler fires in the gap are suppressed."""
        since, until = as_aware_utc(since), as_aware_utc(until)
        latest: datetime | None = None
        missed = 0
        for _, trig in self._triggers:
            t, n = last_fire_between(trig, since.astimezone(self.tz), until.astimezone(self.tz))
            missed += n
            if t is not None and (latest is None or as_aware_utc(t) > latest):
                latest = as_aware_utc(t)
        if latest is None:
            return None
        self._covered.append((since, until))
        if any(since < t <= until for t in self._emitted):
            log.info("catch-up not needed: a sweep already ran for this gap", extra={"reason": reason})
            return None
        late = (until - latest).total_seconds()
        if late > self._settings.misfire_grace_s:
            log.warning(
                "missed sweeps are older than the misfire grace; not catching up",
                extra={"reason": reason, "missed": missed, "latest": latest.isoformat(), "late_s": late},
            )
            return None
        log.info(
            "catching up on missed sweeps", extra={"reason": reason, "missed": missed, "latest": latest.isoformat()}
        )
        return self._emit(
            latest,
            {
                "scheduled_for": latest.isoformat(),
                "job": "catch-up",
                "catch_up": True,
                "missed": missed,
                "reason": reason,
            },
        )

    def check_wallclock(self) -> Wake | None:
        """One look at the clocks. When wall time advanced much more than
        monotonic time since the previous look (suspend/resume), catch up once."""
        wall, mono = self._clock.now(), self._clock.monotonic()
        prev, self._last_look = self._last_look, (wall, mono)
        if prev is None:
            return None
        jump = (wall - prev[0]).total_seconds() - (mono - prev[1])
        if jump < self._settings.wallclock_jump_s:
            return None
        log.info("wall clock jumped ahead of monotonic time (suspend?)", extra={"jump_s": round(jump, 1)})
        wake = self.catch_up(prev[0], wall, reason="resume")
        if self._scheduler is not None and self._scheduler.running:
            # Its call_later timer is still counting monotonic seconds: make it look now.
            self._scheduler.wakeup()
        return wake

    async def _watch_wallclock(self) -> None:
        self.check_wallclock()
        while True:
            await self._clock.sleep(self._settings.wallclock_check_s)
            try:
                self.check_wallclock()
            except Exception:  # the watch must outlive one bad look
                log.exception("wall-clock check failed")


__all__ = [
    "ScheduleTrigger",
    "sweep_key",
    "build_triggers",
    "fire_times_between",
    "last_fire_between",
    "cron_trigger",
    "crontab_weekdays",
]

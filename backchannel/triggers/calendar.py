"""Calendars: an ICS file or an http(s) URL the user configured, expanded
(recurrences, exceptions, time zones) into the meetings of the next days.

A broken calendar is reported in `CalendarLoad.errors`, never raised: a typo in
someone's invitation must not stop the daemon. `CalendarTrigger` refreshes the
calendars, enqueues one `calendar` wake with the upcoming list (the daemon
stores it in `calendar_events`), and one `meeting_soon` wake per occurrence
entering its lead window (the daemon checks the attendees are known people).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from backchannel.config.sections import CalendarSettings
from backchannel.core import http as http_client
from backchannel.core.payloads import CalendarEvent, CalendarRefresh
from backchannel.core.timeutil import as_aware_utc, aware_now
from backchannel.core.wake import Wake
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, SeenKeys, cancel_task, enqueue

log = logging.getLogger(__name__)

MAX_OCCURRENCES = 5_000  # per source and horizon: a FREQ=SECONDLY rule must not eat the daemon
MAX_ERRORS = 20  # per source, so one rotten feed cannot flood the log
MAX_BYTES = 20 * 1024 * 1024
DAY_BEFORE = timedelta(hours=24)  # the judge's brief window (engine/judge_kinds.py BRIEF_HOURS)


@dataclass
class CalendarLoad:
    events: list[CalendarEvent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class HTTPError(OSError):
    """An http(s) source answered, but not with its content (a 4xx or 5xx), or with
    a redirect it may not follow. Named as urllib's was: the reasons users read are unchanged."""


REDIRECTS = 10  # as many as urllib followed before the one client; to any host, as then


def fetch_source(source: str, timeout_s: float = 20.0) -> bytes:
    """The bytes of an ICS path or http(s) URL; only what the user configured
    is ever fetched (and the redirects it answers with). Raises OSError/ValueError
    on failure."""
    if source.startswith(("http://", "https://")):
        try:
            resp = http_client.request(
                "GET",
                source,
                headers={"User-Agent": "backchannel-calendar"},
                timeout=timeout_s,
                max_bytes=MAX_BYTES,
                max_redirects=REDIRECTS,
                any_host=True,
            )
        except http_client.ResponseTooLarge:
            raise ValueError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB") from None
        except http_client.HTTPClientError as exc:  # a refused redirect
            raise HTTPError(str(exc)) from None
        if not resp.ok:
            raise HTTPError(f"HTTP Error {resp.status}: {resp.reason}")
        return resp.body
    path = Path(source.removeprefix("file://")).expanduser()
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return data


def _to_utc(value: Any, tz: ZoneInfo) -> tuple[datetime, bool]:
    """(aware UTC datetime, is_all_day) for a DTSTART/DTEND value. Floating
    times and dates are read in `tz` (the owner's zone)."""
    if isinstance(value, datetime):
        return as_aware_utc(value, assume=tz), False
    if isinstance(value, date):
        return datetime.combine(value, time(0), tz).astimezone(UTC), True
    raise ValueError(f"not a date or datetime: {value!r}")


def _address(prop: Any) -> str:
    """An ATTENDEE/ORGANIZER as 'CN <email>', or the CN alone, or the email alone
    (the email is how an approved introduction request can reach them)."""
    params = getattr(prop, "params", {}) or {}
    cn = str(params.get("CN", "") or "").strip().strip('"')
    text = str(prop).strip()
    if text.lower().startswith("mailto:"):
        text = text[7:]
    email = text.strip() if "@" in text and not any(c in text for c in " <>,;") else ""
    if cn and email:
        return f"{cn} <{email}>"
    return cn or email or text.strip()


CONSENT_PROPERTY = "X-BACKCHANNEL-CONSENT"  # on an ATTENDEE/ORGANIZER, or on the event (its organizer)
_OPTED_OUT = {"withdrawn", "no", "false", "off", "denied", "refused", "none", "0"}


def _opted_out(value: Any) -> bool:
    return str(value or "").strip().strip('"').casefold() in _OPTED_OUT


def _attendees(component: Any) -> tuple[list[str], list[str]]:
    """(attendees, withdrawn): an ATTENDEE or ORGANIZER with the parameter
    `X-BACKCHANNEL-CONSENT=withdrawn` opted out, and so did the organizer of an event with the
    property `X-BACKCHANNEL-CONSENT:withdrawn`; they are listed apart, never as attendees."""
    out: list[str] = []
    withdrawn: list[str] = []
    organizer_out = _opted_out(component.get(CONSENT_PROPERTY))
    for name in ("ORGANIZER", "ATTENDEE"):
        values = component.get(name)
        if values is None:
            continue
        if not isinstance(values, list):
            values = [values]
        for v in values:
            a = _address(v)
            params = getattr(v, "params", {}) or {}
            if a and (_opted_out(params.get(CONSENT_PROPERTY)) or (organizer_out and name == "ORGANIZER")):
                if a not in withdrawn:
                    withdrawn.append(a)
            elif a and a not in out:
                out.append(a)
    return [a for a in out if a not in withdrawn], withdrawn


def _event(component: Any, source: str, tz: ZoneInfo) -> CalendarEvent | None:
    if str(component.get("STATUS", "")).upper() == "CANCELLED":
        return None
    dtstart = component.get("DTSTART")
    if dtstart is None:
        raise ValueError("event without DTSTART")
    start, all_day = _to_utc(dtstart.dt, tz)
    end: datetime | None = None
    if component.get("DTEND") is not None:
        end, _ = _to_utc(component.get("DTEND").dt, tz)
    elif component.get("DURATION") is not None:
        end = start + component.get("DURATION").dt
    elif all_day:
        end = start + timedelta(days=1)
    summary = str(component.get("SUMMARY", "") or "")
    uid = str(component.get("UID", "") or "")
    if not uid:  # RFC 5545 requires one; real files sometimes lack it
        uid = "nouid-" + hashlib.sha256(f"{source}\0{summary}\0{dtstart.to_ical()!r}".encode()).hexdigest()[:16]
    attendees, withdrawn = _attendees(component)
    return CalendarEvent(
        uid=uid,
        starts_at=start,
        ends_at=end,
        summary=summary,
        location=str(component.get("LOCATION", "") or ""),
        attendees=attendees,
        calendar=source,
        all_day=all_day,
        withdrawn=withdrawn,
    )


def _expand(cal: Any, source: str, start: datetime, end: datetime, tz: ZoneInfo, out: CalendarLoad) -> None:
    """Append the occurrences of `cal` starting before `end` and ending after `start`."""
    import recurring_ical_events

    query = recurring_ical_events.of(cal, skip_bad_series=True)
    count = 0
    for occurrence in query.after(start):
        try:
            ev = _event(occurrence, source, tz)
        except Exception as exc:
            if len(out.errors) < MAX_ERRORS:
                out.errors.append(f"{source}: skipped an event ({occurrence.get('UID', '?')}): {exc}"[:500])
            continue
        if ev is None:
            continue
        if ev.starts_at > as_aware_utc(end):
            break  # after() yields in start order
        out.events.append(ev)
        count += 1
        if count >= MAX_OCCURRENCES:
            out.errors.append(f"{source}: more than {MAX_OCCURRENCES} occurrences in the horizon; truncated")
            break


def _expand_by_series(
    cal: Any, source: str, start: datetime, end: datetime, tz: ZoneInfo, out: CalendarLoad, first_error: Exception
) -> None:
    import icalendar

    timezones = [c for c in cal.subcomponents if c.name == "VTIMEZONE"]
    series: dict[str, list[Any]] = {}
    for n, c in enumerate(cal.walk("VEVENT")):
        series.setdefault(str(c.get("UID", "") or f"(no UID, event #{n + 1})"), []).append(c)
    failed = 0
    for uid, parts in series.items():
        single = icalendar.Calendar()
        for t in timezones:
            single.add_component(t)
        for p in parts:
            single.add_component(p)
        try:
            if any(p.get("DTSTART") is None for p in parts):
                raise ValueError("event without DTSTART")
            _expand(single, source, start, end, tz, out)
        except Exception as exc:
            failed += 1
            if len(out.errors) < MAX_ERRORS:
                out.errors.append(f"{source}: skipped event {uid}: {type(exc).__name__}: {exc}"[:500])
    if not failed:  # the whole failed but no single series did: still say so
        out.errors.append(
            f"{source}: cannot expand the calendar as a whole: {type(first_error).__name__}: {first_error}"[:500]
        )


def parse_calendar(data: bytes, source: str, now: datetime, horizon_days: int, tz: ZoneInfo) -> CalendarLoad:
    """Occurrences overlapping [now, now + horizon_days] in ICS bytes, sorted."""
    import icalendar

    out = CalendarLoad()
    try:
        components = icalendar.Calendar.from_ical(data, multiple=True)
    except Exception as exc:  # icalendar raises ValueError and friends on junk
        out.errors.append(f"{source}: not a readable calendar: {type(exc).__name__}: {exc}"[:500])
        return out
    if not components:
        out.errors.append(f"{source}: no calendar in the file")
        return out
    start = now.astimezone(tz)
    end = start + timedelta(days=horizon_days)
    for comp in components:
        if comp.name != "VCALENDAR":  # a bare VEVENT (it happens): wrap it
            wrapper = icalendar.Calendar()
            wrapper.add_component(comp)
            comp = wrapper
        mark = len(out.events)
        try:
            _expand(comp, source, start, end, tz, out)
        except Exception as exc:
            # One bad series (no DTSTART, a broken RDATE...) makes the whole
            # expansion fail: retry series by series and report only the bad ones.
            del out.events[mark:]
            _expand_by_series(comp, source, start, end, tz, out, first_error=exc)
    out.events.sort(key=lambda e: (e.starts_at, e.uid))
    return out


def load_calendar(
    source: str,
    now: datetime | None = None,
    horizon_days: int = 14,
    timeout_s: float = 20.0,
    tz: str = "UTC",
) -> CalendarLoad:
    """Load an ICS path or http(s) URL; never raises for a broken or
    unreachable calendar (the reason is in `errors`)."""
    now = as_aware_utc(now) if now is not None else aware_now()
    try:
        zone = ZoneInfo(tz)
    except Exception as exc:
        return CalendarLoad(errors=[f"unknown time zone {tz!r}: {exc}"])
    try:
        data = fetch_source(source, timeout_s)
    except Exception as exc:
        # "No such file or directory" says it all; the exception's own text repeats the path.
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        return CalendarLoad(errors=[f"{source}: cannot read: {why}"[:500]])
    try:
        return parse_calendar(data, source, now, horizon_days, zone)
    except Exception as exc:  # last line of defence: a parser bug is still only a report
        return CalendarLoad(errors=[f"{source}: {type(exc).__name__}: {exc}"[:500]])


class CalendarTrigger:
    """Refreshes `[calendar] sources` every `refresh_s`; checks lead windows
    every minute (or `refresh_s` if shorter) against the last refresh."""

    def __init__(
        self,
        settings: CalendarSettings,
        queue: asyncio.Queue,
        clock: Clock = SYSTEM_CLOCK,
        timezone: str | None = None,
    ) -> None:
        self._settings = settings
        self._queue = queue
        self._clock = clock
        self._tz = settings.timezone or timezone or "UTC"
        self.events: list[CalendarEvent] = []
        self.errors: list[str] = []
        self._last_digest: str | None = None
        self._soon = SeenKeys()
        self._task: asyncio.Task | None = None
        self._last_refresh: float | None = None

    def reload(self, settings: CalendarSettings, timezone: str | None = None) -> None:
        """New settings (SIGHUP); `timezone` is the (new) owner's. A running
        trigger takes them at its next tick: `restart()` applies them now."""
        self._settings = settings
        self._tz = settings.timezone or timezone or self._tz
        self._last_refresh = None  # refresh at the next tick
        self._last_digest = None

    async def restart(self) -> None:
        """Stop and start again: a new tick takes effect at once, and sources
        added to a calendar that had none start being read."""
        await self.stop()
        self.start()

    async def refresh(self, force: bool = False) -> list[Wake]:
        """Load every source now; enqueue a `calendar` wake when the upcoming
        list changed since the last one (or `force`), then the meeting_soon wakes."""
        now = self._clock.now()
        events: list[CalendarEvent] = []
        errors: list[str] = []
        for source in self._settings.sources:
            loaded = await asyncio.to_thread(
                load_calendar, source, now, self._settings.horizon_days, self._settings.timeout_s, self._tz
            )
            events.extend(loaded.events)
            errors.extend(loaded.errors)
        events.sort(key=lambda e: (e.starts_at, e.uid))
        for err in errors:
            log.warning("calendar problem", extra={"error": err})
        self.events, self.errors = events, errors
        self._last_refresh = self._clock.monotonic()
        wakes: list[Wake] = []
        dicts = [e.to_dict() for e in events]
        digest = hashlib.sha256(json.dumps(dicts, sort_keys=True).encode()).hexdigest()
        if force or digest != self._last_digest:
            self._last_digest = digest
            upcoming = CalendarRefresh(
                events=events,
                errors=errors,
                sources=list(self._settings.sources),
                window=[now.isoformat(), (now + timedelta(days=self._settings.horizon_days)).isoformat()],
            )
            wake = Wake(
                "calendar",
                key=f"calendar:{digest[:16]}:{now.strftime('%Y-%m-%dT%H:%M:%S')}",
                payload=upcoming.to_dict(),
                created_at=now,
            )
            enqueue(self._queue, wake)
            wakes.append(wake)
        wakes.extend(self.check_soon())
        return wakes

    def check_soon(self) -> list[Wake]:
        """A `meeting_soon` wake for each occurrence with
        start - lead_hours <= now < start, once per occurrence; with a lead longer than
        a day, a second one (key suffix `:day_before`) when the day before begins, since
        the judge proposes a brief only then (engine/judge_kinds.py BRIEF_HOURS)."""
        now = self._clock.now()
        lead = timedelta(hours=self._settings.lead_hours)
        out: list[Wake] = []
        for ev in self.events:
            if ev.starts_at - lead <= now < ev.starts_at:
                key = f"meeting_soon:{ev.key}"
                if not self._soon.add(key):
                    if lead <= DAY_BEFORE or now < ev.starts_at - DAY_BEFORE:
                        continue
                    key += ":day_before"  # the first wake came days ahead: wake again for the brief
                    if not self._soon.add(key):
                        continue
                payload = ev.to_dict()
                payload.pop("withdrawn", None)  # the calendar wake erased them; never carried further
                wake = Wake("meeting_soon", key=key, payload=payload, created_at=now)
                enqueue(self._queue, wake)
                out.append(wake)
        return out

    async def _run(self) -> None:
        while True:
            tick = max(0.05, min(60.0, self._settings.refresh_s))
            try:
                due = (
                    self._last_refresh is None
                    or self._clock.monotonic() - self._last_refresh >= self._settings.refresh_s
                )
                if due:
                    await self.refresh()
                else:
                    self.check_soon()
            except Exception:  # a failed refresh is retried at the next tick
                log.exception("calendar refresh failed")
            await self._clock.sleep(tick)

    def start(self) -> None:
        if self._task is None and self._settings.sources:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="calendar")

    async def stop(self) -> None:
        await cancel_task(self._task)
        self._task = None

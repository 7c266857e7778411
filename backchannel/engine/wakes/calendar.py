"""A `calendar` wake: the calendars were read (triggers/calendar.py); the upcoming events
are upserted, their attendees resolved to entities, and an attendee an invitation marks
as opted out is withdrawn. Asked for (`backchannel wake calendar`), the calendar trigger
refreshes, which makes this wake and a `meeting_soon` wake per imminent meeting."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.payloads import CalendarRefresh
from backchannel.core.wake import Wake
from backchannel.engine import runs
from backchannel.engine.wakes.kind import Kind, WakeRequest
from backchannel.memory import calendar
from backchannel.memory.calendar import upsert_events

if TYPE_CHECKING:
    from backchannel.engine.run import Run
    from backchannel.triggers.setup import Triggers


def handle(run: Run) -> None:
    upcoming = CalendarRefresh.from_payload(run.wake.payload)
    _withdraw_from_invites(run, upcoming)
    rows = upsert_events(run.store, [e.to_dict() for e in upcoming.events], upcoming.calendar)
    resolved = sum(1 for r in rows if r["attendee_ids"])
    runs.step(
        run.store,
        run.run_id,
        "calendar.upserted",
        {"events": len(rows), "with_known_attendees": resolved, "errors": upcoming.errors},
    )
    run.outcome.detail["calendar"] = {"events": len(rows), "with_known_attendees": resolved}


def _withdraw_from_invites(run: Run, upcoming: CalendarRefresh) -> None:
    """Attendees an invite marks as opted out (triggers/calendar.py CONSENT_PROPERTY) are
    withdrawn as `consent withdraw` does, each once; the daemon rewrites the file after."""
    from backchannel.memory import withdrawal

    people = 0
    for ev in upcoming.events:
        for address in ev.withdrawn:
            name, email = calendar.attendee_name_email(address)
            names = [n for n in (name, email, address) if n]
            if withdrawal.withdraw_and_erase(run.store, names, via="calendar") is not None:
                people += 1
    if people:
        runs.step(run.store, run.run_id, "consent.calendar_withdrawn", {"people": people})
        run.outcome.detail["rewrite"] = True
        run.outcome.detail["consent_withdrawn"] = people


def unavailable(settings: Settings) -> str | None:
    if settings.calendar.sources:
        return None
    return "no calendar to read: set [calendar] sources (ICS files or URLs) in the config"


def collect(settings: Settings, paths: Paths) -> list[Wake]:
    """What the calendar trigger would enqueue now: a calendar wake, meeting_soon wakes."""
    from backchannel.triggers.calendar import CalendarTrigger

    queue: asyncio.Queue = asyncio.Queue()
    trig = CalendarTrigger(settings.calendar, queue, timezone=settings.owner.timezone)
    return asyncio.run(trig.refresh(force=True))


def on_trigger(triggers: Triggers) -> Coroutine[Any, Any, object]:
    return triggers.calendar.refresh(force=True)


def answer(settings: Settings, triggers: Triggers) -> dict[str, Any]:
    return {"enqueued": "calendar", "sources": list(settings.calendar.sources)}


REQUEST = WakeRequest("calendar", unavailable, collect=collect, on_trigger=on_trigger, answer=answer)
WAKE = Kind(("calendar",), handle, REQUEST)

"""A `meeting_soon` wake: a meeting with known attendees starts within `[calendar]
lead_hours` (the calendar trigger makes it); sweep with the meeting as context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backchannel.core.payloads import CalendarEvent
from backchannel.core.timeutil import as_naive_utc
from backchannel.engine import runs
from backchannel.engine.wakes.kind import Kind
from backchannel.memory import calendar
from backchannel.memory.calendar import upsert_events

if TYPE_CHECKING:
    from backchannel.engine.run import Run


def handle(run: Run) -> None:
    event = CalendarEvent.from_payload(run.wake.payload)
    meeting = event.to_dict()
    starts = as_naive_utc(event.starts_at)
    stored = calendar.attendee_ids_of(run.store, event.uid, starts) if event.uid else None
    if stored:
        ids = stored
    else:
        upserted = upsert_events(run.store, [meeting])
        ids = upserted[0]["attendee_ids"] if upserted else []
    meeting["attendee_ids"] = ids
    meeting["starts_at"] = starts.isoformat()
    runs.step(run.store, run.run_id, "meeting.resolved", {"uid": event.uid, "attendee_ids": ids})
    if not ids:
        run.outcome.reason = "no attendee of this meeting is known to memory"
        return
    run.sweep_and_propose({"wake": "meeting_soon", "event": meeting})


WAKE = Kind(("meeting_soon",), handle)

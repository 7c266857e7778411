"""The typed wake payloads (core/payloads.py): what a trigger builds is what the
engine reads back, and a payload that does not fit fails its run with a clear
reason instead of a KeyError deep in the pipeline."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.core.payloads import CalendarEvent, CalendarRefresh, PayloadError, Signal
from backchannel.core.wake import Wake
from backchannel.engine.pipeline import run_wake_once
from backchannel.memory import entities
from backchannel.triggers.signals import SignalTrigger, scan_drop_dir


def test_signal_payload_round_trips_through_the_run_log_form(tmp_path):
    (tmp_path / "a.json").write_text(
        json.dumps(
            {
                "title": "Acme publishes a tender",
                "url": "https://acme.example/t",
                "published_at": "2026-11-30T08:00:00Z",
                "summary": "<b>Big</b>",
            }
        )
    )
    [sig] = scan_drop_dir(tmp_path)
    queue: asyncio.Queue = asyncio.Queue()
    trig = SignalTrigger(Settings().signals, tmp_path, queue)
    [wake] = asyncio.run(trig.poll_drop_dir())
    # The run log keeps the wake as JSON; the engine validates the payload back into the model.
    stored = Wake.from_json(wake.to_json()).payload
    assert stored == sig.to_dict()
    assert Signal.from_payload(stored) == sig
    assert sig.published_at == datetime(2026, 11, 30, 8, tzinfo=UTC) and sig.summary == "Big"


def test_calendar_payloads_round_trip_and_read_older_shapes():
    start = datetime(2026, 12, 3, 9, tzinfo=UTC)
    ev = CalendarEvent(uid="u1", starts_at=start, ends_at=None, summary="Coffee", attendees=["Marc"], calendar="a.ics")
    refresh = CalendarRefresh(
        events=[ev],
        errors=["b.ics: cannot read"],
        sources=["a.ics", "b.ics"],
        window=[start.isoformat(), (start + timedelta(days=14)).isoformat()],
    )
    payload = json.loads(json.dumps(refresh.to_dict()))
    assert list(payload) == ["events", "errors", "sources", "window"]
    assert CalendarRefresh.from_payload(payload) == refresh
    assert CalendarEvent.from_payload(json.loads(json.dumps(ev.to_dict()))) == ev
    # A meeting under "event", "start" for starts_at, a naive time (UTC) and nulls for blanks.
    older = {"event": {"uid": "u1", "start": "2026-12-03T09:00:00", "summary": None, "attendees": None}}
    read = CalendarEvent.from_payload(older)
    assert read.starts_at == start and read.summary == "" and read.attendees == []
    with pytest.raises(PayloadError, match=r"malformed meeting_soon wake payload: starts_at: "):
        CalendarEvent.from_payload({"uid": "u1", "starts_at": "next tuesday"})


def test_a_malformed_payload_fails_its_run_with_the_field_named(home, store):
    paths = resolve_paths().ensure()
    settings = Settings()
    entities.create(store, "Acme", "organisation")
    bad = {
        "signal": ({"id": "s1", "source": "drop", "summary": "no title"}, "malformed signal wake payload: title: "),
        "meeting_soon": ({"uid": "m1", "summary": "Coffee"}, "malformed meeting_soon wake payload: starts_at: "),
        "calendar": (
            {"events": [{"uid": "c1", "starts_at": "2026-12-03T09:00:00+00:00", "attendees": "Marc"}]},
            "malformed calendar wake payload: events.0.attendees: ",
        ),
    }
    for kind, (payload, reason) in bad.items():
        out = run_wake_once(store, settings, paths, {"kind": kind, "key": f"{kind}:bad", "payload": payload})
        assert out.status == "failed" and out.reason.startswith(f"PayloadError: {reason}"), out.to_dict()
        row = store.query("SELECT status, reason FROM runs WHERE id = ?", [out.run_id])[0]
        assert row["status"] == "failed" and reason in row["reason"]
    assert store.scalar("SELECT count(*) FROM signals") == 0
    assert store.scalar("SELECT count(*) FROM calendar_events") == 0
    # The same payloads, whole, are handled.
    good = {"id": "s2", "source": "drop", "title": "ACME publishes a tender", "summary": None}
    out = run_wake_once(store, settings, paths, {"kind": "signal", "key": "signal:s2", "payload": good})
    assert out.status == "done" and store.scalar("SELECT summary FROM signals WHERE id = 's2'") == ""

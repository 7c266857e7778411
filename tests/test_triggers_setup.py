"""All triggers built from a real config file in a temp home, run together."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from backchannel.config import load_settings, resolve_paths
from backchannel.triggers.setup import build_triggers, inbox_dir, signals_dir

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//t//EN
BEGIN:VEVENT
UID:soon@example.com
DTSTART:{start}
DTEND:{end}
SUMMARY:Thursday with Marc
ATTENDEE;CN=Marc Dupont:mailto:marc@acme.example
END:VEVENT
END:VCALENDAR
"""


def test_build_start_reload_stop(home: Path):
    from datetime import datetime, timedelta, timezone

    start = datetime.now(timezone.utc) + timedelta(hours=3)
    fmt = "%Y%m%dT%H%M%SZ"
    (home / "cal.ics").write_text(ICS.format(start=start.strftime(fmt), end=(start + timedelta(hours=1)).strftime(fmt)))
    (home / "config.toml").write_text(f"""
[owner]
timezone = "Europe/Paris"
[inbox]
quiet_period_s = 0.2
poll_interval_s = 0.1
[schedule]
sweep = ["0 8 * * 1-5"]
interval_s = 0.4
[calendar]
sources = ["{home / 'cal.ics'}"]
lead_hours = 24
[signals]
drop_poll_s = 0.1
""")
    paths = resolve_paths().ensure()
    settings = load_settings(paths)
    assert inbox_dir(settings, paths) == paths.data_dir / "inbox"
    assert signals_dir(settings, paths) == paths.data_dir / "signals"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = build_triggers(settings, paths, q)
        await trig.start()
        try:
            (paths.data_dir / "inbox" / "t.vtt").write_text("WEBVTT\n")
            (paths.data_dir / "signals" / "s.json").write_text(json.dumps({"title": "Acme publishes a tender"}))
            kinds: set[str] = set()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not {"sweep", "inbox", "calendar", "meeting_soon", "signal"} <= kinds:
                try:
                    kinds.add((await asyncio.wait_for(q.get(), 0.2)).kind)
                except asyncio.TimeoutError:
                    pass
            status = trig.status()
            new = settings.model_copy(update={"inbox": settings.inbox.model_copy(update={"force_polling": True})})
            await trig.reload(new)
            watch = trig.inbox.observer_kind
        finally:
            await trig.stop()
        return kinds, status, watch

    kinds, status, watch = asyncio.run(main())
    assert {"sweep", "inbox", "calendar", "meeting_soon", "signal"} <= kinds
    assert status["inbox"]["watch"] == "native" and status["calendar"]["events"] == 1
    assert len(status["next_sweeps"]) == 2
    assert watch == "polling"

"""All triggers built from a real config file in a temp home, run together."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC
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
    from datetime import datetime, timedelta

    start = datetime.now(UTC) + timedelta(hours=3)
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
sources = ["{home / "cal.ics"}"]
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
                except TimeoutError:
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


def test_reload_applies_new_sources_and_periods_at_once(home: Path):
    """SIGHUP: a calendar added to a config that had none is read at once, and a
    shorter drop-folder poll period applies without waiting out the old one."""
    from datetime import datetime, timedelta

    start = datetime.now(UTC) + timedelta(hours=3)
    fmt = "%Y%m%dT%H%M%SZ"
    (home / "cal.ics").write_text(ICS.format(start=start.strftime(fmt), end=(start + timedelta(hours=1)).strftime(fmt)))
    (home / "config.toml").write_text(
        "[inbox]\nenabled = false\n[schedule]\nsweep = []\n[signals]\ndrop_poll_s = 3600\n"
    )
    paths = resolve_paths().ensure()
    settings = load_settings(paths)

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = build_triggers(settings, paths, q)
        await trig.start()
        try:
            await asyncio.sleep(0.2)  # the signal loop is now in its hour-long sleep
            drop = home / "elsewhere"
            new = settings.model_copy(
                update={
                    "calendar": settings.calendar.model_copy(update={"sources": [str(home / "cal.ics")]}),
                    "signals": settings.signals.model_copy(update={"drop_poll_s": 0.1, "drop_dir": drop}),
                }
            )
            await trig.reload(new)
            (drop / "s.json").write_text(json.dumps({"title": "Acme publishes a tender"}))
            kinds: set[str] = set()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not {"calendar", "meeting_soon", "signal"} <= kinds:
                try:
                    kinds.add((await asyncio.wait_for(q.get(), 0.2)).kind)
                except TimeoutError:
                    pass
        finally:
            await trig.stop()
        return kinds

    assert {"calendar", "meeting_soon", "signal"} <= asyncio.run(main())


def test_settings_problems_are_named_before_the_daemon_runs():
    import pytest
    from pydantic import ValidationError

    from backchannel.config import Settings
    from backchannel.triggers.checks import problems

    assert problems(Settings()) == []
    bad = problems(
        Settings.model_validate(
            {
                "owner": {"timezone": "Europe/Pari"},
                "schedule": {"sweep": ["61 * * * *"], "timezone": "UTC"},
                "gate": {"quiet_hours": "9pm-7am"},
            }
        )
    )
    assert any("[owner] timezone = 'Europe/Pari'" in p for p in bad)
    assert any("sweep[0] = '61 * * * *'" in p for p in bad)
    assert any("quiet_hours" in p for p in bad)
    # A period of zero is refused earlier still, when the config is loaded (tests/config/test_config.py).
    with pytest.raises(ValidationError, match="drop_poll_s"):
        Settings.model_validate({"signals": {"drop_poll_s": 0}})


def test_example_config_loads_and_documents_every_trigger_and_gate_key(home: Path):
    import re
    import shutil

    from backchannel.config import sections
    from backchannel.triggers.checks import problems

    example = Path(__file__).resolve().parents[2] / "config" / "backchannel.example.toml"
    shutil.copy(example, home / "config.toml")
    settings = load_settings(resolve_paths().ensure())
    assert problems(settings) == []
    text = example.read_text()
    for table, model in (
        ("inbox", sections.InboxSettings),
        ("schedule", sections.ScheduleSettings),
        ("calendar", sections.CalendarSettings),
        ("signals", sections.SignalSettings),
        ("gate", sections.GateSettings),
        ("mail", sections.MailSettings),
    ):
        block = text.split(f"\n[{table}]\n", 1)[1].split("\n[", 1)[0]
        for key in model.model_fields:  # set, or shown commented out with its default
            assert re.search(rf"^#? ?{key} = ", block, re.M), f"[{table}] {key} is not documented"

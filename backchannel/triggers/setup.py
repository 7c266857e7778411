"""All triggers built from the settings, started, reloaded and stopped
together: what the daemon plugs in. Default folders come from the data dir."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from backchannel.config.paths import Paths
from backchannel.config.settings import Settings
from backchannel.triggers.calendar import CalendarTrigger
from backchannel.triggers.inbox import InboxTrigger
from backchannel.triggers.mail import MailTrigger
from backchannel.triggers.retention import RetentionTrigger
from backchannel.triggers.schedule import ScheduleTrigger
from backchannel.triggers.signals import SignalTrigger
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock


def inbox_dir(settings: Settings, paths: Paths) -> Path:
    """`[inbox] path`, else `<data dir>/inbox`; processed/ and failed/ sit beside it."""
    return Path(settings.inbox.path).expanduser() if settings.inbox.path else paths.data_dir / "inbox"


def signals_dir(settings: Settings, paths: Paths) -> Path:
    """`[signals] drop_dir`, else `<data dir>/signals`."""
    return Path(settings.signals.drop_dir).expanduser() if settings.signals.drop_dir else paths.data_dir / "signals"


@dataclass
class Triggers:
    schedule: ScheduleTrigger
    inbox: InboxTrigger | None  # None when [inbox] enabled = false
    calendar: CalendarTrigger
    signals: SignalTrigger
    settings: Settings
    paths: Paths
    queue: asyncio.Queue
    clock: Clock
    mail: MailTrigger | None = None  # IMAP sync schedule
    retention: RetentionTrigger | None = None  # the retention sweep's schedule

    async def start(self, last_sweep: datetime | None = None) -> None:
        """Start every trigger. `last_sweep`: the scheduled time of the last
        sweep the daemon handled, to catch up once on runs missed while down."""
        self.schedule.start(last_fire=last_sweep)
        if self.inbox is not None:
            await self.inbox.start()
        self.calendar.start()
        self.signals.start()
        if self.mail is not None:
            self.mail.start()
        if self.retention is not None:
            self.retention.start()

    async def stop(self) -> None:
        self.schedule.shutdown()
        if self.inbox is not None:
            await self.inbox.stop()
        await self.calendar.stop()
        await self.signals.stop()
        if self.mail is not None:
            await self.mail.stop()
        if self.retention is not None:
            await self.retention.stop()

    async def reload(self, settings: Settings) -> None:
        """SIGHUP: apply new settings at once; the inbox watch restarts only when
        its table changed. A bad cron string or time zone raises before anything
        changes."""
        self.schedule.reload(settings.schedule, settings.owner.timezone)
        self.calendar.reload(settings.calendar, settings.owner.timezone)
        self.signals.reload(settings.signals, signals_dir(settings, self.paths))
        await self.calendar.restart()  # its loop only runs with sources, and reads its tick once a lap
        await self.signals.restart()
        if self.mail is not None:
            await self.mail.reload(settings.mail)
        if self.retention is not None:
            await self.retention.reload(settings.retention, settings.owner.timezone)
        if settings.inbox != self.settings.inbox:
            if self.inbox is not None:
                await self.inbox.stop()
            self.inbox = _make_inbox(settings, self.paths, self.queue, self.clock)
            if self.inbox is not None:
                await self.inbox.start()
        self.settings = settings

    def status(self) -> dict[str, Any]:
        """What `backchannel status` shows about the triggers."""
        return {
            "next_sweeps": [t.isoformat() for t in self.schedule.next_fire_times()],
            "inbox": None
            if self.inbox is None
            else {
                "path": str(self.inbox.inbox_dir),
                "watch": self.inbox.observer_kind,
                "pending": self.inbox.pending,
            },
            "calendar": {"events": len(self.calendar.events), "errors": list(self.calendar.errors)},
            "signals": {"errors": list(self.signals.errors[-10:])},
            "mail": None
            if self.mail is None or not self.mail.active
            else {"every_s": self.mail.settings.sync_interval_s, "wakes": self.mail.fired},
        }


def _make_inbox(settings: Settings, paths: Paths, queue: asyncio.Queue, clock: Clock) -> InboxTrigger | None:
    if not settings.inbox.enabled:
        return None
    return InboxTrigger.from_settings(settings.inbox, inbox_dir(settings, paths), queue, clock)


def build_triggers(settings: Settings, paths: Paths, queue: asyncio.Queue, clock: Clock = SYSTEM_CLOCK) -> Triggers:
    """Every trigger from the settings, not started. Cron strings are read in
    `[schedule] timezone`, else the owner's."""
    tz = settings.owner.timezone
    return Triggers(
        schedule=ScheduleTrigger(settings.schedule, queue, clock=clock, timezone=tz),
        inbox=_make_inbox(settings, paths, queue, clock),
        calendar=CalendarTrigger(settings.calendar, queue, clock=clock, timezone=tz),
        signals=SignalTrigger(settings.signals, signals_dir(settings, paths), queue, clock=clock),
        mail=MailTrigger(settings.mail, queue, clock=clock),
        retention=RetentionTrigger(settings.retention, queue, clock=clock, timezone=tz),
        settings=settings,
        paths=paths,
        queue=queue,
        clock=clock,
    )

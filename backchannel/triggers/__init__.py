"""Triggers: what wakes the daemon. Each one only enqueues typed `Wake`s on the
asyncio queue the daemon gives it; none touches the database (one writer).

Import the submodules directly (`backchannel.triggers.schedule` pulls in
APScheduler, `inbox` watchdog, `calendar` icalendar): this package stays cheap
to import for the CLI's fast paths.
"""

from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, SystemClock, Wake, WakeKind

__all__ = ["Wake", "WakeKind", "Clock", "SystemClock", "SYSTEM_CLOCK"]

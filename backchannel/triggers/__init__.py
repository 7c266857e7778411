"""Triggers: what wakes the daemon. Each one only enqueues typed `Wake`s on the
asyncio queue the daemon gives it; none touches the database (one writer).

Import the submodules directly (`backchannel.triggers.schedule` pulls in
APScheduler, `inbox` watchdog, `calendar` icalendar): this package stays cheap
to import for the CLI's fast paths.
"""

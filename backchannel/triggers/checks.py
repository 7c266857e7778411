"""Checks of the settings the daemon runs with, before it starts and at each
SIGHUP: time zone names, crontab lines, the quiet-hours range. (Types, closed
sets and the bounds of durations fail earlier, when the config is loaded.)
Cheap to import: `backchannel status` runs them too, so it can name them."""

from __future__ import annotations

from backchannel.config.settings import Settings


def problems(settings: Settings) -> list[str]:
    """What in the settings the daemon cannot run with: unknown time zones, bad
    cron strings, bad quiet hours. Empty when all is well."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from backchannel.config.values import parse_quiet_hours
    from backchannel.triggers.schedule import build_triggers as build_schedule

    out: list[str] = []
    zones = {
        "[owner] timezone": settings.owner.timezone,
        "[schedule] timezone": settings.schedule.timezone,
        "[calendar] timezone": settings.calendar.timezone,
    }
    owner_ok = True
    for key, name in zones.items():
        if name is None:
            continue
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            out.append(f"{key} = {name!r} is not a known time zone (e.g. 'Europe/Paris', 'UTC')")
            owner_ok = owner_ok and key != "[owner] timezone"
    if owner_ok or settings.schedule.timezone:
        try:
            build_schedule(settings.schedule, ZoneInfo(settings.schedule.timezone or settings.owner.timezone))
        except (ValueError, ZoneInfoNotFoundError) as exc:
            out.append(str(exc))
    try:
        parse_quiet_hours(settings.gate.quiet_hours)
    except ValueError as exc:
        out.append(str(exc))
    return out

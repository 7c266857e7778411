"""Parsers of the config's string values that pydantic's types cannot check alone:
clock times and the quiet-hours range. One grammar for each, used by the config's
validators, the daemon's checks (triggers/checks.py) and the gate."""

from __future__ import annotations

from datetime import time


def clock_time(value: str) -> str:
    """`value` if it reads as a time of day, 'HH:MM'."""
    hh, sep, mm = value.partition(":")
    if not (sep and hh.isdigit() and mm.isdigit() and int(hh) < 24 and int(mm) < 60):
        raise ValueError(f"{value!r} is not a time of day such as '08:00'")
    return value


def parse_quiet_hours(spec: str | None) -> tuple[time, time] | None:
    """'21:00-07:00' -> (21:00, 07:00); None, '', 'off' or 'none' -> no quiet hours."""
    if not spec or spec.strip().lower() in ("off", "none"):
        return None
    try:
        a, b = (p.strip() for p in spec.split("-"))
        return time.fromisoformat(a), time.fromisoformat(b)
    except ValueError:
        raise ValueError(f"[gate] quiet_hours must look like '21:00-07:00', got {spec!r}") from None

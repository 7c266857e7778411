"""Time, in the two forms this code uses. Standard library only: every layer imports it.

- **Naive UTC** is what DuckDB holds: every TIMESTAMP column (the store sets its session
  zone to UTC and writes no zone). Everything written to or compared with a column is a
  naive datetime meaning UTC: `db_now()`, `as_naive_utc()`, `parse_naive_utc()`.
- **Aware UTC** is what crosses the trigger boundary: `Wake.created_at`, the triggers'
  clocks, calendar times before they are stored: `aware_now()`, `as_aware_utc()`.

Not UTC on purpose: a meeting's date (extraction/formats/meeting_date.py) and an email's local
date (extraction/mail/transcript.py) are the wall-clock day where it happened, kept naive.

A naive value handed to an aware helper is read as UTC unless told otherwise (a calendar's
floating time is read in the owner's zone); an aware one handed to a naive helper is
converted to UTC first, never just stripped.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any


def db_now() -> datetime:
    """Now as naive UTC, the form every TIMESTAMP column holds."""
    return datetime.now(UTC).replace(tzinfo=None)


def aware_now() -> datetime:
    """Now as an aware UTC datetime (wakes, trigger clocks)."""
    return datetime.now(UTC)


def as_naive_utc(value: datetime) -> datetime:
    """An aware datetime converted to UTC and made naive; a naive one is already UTC."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def as_aware_utc(value: datetime, assume: tzinfo = UTC) -> datetime:
    """An aware UTC datetime; a naive one is read in `assume` (UTC unless said)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=assume)
    return value.astimezone(UTC)


def parse_naive_utc(value: Any) -> datetime | None:
    """None or "" -> None; a datetime or an ISO string -> naive UTC (as `as_naive_utc`)."""
    if value is None or value == "":
        return None
    d = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return as_naive_utc(d)

"""When a meeting took place: from a value in the file, from its name, or from its mtime.

All results are naive datetimes holding the meeting's wall-clock time as written: an
explicit offset ("+02:00", "Z") is dropped, not converted, since the wall time is what
people in the meeting meant by "today" and "next Thursday".
"""

from __future__ import annotations

import re
import warnings
from datetime import date, datetime

# Years a meeting date may plausibly carry; anything else is a number, not a date.
MIN_YEAR, MAX_YEAR = 1970, 2100

_HAS_YEAR = re.compile(r"(?<!\d)(19[7-9]\d|20\d\d|2100)(?!\d)")
_HAS_MONTH_WORD = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b", re.IGNORECASE
)
# A date in a file name: 2025-09-18, 2025_09_18, 2025.09.18 or 20250918, optionally
# followed by a time (Zoom names recordings GMT20250918-100000).
_NAME_DATE = re.compile(
    r"(?<!\d)(?P<y>\d{4})(?P<sep>[-_.]?)(?P<m>\d{2})(?P=sep)(?P<d>\d{2})"
    r"(?:[T_ -]?(?P<H>\d{2})[-:.h]?(?P<M>\d{2})(?:[-:.]?(?P<S>\d{2}))?)?(?!\d)"
)


def parse_date_value(value: object) -> datetime | None:
    """A date or date-time from a front matter, JSON or NOTE value, or None.

    Accepts ISO 8601 strings (with or without time and offset), written dates with a
    year ("18 September 2025", "Sep 18, 2025 10:00"), epoch seconds or milliseconds
    (as numbers), and date/datetime objects."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, datetime):
        return _plausible(value.replace(tzinfo=None))
    if isinstance(value, date):
        return _plausible(datetime(value.year, value.month, value.day))
    if isinstance(value, (int, float)):
        return _from_epoch(float(value))
    if not isinstance(value, str):
        return None
    text = value.strip().strip("\"'").strip()
    if not text or len(text) > 64:
        return None
    try:
        return _plausible(datetime.fromisoformat(text).replace(tzinfo=None))
    except ValueError:
        pass
    if not _HAS_YEAR.search(text):
        # Without a year dateutil fills in today's: "10:00" is not a meeting date.
        return None
    if not (_HAS_MONTH_WORD.search(text) or re.search(r"\d[-/.]\d", text)):
        return None
    from dateutil import parser as date_parser

    try:
        with warnings.catch_warnings():
            # unknown zone names ("CEST") warn, and may raise in later dateutil; the
            # offset is dropped anyway
            warnings.simplefilter("ignore")
            parsed = date_parser.parse(text, default=datetime(2000, 1, 1), ignoretz=True)
    except Exception:  # dateutil's guesses fail in many ways; none is a meeting date
        return None
    return _plausible(parsed.replace(tzinfo=None))


def date_from_filename(name: str) -> datetime | None:
    """The first valid date (and time, if one follows it) in a file name, or None."""
    for m in _NAME_DATE.finditer(name):
        try:
            y, mo, d = int(m["y"]), int(m["m"]), int(m["d"])
            hh = int(m["H"]) if m["H"] else 0
            mm = int(m["M"]) if m["M"] else 0
            ss = int(m["S"]) if m["S"] else 0
            if hh > 23 or mm > 59 or ss > 59:
                hh = mm = ss = 0  # digits after the date that are not a time
            found = _plausible(datetime(y, mo, d, hh, mm, ss))
        except ValueError:
            continue
        if found:
            return found
    return None


def strip_date(stem: str) -> str:
    """The file stem without the date (and time) `date_from_filename` would find."""
    return _NAME_DATE.sub(" ", stem)


def date_from_mtime(mtime: float) -> datetime | None:
    """The file's modification time as local wall time."""
    return _from_epoch(mtime, allow_ms=False)


def _from_epoch(value: float, allow_ms: bool = True) -> datetime | None:
    if value != value or value in (float("inf"), float("-inf")):
        return None
    if allow_ms and value > 1e11:  # milliseconds since the epoch, as JS exports write them
        value /= 1000.0
    try:
        return _plausible(datetime.fromtimestamp(value))
    except (OverflowError, OSError, ValueError):
        return None


def _plausible(dt: datetime) -> datetime | None:
    return dt if MIN_YEAR <= dt.year <= MAX_YEAR else None

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
_HAS_MONTH_WORD = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b", re.IGNORECASE)
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
    from dateutil import parser as date_parser  # type: ignore[import-untyped]  # python-dateutil ships no hints

    try:
        with warnings.catch_warnings():
            # unknown zone names ("CEST") warn, and may raise in later dateutil; the
            # offset is dropped anyway
            warnings.simplefilter("ignore")
            parsed = date_parser.parse(text, default=datetime(2000, 1, 1), ignoretz=True)
    except Exception:  # dateutil's guesses fail in many ways; none is a meeting date
        return None
    return _plausible(parsed.replace(tzinfo=None))


# Day-first and month-first dates (05.03.2026, 13-03-2026, 03_13_2026): see `_day_month_year`.
_NAME_DMY = re.compile(r"(?<!\d)(?P<a>\d{1,2})(?P<sep>[-_.])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})(?!\d)")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# Written months: "5 March 2026", "5-mar-2026", "March 5, 2026", "2026-Mar-05".
_MON = r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_NAME_WORDS = (
    re.compile(r"(?<![\da-z])(?P<d>\d{1,2})(?:st|nd|rd|th)?[ _.-]?" + _MON + r"[ _.,-]*(?P<y>\d{4})(?!\d)", re.I),
    re.compile(r"(?<![a-z])" + _MON + r"[ _.-]?(?P<d>\d{1,2})(?:st|nd|rd|th)?,?[ _.-]*(?P<y>\d{4})(?!\d)", re.I),
    re.compile(r"(?<!\d)(?P<y>\d{4})[ _.-]?" + _MON + r"[ _.-]?(?P<d>\d{1,2})(?!\d)", re.I),
)


def date_from_filename(name: str) -> datetime | None:
    """The first valid date (and time, if one follows it) in a file name, or None.

    Year first (2025-09-18, 2025_09_18, 2025.09.18, 20250918, with an optional time)
    is tried first, then a written month ("5 March 2026", "Mar 5, 2026"), then a
    year-last numeric date, read by `_day_month_year`."""
    found = _year_first(name)
    if found is None:
        found = _written_month(name)
    if found is None:
        found = _day_month_year(name)
    return found


def _year_first(name: str) -> datetime | None:
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


def _written_month(name: str) -> datetime | None:
    for pattern in _NAME_WORDS:
        for m in pattern.finditer(name):
            try:
                found = _plausible(datetime(int(m["y"]), _MONTHS.index(m["mon"][:3].lower()) + 1, int(m["d"])))
            except ValueError:
                continue
            if found:
                return found
    return None


def _day_month_year(name: str) -> datetime | None:
    """A year-last date. The rule for the ambiguous day/month order:

    - with dots (05.03.2026), day first: the dotted form is the day-first
      convention (German, French, Nordic...); 5 March 2026;
    - with dashes or underscores, only when the order cannot be wrong:
      one of the two numbers is over 12 (13-03-2026 or 03-13-2026), or both are
      equal (05-05-2026); 05-03-2026 could be 5 March or 3 May, so it is not read
      at all and the next source of the date (`ingest --date`, then mtime) applies."""
    for m in _NAME_DMY.finditer(name):
        a, b, y = int(m["a"]), int(m["b"]), int(m["y"])
        if m["sep"] == ".":
            day, month = a, b
        elif a > 12 >= b:
            day, month = a, b
        elif b > 12 >= a:
            day, month = b, a
        elif a == b:
            day, month = a, b
        else:
            continue
        try:
            found = _plausible(datetime(y, month, day))
        except ValueError:
            continue
        if found:
            return found
    return None


def strip_date(stem: str) -> str:
    """The file stem without the date (and time) `date_from_filename` would find."""
    stem = _NAME_DATE.sub(" ", stem)
    for pattern in _NAME_WORDS:
        stem = pattern.sub(" ", stem)
    return _NAME_DMY.sub(" ", stem)


def date_from_mtime(mtime: float) -> datetime | None:
    """The file's modification time as local wall time."""
    return _from_epoch(mtime, allow_ms=False)


def _from_epoch(value: float, allow_ms: bool = True) -> datetime | None:
    if value != value or value in (float("inf"), float("-inf")):
        return None
    if allow_ms and value > 1e11:  # milliseconds since the epoch, as JS exports write them
        value /= 1000.0
    try:
        # An exported epoch dates the meeting on the user's own wall clock, as the file's other dates do.
        return _plausible(datetime.fromtimestamp(value))  # noqa: DTZ006
    except (OverflowError, OSError, ValueError):
        return None


def _plausible(dt: datetime) -> datetime | None:
    return dt if MIN_YEAR <= dt.year <= MAX_YEAR else None


# Where a meeting date came from, most trusted first: the file's own metadata, its
# name, `ingest --date`, then the file's modification time (a copy, a download or a
# sync sets it, so it is a guess: every output that shows it says so).
# `sources redate` ("user") outranks everything: the owner said so, about this one meeting.
ORIGIN_RANK = {
    "user": 5,
    "front_matter": 4,
    "json": 4,
    "vtt_note": 4,
    "import": 4,
    "filename": 3,
    "given": 2,
    "manifest": 2,
    "mtime": 1,
}
ORIGIN_WORDS = {
    "front_matter": "the file's front matter",
    "json": "the file's metadata",
    "vtt_note": "a NOTE in the file",
    "import": "the import",
    "filename": "the file name",
    "given": "ingest --date",
    "manifest": "the dates manifest",
    "user": "sources redate",
    "mtime": "the file's mtime",
}
FALLBACK_NOTE = "file date, not the meeting's"
UNKNOWN_NOTE = "date unknown"


def unknown_date_words(file_date: object) -> str:
    """'date unknown (file date 2026-11-20)': how every output shows a meeting dated only by its mtime."""
    day = file_date.date().isoformat() if isinstance(file_date, datetime) else str(file_date or "")[:10]
    return f"{UNKNOWN_NOTE} (file date {day})" if day else UNKNOWN_NOTE


def is_fallback(origin: str | None) -> bool:
    """True when the date is the file's mtime (or unknown): not the meeting's date."""
    return ORIGIN_RANK.get(origin or "", 0) <= ORIGIN_RANK["mtime"]


def outranks(new: str | None, old: str | None) -> bool:
    """Whether a date from `new` should replace one from `old` on re-ingest: a better
    origin always; the same origin (a renamed file) too, except mtime (copying a file
    is no reason to move its meeting)."""
    n, o = ORIGIN_RANK.get(new or "", 0), ORIGIN_RANK.get(old or "", 0)
    return n > o or (n == o and n > ORIGIN_RANK["mtime"])


def parse_given_date(text: str) -> datetime:
    """The value of `ingest --date` (YYYY-MM-DD, optionally with a time); ValueError says why not."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--date {text!r} is not a date: write YYYY-MM-DD (or YYYY-MM-DDTHH:MM)") from None
    found = _plausible(when.replace(tzinfo=None))
    if found is None:
        raise ValueError(f"--date {text!r}: the year must be between {MIN_YEAR} and {MAX_YEAR}")
    return found

"""Find English date phrases in text and resolve them against the meeting date.

`find_date_phrases(text)` returns `(span_start, span_end, phrase)` for every date
phrase, leftmost and longest first, never overlapping; the phrase keeps its
leading preposition ("since March 2019", "by Friday") because the preposition
decides which end of the range is known.

`resolve_phrase(phrase, anchor)` turns one phrase into a `DateRange(start, end,
phrase)` of calendar dates (either end may be None = unknown). `anchor` is the
meeting's date (datetime or date); when it is None, absolute phrases still
resolve and relative ones resolve to (None, None).

Conventions (all documented choices, tested in tests/extraction/test_dates.py):

- A period ("2019", "March 2019", "last year", "next week") resolves to its first
  and last day. Weeks run Monday to Sunday; quarters are calendar quarters.
- Prepositions: "since/from/as of/starting X" -> (X.start, None);
  "after X" -> (X.end + 1 day, None); "by/until/till/through X" -> (None, X.end);
  "before X" -> (None, X.start - 1 day); "in/on/during/of X" or none -> X.
- Ranges: "from 2016 to 2021", "between 2016 and 2021", "2016-2021",
  "from March 2016 until now" -> (first day of the first, last day of the last;
  "now"/"today"/"the present" = the anchor). Ends without a year that would run
  backwards ("from March to June" said in October) resolve as past.
- "N days/weeks/months/years ago" -> that single day (months and years by
  calendar arithmetic, the day clamped to the month's length).
- "in N weeks", "within N days" -> (None, anchor + N) for "within", the single
  day anchor + N for "in".
- "for N years", "for the past/last N years", "over the last N years",
  "in the last N years" -> (anchor - N, anchor).
- Weekdays: "Thursday", "on/by/this/next/coming Thursday" all mean the first
  Thursday strictly after the anchor (the usual meaning in speech: "next Thursday"
  said on a Tuesday is two days later); "last Thursday" is the latest Thursday
  strictly before it.
- "tomorrow", "today", "yesterday", "the day after tomorrow".
- "the 15th" (with on/by/until/before) is the first 15th on or after the anchor.
- A weekday with its day ("by Friday the 4th", "Friday 4 December", "Thursday, 1st October")
  is one phrase: of the next two 4ths (with `past`, the last two) the one that is a Friday,
  else the first of them; with a month, the day and month decide (a year where they fall on
  that weekday is taken when the nearest one does not).
- A duration followed at once by the range it spans is one phrase dated by the range: "for
  five years, 2014 to 2019" is 2014-01-01..2019-12-31; "for two years from 2015" is
  2015-01-01..2016-12-31; "for four years until 2020" is 2017-01-01..2020-12-31.
- `can_be_due(range, anchor)`: a start ("from 2011", "since June") or a period over before
  the anchor ("a spreadsheet from 2011") cannot date a promise (Ctx.emit drops it from a
  `committed_to`, keeping a later phrase of the clause that can: "... from 2018 by Monday").
- A day and month, or a month, with no year ("on 3 March", "in March") takes the
  year that puts it within six months either side of the anchor.
- "end of day", "EOD", "COB", "close of business", "this afternoon", "later today"
  are the anchor's day; "the/this weekend" is that week's Saturday and Sunday
  ("next/last weekend" the week after/before).
- "the end of the week" is that week's Friday; "the end of the month/quarter/year"
  its last day; "earlier this year" = (1 January, anchor); "later this year" =
  (anchor, 31 December).
- `past=True` (the extractor passes it for facts told in the past tense: "I met
  her on Monday", "she left in March") turns a bare weekday, "the 15th", a month
  or a day without a year into the latest such day on or before the anchor
  (a weekday: strictly before).
- "since X" always looks backwards, whatever the tense: "CTO since March" said on
  2026-10-02 is 2026-03-01, never 2027 (a month, day, weekday or "the 15th" after
  "since" resolves as with `past=True`).
- Seasons are meteorological, northern hemisphere (spring = March to May; winter =
  December to February, "winter 2024" starts in December 2024). "last spring" is the
  latest spring over before the anchor; "this summer" the anchor year's; "next winter"
  the first starting after it; "in the spring" the one under way or the next
  (with `past`: the latest started). "last/next/this March" work the same way by month.
- "for/over/in/during the past/last year" (no number) is one unit back from the anchor,
  not the previous calendar year; "a few"/"several" count as three.
- Month names must be capitalised ("May", not "may"); bare years and bare month
  names count only after a preposition ("in 2019", not "Children Act 2004").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

__all__ = ["DateRange", "can_be_due", "find_date_phrases", "resolve_phrase", "says_a_start"]


@dataclass(frozen=True)
class DateRange:
    start: date | None
    end: date | None
    phrase: str

    @property
    def point(self) -> date | None:
        """One representative day: the end when known (deadlines), else the start."""
        return self.end or self.start


_MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    # Vague counts: "a few weeks ago" is about three weeks ago (a documented guess, not a fact).
    "a few": 3,
    "few": 3,
    "several": 3,
}
# Meteorological seasons (northern hemisphere): (first month, number of months).
# Winter starts in December: "winter 2024" is December 2024 to February 2025.
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

# Case-sensitive month names: "may" and "march" are also verbs.
_M = (
    r"(?-i:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)(?:\.|(?!\w)))"
)
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_Y = r"(?:19|20)\d\d(?!\d)"
_D = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?!\d)"
_N = (
    r"(?:\d{1,3}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|few|several|an?|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty)"
)
_UNIT = r"(?:day|week|month|year|decade)s?"

# Point bodies, most specific first (the finder's alternation takes the first that fits).
_STRONG = [
    # "Friday the 4th", "Friday 4 December", "Friday, December 4th": the Friday that is the 4th
    (
        "wdd",
        rf"(?:(?:this|next|coming|this\s+coming)\s+)?(?P<wdw>{_WD}),?\s+(?:"
        rf"(?:the\s+)?(?P<wdn>{_D})(?:\s+of)?\s+(?P<wdm>{_M})"
        rf"|(?P<wdm2>{_M})\s+(?:the\s+)?(?P<wdn2>{_D})"
        rf"|the\s+(?P<wdn3>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?!\d)"
        rf"|(?P<wdn4>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)(?!\d))(?:,?\s+(?P<wdy>{_Y}))?",
    ),
    ("iso", rf"(?P<iy>{_Y})-(?P<im>0[1-9]|1[0-2])-(?P<id>0[1-9]|[12]\d|3[01])(?!\d)"),
    ("dmy", rf"(?:the\s+)?(?P<dd>{_D})(?:\s+of)?\s+(?P<dm>{_M})(?:,?\s+(?P<dy>{_Y}))?"),
    ("mdy", rf"(?P<mm>{_M})\s+(?:the\s+)?(?P<md>{_D})(?:,?\s+(?P<my>{_Y}))?"),
    ("my", rf"(?P<ym>{_M}),?\s+(?P<yy>{_Y})"),
    (
        "reld",
        r"(?P<rel>(?:the\s+)?day\s+after\s+tomorrow|(?:the\s+)?day\s+before\s+yesterday"
        r"|tomorrow|today|tonight|yesterday)",
    ),
    # Same-day deadlines: "by end of day", "by EOD", "close of business", "this afternoon".
    (
        "eod",
        r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?:business\s+|working\s+)?day|eod|cob|close\s+of\s+(?:business|play)"
        r"|this\s+(?:morning|afternoon|evening)|later\s+today"
        # "I'll call you back within the hour", "in an hour": later the same day
        r"|within\s+(?:the\s+(?:next\s+)?|an\s+|one\s+)hour|in\s+an\s+hour(?:['’]s\s+time)?",
    ),
    ("wkend", r"(?P<wo>this\s+|next\s+|last\s+|the\s+)weekend"),
    ("endm", rf"(?:the\s+)?end\s+of\s+(?P<em>{_M})"),
    ("endy", rf"(?:the\s+)?end\s+of\s+(?P<ey>{_Y})"),
    ("endp", r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?P<eo>this\s+|next\s+|last\s+)?(?P<ep>week|month|year|quarter)"),
    ("inthis", r"(?P<el>earlier|later)\s+this\s+(?P<elp>week|month|year)"),
    (
        "relp",
        rf"(?P<ro>last|this\s+past|this\s+coming|this|next|coming|the\s+following|following)"
        rf"\s+(?P<rp>week|month|year|quarter|{_WD}|{_M})",
    ),
    (
        "season",
        r"(?:(?P<so>last|this\s+past|this\s+coming|this|next|coming)\s+(?P<sn>spring|summer|autumn|fall|winter)"
        rf"|(?:the\s+)?(?P<sn2>spring|summer|autumn|fall|winter)(?:\s+of)?\s+(?P<sy>{_Y}))",
    ),
    ("ago", rf"(?P<an>{_N})\s+(?P<au>{_UNIT})\s+ago"),
    ("nth", r"the\s+(?P<nd>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)"),
]
_WEAK = [
    ("wd", rf"(?P<wd>{_WD})"),
    ("mon", rf"(?P<mo>{_M})"),
    ("yr", rf"(?P<yo>{_Y})"),
    ("seas", r"(?:the\s+)?(?P<sb>spring|summer|autumn|fall|winter)"),
]
_PREP = r"(?:since|from|in|by|on|until|till|before|after|during|as\s+of|starting|through|of)"
_PREP_WEAK = r"(?:since|from|in|by|on|until|till|before|after|during|as\s+of|starting|through)"
_ENDPOINT = [b for b in _STRONG if b[0] in ("iso", "dmy", "mdy", "my")] + [("mon", _WEAK[1][1]), ("yr", _WEAK[2][1])]
# Prepositions after which only the past makes sense: "since March" said in October is
# this year's March, never next year's (a fact cannot hold since a date still to come).
_BACKWARD_PREPS = ("since",)
_ENDPOINT_OR_NOW = r"(?:now|today|the\s+present|present)"

_RANGE_HEAD = re.compile(r"(?:from|between)\s+", re.I)
_RANGE_SEP = re.compile(r"\s+(?:to|and|until|till|through)\s+|\s*[-–—]\s*", re.I)
_BARE_YEARS = re.compile(rf"{_Y}\s*(?:[-–—]|\s(?:to|until|till)\s)\s*{_Y}", re.I)
_DURATION = re.compile(
    rf"(?:for|over|in|during)\s+(?:the\s+)?(?:(?P<pl>past|last)\s+)?(?:(?P<n>{_N})\s+)?(?P<u>{_UNIT})", re.I
)
_INN = re.compile(rf"(?P<w>in|within)\s+(?P<n>{_N})\s+(?P<u>{_UNIT})(?:['’]s)?(?:\s+time)?", re.I)
_PREP_SPLIT = re.compile(rf"(?P<p>{_PREP})\s+(?P<body>.+)", re.I)
# What may follow a duration and date it: a range, or a start or an end ("from 2014", "until 2019").
_DURATION_TAIL = re.compile(
    rf"(?:(?:from|between)\s+.+\s+(?:to|and|until|till|through)\s+.+|{_Y}\s*(?:[-–—]|\s(?:to|until|till)\s)\s*{_Y}"
    r"|(?:from|since|starting|until|till|through)\s+.+)",
    re.I,
)


def _strip_names(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _alt(bodies: Sequence[tuple[str, str]]) -> str:
    return "|".join(_strip_names(p) for _, p in bodies)


_EP = _alt(_ENDPOINT)
_FINDER = re.compile(
    r"(?<![\w-])(?:"
    # explicit ranges first: they contain points
    rf"(?:from|between)\s+(?:{_EP})\s+(?:to|and|until|till|through)\s+(?:{_EP}|{_ENDPOINT_OR_NOW})"
    rf"|{_Y}\s*(?:[-–—]|\s(?:to|until|till)\s)\s*{_Y}"
    rf"|(?:for|over|in|during)\s+the\s+(?:past|last)\s+(?:{_N}\s+)?{_UNIT}"
    rf"|for\s+{_N}\s+{_UNIT}"
    rf"|(?:in|within)\s+{_N}\s+{_UNIT}(?:['’]s)?(?:\s+time)?"
    rf"|(?:{_PREP}\s+)?(?:{_alt(_STRONG)})"
    rf"|{_PREP_WEAK}\s+(?:{_alt(_WEAK)})"
    # a weekday alone, capitalised, that ends its clause or comes before a time of day ("I'll send them to
    # you Friday, with the numbers", "I saw her Tuesday.", "Monday first thing"); not a day's name ("Black
    # Friday", "Good Friday") and not before a noun ("the Friday report", "Monday's numbers")
    # ("book the room for Thursday": the room's day, not when it is booked; "by, uh, Thursday": the
    # promise's own "by", read with the hesitation blanked out)
    r"|(?<!Black\s)(?<!Good\s)(?<!Cyber\s)(?<!Easter\s)(?<!Holy\s)(?<!Ash\s)(?<!for\s)(?<!,\s)"
    r"(?-i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
    r"(?=\s*(?:[,.;!?—–)]|$)|\s+(?i:morning|afternoon|evening|night|first\s+thing|latest)\b)"
    r")(?![\w])",
    re.I,
)
_BODIES = [(name, re.compile(p, re.I)) for name, p in _STRONG + _WEAK]


_DURATION_HEAD = re.compile(rf"for\s+(?:the\s+(?:past|last)\s+)?{_N}\s+{_UNIT}", re.I)
# Between a duration and the range that dates it: "for five years, 2014 to 2019", "for five years (2014-2019)",
# "for two years from 2016 to 2018".
_DURATION_GLUE = re.compile(r"\s*(?:,|\(|[—–-]|:)?\s*(?:so\s+|that\s+is\s+|i\.e\.\s*)?")


def find_date_phrases(text: str) -> list[tuple[int, int, str]]:
    """Every date phrase in `text` as (span_start, span_end, phrase), in order. A duration
    followed at once by the range it spans ("for five years, 2014 to 2019") is one phrase:
    the range dates it, not the years up to now."""
    found = [(m.start(), m.end(), m.group(0)) for m in _FINDER.finditer(text)]
    out: list[tuple[int, int, str]] = []
    for a, b, p in found:
        if (
            out
            and _DURATION_HEAD.fullmatch(out[-1][2])
            and _DURATION_GLUE.fullmatch(text, out[-1][1], a)
            and _DURATION_TAIL.fullmatch(" ".join(p.split()))
        ):
            a0 = out.pop()[0]
            out.append((a0, b, text[a0:b]))
            continue
        out.append((a, b, p))
    return out


# ---------------------------------------------------------------- arithmetic


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    year, month = d.year + y, m + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _month_range(y: int, m: int) -> tuple[date, date]:
    return date(y, m, 1), date(y, m, calendar.monthrange(y, m)[1])


def _shift(anchor: date, n: int, unit: str, sign: int) -> date:
    unit = unit.lower().rstrip("s")
    if unit == "day":
        return anchor + timedelta(days=sign * n)
    if unit == "week":
        return anchor + timedelta(weeks=sign * n)
    if unit == "month":
        return _add_months(anchor, sign * n)
    if unit == "year":
        return _add_months(anchor, sign * 12 * n)
    return _add_months(anchor, sign * 120 * n)  # decade


def _num(s: str) -> int:
    s = " ".join(s.lower().split())
    return int(s) if s.isdigit() else _NUMBERS[s]


def _month(s: str) -> int:
    return _MONTHS[s.lower().rstrip(".")]


def _nearest_year(anchor: date | None, month: int, day: int = 1) -> int | None:
    """The year putting (month, day) within six months either side of the anchor."""
    if anchor is None:
        return None
    for y in (anchor.year, anchor.year - 1, anchor.year + 1):
        try:
            d = date(y, month, day)
        except ValueError:
            continue
        if -183 <= (d - anchor).days < 183:
            return y
    return anchor.year


def _past_year(anchor: date | None, month: int, day: int = 1) -> int | None:
    """The latest year in which (month, day) is on or before the anchor."""
    if anchor is None:
        return None
    return anchor.year if (month, day) <= (anchor.month, anchor.day) else anchor.year - 1


def _safe_date(y: int | None, m: int, d: int) -> date | None:
    if y is None:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _period(kind: str, anchor: date, offset: int) -> tuple[date, date]:
    if kind == "week":
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=offset)
        return monday, monday + timedelta(days=6)
    if kind == "month":
        first = _add_months(anchor.replace(day=1), offset)
        return _month_range(first.year, first.month)
    if kind == "quarter":
        q0 = date(anchor.year, 3 * ((anchor.month - 1) // 3) + 1, 1)
        first = _add_months(q0, 3 * offset)
        last = _add_months(first, 2)
        return first, _month_range(last.year, last.month)[1]
    y = anchor.year + offset
    return date(y, 1, 1), date(y, 12, 31)


def _season(name: str, year: int) -> tuple[date, date]:
    """The season `name` that starts in `year` (winter: December `year` to February `year + 1`)."""
    first = date(year, _SEASONS[name], 1)
    last = _add_months(first, 2)
    return first, _month_range(last.year, last.month)[1]


def _relative_season(anchor: date, name: str, which: str) -> tuple[date, date]:
    """'last' = the latest season `name` over before the anchor ("last spring" said in
    October is this year's spring; said in April, last year's); 'next' = the first one
    starting after it; 'this' = the one of the anchor's year (for winter, the one the
    anchor is in or the coming one); 'past' = the latest one started on or before the
    anchor ("since spring"); 'bare' ("in the spring") = the one under way, else the next."""
    seasons = [_season(name, y) for y in range(anchor.year - 2, anchor.year + 2)]
    if which == "last":
        return [s for s in seasons if s[1] < anchor][-1]
    if which == "past":
        return [s for s in seasons if s[0] <= anchor][-1]
    if which in ("next", "coming", "this coming", "the following", "following"):
        return next(s for s in seasons if s[0] > anchor)
    if which == "this" and name != "winter":
        return _season(name, anchor.year)
    return next(s for s in seasons if s[1] >= anchor)


def _relative_month(anchor: date, month: int, which: str) -> tuple[date, date]:
    """'last March' = the latest March before the anchor's month; 'next March' the first
    after it; 'this March' the March of the anchor's year."""
    if which == "last":
        year = anchor.year if month < anchor.month else anchor.year - 1
    elif which == "this":
        year = anchor.year
    else:
        year = anchor.year if month > anchor.month else anchor.year + 1
    return _month_range(year, month)


def _next_weekday(anchor: date, wd: int) -> date:
    return anchor + timedelta(days=(wd - anchor.weekday() - 1) % 7 + 1)


def _prev_weekday(anchor: date, wd: int) -> date:
    return anchor - timedelta(days=(anchor.weekday() - wd - 1) % 7 + 1)


# ---------------------------------------------------------------- resolution


def _point(body: str, anchor: date | None, past: bool = False) -> tuple[date | None, date | None] | None:
    """The period one point phrase names, or None when the body is not a date."""
    for name, rx in _BODIES:
        m = rx.fullmatch(body)
        if m:
            return _resolve_body(name, m, anchor, past)
    return None


def _resolve_body(  # noqa: C901 - a flat dispatch
    name: str, m: re.Match, a: date | None, past: bool
) -> tuple[date | None, date | None] | None:
    g = m.group
    year_for = _past_year if past else _nearest_year
    if name == "wdd":
        return _weekday_date(m, a, past)
    if name == "iso":
        d = _safe_date(int(g("iy")), int(g("im")), int(g("id")))
        return (d, d) if d else None
    if name in ("dmy", "mdy"):
        day = int(re.sub(r"\D", "", g("dd") if name == "dmy" else g("md")))
        mon = _month(g("dm") if name == "dmy" else g("mm"))
        ys = g("dy") if name == "dmy" else g("my")
        d = _safe_date(int(ys) if ys else year_for(a, mon, day), mon, day)
        return (d, d)
    if name == "my":
        return _month_range(int(g("yy")), _month(g("ym")))
    if name == "yr":
        y = int(g("yo"))
        return date(y, 1, 1), date(y, 12, 31)
    if name == "mon":
        mon = _month(g("mo"))
        year = year_for(a, mon)
        return _month_range(year, mon) if year else (None, None)
    if name == "endm":
        mon = _month(g("em"))
        year = year_for(a, mon, 28)
        if year is None:
            return (None, None)
        d = _month_range(year, mon)[1]
        return (d, d)
    if name == "endy":
        d = date(int(g("ey")), 12, 31)
        return (d, d)
    if name == "season" and g("sy"):
        return _season(g("sn2").lower(), int(g("sy")))
    if a is None:
        return (None, None)
    if name == "reld":
        rel = " ".join(g("rel").lower().split()).removeprefix("the ")
        delta = {
            "tomorrow": 1,
            "today": 0,
            "tonight": 0,
            "yesterday": -1,
            "day after tomorrow": 2,
            "day before yesterday": -2,
        }[rel]
        d = a + timedelta(days=delta)
        return (d, d)
    if name == "eod":
        return (a, a)
    if name == "wkend":
        off = {"next": 1, "last": -1}.get(g("wo").strip().lower(), 0)
        saturday = _period("week", a, off)[0] + timedelta(days=5)
        return (saturday, saturday + timedelta(days=1))
    if name == "endp":
        off = {"this": 0, "next": 1, "last": -1}.get((g("eo") or "this").strip().lower(), 0)
        kind = g("ep").lower()
        first, last = _period(kind, a, off)
        d = first + timedelta(days=4) if kind == "week" else last
        return (d, d)
    if name == "inthis":
        first, last = _period(g("elp").lower(), a, 0)
        return (first, a) if g("el").lower() == "earlier" else (a, last)
    if name == "relp":
        o = " ".join(g("ro").lower().split())
        o = "last" if o == "this past" else o
        p = g("rp").lower()
        if p.rstrip(".") in _MONTHS:
            return _relative_month(a, _month(p), o)
        if p in _WEEKDAYS:
            back = o == "last" or (past and o == "this")
            d = _prev_weekday(a, _WEEKDAYS[p]) if back else _next_weekday(a, _WEEKDAYS[p])
            return (d, d)
        off = -1 if o == "last" else 0 if o == "this" else 1
        return _period(p, a, off)
    if name == "ago":
        d = _shift(a, _num(g("an")), g("au"), -1)
        return (d, d)
    if name == "nth":
        day = int(g("nd"))
        if past:
            for k in range(0, -3, -1):
                first = _add_months(a.replace(day=1), k)
                d = _safe_date(first.year, first.month, day)
                if d and d <= a:
                    return (d, d)
            return None
        for k in range(0, 3):
            first = _add_months(a.replace(day=1), k)
            d = _safe_date(first.year, first.month, day)
            if d and d >= a:
                return (d, d)
        return None
    if name == "season":
        o = " ".join(g("so").lower().split())
        return _relative_season(a, g("sn").lower(), "last" if o == "this past" else o)
    if name == "seas":
        return _relative_season(a, g("sb").lower(), "past" if past else "bare")
    if name == "wd":
        wd = _WEEKDAYS[g("wd").lower()]
        d = _prev_weekday(a, wd) if past else _next_weekday(a, wd)
        return (d, d)
    return None


def _weekday_date(m: re.Match, a: date | None, past: bool) -> tuple[date | None, date | None] | None:
    """ "Friday the 4th": of the next two 4ths on or after the anchor (with `past`, the last two on
    or before it), the one that falls on a Friday; neither does: the first of them. With
    a month ("Friday 4 December") the day and month decide and the weekday only confirms."""
    g = m.group
    wd = _WEEKDAYS[g("wdw").lower()]
    day = int(re.sub(r"\D", "", g("wdn") or g("wdn2") or g("wdn3") or g("wdn4")))
    mon_s = g("wdm") or g("wdm2")
    if mon_s:
        mon = _month(mon_s)
        y = int(g("wdy")) if g("wdy") else (_past_year if past else _nearest_year)(a, mon, day)
        d = _safe_date(y, mon, day)
        if d is not None and y is not None and d.weekday() != wd and not g("wdy") and a is not None:
            for yy in (y + 1, y - 1):  # "Friday 4 December" said in a year where the 4th is a Thursday
                alt = _safe_date(yy, mon, day)
                if alt is not None and alt.weekday() == wd and abs((alt - a).days) < 366:
                    d = alt
                    break
        return (d, d) if d else None
    if a is None:
        return (None, None)
    step = -1 if past else 1
    days = []  # the next two 4ths on or after the anchor (with `past`: the last two on or before it)
    for k in range(0, 4):
        month_start = _add_months(a.replace(day=1), step * k)
        d = _safe_date(month_start.year, month_start.month, day)
        if d is not None and (d >= a if not past else d <= a):
            days.append(d)
    days = days[:2]
    first = next((d for d in days if d.weekday() == wd), days[0] if days else None)
    return (first, first) if first else None


def _range(text: str, a: date | None, past: bool) -> tuple[date | None, date | None] | None:
    """(first day, last day) of "from X to Y" / "between X and Y" / "2016-2021"."""
    head = _RANGE_HEAD.match(text)
    if head is None and not _BARE_YEARS.fullmatch(text):
        return None
    rest = text[head.end() :] if head else text
    for sep in _RANGE_SEP.finditer(rest):
        left, b = rest[: sep.start()], rest[sep.end() :]
        lp = _point(left, a, past)
        rp = (a, a) if re.fullmatch(_ENDPOINT_OR_NOW, b, re.I) else _point(b, a, past)
        if lp and rp and lp[0] and rp[1] and lp[0] > rp[1] and not past:
            # Each end took its own nearest year ("from March to June" said in October gave
            # March 2027 to June 2026): a range that ends before it starts is a past one.
            return _range(text, a, True)
        if lp and rp:
            return lp[0], rp[1]
    return None


_DURATION_AND_RANGE = re.compile(
    rf"for\s+(?:the\s+(?:past|last)\s+)?(?P<n>{_N})\s+(?P<u>{_UNIT})(?![a-z])\s*(?:,|\(|[—–-]|:)?\s*"
    r"(?:so\s+|that\s+is\s+|i\.e\.\s*)?(?P<rest>.+?)\)?",
    re.I,
)


def _duration_range(rest: str, n: int, unit: str, a: date | None, past: bool) -> tuple[date | None, date | None]:
    """The period of "for N units" dated by `rest`: a range ("2014 to 2019") is itself; "from X"
    or "since X" runs N units from X's start; "until X" / "to X" N units up to X's end."""
    rng = _range(rest, a, past)
    if rng is not None:
        return rng
    m = _PREP_SPLIT.fullmatch(rest)
    if m:
        p = m.group("p").lower()
        got = _point(m.group("body"), a, True)
        if got is not None and got[0] and p in ("from", "since", "starting"):
            return got[0], _shift(got[0], n, unit, 1) - timedelta(days=1)
        if got is not None and got[1] and p in ("until", "till", "through"):
            return _shift(got[1], n, unit, -1) + timedelta(days=1), got[1]
    return (None, None)


_STARTS = re.compile(r"(?:since|from|as\s+of|starting|depuis|à\s+partir\s+d)\b", re.I)


def says_a_start(dr: DateRange) -> bool:
    """Whether the phrase says where something began ("from 2011", "since March"), not a point in time."""
    return _STARTS.match(dr.phrase.strip()) is not None


def can_be_due(dr: DateRange, anchor: datetime | date | None) -> bool:
    """Whether `dr` can date a promise: not a start ("from 2011", "since March": where something
    began, not when it is due) and not over before the promise is made ("a spreadsheet from 2011")."""
    a = anchor.date() if isinstance(anchor, datetime) else anchor
    if says_a_start(dr) and dr.end is None:
        return False
    day = dr.end or dr.start
    return not (a is not None and day is not None and day < a)


def resolve_phrase(phrase: str, anchor: datetime | date | None, *, past: bool = False) -> DateRange:
    """Resolve one phrase (as `find_date_phrases` returns it) against the meeting date.

    With `past` (the phrase dates something that already happened: "I met her on
    Monday"), a bare weekday, "the 15th" or a date without a year is the latest
    such day before the anchor instead of the next one."""
    a = anchor.date() if isinstance(anchor, datetime) else anchor
    text = " ".join(phrase.split())
    none = DateRange(None, None, phrase)

    m = _DURATION_AND_RANGE.fullmatch(text)
    if m and _DURATION_TAIL.fullmatch(m.group("rest")):  # "for five years, 2014 to 2019": the range
        return DateRange(*_duration_range(m.group("rest"), _num(m.group("n")), m.group("u"), a, past), phrase)
    m = _DURATION.fullmatch(text)
    if m and (m.group("pl") or text.lower().startswith("for ")) and (m.group("n") or m.group("pl")):
        if a is None:
            return none
        # "for the past year" (no number) is one year back from the anchor, not last calendar year.
        n = _num(m.group("n")) if m.group("n") else 1
        return DateRange(_shift(a, n, m.group("u"), -1), a, phrase)
    m = _INN.fullmatch(text)
    if m:
        if a is None:
            return none
        d = _shift(a, _num(m.group("n")), m.group("u"), 1)
        return DateRange(None, d, phrase) if m.group("w").lower() == "within" else DateRange(d, d, phrase)

    rng = _range(text, a, past)
    if rng is not None:
        return DateRange(rng[0], rng[1], phrase)

    m = _PREP_SPLIT.fullmatch(text)
    if m:
        p = " ".join(m.group("p").lower().split())
        got = _point(m.group("body"), a, past or p in _BACKWARD_PREPS)
        if got is not None:
            start, end = got
            if p in ("since", "from", "as of", "starting"):
                return DateRange(start, None, phrase)
            if p == "after":
                return DateRange(end + timedelta(days=1) if end else None, None, phrase)
            if p in ("by", "until", "till", "through"):
                return DateRange(None, end, phrase)
            if p == "before":
                return DateRange(None, start - timedelta(days=1) if start else None, phrase)
            return DateRange(start, end, phrase)
    got = _point(text, a, past)
    if got is not None:
        return DateRange(got[0], got[1], phrase)
    return _other_language(phrase, a, past) or none


def _other_language(phrase: str, anchor: date | None, past: bool) -> DateRange | None:
    """A French or Japanese phrase ("depuis mars", "3月から"), resolved as its English twin."""
    # Imported here: dates_fr and dates_ja are read by this module's callers, not the other way.
    from backchannel.extraction.dates import fr as dates_fr
    from backchannel.extraction.dates import ja as dates_ja

    english = (
        dates_ja.to_english(phrase)
        if not phrase.isascii() and dates_ja.is_japanese(phrase)
        else dates_fr.to_english(phrase)
    )
    if english is None or english == phrase:
        return None
    r = resolve_phrase(english, anchor, past=past)
    return DateRange(r.start, r.end, phrase)

"""Japanese date phrases: found here, resolved by dates/en.py with the same conventions.

`find_date_phrases_ja(text)` returns `(span_start, span_end, phrase)`;
`to_english(phrase)` rewrites one phrase into its English twin ("3月から" ->
"since March", "2年前" -> "2 years ago", "来週の木曜日" -> "next Thursday",
"金曜日までに" -> "by Friday", "2016年から2021年まで" -> "from 2016 to 2021",
"去年" -> "last year"), so dates.resolve_phrase keeps one set of conventions
("から" after a date looks backwards like "since"; "までに" is a deadline like "by").
Numbers may be ASCII, full-width or simple kanji numerals (一 to 十九).
"""

from __future__ import annotations

import re

__all__ = ["find_date_phrases_ja", "is_japanese", "to_english"]

_KANA_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def is_japanese(text: str) -> bool:
    """Whether `text` holds kana or kanji (cheap; ASCII text answers at C speed)."""
    return not text.isascii() and _KANA_KANJI.search(text) is not None


_WEEKDAYS_JA = {
    "月": "Monday",
    "火": "Tuesday",
    "水": "Wednesday",
    "木": "Thursday",
    "金": "Friday",
    "土": "Saturday",
    "日": "Sunday",
}
_MONTHS_EN = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_NUM = r"(?:[0-9０-９]{1,4}|[一二三四五六七八九十]{1,3}|数)"
_REL = {
    "去年": "last year",
    "昨年": "last year",
    "おととし": "two years ago",
    "一昨年": "two years ago",
    "再来年": "in two years",
    "今年": "this year",
    "来年": "next year",
    "先週": "last week",
    "今週": "this week",
    "来週": "next week",
    "先月": "last month",
    "今月": "this month",
    "来月": "next month",
    "明日": "tomorrow",
    "あした": "tomorrow",
    "今日": "today",
    "きょう": "today",
    "昨日": "yesterday",
    "きのう": "yesterday",
    "明後日": "the day after tomorrow",
    "あさって": "the day after tomorrow",
    "一昨日": "the day before yesterday",
    "おととい": "the day before yesterday",
    "今週末": "this weekend",
    "来週末": "next weekend",
    "月末": "the end of the month",
    "年末": "the end of the year",
    "週末": "the weekend",
}
_UNIT = {
    "年": "years",
    "ヶ月": "months",
    "か月": "months",
    "カ月": "months",
    "ケ月": "months",
    "週間": "weeks",
    "日": "days",
}
_UNIT_RX = r"(?:年|ヶ月|か月|カ月|ケ月|週間|日)"
_WD = r"(?:[月火水木金土日])曜日?"
_POINT = (
    rf"(?:{_NUM}年)?{_NUM}月{_NUM}日|{_NUM}年{_NUM}月|{_NUM}年|{_NUM}月"
    rf"|(?:(?:先週|今週|来週)の?)?{_WD}"
    r"|一昨日|明後日|" + "|".join(sorted(_REL, key=len, reverse=True))
)
_FINDER = re.compile(
    rf"(?:(?P<a>{_POINT})から(?P<b>{_POINT}|今)まで"
    rf"|{_NUM}{_UNIT_RX}前"
    rf"|{_NUM}{_UNIT_RX}後"
    rf"|{_NUM}(?:年|ヶ月|か月|カ月|ケ月|週間|日)間"
    rf"|(?:{_POINT})(?:から|以来|までに|まで|に|の)?)"
)


def _n(s: str) -> int:
    s = s.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if s.isdigit():
        return int(s)
    if s == "数":
        return 3  # "数年前": a few years ago
    if s.startswith("十"):
        return 10 + _KANJI_DIGITS.get(s[1:], 0)
    if "十" in s:
        tens, _, ones = s.partition("十")
        return _KANJI_DIGITS.get(tens, 1) * 10 + _KANJI_DIGITS.get(ones, 0)
    return _KANJI_DIGITS.get(s, 0)


def find_date_phrases_ja(text: str) -> list[tuple[int, int, str]]:
    """Every Japanese date phrase in `text` as (span_start, span_end, phrase), in order."""
    out = []
    for m in _FINDER.finditer(text):
        phrase = m.group(0)
        if phrase.endswith(("に", "の")) and not phrase.endswith("までに"):  # particles gluing it to the sentence
            phrase = phrase[:-1]
        out.append((m.start(), m.start() + len(phrase), phrase))
    return out


def _point(p: str) -> str | None:
    if p in _REL:
        return _REL[p]
    m = re.fullmatch(rf"(?:({_NUM})年)?({_NUM})月({_NUM})日", p)
    if m:
        year = f" {_n(m.group(1))}" if m.group(1) else ""
        return f"{_n(m.group(3))} {_MONTHS_EN[_n(m.group(2)) - 1]}{year}"
    m = re.fullmatch(rf"({_NUM})年({_NUM})月", p)
    if m:
        return f"{_MONTHS_EN[_n(m.group(2)) - 1]} {_n(m.group(1))}"
    m = re.fullmatch(rf"({_NUM})年", p)
    if m:
        return f"in {_n(m.group(1))}"
    m = re.fullmatch(rf"({_NUM})月", p)
    if m and 1 <= _n(m.group(1)) <= 12:
        return f"in {_MONTHS_EN[_n(m.group(1)) - 1]}"
    m = re.fullmatch(r"(?:(先週|今週|来週)の?)?([月火水木金土日])曜日?", p)
    if m:
        which = {"先週": "last ", "今週": "this ", "来週": "next "}.get(m.group(1) or "", "")
        return f"{which}{_WEEKDAYS_JA[m.group(2)]}"
    return None


def _bare(english: str) -> str:
    return english.removeprefix("in ")


def to_english(phrase: str) -> str | None:
    """The English phrase meaning the same as the Japanese `phrase`, or None."""
    p = phrase.strip()
    m = re.fullmatch(rf"({_POINT})から({_POINT}|今)まで", p)
    if m:
        left = _point(m.group(1))
        right = "now" if m.group(2) == "今" else _point(m.group(2))
        return f"from {_bare(left)} to {_bare(right)}" if left and right else None
    m = re.fullmatch(rf"({_NUM})({_UNIT_RX})(前|後)", p)
    if m:
        n, unit = _n(m.group(1)), _UNIT[m.group(2)]
        return f"{n} {unit} ago" if m.group(3) == "前" else f"in {n} {unit}"
    m = re.fullmatch(rf"({_NUM})({_UNIT_RX})間", p)
    if m:
        return f"for {_n(m.group(1))} {_UNIT[m.group(2)]}"
    for suffix, prep in (("までに", "by"), ("まで", "until"), ("から", "since"), ("以来", "since")):
        if p.endswith(suffix):
            body = _point(p[: -len(suffix)])
            return f"{prep} {_bare(body)}" if body else None
    return _point(p)

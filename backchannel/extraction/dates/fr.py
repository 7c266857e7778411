"""French date phrases: found here, resolved by dates/en.py with the same conventions.

`find_date_phrases_fr(text)` returns `(span_start, span_end, phrase)` like
dates.find_date_phrases; `to_english(phrase)` rewrites one French phrase into the
English phrase that means the same ("depuis mars" -> "since March", "il y a deux
ans" -> "two years ago", "jeudi prochain" -> "next Thursday", "d'ici vendredi" ->
"by Friday", "le printemps dernier" -> "last spring", "de 2016 à 2021" -> "from 2016
to 2021"), so one resolver keeps one set of conventions (documented in dates/en.py):
"depuis" looks backwards like "since", "d'ici" is a deadline like "by".
dates.resolve_phrase falls back to `to_english` for a phrase it does not know.

Bare months, weekdays, years and "le 15" count only after a preposition
("en mars", "avant vendredi", "depuis 2019", "d'ici le 15"): "mars" alone is also
the planet, "mai" a word in names.
"""

from __future__ import annotations

import re

__all__ = ["find_date_phrases_fr", "to_english"]

_MONTHS_FR = {
    "janvier": "January",
    "février": "February",
    "fevrier": "February",
    "mars": "March",
    "avril": "April",
    "mai": "May",
    "juin": "June",
    "juillet": "July",
    "août": "August",
    "aout": "August",
    "septembre": "September",
    "octobre": "October",
    "novembre": "November",
    "décembre": "December",
    "decembre": "December",
}
_WEEKDAYS_FR = {
    "lundi": "Monday",
    "mardi": "Tuesday",
    "mercredi": "Wednesday",
    "jeudi": "Thursday",
    "vendredi": "Friday",
    "samedi": "Saturday",
    "dimanche": "Sunday",
}
_NUMBERS_FR = {
    "un": "one",
    "une": "one",
    "deux": "two",
    "trois": "three",
    "quatre": "four",
    "cinq": "five",
    "six": "six",
    "sept": "seven",
    "huit": "eight",
    "neuf": "nine",
    "dix": "ten",
    "onze": "eleven",
    "douze": "twelve",
    "treize": "thirteen",
    "quatorze": "fourteen",
    "quinze": "fifteen",
    "seize": "sixteen",
    "vingt": "twenty",
    "trente": "thirty",
    "quarante": "forty",
    "cinquante": "fifty",
    "quelques": "a few",
    "plusieurs": "several",
}
_UNITS_FR = {
    "jour": "days",
    "jours": "days",
    "semaine": "weeks",
    "semaines": "weeks",
    "mois": "months",
    "an": "years",
    "ans": "years",
    "année": "years",
    "années": "years",
    "annee": "years",
    "annees": "years",
    "décennie": "decades",
    "décennies": "decades",
}
_SEASONS_FR = {"printemps": "spring", "été": "summer", "ete": "summer", "automne": "autumn", "hiver": "winter"}
_PERIODS_FR = {
    "semaine": "week",
    "mois": "month",
    "année": "year",
    "annee": "year",
    "an": "year",
    "trimestre": "quarter",
}

_A = r"['’]"
_MO = "(?:" + "|".join(sorted(_MONTHS_FR, key=len, reverse=True)) + ")"
_WD = "(?:" + "|".join(_WEEKDAYS_FR) + ")"
_Y = r"(?:19|20)\d\d(?!\d)"
_D = r"(?:[12]\d|3[01]|0?[1-9])(?:er)?(?!\d)"
_NUM = r"(?:\d{1,3}|" + "|".join(sorted(_NUMBERS_FR, key=len, reverse=True)) + ")"
_UNIT = r"(?:jours?|semaines?|mois|ans?|ann[ée]es?|d[ée]cennies?)"
_SEASON = r"(?:printemps|[ée]t[ée]|automne|hiver)"
_PERIOD = rf"(?:la\s+semaine|le\s+mois|l{_A}ann[ée]e|l{_A}an|le\s+trimestre)"
_NEXT = r"(?:prochaine?|qui\s+vient)"
_LAST = r"(?:derni[èe]re?|pass[ée]e?)"

# Point bodies (no preposition), most specific first.
_STRONG = (
    rf"(?:le\s+)?{_D}\s+{_MO}(?:\s+{_Y})?"
    rf"|{_MO}\s+{_Y}"
    rf"|apr[èe]s-demain|avant-hier|demain|aujourd{_A}hui|hier|ce\s+soir|ce\s+matin|cet\s+apr[èe]s-midi"
    rf"|(?:la\s+)?fin\s+de\s+(?:la\s+)?journ[ée]e|(?:ce|le)\s+week-?end(?:\s+{_NEXT}|\s+{_LAST})?"
    rf"|(?:la\s+)?(?:fin|d[ée]but|mi)[-\s](?:de\s+|d{_A})?{_MO}(?:\s+{_Y})?"
    rf"|(?:la\s+)?fin\s+(?:de\s+la\s+semaine|du\s+mois|de\s+l{_A}ann[ée]e|du\s+trimestre)(?:\s+{_NEXT})?"
    rf"|{_WD}\s+(?:{_NEXT}|{_LAST})|ce\s+{_WD}|{_WD}\s+(?:matin|soir|midi|apr[èe]s-midi)"
    rf"|{_PERIOD}\s+(?:{_NEXT}|{_LAST})|cette\s+semaine|ce\s+mois(?:-ci)?|cette\s+ann[ée]e|ce\s+trimestre"
    rf"|(?:le\s+|l{_A})?{_SEASON}\s+(?:{_NEXT}|{_LAST})|cet?\s+{_SEASON}|(?:l{_A})?{_SEASON}\s+{_Y}"
)
_WEAK = rf"le\s+{_D}|{_WD}|{_MO}|{_Y}|(?:le\s+|l{_A})?{_SEASON}"
_PREP = (
    rf"(?:depuis|d{_A}ici|avant|apr[èe]s|jusqu{_A}(?:à|au|en)|jusqu{_A}à\s+la|en|pour|d[èe]s|[àa]\s+partir\s+"
    rf"(?:de|du|d{_A})|pendant|durant|au\s+cours\s+(?:de|du)|au|le)"
)
_RANGE_EP = rf"(?:(?:le\s+)?{_D}\s+{_MO}(?:\s+{_Y})?|{_MO}\s+{_Y}|{_MO}|{_Y})"
_FINDER = re.compile(
    r"(?<![\w-])(?:"
    rf"(?:de|du|entre)\s+{_RANGE_EP}\s+(?:à|au|et|jusqu{_A}(?:à|au|en))\s+(?:{_RANGE_EP}|aujourd{_A}hui|maintenant)"
    rf"|{_Y}\s*[-–—]\s*{_Y}"
    rf"|il\s+y\s+a\s+{_NUM}\s+{_UNIT}"
    rf"|(?:dans|d{_A}ici|depuis|pendant|durant)\s+{_NUM}\s+{_UNIT}"
    rf"|(?:au\s+cours\s+des|ces|depuis\s+les|pendant\s+les|durant\s+les)\s+(?:{_NUM}\s+)?derni[èe]re?s\s+{_UNIT}"
    rf"|(?:{_PREP}\s+)?(?:{_STRONG})"
    rf"|(?:au|en)\s+{_SEASON}"
    rf"|{_PREP}\s+(?:{_WEAK})"
    # A bare weekday ending a clause ("je vous l'envoie jeudi.", "I'll get back to you jeudi"): said
    # after the verb, a day; lowercase only ("Mardi" may be a name).
    rf"|(?-i:{_WD})(?=\s*(?:[.,;:!?)]|$))"
    r")(?![\w-])",
    re.I,
)


def find_date_phrases_fr(text: str) -> list[tuple[int, int, str]]:
    """Every French date phrase in `text` as (span_start, span_end, phrase), in order."""
    return [(m.start(), m.end(), m.group(0)) for m in _FINDER.finditer(text)]


# ---------------------------------------------------------------- translation

_PREP_EN = [
    (r"depuis\s+", "since "),
    (rf"d{_A}ici\s+", "by "),
    (r"avant\s+", "before "),
    (r"apr[èe]s\s+", "after "),
    (rf"jusqu{_A}(?:à\s+la|à|au|en)\s+", "until "),
    (r"en\s+", "in "),
    (r"pour\s+", "by "),
    (r"d[èe]s\s+", "from "),
    (rf"[àa]\s+partir\s+(?:de|du|d{_A})\s*", "from "),
    (r"(?:pendant|durant|au\s+cours\s+(?:de|du))\s+", "during "),
    (r"au\s+", "in "),
    (r"le\s+(?=\d)", "on "),
]
_PREP_EN_RX = [(re.compile(p, re.I), en) for p, en in _PREP_EN]


def _num(w: str) -> str:
    return _NUMBERS_FR.get(w.lower(), w)


def _unit(w: str) -> str:
    return _UNITS_FR.get(w.lower().replace("é", "é"), "years" if w.lower().startswith("ann") else "days")


def _month(w: str) -> str:
    return _MONTHS_FR[w.lower()]


def _day(w: str) -> str:
    return w.lower().removesuffix("er")


def _which(w: str) -> str:
    w = " ".join(w.lower().split())
    return "next" if w.startswith(("prochain", "qui")) else "last"


def _body(b: str) -> str | None:
    """One point body in English, or None when it is not one."""
    b = " ".join(b.split())
    low = b.lower().replace("’", "'")
    rel = {
        "demain": "tomorrow",
        "aujourd'hui": "today",
        "hier": "yesterday",
        "après-demain": "the day after tomorrow",
        "apres-demain": "the day after tomorrow",
        "avant-hier": "the day before yesterday",
        "ce soir": "tonight",
        "ce matin": "this morning",
        "cet après-midi": "this afternoon",
        "cet apres-midi": "this afternoon",
    }
    if low in rel:
        return rel[low]
    if re.fullmatch(r"(?:la\s+)?fin\s+de\s+(?:la\s+)?journ[ée]e", low):
        return "end of day"
    m = re.fullmatch(rf"(?:ce|le)\s+week-?end(?:\s+({_NEXT}|{_LAST}))?", low)
    if m:
        return f"{_which(m.group(1)) if m.group(1) else 'this'} weekend"
    m = re.fullmatch(rf"(?:le\s+)?({_D})\s+({_MO})(?:\s+({_Y}))?", low)
    if m:
        return f"{_day(m.group(1))} {_month(m.group(2))}" + (f" {m.group(3)}" if m.group(3) else "")
    m = re.fullmatch(rf"({_MO})(?:\s+({_Y}))?", low)
    if m:
        return _month(m.group(1)) + (f" {m.group(2)}" if m.group(2) else "")
    m = re.fullmatch(rf"(?:la\s+)?(fin|d[ée]but|mi)[-\s](?:de\s+|d')?({_MO})(?:\s+({_Y}))?", low)
    if m:
        month = _month(m.group(2)) + (f" {m.group(3)}" if m.group(3) else "")
        kind = m.group(1)
        return f"the end of {month}" if kind == "fin" else f"{'1' if kind != 'mi' else '15'} {month}"
    m = re.fullmatch(rf"(?:la\s+)?fin\s+(de la semaine|du mois|de l'ann[ée]e|du trimestre)(?:\s+({_NEXT}))?", low)
    if m:
        period = {"de la semaine": "week", "du mois": "month", "du trimestre": "quarter"}.get(m.group(1), "year")
        return f"the end of {'next' if m.group(2) else 'the'} {period}"
    low = re.sub(rf"^({_WD})\s+(?:matin|soir|midi|apr[èe]s-midi)$", r"\1", low)  # "jeudi matin": that day
    m = re.fullmatch(rf"({_WD})(?:\s+({_NEXT}|{_LAST}))?", low) or re.fullmatch(rf"ce\s+({_WD})", low)
    if m:
        which = (
            _which(m.group(2))
            if m.lastindex and m.lastindex > 1 and m.group(2)
            else ("this" if low.startswith("ce ") else "")
        )
        return f"{which} {_WEEKDAYS_FR[m.group(1)]}".strip()
    m = re.fullmatch(rf"(la semaine|le mois|l'ann[ée]e|l'an|le trimestre)\s+({_NEXT}|{_LAST})", low)
    if m:
        period = _PERIODS_FR[m.group(1).split()[-1].removeprefix("l'")]
        return f"{_which(m.group(2))} {period}"
    m = re.fullmatch(r"(?:cette|ce)\s+(semaine|mois|ann[ée]e|trimestre)(?:-ci)?", low)
    if m:
        return f"this {_PERIODS_FR[m.group(1)]}"
    m = re.fullmatch(rf"(?:le\s+|l')?({_SEASON})(?:\s+({_NEXT}|{_LAST}|{_Y}))?", low) or re.fullmatch(
        rf"cet?\s+({_SEASON})()", low
    )
    if m:
        season = _SEASONS_FR[m.group(1)]
        tail = m.group(2)
        if low.startswith(("ce ", "cet ")):
            return f"this {season}"
        if tail and tail[0].isdigit():
            return f"{season} {tail}"
        return f"{_which(tail)} {season}" if tail else f"the {season}"
    m = re.fullmatch(rf"le\s+({_D})", low)
    if m:
        n = int(_day(m.group(1)))
        return f"the {n}{'st' if n in (1, 21, 31) else 'nd' if n in (2, 22) else 'rd' if n in (3, 23) else 'th'}"
    if re.fullmatch(_Y, low):
        return low
    return None


def to_english(phrase: str) -> str | None:
    """The English phrase meaning the same as the French `phrase`, or None."""
    p = " ".join(phrase.split()).replace("’", "'")
    low = p.lower()
    m = re.fullmatch(
        rf"(?:de|du|entre)\s+({_RANGE_EP})\s+(?:à|au|et|jusqu'(?:à|au|en))\s+({_RANGE_EP}|aujourd'hui"
        r"|maintenant)",
        low,
    )
    if m:
        left, right = _body(m.group(1)), m.group(2)
        right = "now" if right in ("aujourd'hui", "maintenant") else _body(right)
        return f"from {left} to {right}" if left and right else None
    m = re.fullmatch(rf"({_Y})\s*[-–—]\s*({_Y})", low)
    if m:
        return f"{m.group(1)}-{m.group(2)}"
    m = re.fullmatch(rf"il y a ({_NUM}) ({_UNIT})", low)
    if m:
        return f"{_num(m.group(1))} {_unit(m.group(2))} ago"
    m = re.fullmatch(rf"(dans|d'ici|depuis|pendant|durant) ({_NUM}) ({_UNIT})", low)
    if m:
        n, unit = _num(m.group(2)), _unit(m.group(3))
        if m.group(1) == "depuis":  # "je travaille là depuis deux ans": it started two years ago, still true
            return f"since {n} {unit} ago"
        head = {"dans": "in", "d'ici": "within"}.get(m.group(1), "for")
        return f"{head} {n} {unit}"
    m = re.fullmatch(
        rf"(?:au cours des|ces|depuis les|pendant les|durant les) (?:({_NUM}) )?derni[èe]re?s ({_UNIT})", low
    )
    if m:
        return f"over the last {_num(m.group(1)) if m.group(1) else 'few'} {_unit(m.group(2))}"
    m = re.fullmatch(rf"(?:au|en) ({_SEASON})", low)
    if m:
        return f"in the {_SEASONS_FR[m.group(1)]}"
    for rx, en in _PREP_EN_RX:
        m = rx.match(p)
        if m and m.end() < len(p):
            body = _body(p[m.end() :])
            if body is not None:
                return en + body
    return _body(p)

"""Date phrases: finding them in text and resolving them against the meeting date."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from backchannel.extraction.dates.en import DateRange, find_date_phrases, resolve_phrase

# Tuesday 10 March 2026, 14:00: the meeting every relative phrase is said in.
ANCHOR = datetime(2026, 3, 10, 14, 0)
D = date


@pytest.mark.parametrize(
    "phrase,start,end",
    [
        ("from 2016 to 2021", D(2016, 1, 1), D(2021, 12, 31)),
        ("between 2016 and 2021", D(2016, 1, 1), D(2021, 12, 31)),
        ("2016-2021", D(2016, 1, 1), D(2021, 12, 31)),
        ("from March 2016 to June 2021", D(2016, 3, 1), D(2021, 6, 30)),
        ("from March 2016 until now", D(2016, 3, 1), D(2026, 3, 10)),
        ("from 2016-01-15 to 2021", D(2016, 1, 15), D(2021, 12, 31)),
        ("since 2019", D(2019, 1, 1), None),
        ("since March 2019", D(2019, 3, 1), None),
        ("since last year", D(2025, 1, 1), None),
        ("in 2019", D(2019, 1, 1), D(2019, 12, 31)),
        ("in March 2019", D(2019, 3, 1), D(2019, 3, 31)),
        ("March 2024", D(2024, 3, 1), D(2024, 3, 31)),
        ("last year", D(2025, 1, 1), D(2025, 12, 31)),
        ("this year", D(2026, 1, 1), D(2026, 12, 31)),
        ("next year", D(2027, 1, 1), D(2027, 12, 31)),
        ("last month", D(2026, 2, 1), D(2026, 2, 28)),
        ("next month", D(2026, 4, 1), D(2026, 4, 30)),
        ("last week", D(2026, 3, 2), D(2026, 3, 8)),
        ("next week", D(2026, 3, 16), D(2026, 3, 22)),
        ("this quarter", D(2026, 1, 1), D(2026, 3, 31)),
        ("14 months ago", D(2025, 1, 10), D(2025, 1, 10)),
        ("fourteen months ago", D(2025, 1, 10), D(2025, 1, 10)),
        ("two years ago", D(2024, 3, 10), D(2024, 3, 10)),
        ("a year ago", D(2025, 3, 10), D(2025, 3, 10)),
        ("a couple of years ago", D(2024, 3, 10), D(2024, 3, 10)),
        ("3 weeks ago", D(2026, 2, 17), D(2026, 2, 17)),
        ("next Thursday", D(2026, 3, 12), D(2026, 3, 12)),
        ("on Thursday", D(2026, 3, 12), D(2026, 3, 12)),
        ("on Tuesday", D(2026, 3, 17), D(2026, 3, 17)),  # strictly after the anchor
        ("last Thursday", D(2026, 3, 5), D(2026, 3, 5)),
        ("last Tuesday", D(2026, 3, 3), D(2026, 3, 3)),
        ("by Friday", None, D(2026, 3, 13)),
        ("tomorrow", D(2026, 3, 11), D(2026, 3, 11)),
        ("yesterday", D(2026, 3, 9), D(2026, 3, 9)),
        ("the day after tomorrow", D(2026, 3, 12), D(2026, 3, 12)),
        ("by the 15th", None, D(2026, 3, 15)),
        ("by the 5th", None, D(2026, 4, 5)),  # the 5th already passed this month
        ("on 3 March", D(2026, 3, 3), D(2026, 3, 3)),
        ("on the 3rd of April 2020", D(2020, 4, 3), D(2020, 4, 3)),
        ("April 3rd, 2020", D(2020, 4, 3), D(2020, 4, 3)),
        ("by 5 January", None, D(2026, 1, 5)),
        ("in November", D(2025, 11, 1), D(2025, 11, 30)),  # within six months of the anchor
        ("in October", D(2025, 10, 1), D(2025, 10, 31)),
        ("in August", D(2026, 8, 1), D(2026, 8, 31)),
        ("2024-03-05", D(2024, 3, 5), D(2024, 3, 5)),
        ("before 2019", None, D(2018, 12, 31)),
        ("after 2019", D(2020, 1, 1), None),
        ("until June", None, D(2026, 6, 30)),
        ("for 10 years", D(2016, 3, 10), D(2026, 3, 10)),
        ("for the past two years", D(2024, 3, 10), D(2026, 3, 10)),
        ("over the last 6 months", D(2025, 9, 10), D(2026, 3, 10)),
        ("in two weeks", D(2026, 3, 24), D(2026, 3, 24)),
        ("within 3 days", None, D(2026, 3, 13)),
        ("by the end of the week", None, D(2026, 3, 13)),
        ("by the end of next week", None, D(2026, 3, 20)),
        ("end of the month", D(2026, 3, 31), D(2026, 3, 31)),
        ("earlier this year", D(2026, 1, 1), D(2026, 3, 10)),
        ("later this year", D(2026, 3, 10), D(2026, 12, 31)),
    ],
)
def test_resolve_phrase(phrase, start, end):
    r = resolve_phrase(phrase, ANCHOR)
    assert (r.start, r.end) == (start, end)
    assert r.phrase == phrase


def test_month_arithmetic_clamps_to_month_end():
    r = resolve_phrase("a month ago", datetime(2026, 3, 31))
    assert r.start == D(2026, 2, 28)


def test_date_anchor_works_like_datetime():
    assert resolve_phrase("tomorrow", D(2026, 3, 10)).start == D(2026, 3, 11)


def test_no_anchor_resolves_only_absolute_phrases():
    assert resolve_phrase("from 2016 to 2021", None) == DateRange(D(2016, 1, 1), D(2021, 12, 31), "from 2016 to 2021")
    assert resolve_phrase("since March 2019", None).start == D(2019, 3, 1)
    for rel in ("last year", "14 months ago", "next Thursday", "by Friday", "tomorrow", "in March"):
        r = resolve_phrase(rel, None)
        assert (r.start, r.end) == (None, None), rel


def test_unknown_phrase_resolves_to_nothing():
    assert resolve_phrase("whenever", ANCHOR) == DateRange(None, None, "whenever")


@pytest.mark.parametrize(
    "phrase,start",
    [
        ("on Monday", D(2026, 3, 9)),
        ("on Tuesday", D(2026, 3, 3)),  # strictly before the anchor
        ("this Monday", D(2026, 3, 9)),
        ("next Monday", D(2026, 3, 16)),  # "next" stays in the future
        ("on the 15th", D(2026, 2, 15)),
        ("on the 10th", D(2026, 3, 10)),
        ("in November", D(2025, 11, 1)),
        ("in May", D(2025, 5, 1)),
        ("on 3 April", D(2025, 4, 3)),
        ("since March", D(2026, 3, 1)),
    ],
)
def test_past_tense_resolves_backwards(phrase, start):
    assert resolve_phrase(phrase, ANCHOR, past=True).start == start


def test_point_prefers_the_end():
    assert resolve_phrase("by Friday", ANCHOR).point == D(2026, 3, 13)
    assert resolve_phrase("since 2019", ANCHOR).point == D(2019, 1, 1)


def test_find_phrases_with_spans():
    text = "We worked together at Acme from 2016 to 2021, and she has been CIO since March 2019."
    found = find_date_phrases(text)
    assert [p for _, _, p in found] == ["from 2016 to 2021", "since March 2019"]
    for a, b, p in found:
        assert text[a:b] == p


def test_find_phrases_keeps_prepositions_and_relative_phrases():
    text = "I'll send it by Friday, then next week we meet; fourteen months ago he left, on 3 March 2024."
    assert [p for _, _, p in find_date_phrases(text)] == [
        "by Friday",
        "next week",
        "fourteen months ago",
        "on 3 March 2024",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "section 58 of the Children Act 2004 provides a defence",
        "we may go there",
        "I'll march on",
        "about 2019 people came",  # a bare year is not a date without a preposition
        "Janet said so",
        "page 15 of the report",
    ],
)
def test_find_phrases_ignores_non_dates(text):
    assert find_date_phrases(text) == []


def test_sentence_final_period_is_not_part_of_the_month():
    assert [p for _, _, p in find_date_phrases("It was in May. Then in Sept. it moved.")] == ["in May", "in Sept."]


def test_find_and_resolve_round_trip_on_every_found_phrase():
    text = (
        "Since 2019 we met monthly; from 2016 to 2021 at Acme, two years ago in Paris, "
        "next Thursday, by the 15th, tomorrow, last month and on 2024-03-05."
    )
    for _a, _b, p in find_date_phrases(text):
        r = resolve_phrase(p, ANCHOR)
        assert r.start or r.end, p


# ---------------------------------------------------------------- what only the past can mean

OCTOBER = datetime(2026, 10, 2, 10, 0)  # a Friday, seven months after March


@pytest.mark.parametrize(
    "phrase,start,end",
    [
        ("since March", D(2026, 3, 1), None),  # never 2027: a fact cannot hold since a date still to come
        ("since 3 April", D(2026, 4, 3), None),
        ("since Monday", D(2026, 9, 28), None),
        ("since the 15th", D(2026, 9, 15), None),
        ("since the end of March", D(2026, 3, 31), None),
        ("since last spring", D(2026, 3, 1), None),
        ("since spring", D(2026, 3, 1), None),
        ("since last March", D(2026, 3, 1), None),
        ("since this past Friday", D(2026, 9, 25), None),
        ("last spring", D(2026, 3, 1), D(2026, 5, 31)),
        ("last winter", D(2025, 12, 1), D(2026, 2, 28)),
        ("this summer", D(2026, 6, 1), D(2026, 8, 31)),
        ("next winter", D(2026, 12, 1), D(2027, 2, 28)),
        ("in the spring", D(2027, 3, 1), D(2027, 5, 31)),  # not past tense: the coming spring
        ("spring 2024", D(2024, 3, 1), D(2024, 5, 31)),
        ("the winter of 2023", D(2023, 12, 1), D(2024, 2, 29)),
        ("last March", D(2026, 3, 1), D(2026, 3, 31)),
        ("next March", D(2027, 3, 1), D(2027, 3, 31)),
        ("for the past year", D(2025, 10, 2), D(2026, 10, 2)),  # a year back, not calendar 2025
        ("over the last few years", D(2023, 10, 2), D(2026, 10, 2)),
        ("a few weeks ago", D(2026, 9, 11), D(2026, 9, 11)),
        ("from March to June", D(2026, 3, 1), D(2026, 6, 30)),  # never March 2027 to June 2026
        ("between May and August", D(2026, 5, 1), D(2026, 8, 31)),
        ("from November to February", D(2026, 11, 1), D(2027, 2, 28)),  # ahead, and in order: kept
    ],
)
def test_backward_phrases_never_land_in_the_future_and_ranges_stay_in_order(phrase, start, end):
    r = resolve_phrase(phrase, OCTOBER)
    assert (r.start, r.end) == (start, end)
    assert [p for _, _, p in find_date_phrases(f"she has been there {phrase} now")] == [phrase]


@pytest.mark.parametrize(
    "phrase,start,end",
    [
        ("by end of day", None, D(2026, 3, 10)),
        ("by EOD", None, D(2026, 3, 10)),
        ("by close of business", None, D(2026, 3, 10)),
        ("this afternoon", D(2026, 3, 10), D(2026, 3, 10)),
        ("by the weekend", None, D(2026, 3, 15)),
        ("on the weekend", D(2026, 3, 14), D(2026, 3, 15)),
        ("next weekend", D(2026, 3, 21), D(2026, 3, 22)),
    ],
)
def test_everyday_deadlines(phrase, start, end):
    assert [p for _, _, p in find_date_phrases(f"I'll send it {phrase}, promise.")] == [phrase]
    r = resolve_phrase(phrase, ANCHOR)
    assert (r.start, r.end) == (start, end)


def test_last_spring_said_during_spring_is_last_year():
    assert resolve_phrase("last spring", datetime(2026, 4, 10)).start == D(2025, 3, 1)
    assert resolve_phrase("since March", datetime(2026, 3, 10)).start == D(2026, 3, 1)


@pytest.mark.parametrize("text", ["prices fall", "a summer intern", "spring cleaning"])
def test_bare_seasons_are_no_dates(text):
    assert find_date_phrases(text) == []


# ---------------------------------------------------------------- a weekday with its day, a dated duration

# Wednesday 16 September 2026: Fridays fall on the 18th and 25th, then on 2 and 9 October.
WED = datetime(2026, 9, 16, 11, 0)


@pytest.mark.parametrize(
    "text,phrase,start,end",
    [
        # the Friday that is the 2nd: 2 October, not the coming Friday (the 18th)
        ("Can you get the slides to Rhea by Friday the 2nd?", "by Friday the 2nd", None, D(2026, 10, 2)),
        ("We should lock it on Monday the 5th.", "on Monday the 5th", D(2026, 10, 5), D(2026, 10, 5)),
        ("The launch is Thursday, 1st October.", "Thursday, 1st October", D(2026, 10, 1), D(2026, 10, 1)),
        ("Pencil it in for Friday October 9th", "Friday October 9th", D(2026, 10, 9), D(2026, 10, 9)),
        # weekday and day disagree in both coming months: the first such day, never a week off
        ("by Friday the 3rd", "by Friday the 3rd", None, D(2026, 10, 3)),
    ],
)
def test_a_weekday_with_its_day_of_month_is_that_day(text, phrase, start, end):
    (found,) = [p for _a, _b, p in find_date_phrases(text)]
    assert found == phrase
    assert resolve_phrase(found, WED) == DateRange(start, end, phrase)


def test_a_weekday_with_its_day_told_in_the_past_looks_back():
    assert resolve_phrase("on Friday the 11th", WED, past=True).start == D(2026, 9, 11)


def test_a_weekday_then_a_number_that_is_no_day_stays_the_weekday():
    text = "On Friday 3 of us are off."
    assert [p for _a, _b, p in find_date_phrases(text)] == ["On Friday"]
    assert resolve_phrase("On Friday", WED).start == D(2026, 9, 18)


@pytest.mark.parametrize(
    "text,start,end",
    [
        ("She ran the depot for six years, 2012 to 2018.", D(2012, 1, 1), D(2018, 12, 31)),
        ("I chaired it for three years (2019-2022) before moving on.", D(2019, 1, 1), D(2022, 12, 31)),
        ("He coached there for four years, from 2009 to 2013.", D(2009, 1, 1), D(2013, 12, 31)),
        ("We shared a flat for two years from 2015.", D(2015, 1, 1), D(2016, 12, 31)),
        ("I was on the board for four years until 2020.", D(2017, 1, 1), D(2020, 12, 31)),
    ],
)
def test_a_duration_dated_by_its_range_is_that_range(text, start, end):
    (phrase,) = [p for _a, _b, p in find_date_phrases(text)]
    assert phrase.startswith("for ")
    got = resolve_phrase(phrase, WED, past=True)
    assert (got.start, got.end) == (start, end)


def test_a_duration_not_followed_by_its_range_runs_up_to_the_meeting():
    phrases = [p for _a, _b, p in find_date_phrases("I did that for six years. In 2012 it was new.")]
    assert phrases == ["for six years", "In 2012"]
    got = resolve_phrase("for six years", WED)
    assert (got.start, got.end) == (D(2020, 9, 16), D(2026, 9, 16))


@pytest.mark.parametrize(
    "phrase,start,end",
    [
        ("next Friday", D(2026, 9, 18), D(2026, 9, 18)),  # the documented reading: the first Friday after
        ("this Friday", D(2026, 9, 18), D(2026, 9, 18)),
        ("by the end of the month", None, D(2026, 9, 30)),
        ("in two weeks", D(2026, 9, 30), D(2026, 9, 30)),
        ("by the 2nd", None, D(2026, 10, 2)),
        ("the 20th", D(2026, 9, 20), D(2026, 9, 20)),
    ],
)
def test_common_deadlines_said_midweek(phrase, start, end):
    assert resolve_phrase(phrase, WED) == DateRange(start, end, phrase)


@pytest.mark.parametrize(
    "phrase,due",
    [
        ("by Friday", True),
        ("on the 2nd", True),
        ("from 2013", False),
        ("since June", False),
        ("in 2019", False),
        ("by the end of the month", True),
    ],
)
def test_only_a_deadline_still_to_come_can_date_a_promise(phrase, due):
    from backchannel.extraction.dates.en import can_be_due

    assert can_be_due(resolve_phrase(phrase, WED), WED) is due


@pytest.mark.parametrize(
    "text, phrase",
    [
        ("I'll send them to you Friday, with the updated numbers.", "Friday"),
        ("I'll call you Tuesday morning.", "Tuesday"),
        ("Wednesday, then.", "Wednesday"),
        ("I saw her Thursday.", "Thursday"),
    ],
)
def test_a_weekday_said_alone_ending_its_clause_is_a_date(text, phrase):
    assert [p for _, _, p in find_date_phrases(text)] == [phrase]


@pytest.mark.parametrize(
    "text",
    [
        "I'll send you the Friday report.",  # before a noun
        "Monday's numbers are in.",
        "Black Friday was a disaster.",  # a day's name
        "I'll book the room for Thursday.",  # the room's day, not the booking's
        "I'll get it back to you by, uh, Thursday.",  # "by" read with the hesitation blanked out
    ],
)
def test_a_weekday_that_is_no_date_of_its_own_is_not_read_alone(text):
    assert [p for _, _, p in find_date_phrases(text) if p in ("Monday", "Thursday", "Friday")] == []

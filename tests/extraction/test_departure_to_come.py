"""A departure still under way ("she's retiring from X in the autumn", "he is leaving X for Y"): the
person works there now, and the departure is stored dated when it is to happen, so memory closes the
employment then and not on the day it was said. A former employer as the only one named
("ex-X analyst Y joins a start-up") is left, never worked at now. Every sentence is new (in no
evaluation split, bench bank or other test). The real offline extractor, its head, and a real store."""

from __future__ import annotations

from datetime import date, datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract
from backchannel.extraction.writer import write_source
from backchannel.memory import supersede

MEETING = datetime(2026, 3, 10, 14, 0)


def facts(line: str, speaker: str | None = "Callum Reid") -> set[tuple[str, str, str, date | None]]:
    t = Transcript(
        [Utterance(0, "Priya Nair", "Any news from the old crowd?"), Utterance(1, speaker, line)],
        "text",
        meeting_date=MEETING,
    )
    return {
        (a.subject.name, a.predicate, a.object.name, a.valid_to)
        for a in extract(t)
        if a.predicate in ("works_at", "left") and a.object is not None
    }


def test_a_retirement_to_come_is_employment_now_and_a_departure_dated_ahead():
    got = facts("Funny you ask, Morag Kinnear is retiring from Scottish Widows in the autumn.")
    assert ("Morag Kinnear", "works_at", "Scottish Widows", None) in got
    (left,) = [f for f in got if f[1] == "left"]
    # the autumn still to come (September to November 2026), not the one before the meeting
    assert left[3] is not None and date(2026, 9, 1) <= left[3] <= date(2026, 11, 30)


def test_leaving_one_employer_for_another_leaves_the_first_only():
    got = facts("Word is Dmitri Volkov is leaving Ocado for Deliveroo, probably.")
    assert ("Dmitri Volkov", "works_at", "Ocado", None) in got
    assert {f[2] for f in got if f[1] == "left"} <= {"Ocado"}
    assert not any(f[1] == "left" and f[2] == "Deliveroo" for f in got)


def test_a_departure_that_happened_is_no_employment_now():
    got = facts("Morag Kinnear retired from Scottish Widows last spring.")
    assert not any(f[1] == "works_at" and f[3] is None for f in got)


def test_a_former_employer_alone_is_left_not_worked_at():
    got = facts("Ex-Barclays trader Anil Mehta joins a fintech in Leeds.", speaker=None)
    assert not any(f[1] == "works_at" and f[2] == "Barclays" for f in got)


def test_the_employment_holds_until_the_departure_day_in_memory(store):
    t = Transcript(
        [Utterance(0, "Callum Reid", "Morag Kinnear is leaving Scottish Widows next month.")],
        "text",
        meeting_date=MEETING,
    )
    claims = [a for a in extract(t) if a.predicate in ("works_at", "left")]
    assert {a.predicate for a in claims} == {"works_at", "left"}
    write_source(store, t, claims, owner_names=["Me"], extractor="test")
    org = store.scalar("SELECT id FROM entities WHERE name = 'Scottish Widows'")
    assert supersede.as_of(store, "works_at", org, None, date(2026, 3, 20))  # still there after the meeting
    assert not supersede.as_of(store, "works_at", org, None, date(2026, 5, 1))  # gone once next month is over

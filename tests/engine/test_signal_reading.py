"""Signals read like speech: a news item dropped as a JSON file goes through the real
signal trigger and wake pipeline, becomes a `news` source whose people and roles are
assertions (once per item, a crash at any step losing nothing), and links to the
organisations meetings talk about even when no relation about them was extracted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.engine.pipeline import collect_wakes, run_wake_once
from backchannel.extraction.news import extract_news, news_transcript
from backchannel.memory.trust import REASON_FACTORS

REPO = Path(__file__).resolve().parents[2]


class LeaveInPlace:
    """An inbox port that leaves a handled file where it is (the test reads it again)."""

    def finish(self, path: Path, ok: bool, error: str | None) -> Path:
        return path

    def defer(self, path: Path, retry_after_s: float) -> None:
        return None


def _settings(paths) -> Settings:
    s = Settings()
    s.signals = s.signals.model_copy(update={"drop_dir": str(paths.data_dir / "signals")})
    s.gate = s.gate.model_copy(update={"quiet_hours": "off", "min_gap_minutes": 0})
    return s


def _ingest(store, settings, paths, name: str, text: str) -> dict:
    inbox = paths.data_dir / "inbox-test"
    inbox.mkdir(parents=True, exist_ok=True)
    f = inbox / name
    f.write_text(text)
    out = run_wake_once(
        store,
        settings,
        paths,
        {"kind": "inbox", "key": f"inbox:{name}", "payload": {"path": str(f)}},
        inbox=LeaveInPlace(),
    )
    assert out.detail["ingest"]["status"] == "ingested", out.detail
    return out.detail["ingest"]


def _drop(paths, name: str, items: list[dict]) -> None:
    drop = paths.data_dir / "signals"
    drop.mkdir(parents=True, exist_ok=True)
    (drop / name).write_text(json.dumps(items))


def _signal_runs(store, settings, paths) -> list:
    """The runs of the signals not handled before (a signal seen again is skipped by its wake key)."""
    outs = [
        run_wake_once(store, settings, paths, w)
        for w in collect_wakes(settings, paths, "signals")
        if w.kind == "signal"
    ]
    return [o for o in outs if o.status != "skipped"]


def _news_facts(store) -> list[dict]:
    return store.query(
        """SELECT s.name AS subject, a.predicate, o.name AS object, a.qualifier, a.speaker_id, a.trust,
                  a.confidence, a.trust_reasons, a.quote, src.format, a.source_id
           FROM assertions a JOIN sources src ON src.id = a.source_id JOIN entities s ON s.id = a.subject_id
           LEFT JOIN entities o ON o.id = a.object_id WHERE src.format = 'news' ORDER BY a.id"""
    )


MEETING = """WEBVTT

00:00:01.000 --> 00:00:05.000
<v Alex Moreau>How is the Pinecrest Bank account going?

00:00:05.500 --> 00:00:12.000
<v Omar Farouk>Slowly. Pinecrest Bank keeps moving the goalposts on the core banking project.

00:00:12.500 --> 00:00:18.000
<v Alex Moreau>Kenji Sato and I worked together at Hooli, he knows that world well.
"""


def test_news_item_becomes_a_source_of_assertions_once(home, store):
    paths = resolve_paths().ensure()
    settings = _settings(paths)
    _ingest(store, settings, paths, "2026-06-01 catch-up.vtt", MEETING)
    kenji = store.scalar("SELECT id FROM entities WHERE name = 'Kenji Sato'")
    published = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0).isoformat()
    item = {
        "title": "Kenji Sato appointed Chief Digital Officer at Mirai Bank",
        "summary": "Mirai Bank hires Laura Chen as CFO. Dana Whitfield leaves Globex after nine years.",
        "url": "https://news.example/mirai",
        "published_at": published,
    }
    _drop(paths, "a.json", [item])
    [out] = _signal_runs(store, settings, paths)
    assert out.status == "done"
    facts = {(f["subject"], f["predicate"], f["object"], f["qualifier"]) for f in _news_facts(store)}
    assert facts == {
        ("Kenji Sato", "works_at", "Mirai Bank", "CDO"),
        ("Laura Chen", "works_at", "Mirai Bank", "CFO"),
        ("Dana Whitfield", "left", "Globex", None),
    }
    row = next(f for f in _news_facts(store) if f["subject"] == "Kenji Sato")
    # The person the meeting knew, no speaker (nobody said it), trust from the `news` reason.
    assert store.scalar("SELECT subject_id FROM assertions WHERE quote = ?", [row["quote"]]) == kenji
    assert row["speaker_id"] is None and list(row["trust_reasons"]) == ["news"]
    assert row["trust"] == pytest.approx(row["confidence"] * REASON_FACTORS["news"], abs=0.001)
    src = store.query("SELECT format, trust_reasons, meeting_date FROM sources WHERE id = ?", [row["source_id"]])[0]
    assert src["format"] == "news" and list(src["trust_reasons"]) == ["news"]
    assert src["meeting_date"].date() == datetime.fromisoformat(published).date()
    # The same item again, from another feed (another signal id): the same source, nothing doubled.
    _drop(paths, "b.json", [{**item, "source": "another-feed"}])
    [again] = _signal_runs(store, settings, paths)
    assert again.status == "done" and again.detail["signal_source"]["created"] is False
    assert store.scalar("SELECT count(*) FROM sources WHERE format = 'news'") == 1
    assert len(_news_facts(store)) == 3


def test_what_news_items_do_not_assert():
    when = datetime(2026, 11, 1)
    for title in (
        "Acme denies that Jane Doe leaves Acme",
        "Jane Doe could join Acme as CFO",
        "Jane Doe was named in a lawsuit at Acme",
        "Acme names Jane Doe in lawsuit",
        "Northwind raises 40 million to expand its data team",
        "If Jane Doe joins Acme as CFO, shares will rise",
        "Claire Morel pourrait rejoindre Orange comme DRH",
        "Renault ne recrute pas Paul Girard comme DG",
    ):
        t = news_transcript(title, None, published=when, path=None)
        assert extract_news(t) == [], title
    # The organisation and title before the name; "its TITLE, X, has left"; "formerly of" (written for this test).
    cases = {
        "Orbis Logistics chief financial officer Tomasz Nowak resigns": {
            ("Tomasz Nowak", "left", "Orbis Logistics", "CFO")
        },
        "Former Siemens CTO Lena Vogt joins Kestrel Robotics as chief executive": {
            ("Lena Vogt", "left", "Siemens", "CTO"),
            ("Lena Vogt", "works_at", "Kestrel Robotics", "CEO"),
        },
        "Halden Group says its general counsel, Mira Sand, has resigned": {
            ("Mira Sand", "left", "Halden Group", "general counsel")
        },
        "Rowan Ito, formerly of Deloitte, takes a board seat": {("Rowan Ito", "left", "Deloitte", None)},
        "Halden Group says its general counsel, Mira Sand, will leave in June": set(),
        "Acme Robotics CEO Jane Doe will step down next year": set(),
    }
    for title, wanted in cases.items():
        got = {
            (a.subject.name, a.predicate, a.object.name if a.object else None, a.qualifier)
            for a in extract_news(news_transcript(title, None, published=when, path=None))
        }
        assert got == wanted, title
    # Sentences written for this test, not in any suite: the register's other verbs.
    got = {}
    for title in (
        "Globex names Priya Raman chief technology officer",
        "Initech has named Bill Lumbergh as its new chief operating officer, effective March 1.",
        "Sarah Connor steps down as CEO of Cyberdyne",
        "Tom Baker to join Hooli as head of sales",
        "Margaux Petit nommée directrice technique de Dassault Systèmes",
        "Alstom recrute Hugo Marchand comme DAF",
    ):
        [a] = extract_news(news_transcript(title, None, published=when, path=None))
        got[title] = (a.subject.name, a.predicate, a.object.name if a.object else None, a.qualifier)
    assert list(got.values()) == [
        ("Priya Raman", "works_at", "Globex", "CTO"),
        ("Bill Lumbergh", "works_at", "Initech", "COO"),
        ("Sarah Connor", "left", "Cyberdyne", None),
        ("Tom Baker", "works_at", "Hooli", "head of sales"),
        ("Margaux Petit", "works_at", "Dassault Systèmes", "CTO"),
        ("Hugo Marchand", "works_at", "Alstom", "CFO"),
    ]


def test_an_organisation_discussed_in_a_meeting_is_known(home, store):
    paths = resolve_paths().ensure()
    settings = _settings(paths)
    _ingest(store, settings, paths, "2026-06-01 catch-up.vtt", MEETING)
    # The meeting talked about Pinecrest Bank at length, but no relation about it was extracted.
    assert store.scalar("SELECT count(*) FROM entities WHERE name = 'Pinecrest Bank'") == 0
    _drop(paths, "a.json", [{"title": "Pinecrest Bank tenders its core banking modernisation"}])
    [out] = _signal_runs(store, settings, paths)
    assert out.status == "done" and out.reason != "the signal mentions no organisation known to memory"
    # Nothing about people in it: read, but no source written for it.
    assert out.detail["signal_source"]["source_id"] is None
    assert store.scalar("SELECT count(*) FROM sources WHERE format = 'news'") == 0
    org = store.query(
        "SELECT e.id, a.source_id FROM entities e JOIN aliases a ON a.entity_id = e.id "
        "WHERE e.name = 'Pinecrest Bank' AND e.kind = 'organisation'"
    )[0]
    assert store.scalar("SELECT format FROM sources WHERE id = ?", [org["source_id"]]) == "vtt"
    assert list(store.scalar("SELECT org_ids FROM signals")) == [org["id"]]
    [linked] = store.events(run_id=out.run_id, kind="signal.linked")
    assert linked["data"]["discussed"][0]["name"] == "Pinecrest Bank" and linked["data"]["gained"] == [org["id"]]
    # A name the news item alone makes known is no link; a person is never made an organisation.
    _drop(paths, "b.json", [{"title": "Omar opens a bakery with Zephyr Foods"}])
    [quiet] = _signal_runs(store, settings, paths)
    assert quiet.reason == "the signal mentions no organisation known to memory"
    assert store.scalar("SELECT count(*) FROM entities WHERE kind = 'organisation' AND name = 'Omar'") == 0


def test_a_signal_before_the_meeting_links_when_the_meeting_talks_about_it(home, store):
    paths = resolve_paths().ensure()
    settings = _settings(paths)
    _drop(paths, "a.json", [{"title": "Pinecrest Bank tenders its core banking modernisation"}])
    [first] = _signal_runs(store, settings, paths)
    assert first.reason == "the signal mentions no organisation known to memory"
    ingest = run_wake_once(
        store,
        settings,
        paths,
        {
            "kind": "inbox",
            "key": "inbox:m",
            "payload": {"path": str(_write(paths, "2026-06-01 catch-up.vtt", MEETING))},
        },
        inbox=LeaveInPlace(),
    )
    org = store.scalar("SELECT id FROM entities WHERE name = 'Pinecrest Bank' AND kind = 'organisation'")
    assert org is not None and list(store.scalar("SELECT org_ids FROM signals")) == [org]
    [step] = store.events(run_id=ingest.run_id, kind="reevaluate.signal")
    assert step["data"]["gained"] == [org]


def _write(paths, name: str, text: str) -> Path:
    d = paths.data_dir / "inbox-test"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)
    return d / name


_CHILD = """
import sys
from backchannel.config import Settings, resolve_paths
from backchannel.engine.pipeline import collect_wakes, run_wake_once
from backchannel.memory import Store
paths = resolve_paths().ensure()
s = Settings()
s.signals = s.signals.model_copy(update={"drop_dir": str(paths.data_dir / "signals")})
store = Store.open(paths.db_file)
for w in collect_wakes(s, paths, "signals"):
    print(run_wake_once(store, s, paths, w).status)
store.close()
"""


@pytest.mark.parametrize("point", ["signal.after_store", "signal.after_read"])
def test_a_crash_while_reading_a_signal_loses_and_doubles_nothing(home, point):
    paths = resolve_paths().ensure()
    _drop(paths, "a.json", [{"title": "Kenji Sato appointed Chief Digital Officer at Mirai Bank"}])
    env = {**os.environ, "PYTHONPATH": str(REPO), "BACKCHANNEL_TEST_CRASH_AT": point}
    died = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert died.returncode == 137, died.stderr
    env.pop("BACKCHANNEL_TEST_CRASH_AT")
    ok = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    from backchannel.memory import Store

    store = Store.open(paths.db_file)
    try:
        assert store.scalar("SELECT count(*) FROM sources WHERE format = 'news'") == 1
        assert store.scalar("SELECT count(*) FROM signals") == 1
        assert [
            r[0]
            for r in store.con.execute(
                "SELECT predicate FROM assertions a JOIN sources s ON s.id = a.source_id WHERE s.format = 'news'"
            ).fetchall()
        ] == ["works_at"]
    finally:
        store.close()

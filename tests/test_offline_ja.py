"""Japanese offline extraction (issue 10, a first slice): particles and verb endings,
honorific-marked names, Japanese dates resolved with dates.py's conventions, and the
verbatim-quote rule; a dropped subject is the speaker, an unmarked third party is nobody."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from backchannel.extractors.dates import resolve_phrase
from backchannel.extractors.dates_ja import find_date_phrases_ja
from backchannel.extractors.offline import extract
from backchannel.extractors.transcript import Transcript, Utterance

MEETING = datetime(2026, 10, 2, 9, 0)  # a Friday


def run(*texts: str, lines=None):
    lines = lines or [("Alex", "こんにちは。"), ("Ken", "よろしくお願いします。"), *(("Yuki", x) for x in texts)]
    t = Transcript([Utterance(i, sp, x) for i, (sp, x) in enumerate(lines)], "text", meeting_date=MEETING)
    out = extract(t, owner_names=["Alex Moreau", "Alex"])
    for a in out:
        assert t.utterances[a.utterance_idx].text[a.span_start:a.span_end] == a.quote
    return out


def facts(out):
    return {(a.predicate, a.subject.name, a.object.name if a.object else a.object_literal, a.qualifier,
             a.valid_from, a.valid_to) for a in out}


@pytest.mark.parametrize("text,fact", [
    ("田中さんはアクメのCTOです。", ("works_at", "田中", "アクメ", "CTO", None, None)),
    ("佐藤さんは3月からアクメで働いています。", ("works_at", "佐藤", "アクメ", None, date(2026, 3, 1), None)),
    ("私は2019年にアクメに入社しました。", ("works_at", "Yuki", "アクメ", None, date(2019, 1, 1), None)),
    ("鈴木さんは去年グローベックスを辞めました。", ("left", "鈴木", "グローベックス", None, None, date(2025, 12, 31))),
    ("田中さんとは2016年から2021年までアクメで一緒に働いていました。",
     ("worked_with", "Yuki", "田中", "アクメ", date(2016, 1, 1), date(2021, 12, 31))),
    ("田中さんをよく知っています。", ("knows", "Yuki", "田中", None, None, None)),
])
def test_relations(text, fact):
    assert fact in facts(run(text))


def test_introduction():
    got = facts(run("佐藤さんが私に田中さんを紹介してくれました。"))
    assert {("knows", "Yuki", "田中", None, None, None), ("knows", "佐藤", "田中", None, None, None),
            ("introduced", "佐藤", "田中", None, None, None)} <= got


@pytest.mark.parametrize("text", [
    "田中さんを知りません。",  # negative
    "もし田中さんを知っていたら紹介します。",  # conditional
    "田中さんはアクメで働いていますか？",  # a question
    "田中はアクメで働いています。",  # an unmarked third party: not the speaker, so nobody
    "また連絡します。",  # keeping in touch, no date: no promise
    "田中さんが資料を送ります。",  # someone else's promise: not put on the speaker
])
def test_nothing_from_negation_questions_or_unknown_subjects(text):
    assert run(text) == []


def test_commitment_with_due_date_and_recipient_in_a_one_to_one():
    lines = [("Alex", "見積もりを送っていただけますか？"), ("Yuki", "はい、見積もりを金曜日までに送ります。")]
    (a,) = run(lines=lines)
    assert (a.predicate, a.subject.name, a.object_literal, a.valid_to, a.recipient.name) == (
        "committed_to", "Yuki", "見積もりを送ります", date(2026, 10, 9), "Alex")


@pytest.mark.parametrize("phrase,start,end", [
    ("3月から", date(2026, 3, 1), None),  # looks backwards, never March 2027
    ("2年前", date(2024, 10, 2), date(2024, 10, 2)),
    ("来週の木曜日", date(2026, 10, 8), date(2026, 10, 8)),
    ("金曜日までに", None, date(2026, 10, 9)),
    ("2016年から2021年まで", date(2016, 1, 1), date(2021, 12, 31)),
    ("去年", date(2025, 1, 1), date(2025, 12, 31)),
    ("2019年3月", date(2019, 3, 1), date(2019, 3, 31)),
    ("十四ヶ月前", date(2025, 8, 2), date(2025, 8, 2)),
    ("月末までに", None, date(2026, 10, 31)),
])
def test_japanese_dates(phrase, start, end):
    assert [p for _, _, p in find_date_phrases_ja(f"それは{phrase}です")] == [phrase]
    r = resolve_phrase(phrase, MEETING)
    assert (r.start, r.end, r.phrase) == (start, end, phrase)


def test_japanese_meeting_ingested_into_the_store(home: Path, store):
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extractors.ingest import ingest_file

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\n')
    f = home / "acme-ja.md"
    f.write_text("""---
title: アクメ定例
date: 2026-10-02
---
Alex: 見積もりを送っていただけますか？
Yuki: はい、見積もりを金曜日までに送ります。田中さんは3月からアクメのCTOです。
""", encoding="utf-8")
    assert ingest_file(store, load_settings(paths), f).status == "ingested"
    rows = store.query(
        """SELECT a.predicate, s.name AS subject, coalesce(o.name, a.object_literal) AS object, a.qualifier,
                  a.valid_from, a.valid_to, r.name AS recipient
           FROM assertions a JOIN entities s ON s.id = a.subject_id LEFT JOIN entities o ON o.id = a.object_id
           LEFT JOIN entities r ON r.id = a.recipient_id""")
    assert {tuple(r.values()) for r in rows} == {
        ("committed_to", "Yuki", "見積もりを送ります", None, None, date(2026, 10, 9), "Alex Moreau"),
        ("works_at", "田中", "アクメ", "CTO", date(2026, 3, 1), None, None),
    }

"""Japanese offline extraction (a first slice): particles and verb endings,
honorific-marked names, Japanese dates resolved with dates.py's conventions, and the
verbatim-quote rule; a dropped subject is the speaker, an unmarked third party is nobody."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from backchannel.extraction.dates.en import resolve_phrase
from backchannel.extraction.dates.ja import find_date_phrases_ja
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 10, 2, 9, 0)  # a Friday


def run(*texts: str, lines=None):
    lines = lines or [("Alex", "こんにちは。"), ("Ken", "よろしくお願いします。"), *(("Yuki", x) for x in texts)]
    t = Transcript([Utterance(i, sp, x) for i, (sp, x) in enumerate(lines)], "text", meeting_date=MEETING)
    out = extract(t, owner_names=["Alex Moreau", "Alex"])
    for a in out:
        assert t.utterances[a.utterance_idx].text[a.span_start : a.span_end] == a.quote
    return out


def facts(out):
    return {
        (
            a.predicate,
            a.subject.name,
            a.object.name if a.object else a.object_literal,
            a.qualifier,
            a.valid_from,
            a.valid_to,
        )
        for a in out
    }


@pytest.mark.parametrize(
    "text,fact",
    [
        ("田中さんはアクメのCTOです。", ("works_at", "田中", "アクメ", "CTO", None, None)),
        ("佐藤さんは3月からアクメで働いています。", ("works_at", "佐藤", "アクメ", None, date(2026, 3, 1), None)),
        ("私は2019年にアクメに入社しました。", ("works_at", "Yuki", "アクメ", None, date(2019, 1, 1), None)),
        (
            "鈴木さんは去年グローベックスを辞めました。",
            ("left", "鈴木", "グローベックス", None, None, date(2025, 12, 31)),
        ),
        (
            "田中さんとは2016年から2021年までアクメで一緒に働いていました。",
            ("worked_with", "Yuki", "田中", "アクメ", date(2016, 1, 1), date(2021, 12, 31)),
        ),
        ("田中さんをよく知っています。", ("knows", "Yuki", "田中", None, None, None)),
    ],
)
def test_relations(text, fact):
    assert fact in facts(run(text))


def test_introduction():
    got = facts(run("佐藤さんが私に田中さんを紹介してくれました。"))
    assert {
        ("knows", "Yuki", "田中", None, None, None),
        ("knows", "佐藤", "田中", None, None, None),
        ("introduced", "佐藤", "田中", None, None, None),
    } <= got


@pytest.mark.parametrize(
    "text",
    [
        "田中さんを知りません。",  # negative
        "もし田中さんを知っていたら紹介します。",  # conditional
        "田中さんはアクメで働いていますか？",  # a question
        "田中はアクメで働いています。",  # an unmarked third party: not the speaker, so nobody
        "また連絡します。",  # keeping in touch, no date: no promise
        "田中さんが資料を送ります。",  # someone else's promise: not put on the speaker
    ],
)
def test_nothing_from_negation_questions_or_unknown_subjects(text):
    assert run(text) == []


def test_commitment_with_due_date_and_recipient_in_a_one_to_one():
    lines = [("Alex", "見積もりを送っていただけますか？"), ("Yuki", "はい、見積もりを金曜日までに送ります。")]
    (a,) = run(lines=lines)
    assert (a.predicate, a.subject.name, a.object_literal, a.valid_to, a.recipient.name) == (
        "committed_to",
        "Yuki",
        "見積もりを送ります",
        date(2026, 10, 9),
        "Alex",
    )


@pytest.mark.parametrize(
    "phrase,start,end",
    [
        ("3月から", date(2026, 3, 1), None),  # looks backwards, never March 2027
        ("2年前", date(2024, 10, 2), date(2024, 10, 2)),
        ("来週の木曜日", date(2026, 10, 8), date(2026, 10, 8)),
        ("金曜日までに", None, date(2026, 10, 9)),
        ("2016年から2021年まで", date(2016, 1, 1), date(2021, 12, 31)),
        ("去年", date(2025, 1, 1), date(2025, 12, 31)),
        ("2019年3月", date(2019, 3, 1), date(2019, 3, 31)),
        ("十四ヶ月前", date(2025, 8, 2), date(2025, 8, 2)),
        ("月末までに", None, date(2026, 10, 31)),
    ],
)
def test_japanese_dates(phrase, start, end):
    assert [p for _, _, p in find_date_phrases_ja(f"それは{phrase}です")] == [phrase]
    r = resolve_phrase(phrase, MEETING)
    assert (r.start, r.end, r.phrase) == (start, end, phrase)


def test_japanese_meeting_ingested_into_the_store(home: Path, store):
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import ingest_file

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\n')
    f = home / "acme-ja.md"
    f.write_text(
        """---
title: アクメ定例
date: 2026-10-02
---
Alex: 見積もりを送っていただけますか？
Yuki: はい、見積もりを金曜日までに送ります。田中さんは3月からアクメのCTOです。
""",
        encoding="utf-8",
    )
    assert ingest_file(store, load_settings(paths), f).status == "ingested"
    rows = store.query(
        """SELECT a.predicate, s.name AS subject, coalesce(o.name, a.object_literal) AS object, a.qualifier,
                  a.valid_from, a.valid_to, r.name AS recipient
           FROM assertions a JOIN entities s ON s.id = a.subject_id LEFT JOIN entities o ON o.id = a.object_id
           LEFT JOIN entities r ON r.id = a.recipient_id"""
    )
    assert {tuple(r.values()) for r in rows} == {
        ("committed_to", "Yuki", "見積もりを送ります", None, None, date(2026, 10, 9), "Alex Moreau"),
        ("works_at", "田中", "アクメ", "CTO", date(2026, 3, 1), None, None),
    }


# -- the subject left out, and one person under every form of a name ---------------------
# Sentences written for this change, none from another suite.


@pytest.mark.parametrize(
    "lines,fact",
    [
        # the partner named in the turn before; the subject (the speaker) left out
        ([("Alex", "田中さんって覚えてる？"), ("Yuki", "うん、昔一緒に働いてた。")], ("worked_with", "Yuki", "田中")),
        (
            [("Alex", "中村さんのこと、知ってる？"), ("Yuki", "もちろん。グローベックスで一緒に仕事してた。")],
            ("worked_with", "Yuki", "中村"),
        ),
        # the partner earlier in the same turn
        (
            [("Yuki", "高橋さん？アクメで一緒に働いてました。"), ("Alex", "そうなんだ。")],
            ("worked_with", "Yuki", "高橋"),
        ),
        # nobody named, a meeting of two: the other one
        ([("Alex", "久しぶり。"), ("Yuki", "昔、アクメで一緒に働いてたよね。")], ("worked_with", "Yuki", "Alex")),
    ],
)
def test_a_left_out_subject_is_the_speaker_and_the_partner_comes_from_context(lines, fact):
    assert fact in {(p, s, o) for p, s, o, *_ in facts(run(lines=lines))}


@pytest.mark.parametrize(
    "lines",
    [
        [("Alex", "田中さんと鈴木さん、覚えてる？"), ("Yuki", "うん、一緒に働いてた。")],  # two candidates
        [("Alex", "久しぶり。"), ("Yuki", "一緒に働いてた。"), ("Ken", "そう。")],  # three people, nobody named
        [("Alex", "田中さんは？"), ("Yuki", "鈴木さんは一緒に働いてた。")],  # whose tie the words do not say
        [("Alex", "田中さんを知ってる？"), ("Yuki", "一緒に働いてなかった。")],  # negative
    ],
)
def test_no_partner_guessed(lines):
    assert not any(a.predicate == "worked_with" for a in run(lines=lines))


def test_japanese_names_link_across_meetings_and_to_the_calendar(home: Path, store):
    """田中太郎 in one meeting, 田中さん in the next, 田中様 and "Tanaka Taro" on invitations:
    one person. The romanised forms need SudachiPy (the `ja` extra)."""
    pytest.importorskip("sudachipy")
    from backchannel.config import Settings, resolve_paths
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory import calendar

    paths = resolve_paths().ensure()
    settings = Settings()
    files = {
        "2026-05-01 定例.txt": "田中太郎: 田中です。去年グローベックスを辞めました。\nAlex Moreau: そうでしたか。\n",
        "2026-06-01 打ち合わせ.txt": "田中さん: 今はアクメにいます。\nAlex Moreau: いいですね。\n",
        "2026-07-01 ランチ.txt": "佐藤: 田中さんとは2016年から2021年までアクメで一緒に働いていました。\n"
        "Alex Moreau: へえ。\n",
    }
    for name, text in files.items():
        (home / name).write_text(text, encoding="utf-8")
        assert ingest_file(store, settings, home / name).status == "ingested"
    tanaka = store.scalar("SELECT id FROM entities WHERE name = '田中太郎'")
    rows = store.query("SELECT predicate, subject_id, object_id FROM assertions ORDER BY id")
    assert [(r["predicate"], tanaka in (r["subject_id"], r["object_id"])) for r in rows] == [
        ("left", True),
        ("works_at", True),
        ("worked_with", True),
    ]
    assert store.scalar("SELECT count(*) FROM entities WHERE kind = 'person' AND name LIKE '田中%'") == 1
    for attendee in ("Tanaka Taro <taro@example.jp>", "Taro Tanaka", "田中様", "田中太郎さん", "田中　太郎 <t@x.jp>"):
        assert calendar.resolve_attendee(store, attendee) == tanaka, attendee
    start = datetime(2030, 1, 8, 10, 0).isoformat() + "+00:00"
    out = run_wake_once(
        store,
        settings,
        paths,
        {
            "kind": "calendar",
            "key": "calendar:ja",
            "payload": {
                "events": [
                    {
                        "uid": "ja1",
                        "starts_at": start,
                        "ends_at": None,
                        "summary": "Lunch",
                        "calendar": "t.ics",
                        "attendees": ["Tanaka Taro <taro@example.jp>"],
                    }
                ]
            },
        },
    )
    assert out.detail["calendar"]["with_known_attendees"] == 1


def test_name_forms_without_a_guess():
    from backchannel.extraction.mentions.names_ja import aliases_for, looks_like_japanese_person, romanise
    from backchannel.memory.text import norm_name

    assert norm_name("田中さん") == norm_name("田中") and norm_name("Sama") == "sama"
    assert [romanise(k) for k in ("タナカ", "タロウ", "シュウヘイ", "キョウコ", "ハットリ")] == [
        "Tanaka",
        "Taro",
        "Shuhei",
        "Kyoko",
        "Hattori",
    ]
    assert looks_like_japanese_person("佐藤様") and not looks_like_japanese_person("司会")
    if pytest.importorskip("sudachipy"):
        assert aliases_for("高橋健太さん") == ["高橋健太", "Takahashi Kenta", "Kenta Takahashi"]
        assert looks_like_japanese_person("渡辺美咲") and not looks_like_japanese_person("インタビュアー")


@pytest.mark.parametrize(
    "title,fact",
    [
        ("田中太郎氏がアクメのCTOに就任", ("works_at", "田中太郎", "アクメ", "CTO")),
        ("アクメ、佐藤花子氏をCFOに起用", ("works_at", "佐藤花子", "アクメ", "CFO")),
        ("鈴木一郎氏がグローベックスを退任", ("left", "鈴木一郎", "グローベックス", None)),
    ],
)
def test_japanese_appointments_in_a_news_item(title, fact):
    from backchannel.extraction.news import extract_news, news_transcript

    t = news_transcript(title, None, published=MEETING, path=None)
    got = {(a.predicate, a.subject.name, a.object.name if a.object else None, a.qualifier) for a in extract_news(t)}
    assert got == {fact}
    assert not extract_news(
        news_transcript("田中さんはアクメの社長に就任しませんでした。", None, published=MEETING, path=None)
    )


def test_names_stored_before_are_normalised_again(store):
    """A store written before honorifics were dropped: migration 0230 renormalises it."""
    store.con.execute("INSERT INTO entities (kind, name, norm) VALUES ('person', '田中さん', '田中さん')")
    eid = store.scalar("SELECT id FROM entities WHERE name = '田中さん'")
    store.con.execute(
        "INSERT INTO aliases (entity_id, alias, norm) VALUES (?, '田中さん', '田中さん'), "
        "(?, '田中 さん', '田中 さん'), (?, 'Sama', 'sama')",
        [eid, eid, eid],
    )
    store.con.execute("DELETE FROM schema_migrations WHERE name LIKE '0230%'")
    assert [m for m in store.migrate() if m.startswith("0230")]
    assert store.scalar("SELECT norm FROM entities WHERE id = ?", [eid]) == "田中"
    assert sorted(
        r[0] for r in store.con.execute("SELECT norm FROM aliases WHERE entity_id = ?", [eid]).fetchall()
    ) == ["sama", "田中"]
    from backchannel.memory import entities

    assert [e.id for e in entities.find(store, "田中様")] == [eid]


# ---------------------------------------------------------------- by mechanism: sentences in no suite


def _one_turn(text: str, speaker: str = "小林 健"):
    return run(lines=[("Alex", "こんにちは。"), (speaker, text)])


def test_a_full_name_written_with_a_space_is_a_person():
    got = facts(_one_turn("原田 美咲さんとは、大学の研究室で三年ほど一緒に研究をしていました。"))
    assert ("worked_with", "小林 健", "原田 美咲", None, None, None) in got


def test_a_deliverable_said_as_the_topic_is_promised_by_the_speaker():
    out = _one_turn("企画書は来週の月曜日までにお送りします。")
    promise = [a for a in out if a.predicate == "committed_to"]
    assert len(promise) == 1 and promise[0].subject.name == "小林 健"
    assert "企画書" in promise[0].object_literal and promise[0].valid_to == date(2026, 10, 5)


def test_a_person_or_a_time_as_the_topic_is_no_deliverable():
    assert not [a for a in _one_turn("明日は会議があります。") if a.predicate == "committed_to"]
    assert not [a for a in _one_turn("田中さんはお送りします。") if a.predicate == "committed_to"]


def test_a_title_by_its_head_noun_at_an_organisation_said_with_de():
    got = facts(_one_turn("長谷川 真一さんは現在、日立製作所で開発部長をされています。"))
    assert ("works_at", "長谷川 真一", "日立製作所", "開発部長", None, None) in got


def test_a_kanji_organisation_without_a_suffix_and_a_te_form_departure():
    got = facts(_one_turn("三年前にソニーを辞めて、今は楽天にいます。"))
    assert ("works_at", "小林 健", "楽天", None, None, None) in got
    assert any(f[0] == "left" and f[2] == "ソニー" for f in got)
    left = [a for a in _one_turn("おととし東芝を退職しました。") if a.predicate == "left"]
    assert len(left) == 1 and left[0].object.name == "東芝" and left[0].valid_to.year == 2024


def test_a_common_noun_in_the_organisation_slot_is_nobody():
    assert not _one_turn("去年会社を辞めました。")


def test_a_tie_by_its_noun_and_negation_kept_to_its_clause():
    assert ("knows", "小林 健", "前田", None, None, None) in facts(
        _one_turn("前田さんとは中学の同級生で、今でもよく飲みに行きます。")
    )
    got = facts(_one_turn("石井さんとは昔同じ部署でしたが、今は連絡していません。"))
    assert ("worked_with", "小林 健", "石井", None, None, None) in got
    assert not _one_turn("石井さんとは同じ部署ではありません。")
    assert not _one_turn("楽天を辞めていません。")


def test_hearsay_names_the_subject_and_marks_a_rumour():
    out = _one_turn("噂によると、村上さんが楽天に転職するそうです。")
    moved = [a for a in out if a.predicate == "works_at"]
    assert len(moved) == 1 and moved[0].subject.name == "村上" and moved[0].stance == "rumour"


def test_knowing_a_name_only_is_no_tie():
    # knowing *of* someone is no tie (core/ties.py): stored with stance knows_of; the same verb without
    # お名前だけ is one
    heard = [a for a in _one_turn("村上さんのことはお名前だけ存じ上げております。") if a.predicate == "knows"]
    assert [(a.object.name, a.stance) for a in heard] == [("村上", "knows_of")]
    knows = [a for a in _one_turn("村上さんのことはよく存じ上げております。") if a.predicate == "knows"]
    assert len(knows) == 1 and knows[0].object.name == "村上" and knows[0].stance == "asserted"


def test_a_rumour_is_hedged():
    out = _one_turn("噂によると、村上さんが楽天に転職するそうです。")
    assert all("hedged" in a.trust_reasons for a in out) and out


def test_a_name_written_with_a_space_splits_and_reads():
    pytest.importorskip("sudachipy")
    from backchannel.extraction.mentions.names_ja import aliases_for, family_name, looks_like_japanese_person, romanise

    assert aliases_for("井上　一郎") == ["Inoue Ichiro", "Ichiro Inoue"]  # a full-width space too
    assert family_name("松本 恵") == "松本" and looks_like_japanese_person("森 優子")
    assert not looks_like_japanese_person("営業 部長")  # a seat, whatever the space
    assert [romanise(k) for k in ("イノウエ", "コウイチ", "ヨウヘイ")] == ["Inoue", "Koichi", "Yohei"]


def test_a_spaced_speaker_label_links_across_meetings_and_to_the_calendar(home: Path, store):
    """ "木村 拓也" as a transcript's label, 木村さん in the next meeting, "Kimura Takuya" on an
    invitation: one person."""
    pytest.importorskip("sudachipy")
    from backchannel.config import Settings
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory import calendar

    settings = Settings()
    files = {
        "2026-05-01 定例.txt": "木村 拓也: 去年グローベックスを辞めました。\nAlex Moreau: そうでしたか。\n",
        "2026-06-01 打ち合わせ.txt": "木村さん: 今はアクメにいます。\nAlex Moreau: いいですね。\n",
    }
    for name, text in files.items():
        (home / name).write_text(text, encoding="utf-8")
        assert ingest_file(store, settings, home / name).status == "ingested"
    kimura = store.scalar("SELECT id FROM entities WHERE kind = 'person' AND name LIKE '木村%'")
    assert store.scalar("SELECT count(*) FROM entities WHERE kind = 'person' AND name LIKE '木村%'") == 1
    rows = store.query("SELECT predicate, subject_id FROM assertions ORDER BY id")
    assert [(r["predicate"], r["subject_id"] == kimura) for r in rows] == [("left", True), ("works_at", True)]
    for attendee in ("Kimura Takuya <k@example.jp>", "Takuya Kimura", "木村様", "木村拓也"):
        assert calendar.resolve_attendee(store, attendee) == kimura, attendee

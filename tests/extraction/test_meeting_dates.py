"""Meeting dates you can trust: the file's metadata, then its name
(ISO and common variants, with a stated rule for day/month order), then
`ingest --date`, then the mtime, which every output marks as a file date; and a
duplicate ingested under a dated name moves the stored meeting and what hangs on it."""

from __future__ import annotations

import json
import os
from datetime import date, datetime

import pytest
from click.testing import CliRunner

from backchannel.cli.common import UserError
from backchannel.cli.main import cli
from backchannel.config import Settings, resolve_paths
from backchannel.extraction.dates.en import resolve_phrase
from backchannel.extraction.formats.meeting_date import date_from_filename, outranks
from backchannel.extraction.formats.parse import parse_file
from backchannel.ops import OpEnv, invoke

MTIME = datetime(2026, 11, 20, 9, 0).timestamp()
TEXT = (
    "Alex Moreau: Thanks for coming, Marc.\n"
    "Marc Dupont: I'll send you the Globex case study next Friday.\n"
    "Marc Dupont: I joined Initech in January, after five years at Globex.\n"
)


@pytest.mark.parametrize(
    "name,expected",
    [
        ("2018-10-11 education_13.txt", datetime(2018, 10, 11)),
        ("2026-03-05 partner sync.json", datetime(2026, 3, 5)),
        ("partner sync 20260305.vtt", datetime(2026, 3, 5)),
        ("sync 05.03.2026.txt", datetime(2026, 3, 5)),  # dotted: day first
        ("sync 13-03-2026.txt", datetime(2026, 3, 13)),  # 13 cannot be a month
        ("sync 03_13_2026.txt", datetime(2026, 3, 13)),  # nor here, month first
        ("sync 07-07-2026.txt", datetime(2026, 7, 7)),
        ("sync 05-03-2026.txt", None),  # 5 March or 3 May: not guessed
        ("5 March 2026 board.txt", datetime(2026, 3, 5)),
        ("board March 5, 2026.txt", datetime(2026, 3, 5)),
        ("board_5mar2026.srt", datetime(2026, 3, 5)),
        ("2026-Mar-05 board.srt", datetime(2026, 3, 5)),
        ("31.02.2026 board.txt", None),
        ("education_13.json", None),
    ],
)
def test_dates_in_file_names(name, expected):
    assert date_from_filename(name) == expected


def test_origin_order():
    assert outranks("filename", "mtime") and outranks("given", "mtime") and outranks("json", "filename")
    assert outranks("filename", "filename")  # a renamed file corrects its date
    assert not outranks("mtime", "mtime") and not outranks("given", "filename") and not outranks("mtime", "given")


def _write(folder, name, text=TEXT):
    p = folder / name
    p.write_text(text, encoding="utf-8")
    os.utime(p, (MTIME, MTIME))
    return p


def test_given_date_between_the_name_and_the_mtime(tmp_path):
    undated = _write(tmp_path, "sync.txt")
    dated = _write(tmp_path, "2024-01-02 sync.txt")
    front = _write(tmp_path, "2024-01-03 sync.txt", "---\ndate: 2025-09-18\n---\n" + TEXT)
    given = datetime(2025, 5, 6)
    assert (parse_file(undated, given_date=given).meeting_date_origin) == "given"
    assert parse_file(undated, given_date=given).meeting_date == given
    assert parse_file(dated, given_date=given).meeting_date == datetime(2024, 1, 2)
    assert parse_file(front, given_date=given).meeting_date == datetime(2025, 9, 18)
    # the mtime is not the meeting's date: kept as the file's, the meeting's stays unknown
    assert parse_file(undated).meeting_date is None
    assert parse_file(undated).file_date == datetime.fromtimestamp(MTIME)
    assert parse_file(undated).meeting_date_origin == "mtime"


def test_ingest_date_flag_and_fallback_marked_everywhere(home, tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--name", "Alex Moreau"]).exit_code == 0
    folder = tmp_path / "m"
    folder.mkdir()
    undated = _write(folder, "coffee.txt")
    res = runner.invoke(cli, ["ingest", str(undated)])
    assert res.exit_code == 0, res.output
    assert "date unknown (file date 2026-11-20)" in res.stdout
    assert "1 meeting with no date (only the file's mtime" in res.output
    res = runner.invoke(cli, ["assertions", "--predicate", "committed_to"])
    assert "— Marc Dupont, date unknown (file date 2026-11-20)" in res.stdout, res.output
    rows = json.loads(runner.invoke(cli, ["assertions", "--json"]).stdout)
    assert rows and {r["date_origin"] for r in rows} == {"mtime"}
    # nothing is computed from the file's date: no said_at, "next Friday" unresolved
    assert {r["said_at"] for r in rows} == {None} and {r["valid_to"] for r in rows} == {None}
    [src] = json.loads(runner.invoke(cli, ["sources", "--json"]).stdout)
    assert src["meeting_date"] is None and src["file_date"].startswith("2026-11-20")
    res = runner.invoke(cli, ["show", src["id"]])
    assert "date unknown (file date 2026-11-20): the file's mtime is not the meeting's; set it with" in res.stdout
    res = runner.invoke(cli, ["ask", "what did Marc promise?"])
    assert "— Marc Dupont, date unknown" in res.stdout, res.output

    other = _write(folder, "lunch.txt", "Alex Moreau: Hello Nina.\nNina Roy: I'll send you the slides tomorrow.\n")
    res = runner.invoke(cli, ["ingest", "--date", "2025-05-06", str(other)])
    assert res.exit_code == 0 and "dated 2025-05-06 (ingest --date)" in res.stdout, res.output
    res = runner.invoke(cli, ["assertions", "--about", "Nina Roy", "--json"])
    [a] = json.loads(res.stdout)
    assert a["said_at"].startswith("2025-05-06") and a["valid_to"] == "2025-05-07" and a["date_origin"] == "given"
    res = runner.invoke(cli, ["ingest", "--date", "2025-13-40", str(other)])
    # a UserError: main() prints it without a traceback and exits 1
    assert isinstance(res.exception, UserError) and "is not a date: write YYYY-MM-DD" in str(res.exception)


def test_a_dated_duplicate_moves_the_meeting_and_what_depends_on_it(store, tmp_path):
    env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau"}), paths=resolve_paths())
    undated = _write(tmp_path, "coffee.txt")
    first = invoke(env, "ingest", {"paths": [str(undated)]})
    sid = first["results"][0]["source_id"]
    assert first["results"][0]["date_origin"] == "mtime"
    before = {a["predicate"]: a for a in invoke(env, "assertions", {"about": "Marc Dupont"})}
    # the file's date is not the meeting's: "next Friday" and "in January" stay unresolved
    assert before["committed_to"]["valid_to"] is None and before["committed_to"]["said_at"] is None
    assert before["works_at"]["valid_from"] is None

    renamed = _write(tmp_path, "2018-10-11 coffee.txt")
    out = invoke(env, "ingest", {"paths": [str(renamed)]})
    [r] = out["results"]
    assert r["status"] == "skipped" and r["source_id"] == sid and out["skipped"] == 1
    assert r["redated"]["from_origin"] == "mtime" and r["redated"]["to_origin"] == "filename"
    src = store.query("SELECT meeting_date, meeting_date_origin FROM sources WHERE id = ?", [sid])[0]
    assert src == {"meeting_date": datetime(2018, 10, 11), "meeting_date_origin": "filename"}
    after = {a["predicate"]: a for a in invoke(env, "assertions", {"about": "Marc Dupont"})}
    assert {a["said_at"] for a in after.values()} == {datetime(2018, 10, 11)}
    # the same as a first ingest under the dated name would give
    assert after["committed_to"]["valid_to"] == resolve_phrase("next Friday", datetime(2018, 10, 11)).point
    assert after["committed_to"]["valid_to"] != before["committed_to"]["valid_to"]
    assert after["works_at"]["valid_from"] == date(2018, 1, 1)
    assert after["committed_to"]["date_origin"] == "filename"
    [ev] = store.events(kind="source_redated")
    assert ev["data"]["source_id"] == sid and ev["data"]["to"].startswith("2018-10-11")

    # The undated copy again, or the same name again: nothing moves back.
    for p in (undated, renamed):
        [again] = invoke(env, "ingest", {"paths": [str(p)]})["results"]
        assert again["status"] == "skipped" and "redated" not in again
    assert store.scalar("SELECT meeting_date FROM sources WHERE id = ?", [sid]) == datetime(2018, 10, 11)


def test_redated_cli_line(home, tmp_path):
    runner = CliRunner()
    runner.invoke(cli, ["init", "--name", "Alex Moreau"])
    runner.invoke(cli, ["ingest", str(_write(tmp_path, "coffee.txt"))])
    res = runner.invoke(cli, ["ingest", str(_write(tmp_path, "coffee 11.10.2018.txt"))])
    assert res.exit_code == 0
    assert "redated   coffee 11.10.2018.txt: duplicate of S" in res.stdout
    assert "date unknown → 2018-10-11 (the file name)" in res.stdout
    assert "0 ingested, 1 skipped (1 redated), 0 failed" in res.stdout


def test_why_now_says_when_a_date_is_the_files():
    from backchannel.engine.judge import Judgement, why_now

    j = Judgement(0.8, {}, [], None, None)
    ev = [{"speaker": "Marc Dupont", "said_at": "2026-11-20T09:00:00", "date_origin": "mtime"}]
    [line] = why_now(j, ev, datetime(2026, 11, 30))
    assert line == (
        "Marc Dupont said it 10 days ago (2026-11-20, the transcript file's date: the meeting's is unknown)."
    )
    ev[0]["date_origin"] = "filename"
    assert why_now(j, ev, datetime(2026, 11, 30)) == ["Marc Dupont said it 10 days ago (2026-11-20)."]

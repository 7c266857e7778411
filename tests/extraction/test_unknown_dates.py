"""A meeting dated only by its file's mtime has an unknown date: nothing is computed from
it (no overdue, no relative date, no silence) until `ingest --date FILE=DATE`, a
`meeting-dates.toml` beside the files or `sources redate` sets it; then the relative and
due dates of its assertions are computed against it. All through the CLI, on real files."""

from __future__ import annotations

import json
import os
from datetime import date, datetime, timedelta

from click.testing import CliRunner

from backchannel.cli.main import cli

MTIME = datetime(2026, 11, 20, 9, 0).timestamp()
MARC = "Alex Moreau: Thanks for coming, Marc.\nMarc Dupont: I'll send you the Globex case study next Friday.\n"
NINA = "Alex Moreau: Hello Nina.\nNina Roy: I'll send you the slides tomorrow.\n"


def _write(folder, name, text):
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    os.utime(p, (MTIME, MTIME))
    return p


def _cli(*args):
    res = CliRunner().invoke(cli, list(args))
    return res


def _said(res):
    """What the user sees: the output, and a UserError's message (main() prints it, exit 1)."""
    return res.output + (str(res.exception) if res.exception else "")


def _about(name):
    return json.loads(_cli("assertions", "--about", name, "--json").stdout)


def test_undated_promise_is_never_overdue_until_dated(home, tmp_path):
    assert _cli("init", "--name", "Alex Moreau").exit_code == 0
    f = _write(tmp_path, "coffee.txt", MARC)
    assert _cli("ingest", str(f)).exit_code == 0
    res = _cli("ask", "what did Marc promise?")
    assert "meeting date unknown" in res.stdout and "overdue" not in res.stdout, res.output
    [a] = _about("Marc Dupont")
    assert a["said_at"] is None and a["valid_to"] is None and a["date_phrase"] == "next Friday"

    # the owner says when it was: two months ago, so "next Friday" is long past
    when = (datetime.now() - timedelta(days=60)).date()
    [src] = json.loads(_cli("sources", "--json").stdout)
    res = _cli("sources", "redate", src["id"], when.isoformat())
    assert res.exit_code == 0, res.output
    assert f"date unknown → {when} (sources redate)" in res.stdout and "1 relative date recomputed" in res.stdout
    [a] = _about("Marc Dupont")
    due = date.fromisoformat(a["valid_to"])
    assert a["said_at"].startswith(when.isoformat()) and a["date_origin"] == "user"
    assert 0 < (due - when).days <= 14 and due.weekday() == 4  # the Friday after the meeting
    res = _cli("ask", "what did Marc promise?")
    assert f"overdue by {(date.today() - due).days} days" in res.stdout, res.output
    # the same again: nothing moves
    assert "already has that date" in _cli("sources", "redate", src["id"], when.isoformat()).stdout
    assert "is not a date" in _said(_cli("sources", "redate", src["id"], "someday"))


def test_date_per_file_and_manifest(home, tmp_path):
    _cli("init", "--name", "Alex Moreau")
    folder = tmp_path / "meetings"
    marc = _write(folder, "coffee.txt", MARC)
    _write(folder, "sub/lunch.txt", NINA)
    _write(folder, "standup.txt", "Alex Moreau: Morning.\nOmar Haddad: I'll book the room tomorrow.\n")
    (folder / "meeting-dates.toml").write_text(
        '# file name (relative to this folder) = date\n"sub/lunch.txt" = 2025-05-06\n"coffee.txt" = 2024-01-01\n',
        encoding="utf-8",
    )
    res = _cli("ingest", "--date", f"{marc}=2025-03-03", str(folder))
    assert res.exit_code == 0, res.output
    assert "coffee.txt: " in res.stdout and "dated 2025-03-03 (ingest --date)" in res.stdout  # FILE=DATE first
    assert "dated 2025-05-06 (the dates manifest)" in res.stdout  # the manifest, one folder up
    assert "standup.txt" in res.stdout and "date unknown (file date 2026-11-20)" in res.stdout
    [nina] = _about("Nina Roy")
    assert nina["valid_to"] == "2025-05-07" and nina["date_origin"] == "manifest"
    [omar] = _about("Omar Haddad")
    assert omar["valid_to"] is None and omar["said_at"] is None

    # The stored undated meeting gets its date by naming it again.
    res = _cli("ingest", "--date", f"{folder / 'standup.txt'}=2025-06-02", str(folder / "standup.txt"))
    assert res.exit_code == 0 and "date unknown → 2025-06-02 (ingest --date)" in res.stdout, res.output
    [omar] = _about("Omar Haddad")
    assert omar["valid_to"] == "2025-06-03"


def test_bad_dates_are_clear_errors(home, tmp_path):
    _cli("init", "--name", "Alex Moreau")
    folder = tmp_path / "m"
    f = _write(folder, "coffee.txt", MARC)
    res = _cli("ingest", "--date", f"{tmp_path / 'nope.txt'}=2025-01-01", str(f))
    assert res.exit_code != 0 and "is not a file" in _said(res)
    res = _cli("ingest", "--date", f"{f}=2025-02-30", str(f))
    assert res.exit_code != 0 and "is not a date" in _said(res)
    (folder / "meeting-dates.toml").write_text('"coffee.txt" = "soon"\n', encoding="utf-8")
    res = _cli("ingest", "--json", str(folder))
    out = json.loads(res.stdout)
    assert res.exit_code == 1 and out["ingested"] == 0
    assert "meeting-dates.toml: 'coffee.txt' = 'soon' is not a date" in out["failed"][0]["error"]
    # nothing was lost: fixed, the same folder goes in
    (folder / "meeting-dates.toml").write_text('"coffee.txt" = 2025-02-03\n', encoding="utf-8")
    res = _cli("ingest", str(folder))
    assert res.exit_code == 0 and "dated 2025-02-03 (the dates manifest)" in res.stdout


def test_no_silence_is_measured_from_a_file_date(home, tmp_path):
    _cli("init", "--name", "Alex Moreau")
    f = _write(
        tmp_path,
        "catch-up.txt",
        "Alex Moreau: Good to see you, Marc.\n"
        "Marc Dupont: I worked with Sophie Martin at Acme for years.\nAlex Moreau: Let's talk again soon.\n",
    )
    old = datetime(2025, 1, 10).timestamp()
    os.utime(f, (old, old))  # a file date long ago: still not a meeting date
    assert _cli("ingest", str(f)).exit_code == 0
    res = _cli("ask", "who haven't I talked to in a while?")
    assert "No word from Marc Dupont" not in res.stdout, res.output
    [src] = json.loads(_cli("sources", "--json").stdout)
    assert _cli("sources", "redate", src["id"], "2025-01-10").exit_code == 0
    res = _cli("ask", "who haven't I talked to in a while?")
    assert "No word from Marc Dupont" in res.stdout and "last seen 2025-01-10" in res.stdout, res.output


def test_a_sweep_reminds_of_no_promise_whose_date_is_unknown(home, tmp_path):
    """`ask` lists an undated promise ("meeting date unknown"); a sweep, which nobody asked
    for, does not propose a reminder of it."""
    _cli("init", "--name", "Alex Moreau")
    f = _write(tmp_path, "standup.txt", "Marc Dupont: Morning.\nAlex Moreau: I'll send Marc the budget tomorrow.\n")
    assert _cli("ingest", str(f)).exit_code == 0
    assert "meeting date unknown" in _cli("ask", "what did I promise?").stdout
    res = _cli("wake", "sweep", "--json")
    [run] = json.loads(res.stdout)["runs"]
    assert run["proposals"] == [] and run["candidates"] == 0, run
    # dated, the same promise is a candidate (overdue: "tomorrow" after a meeting 10 days ago)
    [src] = json.loads(_cli("sources", "--json").stdout)
    when = (datetime.now() - timedelta(days=10)).date().isoformat()
    assert _cli("sources", "redate", src["id"], when).exit_code == 0
    [run] = json.loads(_cli("wake", "sweep", "--json").stdout)["runs"]
    assert run["candidates"] >= 1, run


def test_validity_in_words_on_the_cli(home, tmp_path):
    _cli("init", "--name", "Alex Moreau")
    f = _write(
        tmp_path,
        "2025-05-02 sync.txt",
        "Alex Moreau: Hi.\nMarc Dupont: I'll send you the deck next Friday.\nMarc Dupont: I left Globex in March.\n",
    )
    assert _cli("ingest", str(f)).exit_code == 0
    out = _cli("assertions").stdout
    assert '"send you the deck" (to Alex Moreau) due 2025-05-09' in out and "?→" not in out, out
    assert "left Globex unknown→2025-03-31" in out  # an end with no known start

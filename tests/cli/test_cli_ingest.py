"""The CLI end to end in a temp home: init, ingest (idempotent, failures reported),
listings with stable JSON, and a kill -9 during a bulk ingest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from backchannel.demo import corpus_files


def bc(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "backchannel", *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"backchannel {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def test_init_ingest_list(home, tmp_path):
    out = json.loads(bc("init", "--name", "Alex Moreau", "--alias", "Alex", "--json").stdout)
    assert Path(out["config"]).exists() and "0001_core" in out["migrations"]
    folder = tmp_path / "meetings"
    folder.mkdir()
    for f in corpus_files():
        (folder / f.name).write_bytes(f.read_bytes())
    (folder / "broken.vtt").write_text("WEBVTT\n\nnot a cue at all\n")
    r = bc("ingest", str(folder), "--json", check=False)
    summary = json.loads(r.stdout)
    assert r.returncode == 1
    assert summary["ingested"] == 4 and summary["skipped"] == 0
    assert [Path(f["path"]).name for f in summary["failed"]] == ["broken.vtt"]
    assert summary["failed"][0]["error"]

    again = json.loads(bc("ingest", str(folder / corpus_files()[0].name), "--json").stdout)
    assert again == {"ingested": 0, "skipped": 1, "failed": []}

    sources = json.loads(bc("sources", "--json").stdout)
    assert len(sources) == 4
    assert {s["meeting_date_origin"] for s in sources} <= {"front_matter", "json", "vtt_note", "filename"}

    about = json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout)
    assert about, "the seed story must teach something about Sophie Martin"
    for a in about:
        assert a["quote"] and a["speaker"] and a["source_id"]
    worked = [a for a in about if a["predicate"] == "worked_with"]
    assert worked and worked[0]["speaker"] == "Marc Dupont"
    assert str(worked[0]["valid_from"]).startswith("2016") and str(worked[0]["valid_to"]).startswith("2021")
    cio = [a for a in about if a["predicate"] == "works_at" and a["object"] == "Acme"]
    assert cio and cio[0]["qualifier"] == "CIO" and cio[0]["speaker"] == "Julie Bernard"

    ents = json.loads(bc("entities", "--json").stdout)
    owner = [e for e in ents if e["is_owner"]]
    assert len(owner) == 1 and owner[0]["name"] == "Alex Moreau"
    shown = json.loads(bc("show", sources[0]["id"], "--json").stdout)
    assert shown["utterances"] and shown["id"] == sources[0]["id"]
    assert "Sophie Martin" in bc("assertions", "--about", "sophie martin").stdout


def test_init_writes_valid_toml_for_any_name(home):
    # An apostrophe, a double quote or a backslash in a name must not break the config file.
    name = 'Seán "Jack" O\'Neill\\'
    bc("init", "--name", name, "--alias", "O'Neill", "--email", "sean@example.org")
    owner = [e for e in json.loads(bc("entities", "--json").stdout) if e["is_owner"]]
    assert owner[0]["name"] == name and "O'Neill" in owner[0]["aliases"]
    # Run again with other values: the config is kept, and the user is told the options were not applied.
    again = bc("init", "--name", "Alex Moreau", "--email", "sean@example.org")
    assert "--name 'Alex Moreau' not applied" in again.stderr and "--email" not in again.stderr
    assert [e["name"] for e in json.loads(bc("entities", "--json").stdout) if e["is_owner"]] == [name]


def test_a_home_that_is_a_file_is_a_clear_error(tmp_path, monkeypatch):
    afile = tmp_path / "not-a-folder"
    afile.write_text("")
    monkeypatch.setenv("BACKCHANNEL_HOME", str(afile))
    r = bc("sources", check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "cannot create the data folders" in r.stderr and "BACKCHANNEL_HOME" in r.stderr


def test_a_warning_during_a_command_says_what_went_wrong(home, tmp_path):
    # Without a daemon, `wake calendar` runs here: a broken calendar is reported with its reason.
    missing = tmp_path / "gone.ics"
    (home / "config.toml").write_text(f'[calendar]\nsources = ["{missing}"]\n')
    r = bc("wake", "calendar")
    assert "calendar problem" in r.stderr and f"{missing}: cannot read: No such file or directory" in r.stderr


def test_kill_9_during_bulk_ingest_then_rerun_stores_each_source_once(home, tmp_path):
    folder = tmp_path / "bulk"
    folder.mkdir()
    words = "We reviewed the roadmap and the budget in detail today. " * 60
    for i in range(60):
        (folder / f"2026-01-{1 + i % 28:02d}-m{i:03d}.txt").write_text(
            "".join(f"Speaker {j % 3}: {words} item {i}-{j}\n" for j in range(12)), encoding="utf-8"
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "ingest", str(folder), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    db = home / "data" / "backchannel.duckdb"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (db.exists() and db.stat().st_size > 0):
        time.sleep(0.05)
    time.sleep(1.5)  # let some, not all, sources commit
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    r = bc("ingest", str(folder), "--json")
    summary = json.loads(r.stdout)
    assert summary["failed"] == []
    assert summary["ingested"] + summary["skipped"] == 60
    sources = json.loads(bc("sources", "--json").stdout)
    assert len(sources) == 60
    assert len({s["content_hash"] for s in sources}) == 60


def test_as_of_answers_who_held_a_role_then(home, tmp_path):
    bc("init", "--name", "Alex Moreau")
    (tmp_path / "2024-05-02 board.txt").write_text("Julie Bernard: Robert Petit is the CIO of Acme.\n")
    (tmp_path / "2026-10-02 breakfast.txt").write_text("Julie Bernard: Sophie Martin is now the CIO of Acme.\n")
    bc("ingest", str(tmp_path / "2024-05-02 board.txt"), str(tmp_path / "2026-10-02 breakfast.txt"))

    def holders(day: str) -> list[str]:
        rows = json.loads(bc("assertions", "--predicate", "works_at", "--as-of", day, "--json").stdout)
        return [r["subject"] for r in rows if r["object"] == "Acme" and r["qualifier"] == "CIO"]

    assert holders("2023-01-01") == []
    assert holders("2025-01-01") == ["Robert Petit"]
    assert holders("2026-11-01") == ["Sophie Martin"]
    current = json.loads(bc("assertions", "--predicate", "works_at", "--current", "--json").stdout)
    assert [r["subject"] for r in current] == ["Sophie Martin"]
    bad = bc("assertions", "--as-of", "last tuesday", check=False)
    assert bad.returncode == 1 and "--as-of" in bad.stderr and "Traceback" not in bad.stderr
    typo = bc("assertions", "--predicate", "work_at", check=False)
    assert typo.returncode == 1 and "unknown predicate 'work_at'" in typo.stderr and "works_at" in typo.stderr


def test_folder_ingest_skips_licences_and_readmes(tmp_path):
    from backchannel.extraction.ingest import expand_paths

    (tmp_path / "LICENSE.txt").write_text("MIT License\n")
    (tmp_path / "README.md").write_text("# corpus\n")
    (tmp_path / "INDEX.json").write_text("[]")
    (tmp_path / "index review.txt").write_text("Marc: hello\n")
    (tmp_path / "processed").mkdir()
    (tmp_path / "processed" / "old.txt").write_text("Marc: old\n")
    (tmp_path / "LICENSE_QMSum_MIT.txt").write_text("MIT License\n")
    assert [p.name for p in expand_paths([tmp_path])] == ["index review.txt"]
    passed_over: list = []
    list(expand_paths([tmp_path], passed_over))
    assert sorted(p.name for p in passed_over) == ["INDEX.json", "LICENSE.txt", "LICENSE_QMSum_MIT.txt", "README.md"]
    assert [p.name for p in expand_paths([tmp_path / "README.md"])] == ["README.md"]  # named: taken as given


def test_ingest_calls_carry_up_to_50_email_messages_offline_and_8_files_otherwise(tmp_path):
    from backchannel.cli.ingest_cmd import chunks
    from backchannel.extraction.ingest import expand_paths
    from tests.support import mail_fixtures as fx

    maildir = fx.write_maildir(tmp_path / "Maildir", fx.numbered(60))
    for n in range(10):
        (tmp_path / f"meeting-{n}.txt").write_text("Marc: hello\n")
    fx.write_mbox(tmp_path / "archive.mbox", fx.numbered(3))
    files = [
        str(f) for f in expand_paths([maildir, *sorted(tmp_path.glob("meeting-*.txt")), tmp_path / "archive.mbox"])
    ]
    offline = chunks(files, offline=True)
    assert [len(c) for c in offline] == [50, 10, 8, 3]  # messages; then transcripts and the mbox file, 8 a call
    assert [f for c in offline for f in c] == files  # every path once, in order
    assert [len(c) for c in chunks(files, offline=False)] == [8] * 8 + [7]  # a model may take minutes per file

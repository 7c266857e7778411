"""`export NAME` and `forget NAME`: everything held about a person, and erasure that
leaves no byte of them in the database file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backchannel.demo import corpus_files


def bc(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "backchannel", *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"backchannel {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


@pytest.fixture
def demo_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "demo"
    monkeypatch.setenv("BACKCHANNEL_HOME", str(home))
    bc("demo", "--home", str(home))
    return home


def raw_db(home: Path) -> bytes:
    data = home / "data" / "backchannel.duckdb"
    wal = Path(str(data) + ".wal")
    return data.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_export_holds_everything_about_a_person(demo_home):
    data = json.loads(bc("export", "Marc Dupont").stdout)
    assert data["entity"]["name"] == "Marc Dupont"
    assert {a["alias"] for a in data["aliases"]} >= {"Marc Dupont", "marc@example.org"}
    assert any(a["predicate"] == "worked_with" for a in data["assertions"])
    assert any("case study" in u["text"] for u in data["utterances"])
    assert [p["id"] for p in data["proposals"]] == ["P-1"]
    out = demo_home / "marc.json"
    bc("export", "marc@example.org", "-o", str(out))
    assert json.loads(out.read_text())["entity"]["id"] == data["entity"]["id"]
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    shared = demo_home / "shared.json"
    shared.write_text("{}")
    shared.chmod(0o644)  # overwriting a readable file must not leave the export readable
    bc("export", "Marc Dupont", "-o", str(shared))
    assert oct(shared.stat().st_mode & 0o777) == "0o600" and json.loads(shared.read_text())["entity"]
    nowhere = bc("export", "Marc Dupont", "-o", str(demo_home / "no" / "such" / "dir.json"), check=False)
    assert nowhere.returncode == 1 and "cannot write" in nowhere.stderr and "Traceback" not in nowhere.stderr


def test_forget_erases_every_byte_and_the_store_keeps_working(demo_home, tmp_path):
    # Marc's 7 assertions: as subject or speaker (two are the jobs his shared stint at Globex implies), including "She is still at Globex" (Sophie, named
    # two turns before: offline_people.pronoun_facts).
    assert b"Marc Dupont" in raw_db(demo_home)
    dry = json.loads(bc("forget", "Marc Dupont", "--dry-run", "--json").stdout)
    assert dry["dry_run"] and dry["counts"]["assertions"] == 7 and b"Marc Dupont" in raw_db(demo_home)

    report = json.loads(bc("forget", "Marc Dupont", "--yes", "--json").stdout)
    assert report["counts"]["proposals"] == 1
    raw = raw_db(demo_home)
    for secret in (b"Marc Dupont", b"marc@example.org", b"Globex case study", b"Sophie Martin and I worked"):
        assert secret not in raw, secret
    assert not any(f.name.endswith(".rewrite") for f in (demo_home / "data").iterdir())

    assert json.loads(bc("proposals", "--json").stdout) == []
    sophie = json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout)
    assert sophie and all("Marc" not in (a["speaker"] or "") for a in sophie)
    for a in json.loads(bc("assertions", "--json").stdout):  # quotes still verbatim slices
        src = json.loads(bc("show", a["source_id"], "--json").stdout)
        text = next(u["text"] for u in src["utterances"] if u["idx"] == a["utterance_idx"])
        assert text[a["span_start"] : a["span_end"]] == a["quote"]

    # The same transcript again does not bring him back; new data still gets fresh ids.
    coffee = next(f for f in corpus_files() if "coffee" in f.name)
    again = json.loads(bc("ingest", str(coffee), "--json").stdout)
    assert again["skipped"] == 1
    new = tmp_path / "2026-11-20 later.txt"
    new.write_text("Julie Bernard: Karl Weber joined Globex last month.\n")
    assert json.loads(bc("ingest", str(new), "--json").stdout)["ingested"] == 1
    ids = [a["id"] for a in json.loads(bc("assertions", "--json").stdout)]
    assert len(ids) == len(set(ids))


def test_forget_refuses_the_owner_an_ambiguous_name_and_a_running_daemon(demo_home):
    r = bc("forget", "Alex Moreau", "--yes", check=False)
    assert r.returncode == 1 and "that is you" in r.stderr
    r = bc("forget", "Nobody Atall", "--yes", check=False)
    assert r.returncode == 1 and "no entity named" in r.stderr
    from backchannel.config import resolve_paths
    from backchannel.daemon.lockfile import DaemonLock

    lock = DaemonLock(resolve_paths({**os.environ}).ensure().lock_file)
    lock.acquire()
    try:
        r = bc("forget", "Marc Dupont", "--yes", check=False)
        assert r.returncode == 1 and "stop it first" in r.stderr
    finally:
        lock.release()


def test_forget_dry_run_goes_through_a_running_daemon(demo_home):
    """--dry-run writes nothing, so it works while the daemon runs (the `forget_plan`
    op over its API); the real forget still refuses."""
    log_path = demo_home / "daemon.log"
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "run"],
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL,
        stderr=log_path.open("w"),
    )
    try:
        deadline = time.monotonic() + 30
        while "daemon ready" not in log_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(0.05)
        dry = json.loads(bc("forget", "Marc Dupont", "--dry-run", "--json").stdout)
        assert dry["dry_run"] and dry["entity"]["name"] == "Marc Dupont" and dry["counts"]["assertions"] == 7
        assert "Marc Dupont (person" in bc("forget", "marc@example.org", "--dry-run").stdout
        r = bc("forget", "Alex Moreau", "--dry-run", check=False)
        assert r.returncode == 1 and "that is you" in r.stderr
        r = bc("forget", "Marc Dupont", "--yes", check=False)
        assert r.returncode == 1 and "stop it first" in r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, log_path.read_text()[-3000:]
    assert b"Marc Dupont" in raw_db(demo_home)  # nothing was erased

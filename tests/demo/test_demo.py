"""`backchannel demo`: the seed story end to end, offline, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import time


def test_demo_runs_the_whole_loop_offline(tmp_path, monkeypatch):
    monkeypatch.delenv("BACKCHANNEL_HOME", raising=False)
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "backchannel", "demo", "--home", str(tmp_path / "demo"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [o["status"] for o in report["ingested"]] == ["ingested"] * 4
    assert [run["wake"] for run in report["runs"]] == ["calendar", "meeting_soon", "signal"]
    assert all(run["status"] == "done" for run in report["runs"])
    (p,) = report["proposals"]
    assert p["kind"] == "introduction" and p["title"] == "Ask Marc Dupont for an introduction to Sophie Martin"
    quotes = [e["quote"] for e in p["evidence"]]
    assert any("Sophie Martin and I worked together at Globex" in q for q in quotes)
    assert any("Sophie Martin is now the CIO of Acme" in q for q in quotes)
    assert "You meet Marc Dupont on Thursday" in p["body"] and "Acme publishes a tender" in p["body"]
    assert p["action"]["to"] == "marc@example.org" and p["status"] == "pending"
    assert elapsed < 60

    # The scratch home is a real one: the CLI reads it back, and the demo is idempotent.
    env = {"BACKCHANNEL_HOME": report["home"]}
    shown = subprocess.run(
        [sys.executable, "-m", "backchannel", "show", "P-1"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, **env},
    )
    assert shown.returncode == 0 and "Sophie Martin" in shown.stdout
    again = subprocess.run(
        [sys.executable, "-m", "backchannel", "demo", "--home", report["home"], "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    second = json.loads(again.stdout)
    assert {o["status"] for o in second["ingested"]} == {"skipped"}
    assert len(second["proposals"]) == 1


def test_status_shows_the_upcoming_meeting_and_its_wake(tmp_path):
    import os

    home = tmp_path / "demo"
    subprocess.run(
        [sys.executable, "-m", "backchannel", "demo", "--home", str(home)], check=True, capture_output=True, timeout=120
    )
    env = {**os.environ, "BACKCHANNEL_HOME": str(home)}
    st = json.loads(
        subprocess.run(
            [sys.executable, "-m", "backchannel", "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )
    (meeting,) = st["upcoming_meetings"]
    assert meeting["summary"] == "Coffee with Marc" and meeting["known_attendees"] >= 1
    assert meeting["wakes_at"] < meeting["starts_at"]
    text = subprocess.run(
        [sys.executable, "-m", "backchannel", "status"], env=env, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "upcoming meetings:" in text and "Coffee with Marc" in text

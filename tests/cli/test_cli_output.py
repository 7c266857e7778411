"""Small frictions, one test each: trace of an inbox run, where a
source's file is now, status with asks apart, brief titles, 'you' in proposals,
service print under /tmp, doctor --deep progress, export on a terminal, README."""

from __future__ import annotations

import json
import shutil
from datetime import UTC
from pathlib import Path

from click.testing import CliRunner

from backchannel.cli.main import cli
from backchannel.config import Settings, resolve_paths
from backchannel.ops import OpEnv, invoke

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "backchannel" / "demo" / "corpus"


def _inbox_wake(store, settings, paths, src, key):
    from backchannel.engine.pipeline import run_wake_once

    return run_wake_once(store, settings, paths, {"kind": "inbox", "key": key, "payload": {"path": str(src)}})


def test_trace_of_inbox_runs_and_show_says_where_the_file_is(home, store):
    paths = resolve_paths().ensure()
    settings = Settings(owner={"name": "Alex Moreau"})
    inbox = paths.data_dir / "inbox"
    inbox.mkdir(parents=True)
    src = inbox / "coffee.vtt"
    shutil.copy(CORPUS / "2025-09-18 coffee with Marc.vtt", src)
    first = _inbox_wake(store, settings, paths, src, "inbox:a")
    sid = first.detail["ingest"]["source_id"]
    shutil.copy(CORPUS / "2025-09-18 coffee with Marc.vtt", src)
    second = _inbox_wake(store, settings, paths, src, "inbox:b")
    env = OpEnv(store=store, settings=settings, paths=paths)

    t = invoke(env, "trace", {"id": second.run_id})
    assert t["ingest"]["duplicate_of"] == sid and t["ingest"]["path"] == str(src)
    assert t["ingest"]["moved_to"] == str(paths.data_dir / "processed" / "coffee-1.vtt")
    t1 = invoke(env, "trace", {"id": first.run_id})
    assert t1["ingest"]["status"] == "ingested" and t1["ingest"]["duplicate_of"] is None

    # the file now lives in processed/, and the source says so
    src_row = invoke(env, "source", {"ref": sid, "utterances": False})
    assert src_row["path"] == str(paths.data_dir / "processed" / "coffee.vtt")
    store.close()  # the CLI opens the database itself (no daemon)
    runner = CliRunner()
    res = runner.invoke(cli, ["trace", second.run_id])
    assert res.exit_code == 0, res.output
    assert f"trigger: inbox file {src}" in res.stdout
    assert f"file: coffee.vtt: skipped: duplicate of {sid}" in res.stdout
    assert f"moved to {paths.data_dir / 'processed' / 'coffee-1.vtt'}" in res.stdout
    res = runner.invoke(cli, ["trace", first.run_id])
    n = first.detail["ingest"]["assertions"]
    assert n >= 5 and f"file: coffee.vtt: ingested as {sid}, {n} assertion(s)" in res.stdout
    res = runner.invoke(cli, ["show", sid])
    assert f"  file: {paths.data_dir / 'processed' / 'coffee.vtt'}\n" in res.stdout


def test_status_shows_asks_apart_from_wakes(home, store):
    from backchannel.engine import runs

    paths = resolve_paths().ensure()
    env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau"}), paths=paths)
    wake = runs.start(store, runs.WakeRecord("sweep", "sweep:1", {}))
    runs.finish(store, wake, "done")
    out = invoke(env, "ask", {"question": "who have I lost touch with?"})
    st = invoke(env, "status", {})
    assert [r["id"] for r in st["recent_wakes"]] == [wake]
    assert [(r["id"], r["question"]) for r in st["recent_asks"]] == [(out["run_id"], "who have I lost touch with?")]
    store.close()
    res = CliRunner().invoke(cli, ["status"])
    assert res.exit_code == 0, res.output
    wakes, asks = res.stdout.split("recent questions (ask):")
    assert wake in wakes and out["run_id"] not in wakes
    assert out["run_id"] in asks and '"who have I lost touch with?"' in asks


def test_wake_says_what_it_did_and_when_quiet_hours_hold(home, monkeypatch):
    from datetime import datetime, timedelta

    from backchannel.memory import Store, utcnow
    from tests.support.synth import seed_story

    now = datetime.now(UTC)
    start, end = (now - timedelta(hours=1)).strftime("%H:%M"), (now + timedelta(hours=2)).strftime("%H:%M")
    monkeypatch.setenv("BACKCHANNEL_GATE__QUIET_HOURS", f"{start}-{end}")
    paths = resolve_paths().ensure()
    with Store.open(paths.db_file) as s:
        seed_story(s, now=utcnow())
    res = CliRunner().invoke(cli, ["wake", "sweep"])
    assert res.exit_code == 0, res.output
    assert f"by quiet hours until {end}" in res.stdout, res.stdout
    assert res.stdout.startswith("manual ") or res.stdout.startswith("sweep ")


def test_wake_report_waits_for_the_queued_run(store):
    from backchannel.cli.wake_report import run_line, wait_for_run
    from backchannel.engine import runs

    env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau"}), paths=resolve_paths())
    rid = runs.start(store, runs.WakeRecord("manual", "manual:1", {"reason": "manual"}))
    store.append_event(
        "gate.suppressed",
        {
            "dedupe_key": "reconnect:7",
            "stage": "rate",
            "passed": False,
            "check": "quiet_hours",
            "reason": "22:10 UTC is within quiet hours",
        },
        run_id=rid,
    )
    runs.finish(store, rid, "done")
    ran = wait_for_run(lambda op, args: invoke(env, op, args), "manual:1", 5)
    assert ran["run_id"] == rid and ran["suppressed"] == [{"check": "quiet_hours"}]
    assert run_line(ran, "07:00") == f"manual       done     {rid}  held back: 1 by quiet hours until 07:00"
    assert wait_for_run(lambda op, args: invoke(env, op, args), "manual:never", 0.5) is None


POV_MEETING = (
    "Alex Moreau: Thanks Marc, good to see you.\n"
    "Marc Dupont: I'll send you the deck by Friday.\n"
    "Alex Moreau: I'll send you the pricing for your team next week.\n"
)
PANEL = (
    "Lynne Neagle: Thank you all for coming.\n"
    "Lynne Neagle: We will send you a transcript to check for accuracy following the meeting.\n"
)


def test_promises_read_from_the_right_point_of_view(home, store, tmp_path):
    from datetime import date, timedelta

    env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau"}), paths=resolve_paths())
    day = (date.today() - timedelta(days=2)).isoformat()
    for name, text in ((f"{day} marc.txt", POV_MEETING), (f"{day} panel.txt", PANEL)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert invoke(env, "ingest", {"paths": [str(tmp_path / name)]})["ingested"] == 1
    out = invoke(env, "ask", {"question": "what commitments are open?"})
    whys = {c["entities"][0]: c["why"] for c in out["candidates"]}
    text = " | ".join(whys.values())
    # said to me by Marc: "you" is me
    assert 'Marc Dupont promised to "send you the deck" on ' in text
    # my own promise: "you" was Marc, never "You ... send you"
    assert 'You promised to "send them the pricing for their team" on ' in text
    # a promise to a panel I was not part of: "you" is them
    assert 'Lynne Neagle promised to "send them a transcript' in text
    assert "send you the pricing" not in text and "You promised to send you" not in text
    # the proposal body the template drafter writes starts with the same words
    [mine] = [c for c in out["candidates"] if c["why"].startswith("You promised")]
    assert mine["body"].startswith('You promised to "send them the pricing')


def test_a_brief_is_titled_before_you_meet_only_with_a_meeting(store):
    from backchannel.agent.drafter import template_draft
    from backchannel.agent.sweeper import run_skill
    from backchannel.graph.api import GraphAPI
    from backchannel.skills import get_skill
    from tests.support.synth import SEED_NOW, seed_story

    ids = seed_story(store)
    api, skill = GraphAPI(store, now=SEED_NOW), get_skill("pre_meeting_brief")
    names = {ids["Marc Dupont"]: "Marc Dupont"}
    asked, _ = run_skill(skill, api, Settings(), args={"attendees": ["Marc Dupont"]})
    assert template_draft(asked[0], names, "Me").title == "Brief on Marc Dupont"
    event = {"uid": "e1", "summary": "Coffee", "starts_at": "2025-06-01T09:00:00", "attendee_ids": [ids["Marc Dupont"]]}
    woken, _ = run_skill(skill, api, Settings(), context={"wake": "meeting_soon", "event": event})
    assert template_draft(woken[0], names, "Me").title == "Before you meet Marc Dupont"
    assert woken[0].extra["meeting"] == "Coffee"


def test_service_print_warns_about_tmp_under_private_tmp(home):
    from backchannel.daemon.units import check_private_tmp

    res = CliRunner().invoke(cli, ["service", "print", "--systemd"])
    assert res.exit_code == 0 and "PrivateTmp=yes" in res.stdout
    assert (
        f"warning: the data dir {resolve_paths().data_dir} is under /tmp, but the unit sets PrivateTmp=yes"
        in res.stderr
    ), res.stderr
    assert "warning" not in res.stdout  # the unit itself stays clean for `> file`
    elsewhere = resolve_paths({"BACKCHANNEL_HOME": "/srv/backchannel"})
    assert check_private_tmp(Settings(), elsewhere, python="/opt/venv/bin/python") == []
    [venv] = check_private_tmp(Settings(), elsewhere, python="/tmp/venv/bin/python")
    assert venv.startswith("the Python (the venv) /tmp/venv/bin/python is under /tmp")


def test_doctor_deep_shows_progress(home):
    assert CliRunner().invoke(cli, ["init", "--name", "Alex Moreau"]).exit_code == 0
    res = CliRunner().invoke(cli, ["doctor", "--deep"])
    lines = res.stderr.splitlines()
    assert (
        lines[0] == "checking config and secrets..."
        and "checking the embedding model (loading it, a few seconds)..." in lines
    ), res.stderr
    assert "loaded offline; vectors of 384 dimensions" in res.stdout
    assert "checking" not in CliRunner().invoke(cli, ["doctor"]).stderr  # without --deep: quick and quiet


def test_export_pretty_prints_on_a_terminal(home, tmp_path):
    import os
    import pty
    import subprocess
    import sys

    runner = CliRunner()
    runner.invoke(cli, ["init", "--name", "Alex Moreau"])
    runner.invoke(cli, ["ingest", str(CORPUS / "2025-09-18 coffee with Marc.vtt")])
    piped = runner.invoke(cli, ["export", "Marc Dupont"])
    # indented by default, piped or not; --compact for one line
    assert piped.exit_code == 0 and piped.stdout.startswith('{\n  "') and len(piped.stdout.splitlines()) > 20
    compact = runner.invoke(cli, ["export", "--compact", "Marc Dupont"])
    assert len(compact.stdout.strip().splitlines()) == 1 and json.loads(compact.stdout) == json.loads(piped.stdout)
    main, sub = pty.openpty()  # a real terminal for the CLI's stdout
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "export", "Marc Dupont"], stdout=sub, stderr=subprocess.PIPE, env=env
    )
    os.close(sub)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    os.close(main)
    shown = b"".join(chunks).decode().replace("\r\n", "\n")
    assert shown.startswith('{\n  "') and json.loads(shown) == json.loads(piped.stdout)


def test_readme_says_where_the_corpora_sit():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../shared/corpora/" in text and "BACKCHANNEL_CORPORA" in text


def test_readme_makes_and_activates_a_venv_before_installing(tmp_path):
    import subprocess

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("   #")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert commands[1].startswith("pip install torch==") and commands[2] == "python -m pytest -q"
    # the line is true: it makes a venv whose python is the one on PATH afterwards
    done = subprocess.run(
        ["bash", "-c", "python3 -m venv --without-pip .venv && . .venv/bin/activate && command -v python"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == str(tmp_path / ".venv" / "bin" / "python"), done

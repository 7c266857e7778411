"""Small frictions (issue 11, item 4), one test each: trace of an inbox run, where a
source's file is now, status with asks apart, brief titles, 'you' in proposals,
service print under /tmp, doctor --deep progress, export on a terminal, README."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from backchannel.cli.main import cli
from backchannel.config import Settings, resolve_paths
from backchannel.ops import OpEnv, invoke

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "backchannel" / "demo" / "corpus"


def _inbox_wake(store, settings, paths, src, key):
    from backchannel.daemon.pipeline import run_wake_once

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
    assert f"file: coffee.vtt: ingested as {sid}, 5 assertion(s)" in res.stdout
    res = runner.invoke(cli, ["show", sid])
    assert f"  file: {paths.data_dir / 'processed' / 'coffee.vtt'}\n" in res.stdout


def test_status_shows_asks_apart_from_wakes(home, store):
    from backchannel.daemon import runs

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
    from datetime import datetime, timedelta, timezone

    from backchannel.graph.synth import seed_story
    from backchannel.memory import Store, utcnow

    now = datetime.now(timezone.utc)
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
    from backchannel.daemon import runs

    env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau"}), paths=resolve_paths())
    rid = runs.start(store, runs.WakeRecord("manual", "manual:1", {"reason": "manual"}))
    store.append_event("gate.suppressed", {"dedupe_key": "reconnect:7", "stage": "rate", "passed": False,
                                           "check": "quiet_hours", "reason": "22:10 UTC is within quiet hours"},
                       run_id=rid)
    runs.finish(store, rid, "done")
    ran = wait_for_run(lambda op, args: invoke(env, op, args), "manual:1", 5)
    assert ran["run_id"] == rid and ran["suppressed"] == [{"check": "quiet_hours"}]
    assert run_line(ran, "07:00") == f"manual       done     {rid}  held back: 1 by quiet hours until 07:00"
    assert wait_for_run(lambda op, args: invoke(env, op, args), "manual:never", 0.5) is None

"""The daemon's parts in-process: gate, judge, durable runs, sd_notify, the lock,
the service units, the API client's "no daemon" answer, and the wake pipeline's
inbox, calendar and signal steps on a real store."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.engine import gate, judge, runs
from backchannel.memory import entities
from backchannel.memory.store import utcnow

CORPUS = Path(__file__).resolve().parents[2] / "backchannel" / "demo" / "corpus"


def _settings(**gate_kw) -> Settings:
    s = Settings()
    s.gate = s.gate.model_copy(update={"quiet_hours": "off", "min_gap_minutes": 0, **gate_kw})
    return s


def _proposal(store, pid: str, kind: str, ids: list[int], created: datetime) -> None:
    store.con.execute(
        """INSERT INTO proposals (id, run_id, dedupe_key, kind, entity_ids, title, body, score, evidence, status,
               created_at, updated_at) VALUES (?, 'R0', ?, ?, ?, 't', 'b', 0.9, '[]', 'pending', ?, ?)""",
        [pid, gate.dedupe_key(kind, ids), kind, ids, created, created],
    )


# -- gate ------------------------------------------------------------------------


def test_gate_dedupe_window_and_key(store):
    now = utcnow()
    assert gate.dedupe_key("introduction", [7, 3, 7]) == "introduction:3,7"
    _proposal(store, "P-1", "introduction", [3, 7], now - timedelta(days=10))
    d = gate.check_dedupe(store, "introduction", [7, 3], now, window_days=30)
    assert not d.passed and d.check == "dedupe" and "P-1" in d.reason
    assert gate.check_dedupe(store, "introduction", [3, 7], now, window_days=5).passed
    assert gate.check_dedupe(store, "brief", [3, 7], now, window_days=30).passed


def test_gate_rate_limits_and_quiet_hours(store):
    now = datetime(2026, 11, 25, 12, 0)
    s = _settings(max_per_day=2, max_per_week=3)
    assert gate.check_rate(store, s, now).passed
    _proposal(store, "P-1", "brief", [1], now - timedelta(hours=1))
    _proposal(store, "P-2", "brief", [2], now - timedelta(hours=2))
    d = gate.check_rate(store, s, now)
    assert (d.passed, d.check) == (False, "rate_day")
    # Next day: the day's count resets, the week's does not.
    _proposal(store, "P-3", "brief", [3], now - timedelta(days=3))
    d = gate.check_rate(store, s, now + timedelta(days=1))
    assert (d.passed, d.check) == (False, "rate_week")
    s2 = _settings(max_per_day=10, max_per_week=10, min_gap_minutes=90)
    d = gate.check_rate(store, s2, now)
    assert (d.passed, d.check) == (False, "min_gap") and "60 min ago" in d.reason
    # Quiet hours are local to the owner's time zone and may wrap midnight.
    s3 = _settings(max_per_day=10, max_per_week=10, quiet_hours="22:00-07:00")
    s3.owner = s3.owner.model_copy(update={"timezone": "Europe/Paris"})
    late = datetime(2026, 11, 25, 21, 30)  # 22:30 in Paris
    d = gate.check_rate(store, s3, late)
    assert (d.passed, d.check) == (False, "quiet_hours") and "Europe/Paris" in d.reason
    assert gate.check_rate(store, s3, datetime(2026, 11, 26, 20, 30) - timedelta(hours=10)).check != "quiet_hours"
    assert gate.parse_quiet_hours("off") is None
    with pytest.raises(ValueError):
        gate.parse_quiet_hours("late")


def test_gate_threshold_and_record(store):
    d = gate.check_threshold(0.3, 0.6)
    assert not d.passed and "below threshold" in d.reason
    gate.record(store, "R1", "brief:1", d, "after_judge", {"score": 0.3})
    gate.record(store, "R1", "brief:1", d, "after_judge", {"score": 0.3})  # idempotent
    ev = store.events(kind="gate.suppressed")
    assert len(ev) == 1 and ev[0]["data"]["check"] == "threshold" and ev[0]["data"]["reason"]


# -- judge -----------------------------------------------------------------------


def test_judge_formula_one_old_assertion_is_not_enough_three_signals_are():
    old = judge.evidence_strength(0.6, 14 * 30)
    assert judge.combine(0, 0, 1.0) < 0.6  # even a perfect assertion alone
    assert judge.combine(1.0, 0, 1.0) < 0.6  # a meeting and a strong fresh assertion: still two
    assert judge.combine(1.0, 1.0, old) >= 0.6  # meeting + signal + 14-month-old assertion
    assert judge.meeting_strength(10, 14) == 1.0 and judge.meeting_strength(-1, 14) == 0.0
    assert judge.signal_strength(1) == 1.0 and judge.signal_strength(20) == 0.0
    assert judge.evidence_strength(0.8, 0) == pytest.approx(0.8)
    assert judge.evidence_strength(0.8, 365) == pytest.approx(0.4)


def test_judge_offline_reads_meetings_and_signals(store):
    marc = entities.create(store, "Marc Dupont", "person")
    sophie = entities.create(store, "Sophie Martin", "person")
    acme = entities.create(store, "Acme", "organisation")
    now = utcnow()
    aid = store.scalar(
        """INSERT INTO assertions (subject_id, predicate, object_id, said_at, confidence, modality, quote)
           VALUES (?, 'works_at', ?, ?, 0.7, 'reported', 'Sophie is the CIO of Acme') RETURNING id""",
        [sophie.id, acme.id, now - timedelta(days=420)],
    )
    ev = [{"assertion_id": aid, "said_at": now - timedelta(days=420), "confidence": 0.7}]
    alone = judge.offline(store, entity_ids=[marc.id, sophie.id], evidence=ev, now=now)
    assert alone.score < 0.6 and alone.signals["meeting"] == 0 and alone.signals["signal"] == 0
    store.con.execute(
        "INSERT INTO calendar_events (uid, starts_at, summary, attendee_ids, seen_at) VALUES "
        "('m1', ?, 'Coffee with Marc', ?, ?)",
        [now + timedelta(hours=20), [marc.id], now],
    )
    store.con.execute(
        "INSERT INTO signals (id, source, title, org_ids, seen_at, published_at) VALUES "
        "('s1', 'drop', 'Acme publishes a tender', ?, ?, ?)",
        [[acme.id], now, now],
    )
    three = judge.offline(store, entity_ids=[marc.id, sophie.id], evidence=ev, now=now)
    assert three.signals["meeting"] == 1.0 and three.signals["signal"] == 1.0
    assert three.score >= 0.6 and three.meeting["uid"] == "m1" and three.signal["id"] == "s1"


# -- runs ------------------------------------------------------------------------


def test_runs_steps_are_idempotent_and_recover_resumes_or_closes(store, tmp_path):
    w = runs.WakeRecord("sweep", "sweep:1", {"scheduled_for": "x"})
    rid = runs.start(store, w)
    assert runs.step(store, rid, "sweep.done", {"candidates": []})
    assert not runs.step(store, rid, "sweep.done", {"candidates": [1]})
    assert runs.done_step(store, rid, "sweep.done") == {"candidates": []}
    gone = runs.start(store, runs.WakeRecord("inbox", "inbox:abc", {"path": str(tmp_path / "gone.vtt")}))
    other = runs.start(store, runs.WakeRecord("ask", "ask:1", {}))
    resume = runs.recover(store)
    assert [r for r, _ in resume] == [rid]
    rows = {r["id"]: r for r in store.query("SELECT id, status, reason FROM runs")}
    assert rows[gone]["status"] == "closed" and "already moved" in rows[gone]["reason"]
    assert rows[other]["status"] == "closed" and "not replayable" in rows[other]["reason"]
    assert rows[rid]["status"] == "running"
    runs.finish(store, rid)
    assert store.scalar("SELECT status FROM runs WHERE id = ?", [rid]) == "done"


# -- sd_notify, lock ------------------------------------------------------------------


def test_notify_sends_datagrams(tmp_path):
    from backchannel.daemon.notify import Notifier

    addr = str(tmp_path / "notify.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(addr)
    srv.settimeout(2)
    try:
        n = Notifier({"NOTIFY_SOCKET": addr, "WATCHDOG_USEC": "4000000"})
        assert n.watchdog_interval_s == 2.0
        assert n.ready(status="idle")
        assert srv.recv(1024) == b"READY=1\nSTATUS=idle"
        assert n.watchdog()
        assert srv.recv(1024) == b"WATCHDOG=1"
    finally:
        srv.close()
    assert not Notifier({}).ready()
    assert Notifier({"WATCHDOG_USEC": "10", "WATCHDOG_PID": "1"}).watchdog_s is None  # not our pid


def test_lock_refuses_a_second_holder_and_names_the_pid(tmp_path):
    from backchannel.daemon.lockfile import AlreadyRunning, DaemonLock, lock_held

    f = tmp_path / "state" / "daemon.lock"
    assert not lock_held(f)
    a = DaemonLock(f)
    a.acquire()
    try:
        assert lock_held(f)
        with pytest.raises(AlreadyRunning, match=f"PID {os.getpid()}"):
            DaemonLock(f).acquire()
    finally:
        a.release()
    assert not lock_held(f)


def test_api_client_is_none_without_a_daemon(home):
    from backchannel.cli.api_client import connect

    paths = resolve_paths().ensure()
    assert connect(paths) is None
    paths.api_socket.write_text("")  # a stale socket file with no daemon behind it
    assert connect(paths) is None


def test_api_client_reports_a_running_daemon_it_cannot_reach(home, monkeypatch):
    """A held lock means the store is the daemon's: no silent fallback to it, but
    a message naming the problem (no socket yet, no answer)."""
    from backchannel.cli import api_client
    from backchannel.cli.common import UserError
    from backchannel.daemon.lockfile import DaemonLock

    paths = resolve_paths().ensure()
    lock = DaemonLock(paths.lock_file)
    lock.acquire()
    try:
        monkeypatch.setattr(api_client, "SOCKET_WAIT_S", 0.3)
        with pytest.raises(UserError, match=r"API socket .* did not appear"):
            api_client.connect(paths)
        paths.api_token_file.write_text("t\n")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(str(paths.api_socket))
        srv.listen(4)  # accepts (the kernel queues the connection) but never answers: a hung daemon
        try:
            t0 = time.monotonic()
            with pytest.raises(UserError, match=rf"PID {os.getpid()}\) does not answer"):
                api_client.connect(paths, health_timeout_s=0.5)
            assert time.monotonic() - t0 < 5
        finally:
            srv.close()
    finally:
        lock.release()
    assert api_client.connect(paths) is None  # lock free: the CLI opens the store itself


# -- units -----------------------------------------------------------------------


def test_systemd_unit_verifies(home, tmp_path):
    from backchannel.daemon import units

    paths = resolve_paths().ensure()
    (paths.config_dir / "secrets").mkdir()
    (paths.config_dir / "secrets" / "smtp_password").write_text("x")
    text = units.systemd_unit(paths)
    assert "Type=notify" in text and "Restart=on-failure" in text and "WatchdogSec=" in text
    assert "network-online" not in text
    assert f"ExecStart={units.python_path()} -m backchannel run" in text
    assert "LoadCredential=smtp_password:" in text
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed here")
    unit = tmp_path / units.UNIT_NAME
    unit.write_text(text)
    rt = tmp_path / "rt"
    rt.mkdir(mode=0o700)
    p = subprocess.run(
        ["systemd-analyze", "verify", "--user", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_RUNTIME_DIR": str(rt)},
    )
    if "Failed to initialize manager" in p.stderr or "RuntimeDirectory" in p.stderr:
        pytest.skip(f"systemd-analyze cannot run a user manager here: {p.stderr.strip()}")
    assert p.stderr == "", p.stderr  # it exits 0 on unknown keys: stderr is the verdict


def test_launchd_plist_round_trips(home):
    from backchannel.daemon import units

    paths = resolve_paths().ensure()
    doc = plistlib.loads(units.launchd_plist(paths, home=Path("/Users/alex")))
    assert doc["Label"] == units.LAUNCHD_LABEL
    assert doc["ProgramArguments"] == [units.python_path(), "-m", "backchannel", "run"]
    assert Path(doc["ProgramArguments"][0]).is_absolute()
    assert doc["KeepAlive"] == {"SuccessfulExit": False} and doc["RunAtLoad"] is True
    assert doc["EnvironmentVariables"]["BACKCHANNEL_HOME"] == os.environ["BACKCHANNEL_HOME"]
    assert not doc["StandardErrorPath"].startswith("/Users/alex/Documents")
    s = Settings()
    s.inbox = s.inbox.model_copy(update={"path": Path("/Users/alex/Documents/inbox")})
    warnings = units.check_macos_folders(s, paths, home=Path("/Users/alex"))
    assert len(warnings) == 1 and "Documents" in warnings[0]


def test_service_install_writes_the_unit_without_starting(home, tmp_path, monkeypatch):
    from backchannel.daemon import units

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    paths = resolve_paths().ensure()
    out = units.install("systemd", paths, activate=False)
    target = Path(out["path"])
    assert target == tmp_path / "xdg" / "systemd" / "user" / "backchannel.service"
    assert "Type=notify" in target.read_text() and out["steps"] == []
    assert units.uninstall("systemd", deactivate=False)["removed"] and not target.exists()


# -- the pipeline on a real store -------------------------------------------------------


def test_inbox_wake_ingests_then_moves_once(home, store):
    from backchannel.engine.pipeline import run_wake_once

    paths = resolve_paths().ensure()
    settings = Settings()
    settings.owner = settings.owner.model_copy(update={"name": "Alex Moreau"})
    inbox = paths.data_dir / "inbox"
    inbox.mkdir(parents=True)
    src = inbox / "coffee.vtt"
    shutil.copy(CORPUS / "2025-09-18 coffee with Marc.vtt", src)
    out = run_wake_once(store, settings, paths, {"kind": "inbox", "key": "inbox:x", "payload": {"path": str(src)}})
    assert out.status == "done" and out.detail["ingest"]["status"] == "ingested"
    assert (paths.data_dir / "processed" / "coffee.vtt").is_file() and not src.exists()
    # The same content again: skipped by content hash, still moved out.
    shutil.copy(CORPUS / "2025-09-18 coffee with Marc.vtt", src)
    out2 = run_wake_once(store, settings, paths, {"kind": "inbox", "key": "inbox:x", "payload": {"path": str(src)}})
    assert out2.detail["ingest"]["status"] == "skipped"
    assert store.scalar("SELECT count(*) FROM sources") == 1
    bad = inbox / "broken.vtt"
    bad.write_text("this is not a transcript at all")
    out3 = run_wake_once(store, settings, paths, {"kind": "inbox", "key": "inbox:y", "payload": {"path": str(bad)}})
    assert out3.detail["ingest"]["status"] == "failed"
    assert (paths.data_dir / "failed" / "broken.vtt.error.txt").read_text().strip()


def test_calendar_and_signal_wakes_store_rows(home, store):
    from backchannel.engine.pipeline import run_wake_once

    paths = resolve_paths().ensure()
    settings = Settings()
    marc = entities.create(store, "Marc Dupont", "person")
    acme = entities.create(store, "Acme", "organisation")
    start = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    wake = {
        "kind": "calendar",
        "key": "calendar:1",
        "payload": {
            "events": [
                {
                    "uid": "u1",
                    "starts_at": start.isoformat(),
                    "ends_at": None,
                    "summary": "Coffee",
                    "attendees": ["Marc", "someone@else.example"],
                    "calendar": "test.ics",
                }
            ]
        },
    }
    out = run_wake_once(store, settings, paths, wake)
    assert out.status == "done" and out.detail["calendar"] == {"events": 1, "with_known_attendees": 1}
    row = store.query("SELECT attendee_ids, starts_at FROM calendar_events")[0]
    assert list(row["attendee_ids"]) == [marc.id]
    assert row["starts_at"] == start.replace(tzinfo=None)
    # Replaying the same wake key is a no-op.
    assert run_wake_once(store, settings, paths, wake).status == "skipped"
    # A signal about nobody we know is stored, and nothing else happens.
    sig = {
        "kind": "signal",
        "key": "signal:a",
        "payload": {"id": "a", "source": "drop", "title": "Globex wins an award", "summary": "", "published_at": None},
    }
    o = run_wake_once(store, settings, paths, sig)
    assert o.status == "done" and "no organisation" in o.reason
    sig2 = {
        "kind": "signal",
        "key": "signal:b",
        "payload": {
            "id": "b",
            "source": "drop",
            "title": "ACME publishes a tender",
            "summary": "",
            "published_at": None,
        },
    }
    run_wake_once(store, settings, paths, sig2)
    assert list(store.scalar("SELECT org_ids FROM signals WHERE id = 'b'")) == [acme.id]
    events = [e["kind"] for e in store.events(run_id=o.run_id)]
    assert events[0] == "run.started" and "signal.stored" in events and events[-1] == "run.finished"


def test_real_calendars_are_upserted_or_reported(home, store, corpora):
    """Real-world ICS files (recurrences, time zones, deliberately broken ones)
    through the calendar wake: broken ones are reported, the rest stored."""
    from backchannel.engine.pipeline import collect_wakes, run_wake_once

    cal = corpora / "calendars" / "icalendar" / "calendars"
    names = [
        "big_bad_calendar.ics",
        "broken_ical.ics",
        "fuzz_testcase_invalid_month.ics",
        "issue_1081_event_with_rrule.ics",
        "america_new_york.ics",
        "example.ics",
        "issue_1238.ics",
    ]
    paths = resolve_paths().ensure()
    s = Settings()
    s.calendar = s.calendar.model_copy(update={"sources": [str(cal / n) for n in names], "horizon_days": 400})
    wakes = collect_wakes(s, paths, "calendar")
    assert wakes[0].kind == "calendar"
    payload = wakes[0].payload
    assert any("big_bad_calendar" in e for e in payload["errors"])
    out = run_wake_once(store, s, paths, wakes[0])
    assert out.status == "done"
    stored = store.scalar("SELECT count(*) FROM calendar_events")
    assert stored == len({(e["uid"], e["starts_at"]) for e in payload["events"]})
    ev = store.events(run_id=out.run_id, kind="calendar.upserted")[0]["data"]
    assert ev["errors"] == payload["errors"]


def test_wake_op_runs_in_process_without_a_daemon(home, store):
    from backchannel.ops import OpEnv, OpError, invoke

    paths = resolve_paths().ensure()
    env = OpEnv(store=store, settings=Settings(), paths=paths)
    drop = paths.data_dir / "signals"
    drop.mkdir(parents=True)
    (drop / "x.json").write_text(json.dumps({"title": "Initech opens an office"}))
    out = invoke(env, "wake", {"kind": "signals"})
    assert out["ran_in_process"] and [r["kind"] for r in out["runs"]] == ["signal"]
    again = invoke(env, "wake", {"kind": "signals"})
    assert [r["status"] for r in again["runs"]] == ["skipped"]  # the same signal is handled once
    with pytest.raises(OpError):
        invoke(env, "wake", {"kind": "lunch"})
    with pytest.raises(OpError, match=r"set \[calendar\] sources"):
        invoke(env, "wake", {"kind": "calendar"})
    st = invoke(env, "status")
    assert st["daemon"] is None and st["recent_wakes"][0]["wake_kind"] == "signal"
    assert st["spend_today"]["calls"] == 0


class _BrokenModel:
    """A gateway whose judge model always fails (a real object, not a mock)."""

    def available(self, role: str) -> bool:
        return role == "judge"

    def complete(self, role, messages, *, run_id=None, response_model=None, max_tokens=None, evidence_ids=None):
        raise TimeoutError("the judge model did not answer")


def test_judge_failure_means_silence_then_the_offline_judge_proposes(home, store):
    from backchannel.config import load_settings
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory.calendar import upsert_events
    from backchannel.ops import OpEnv, OpError, invoke

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\n[gate]\nquiet_hours = "off"\n')
    s = load_settings(paths)
    entities.ensure_owner(store, s.owner.name)
    for f in sorted(CORPUS.iterdir()):
        ingest_file(store, s, f)
    upsert_events(
        store,
        [
            {
                "uid": "m",
                "starts_at": (datetime.now(UTC) + timedelta(hours=30)).isoformat(),
                "summary": "Coffee with Marc",
                "attendees": ["Marc Dupont"],
            }
        ],
    )
    sig = {
        "id": "t1",
        "source": "drop",
        "title": "Acme publishes a tender",
        "published_at": datetime.now(UTC).isoformat(),
    }
    out = run_wake_once(store, s, paths, {"kind": "signal", "key": "signal:t1", "payload": sig}, gateway=_BrokenModel())
    assert out.proposals == [] and [x["check"] for x in out.suppressed] == ["judge"]
    failed = store.events(run_id=out.run_id, kind="judge.failed")
    assert len(failed) == 1 and "did not answer" in failed[0]["data"]["reason"]
    out2 = run_wake_once(store, s, paths, {"kind": "signal", "key": "signal:t2", "payload": {**sig, "id": "t2"}})
    assert len(out2.proposals) == 1
    # The same candidate again: dedupe keeps it silent, and says why.
    out3 = run_wake_once(store, s, paths, {"kind": "signal", "key": "signal:t3", "payload": {**sig, "id": "t3"}})
    assert out3.proposals == [] and out3.suppressed[0]["check"] == "dedupe"
    assert out2.proposals[0] in out3.suppressed[0]["reason"]
    t = invoke(OpEnv(store=store, settings=s, paths=paths), "trace", {"id": out2.proposals[0]})
    assert t["trigger"]["kind"] == "signal" and t["sweep"]["skill"] == "introductions"
    assert t["judge"]["score"] >= s.gate.score_threshold and t["delivery"] == []
    assert t["sandbox"]["assertions_touched"] > 0
    # A silent run is traced by its run id: each candidate, and why it was not proposed.
    env = OpEnv(store=store, settings=s, paths=paths)
    rt = invoke(env, "trace", {"id": out3.run_id})
    assert rt["run"]["id"] == out3.run_id and rt["trigger"]["kind"] == "signal" and rt["sweep"]["candidates"] == 1
    [c] = rt["candidates"]
    assert c["outcome"].startswith("suppressed by dedupe:") and out2.proposals[0] in c["outcome"]
    assert [g["check"] for g in c["gate"]] == ["dedupe"]
    [c1] = invoke(env, "trace", {"id": out.run_id.lower()})["candidates"]
    assert c1["outcome"].startswith("silent:") and "did not answer" in c1["outcome"]
    [c2] = invoke(env, "trace", {"id": out2.run_id})["candidates"]
    assert c2["proposal"] == out2.proposals[0] and c2["judge"]["score"] >= s.gate.score_threshold
    with pytest.raises(OpError, match="no run"):
        invoke(env, "trace", {"id": "Rdeadbeef"})
    # Offline: the evidence went to the template drafter, and no excerpt reached any model.
    assert t["sandbox"]["excerpts_sent"] >= 1 and t["model_calls"] == []
    assert [g["stage"] for g in t["gate"]] == ["before_judge", "after_judge"]


def test_a_stop_request_checkpoints_the_run_for_resumption(home, store):
    import threading

    from backchannel.engine.pipeline import run_wake_once

    paths = resolve_paths().ensure()
    acme = entities.create(store, "Acme", "organisation")
    stop = threading.Event()
    stop.set()  # SIGTERM arrived: the run stops at its first checkpoint after storing the signal
    wake = {"kind": "signal", "key": "signal:c", "payload": {"id": "c", "source": "drop", "title": "Acme news"}}
    out = run_wake_once(store, Settings(), paths, wake, cancel=stop)
    assert out.status == "interrupted"
    assert store.scalar("SELECT status FROM runs WHERE id = ?", [out.run_id]) == "running"
    assert list(store.scalar("SELECT org_ids FROM signals WHERE id = 'c'")) == [acme.id]
    [(rid, w)] = runs.recover(store)
    assert rid == out.run_id and w.kind == "signal"
    again = run_wake_once(store, Settings(), paths, w, run_id=rid)
    assert again.status == "done" and again.run_id == rid
    assert store.scalar("SELECT count(*) FROM signals") == 1
    assert len(store.events(run_id=rid, kind="signal.stored")) == 1


def test_model_judge_and_drafter_see_only_the_evidence_excerpts(home, store):
    """With a draft model configured, the judge and the drafter go through the gateway
    (a scripted model registered with litellm), see only the candidate's evidence
    excerpts, and every call is on the trace with its tokens."""
    from backchannel.config import load_settings
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory.calendar import upsert_events
    from backchannel.ops import OpEnv, invoke
    from tests.support.scripted_models import register_scripted, unregister_scripted

    script = register_scripted(
        [
            {
                "match": "deserves to interrupt",
                "content": {"worth_it": True, "score": 0.95, "reason": "tender + meeting"},
            },
            {
                "content": {
                    "title": "Ask Marc about Sophie at Acme",
                    "body": "Marc worked with Sophie at Globex.",
                    "message": "Hi Marc, could you introduce me to Sophie?",
                }
            },
        ],
        name="bc-daemon-judge",
    )
    try:
        paths = resolve_paths().ensure()
        paths.config_file.write_text(
            '[owner]\nname = "Alex Moreau"\n[gate]\nquiet_hours = "off"\nmin_gap_minutes = 0\n'
            '[models]\ndraft = "scripted/bc-daemon-judge"\nretries = 0\n'
        )
        s = load_settings(paths)
        entities.ensure_owner(store, s.owner.name)
        for f in sorted(CORPUS.iterdir()):
            ingest_file(store, s, f)
        upsert_events(
            store,
            [
                {
                    "uid": "m",
                    "summary": "Coffee with Marc",
                    "attendees": ["Marc Dupont"],
                    "starts_at": (datetime.now(UTC) + timedelta(hours=30)).isoformat(),
                }
            ],
        )
        sig = {
            "id": "m1",
            "source": "drop",
            "title": "Acme publishes a tender",
            "published_at": datetime.now(UTC).isoformat(),
        }
        out = run_wake_once(store, s, paths, {"kind": "signal", "key": "signal:m1", "payload": sig})
        assert len(out.proposals) == 1, out.to_dict()
        p = invoke(OpEnv(store=store, settings=s, paths=paths), "proposal", {"id": out.proposals[0]})
        assert p["title"] == "Ask Marc about Sophie at Acme"
        assert p["action"]["body"] == "Hi Marc, could you introduce me to Sophie?"
        judge_prompt, draft_prompt = script.calls[0].prompt, script.calls[1].prompt
        assert "worked together at Globex" in judge_prompt and "CIO of Acme" in judge_prompt
        for unrelated in ("Karl Weber", "Hooli", "Umbrella", "Initech", "pricing"):
            assert unrelated not in judge_prompt and unrelated not in draft_prompt
        t = invoke(OpEnv(store=store, settings=s, paths=paths), "trace", {"id": out.proposals[0]})
        assert [c["role"] for c in t["model_calls"]] == ["judge", "draft"]
        assert t["spend"]["tokens"] > 0 and t["judge"]["model"] == "scripted/bc-daemon-judge"
        assert t["sandbox"]["excerpts_sent"] == 4  # two excerpts to the judge, the same two to the drafter
        # The same candidate again is deduped before the judge: no model is paid for it.
        out2 = run_wake_once(
            store,
            s,
            paths,
            {"kind": "signal", "key": "signal:m2", "payload": {**sig, "id": "m2", "title": "Acme is hiring"}},
        )
        assert out2.proposals == [] and out2.suppressed[0]["check"] == "dedupe"
        assert len(script.calls) == 2
    finally:
        unregister_scripted("bc-daemon-judge")


def test_model_judge_veto_is_silence(store):
    """The model may lower the score or veto, never raise it."""

    class _Verdict:
        def __init__(self, text: str):
            self.text, self.parsed, self.model = text, None, "scripted/x"

    class _Model:
        def __init__(self, text: str):
            self.text = text

        def complete(self, role, messages, *, run_id=None, response_model=None, max_tokens=None, evidence_ids=None):
            return _Verdict(self.text)

    base = judge.Judgement(0.7, {"meeting": 1.0, "signal": 1.0, "evidence": 0.3})
    veto = judge.with_model(
        base,
        gateway=_Model('{"worth_it": false, "score": 0.9, "reason": "no"}'),
        evidence=[],
        kind="introduction",
        run_id=None,
    )
    assert veto.score == 0.0
    capped = judge.with_model(
        base,
        gateway=_Model('{"worth_it": true, "score": 1.0, "reason": "yes"}'),
        evidence=[],
        kind="introduction",
        run_id=None,
    )
    assert capped.score == 0.7
    with pytest.raises(judge.JudgeError):
        judge.with_model(base, gateway=_Model("no JSON at all"), evidence=[], kind="introduction", run_id=None)


def test_why_now_speaks_in_the_owners_time_zone():
    j = judge.Judgement(
        0.7,
        {"meeting": 1.0, "signal": 1.0, "evidence": 0.4},
        meeting={"starts_at": "2026-12-03T08:00:00", "summary": "Coffee", "with": ["Marc Dupont"]},
        signal={"id": "s", "title": "Acme publishes a tender", "at": "2026-12-01T07:00:00"},
    )
    ev = [{"said_at": "2025-10-01T10:00:00", "speaker": "Marc Dupont"}]
    lines = judge.why_now(j, ev, datetime(2026, 12, 1, 9, 0), "Europe/Paris")
    assert lines[0] == "You meet Marc Dupont on Thursday 03 December at 09:00 Europe/Paris (Coffee)."
    assert lines[1] == "News, today: Acme publishes a tender." and "14 months ago (2025-10-01)" in lines[2]
    assert "at 08:00 UTC" in judge.why_now(j, ev, datetime(2026, 12, 1, 9, 0))[0]

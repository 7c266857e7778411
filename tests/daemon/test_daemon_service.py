"""The real daemon as a subprocess (`python -m backchannel run`) in a temp home:
the lock, the CLI through the local API, inbox drops (slow partial writes and a
malformed file), the schedule, SIGHUP, calendar + signal wakes leading to a
proposal, SIGTERM timing, and kill -9 at several points followed by restarts
with nothing lost or doubled."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.daemon_support import DaemonLog

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "backchannel" / "demo" / "corpus"

NEW_TRANSCRIPT = """WEBVTT

NOTE date: 2026-11-02 10:00
NOTE participants: Alex Moreau, Tom Becker

00:00:01.000 --> 00:00:05.000
<v Tom Becker>I joined Hooli as head of procurement in September.

00:00:05.500 --> 00:00:09.000
<v Alex Moreau>Congratulations. I'll send you our security whitepaper next week.
"""


def _config(home: Path, extra: str = "", **sections: dict) -> None:
    base = {
        "owner": {"name": "Alex Moreau"},
        "inbox": {"quiet_period_s": 0.4, "poll_interval_s": 0.1},
        "schedule": {"sweep": []},
        "signals": {"drop_poll_s": 0.2},
        "calendar": {"refresh_s": 3600, "lead_hours": 48},
        "gate": {"quiet_hours": "off", "min_gap_minutes": 0},
    }
    for k, v in sections.items():
        base.setdefault(k, {}).update(v)
    lines = []
    for name, table in base.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    (home / "config.toml").write_text("\n".join(lines) + "\n" + extra)


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_") and k != "NOTIFY_SOCKET"}
    env.update(BACKCHANNEL_HOME=str(home), PYTHONUNBUFFERED="1", **extra)
    return env


def cli(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(
        [sys.executable, "-m", "backchannel", *args], env=_env(home), capture_output=True, text=True, timeout=60
    )
    if check:
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p


class Daemon(DaemonLog):
    """One `backchannel run` child; its JSON log lines go to a file we poll."""

    def __init__(self, home: Path, **env: str):
        self.home = home
        self.log_path = home / f"daemon-{time.monotonic_ns()}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "backchannel", "run"],
            env=_env(home, **env),
            stdout=subprocess.DEVNULL,
            stderr=self.log_path.open("w"),
        )

    def ready(self) -> Daemon:
        self.wait_log(lambda line: line.get("msg") == "daemon ready")
        return self

    def wait_exit(self, timeout: float = 20.0) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> float:
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=15)
        assert rc == 0, self.log_path.read_text()[-3000:]
        return time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def daemons():
    started: list[Daemon] = []

    def start(home: Path, **env: str) -> Daemon:
        d = Daemon(home, **env)
        started.append(d)
        return d

    yield start
    for d in started:
        d.kill()


def _seed(home: Path, files: list[Path], meeting_in_h: float | None = None) -> None:
    """Ingest transcripts (and an upcoming meeting with Marc) in-process, before any daemon."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory import Store, entities
    from backchannel.memory.calendar import upsert_events

    paths = resolve_paths({"BACKCHANNEL_HOME": str(home)}).ensure()
    settings = load_settings(paths, environ={"BACKCHANNEL_HOME": str(home)})
    with Store.open(paths.db_file) as store:
        entities.ensure_owner(store, settings.owner.name, settings.owner.aliases)
        for f in files:
            assert ingest_file(store, settings, f).status == "ingested"
        if meeting_in_h is not None:
            start = datetime.now(UTC) + timedelta(hours=meeting_in_h)
            upsert_events(
                store,
                [
                    {
                        "uid": "coffee-marc",
                        "starts_at": start.isoformat(),
                        "summary": "Coffee with Marc",
                        "attendees": ["Marc Dupont", "Alex Moreau"],
                    }
                ],
            )


def _ics(path: Path, start: datetime) -> None:
    fmt = "%Y%m%dT%H%M%SZ"
    path.write_text(
        "\r\n".join(
            [
                "BEGIN:VCALENDAR",
                "VERSION:2.0",
                "PRODID:-//backchannel tests//EN",
                "BEGIN:VEVENT",
                "UID:thursday-coffee@example.com",
                f"DTSTAMP:{start.strftime(fmt)}",
                f"DTSTART:{start.strftime(fmt)}",
                f"DTEND:{(start + timedelta(hours=1)).strftime(fmt)}",
                "SUMMARY:Coffee with Marc",
                "ORGANIZER;CN=Alex Moreau:mailto:alex@example.com",
                "ATTENDEE;CN=Marc Dupont:mailto:marc.dupont@initech.example",
                "END:VEVENT",
                "END:VCALENDAR",
                "",
            ]
        )
    )


def _signal(drop: Path, name: str = "acme.json") -> None:
    drop.mkdir(parents=True, exist_ok=True)
    tmp = drop / f".{name}.tmp"
    tmp.write_text(
        json.dumps(
            {
                "title": "Acme publishes a tender",
                "summary": "Acme opens a tender to modernise its data platform.",
                "url": "https://acme.example/tenders/42",
                "published_at": datetime.now(UTC).isoformat(),
            }
        )
    )
    tmp.rename(drop / name)


def _db(home: Path):
    from backchannel.memory import Store

    return Store.open(home / "data" / "backchannel.duckdb", read_only=True)


class _NotifySocket:
    """A NOTIFY_SOCKET like systemd's: a datagram socket drained by a thread."""

    def __init__(self, path: Path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.seen: set[bytes] = set()
        self.running = True
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while self.running:
            try:
                self.seen.update(self.sock.recv(4096).split(b"\n"))
            except (TimeoutError, OSError):
                pass

    def wait(self, want: set[bytes], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while not want <= self.seen and time.monotonic() < deadline:
            time.sleep(0.05)
        return want <= self.seen

    def close(self) -> None:
        self.running = False
        self.thread.join(2)
        self.sock.close()


def test_lock_cli_through_api_notify_and_sigterm(home, daemons, tmp_path):
    _config(home)
    notify = _NotifySocket(tmp_path / "notify.sock")
    d = daemons(home, NOTIFY_SOCKET=str(tmp_path / "notify.sock"), WATCHDOG_USEC="400000").ready()
    assert notify.wait({b"READY=1", b"WATCHDOG=1"})
    second = cli(home, "run", check=False)
    assert second.returncode != 0
    assert f"already running (PID {d.proc.pid})" in second.stderr
    sock = home / "state" / "api.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "state" / "api.token").stat().st_mode) == 0o600
    st = json.loads(cli(home, "status", "--json").stdout)
    assert st["daemon"]["pid"] == d.proc.pid and st["daemon"]["queue_length"] == 0
    assert st["spend_today"]["calls"] == 0
    assert json.loads(cli(home, "proposals", "--json").stdout) == []
    token_file = home / "state" / "api.token"
    good = token_file.read_text()
    token_file.write_text("not-the-token\n")  # the daemon refuses it; the CLI says so (no store fallback)
    refused = cli(home, "proposals", check=False)
    assert refused.returncode == 1 and "refused the API token" in refused.stderr, refused.stderr
    token_file.write_text(good)
    # The database is held by the daemon: this ingest can only have gone through its API.
    out = json.loads(cli(home, "ingest", "--json", str(CORPUS / "2025-09-18 coffee with Marc.vtt")).stdout)
    assert out["ingested"] == 1
    missing = cli(home, "show", "P-99", check=False)  # an op's refusal comes back as the user's error
    assert missing.returncode == 1 and "no proposal P-99" in missing.stderr
    from backchannel.cli.api_client import connect
    from backchannel.cli.common import UserError
    from backchannel.config import resolve_paths

    client = connect(resolve_paths({"BACKCHANNEL_HOME": str(home)}))
    with pytest.raises(UserError, match="unknown operation"):
        client.call("no_such_op", {})
    with pytest.raises(UserError, match="bad arguments"):
        client.call("proposals", {"colour": "red"})
    assert "queued" in cli(home, "wake", "sweep").stdout
    d.wait_log(lambda line: line.get("msg") == "run finished" and line.get("status") == "done")
    st = json.loads(cli(home, "status", "--json").stdout)
    assert st["recent_wakes"][0]["wake_kind"] == "manual" and st["recent_wakes"][0]["status"] == "done"
    assert d.stop() < 10
    assert notify.wait({b"STOPPING=1"}, timeout=2)
    notify.close()
    assert not sock.exists()
    # No daemon: the CLI opens the store itself.
    st = json.loads(cli(home, "status", "--json").stdout)
    assert st["daemon"] is None and len(st["recent_wakes"]) == 1


def test_inbox_drops_partial_writes_and_malformed(home, daemons):
    _config(home)
    d = daemons(home).ready()
    inbox = home / "data" / "inbox"
    shutil.copy(CORPUS / "2026-10-02 industry breakfast.txt", inbox / "breakfast.txt")
    (inbox / "garbage.vtt").write_bytes(b"\x00\x01 not a transcript")
    # A slow copy: chunks 0.15 s apart, shorter than the quiet period, so it is never read half-written.
    data = (CORPUS / "2025-09-18 coffee with Marc.vtt").read_bytes()
    with (inbox / "coffee.vtt").open("wb") as fh:
        for i in range(0, len(data), 200):
            fh.write(data[i : i + 200])
            fh.flush()
            time.sleep(0.15)
    (inbox / ".hidden.tmp").write_text("ignored")
    processed, failed = home / "data" / "processed", home / "data" / "failed"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if (
            (processed / "coffee.vtt").exists()
            and (processed / "breakfast.txt").exists()
            and (failed / "garbage.vtt.error.txt").exists()
        ):
            break
        time.sleep(0.1)
    assert (processed / "coffee.vtt").read_bytes() == data
    assert (failed / "garbage.vtt").exists() and (failed / "garbage.vtt.error.txt").read_text().strip()
    assert (inbox / ".hidden.tmp").exists()
    sources = json.loads(cli(home, "sources", "--json").stdout)
    assert len(sources) == 2  # never a half-written third one
    recent = json.loads(cli(home, "status", "--json").stdout)["recent_wakes"]
    assert sorted(r["status"] for r in recent if r["wake_kind"] == "inbox") == ["done", "done", "failed"]
    d.stop()


def test_schedule_interval_and_sighup_replans(home, daemons):
    _config(home)
    d = daemons(home).ready()
    time.sleep(1.0)
    assert not any(line.get("wake_kind") == "sweep" for line in d.lines())  # no schedule configured
    _config(home, schedule={"sweep": [], "interval_s": 0.5})
    d.proc.send_signal(signal.SIGHUP)
    d.wait_log(lambda line: line.get("msg") == "config reloaded")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        done = [x for x in d.lines() if x.get("msg") == "run finished" and x.get("status") == "done"]
        if len(done) >= 2:
            break
        time.sleep(0.1)
    assert len(done) >= 2
    st = json.loads(cli(home, "status", "--json").stdout)
    assert any(w["kind"] == "sweep" for w in st["daemon"]["next_wakes"])
    assert st["next_wakes"] == st["daemon"]["next_wakes"]  # same key as without a daemon
    assert all(r["wake_kind"] == "sweep" for r in st["recent_wakes"])
    _config(home, owner={"timezone": "Europe/Pari"}, schedule={"sweep": [], "interval_s": 0.5})
    d.proc.send_signal(signal.SIGHUP)  # a bad zone: logged, the running config kept
    line = d.wait_log(lambda x: x.get("msg") == "config reload failed; keeping the running config")
    assert "Europe/Pari" in line["error"] and d.proc.poll() is None
    d.stop()
    refused = cli(home, "run", check=False)  # and a fresh start refuses it, naming it, without a traceback
    assert refused.returncode == 1 and "Europe/Pari" in refused.stderr and "Traceback" not in refused.stderr
    assert "config problem: [owner] timezone" in cli(home, "status").stdout


class _Hooks(http.server.BaseHTTPRequestHandler):
    received: list[tuple[dict, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append((dict(self.headers), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_calendar_and_signal_wakes_lead_to_a_proposal(home, daemons):
    from backchannel.config import resolve_paths
    from backchannel.delivery.links import make_token

    _seed(home, sorted(CORPUS.iterdir()))
    ics = home / "calendar.ics"
    _ics(ics, (datetime.now(UTC) + timedelta(hours=30)).replace(microsecond=0))
    hooks = http.server.HTTPServer(("127.0.0.1", 0), _Hooks)
    threading.Thread(target=hooks.serve_forever, daemon=True).start()
    (home / "secrets").mkdir()
    (home / "secrets" / "webhook_hmac_key").write_text("k" * 40)
    _config(
        home,
        calendar={"sources": [str(ics), str(home / "missing.ics")]},
        extra=f'[delivery]\nchannels = ["webhook"]\n[delivery.webhook]\n'
        f'url = "http://127.0.0.1:{hooks.server_address[1]}/hook"\n',
    )
    try:
        d = daemons(home).ready()
        d.wait_log(
            lambda line: (
                line.get("msg") == "run finished"
                and line.get("status") == "done"
                and any(x.get("wake_kind") == "meeting_soon" for x in d.lines())
            )
        )
        _signal(home / "data" / "signals")
        line = d.wait_log(lambda x: x.get("msg") == "proposal created")
        pid = line["proposal_id"]
        props = json.loads(cli(home, "proposals", "--json").stdout)
        assert [p["id"] for p in props] == [pid] and props[0]["kind"] == "introduction"
        shown = json.loads(cli(home, "show", pid, "--json").stdout)
        assert "Marc" in shown["title"] and len(shown["evidence"]) >= 2
        assert any("Globex" in (e["quote"] or "") for e in shown["evidence"])
        deadline = time.monotonic() + 15
        while not _Hooks.received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_Hooks.received) == 1 and pid.encode() in _Hooks.received[0][1]
        t = json.loads(cli(home, "trace", pid, "--json").stdout)
        assert t["trigger"]["kind"] in ("signal", "meeting_soon")
        assert t["sweep"]["skill"] and t["sandbox"]["assertions_touched"] > 0
        assert t["judge"]["signals"]["meeting"] == 1.0 and t["judge"]["signals"]["signal"] == 1.0
        assert [g["passed"] for g in t["gate"]] == [True, True]
        assert [(x["channel"], x["status"]) for x in t["delivery"]] == [("webhook", "sent")]
        # Replayed through the daemon (a read on its reader cursor): the same decision, offline.
        r = json.loads(cli(home, "replay", t["run"]["id"], "--json").stdout)
        assert r["same"] and r["limits"] == [], r["differences"]
        assert [c["decision"] for c in r["replayed"]["candidates"]] == ["proposed"]
        assert "backchannel trace" in cli(home, "show", pid).stdout
        st = json.loads(cli(home, "status", "--json").stdout)
        assert any("missing.ics" in e for e in st["daemon"]["triggers"]["calendar"]["errors"])  # reported, not fatal
        # The feedback links open in a browser: loopback TCP, the port in the state dir.
        port = int((home / "state" / "api.port").read_text())
        token = make_token(resolve_paths({"BACKCHANNEL_HOME": str(home)}), pid, "accept")
        base = f"http://127.0.0.1:{port}/feedback"
        with urllib.request.urlopen(f"{base}?t={urllib.parse.quote(token)}", timeout=10) as r:
            assert r.status == 200 and "Accept" in r.read().decode()
        form = urllib.parse.urlencode({"t": token}).encode()
        with urllib.request.urlopen(urllib.request.Request(base, data=form, method="POST"), timeout=10) as r:
            assert r.status == 200
        assert json.loads(cli(home, "show", pid, "--json").stdout)["status"] == "accepted"
        with pytest.raises(urllib.error.HTTPError) as err:  # the ops endpoints need the token
            urllib.request.urlopen(
                urllib.request.Request(f"http://127.0.0.1:{port}/ops/proposals", data=b"{}"), timeout=10
            )
        assert err.value.code == 401
        # Nor is an unauthenticated body read: the refusal comes before it is sent.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(
                b"POST /ops/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n"
                b"Content-Length: 10000000\r\n\r\n"
            )
            assert raw.recv(200).startswith(b"HTTP/1.1 401")
        d.stop()
    finally:
        hooks.shutdown()


def test_kill9_at_several_points_loses_and_doubles_nothing(home, daemons):
    _seed(home, sorted(CORPUS.iterdir()), meeting_in_h=30)
    _config(home)
    inbox, drop = home / "data" / "inbox", home / "data" / "signals"
    # 1. Die after the transcript's commit, before its file moved.
    d = daemons(home, BACKCHANNEL_TEST_CRASH_AT="inbox.after_ingest").ready()
    (inbox / "tom.vtt").write_text(NEW_TRANSCRIPT)
    assert d.wait_exit() == 137
    assert (inbox / "tom.vtt").exists()
    # 2. Restart: the inbox run resumes (moves the file). Die after the signal's sweep committed.
    d = daemons(home, BACKCHANNEL_TEST_CRASH_AT="sweep.after_commit").ready()
    d.wait_log(lambda x: x.get("msg") == "run finished" and x.get("wake_kind") is None and x.get("status") == "done")
    _signal(drop)
    assert d.wait_exit() == 137
    # 3. The signal run resumes from its recorded sweep; die just before the proposal's commit,
    # then again right after it.
    assert daemons(home, BACKCHANNEL_TEST_CRASH_AT="proposal.before_commit").wait_exit() == 137
    with _db(home) as store:
        assert store.scalar("SELECT count(*) FROM proposals") == 0
    assert daemons(home, BACKCHANNEL_TEST_CRASH_AT="proposal.after_commit").wait_exit() == 137
    # 4. Resumes again: the proposal exists, so it is not made twice; die before the run closes.
    assert daemons(home, BACKCHANNEL_TEST_CRASH_AT="run.before_finish").wait_exit() == 137
    # 5. SIGKILL from outside while a new drop is being handled.
    d = daemons(home).ready()
    d.wait_log(lambda x: x.get("msg") == "wake skipped" and str(x.get("wake_key", "")).startswith("signal:"))
    shutil.copy(CORPUS / "2026-06-11 budget review.srt", inbox / "budget-again.srt")  # same content, new name
    d.wait_log(lambda x: x.get("msg") == "run started" and x.get("wake_kind") == "inbox")
    d.kill()
    # 6. A clean start finishes everything.
    d = daemons(home).ready()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (inbox / "budget-again.srt").exists():
        time.sleep(0.1)
    d.stop()
    with _db(home) as store:
        assert store.scalar("SELECT count(*) FROM sources") == 5
        assert store.scalar("SELECT count(DISTINCT content_hash) FROM sources") == 5
        per_source = store.query(
            "SELECT s.id, s.assertion_count, count(a.id) AS n FROM sources s "
            "LEFT JOIN assertions a ON a.source_id = s.id GROUP BY ALL"
        )
        assert all(r["assertion_count"] == r["n"] for r in per_source)
        assert store.scalar("SELECT count(*) FROM proposals") == 1
        assert store.scalar("SELECT count(*) FROM signals") == 1
        assert store.scalar("SELECT count(*) FROM runs WHERE status = 'running'") == 0
        sig_run = store.query("SELECT id, status FROM runs WHERE wake_kind = 'signal'")
        assert len(sig_run) == 1 and sig_run[0]["status"] == "done"
        assert len(store.events(run_id=sig_run[0]["id"], kind="run.recovered")) == 1  # keyed: once
        assert len(store.events(run_id=sig_run[0]["id"], kind="run.resumed")) == 4
        assert len(store.events(kind="proposal.created")) == 1
    assert (home / "data" / "processed" / "tom.vtt").exists()
    assert (home / "data" / "processed" / "budget-again.srt").exists()
    assert not any(inbox.iterdir())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie waiting for init to reap it is dead


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the sandbox child")
def test_sigterm_during_a_long_sandbox_run_exits_in_time_and_kills_the_sandbox(home, daemons):
    from tests.support.daemon_support import child_pids

    _config(home, extra="[sandbox]\ncpu_s = 60\nwall_s = 60\n")
    skills = home / "skills"
    skills.mkdir()
    (skills / "stale_relationships.py").write_text(  # replaces the built-in skill of a manual sweep
        '"""Spins."""\nNAME = "stale_relationships"\nWAKES = ("sweep",)\nPROGRAM = "while True:\\n    pass\\n"\n'
    )
    d = daemons(home).ready()
    assert "queued" in cli(home, "wake", "sweep").stdout
    run_id = d.wait_log(lambda x: x.get("msg") == "run started" and x.get("wake_kind") == "manual")["run_id"]
    deadline = time.monotonic() + 10
    sandbox: list[int] = []
    while not sandbox and time.monotonic() < deadline:
        sandbox = [p for p in child_pids(d.proc.pid) if os.getpgid(p) == p]  # a session of its own
        time.sleep(0.05)
    assert sandbox, "no sandbox child seen"
    t0 = time.monotonic()
    assert "queued" in cli(home, "wake", "sweep").stdout  # enqueuing never waits behind the busy run
    assert time.monotonic() - t0 < 5
    assert d.stop() < 10
    assert not any(_alive(p) for p in sandbox)
    assert any(x.get("msg") == "killed child process groups before exiting" for x in d.lines())
    # The cut-short sweep was not recorded: the run resumes at the next start and sweeps for real.
    (skills / "stale_relationships.py").unlink()
    d = daemons(home).ready()
    d.wait_log(lambda x: x.get("msg") == "run finished" and x.get("run_id") == run_id)
    d.stop()
    with _db(home) as store:
        assert store.scalar("SELECT status FROM runs WHERE id = ?", [run_id]) == "done"
        done = store.events(run_id=run_id, kind="sweep.done")
        assert len(done) == 1 and "stale_relationships" in (done[0]["data"]["skill"] or "")
        assert not any("stale_relationships" in e for e in done[0]["data"]["errors"])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the sandbox child")
def test_kill9_keeps_a_queued_manual_wake_and_runs_it_once_after_restart(home, daemons):
    """`wake sweep` answered "queued" while a long run held the writer: after kill -9
    the request is in the event log, and the next start runs it exactly once."""
    from tests.support.daemon_support import child_pids

    _config(home, extra="[sandbox]\ncpu_s = 60\nwall_s = 60\n")
    skills = home / "skills"
    skills.mkdir()
    (skills / "stale_relationships.py").write_text(  # the first manual sweep spins in its sandbox
        '"""Spins."""\nNAME = "stale_relationships"\nWAKES = ("sweep",)\nPROGRAM = "while True:\\n    pass\\n"\n'
    )
    d = daemons(home).ready()
    first = json.loads(cli(home, "wake", "sweep", "--json").stdout)["key"]
    d.wait_log(lambda x: x.get("msg") == "run started" and x.get("wake_key") == first)
    deadline = time.monotonic() + 10
    sandbox: list[int] = []
    while not sandbox and time.monotonic() < deadline:
        sandbox = [p for p in child_pids(d.proc.pid) if os.getpgid(p) == p]
        time.sleep(0.05)
    assert sandbox, "no sandbox child seen"
    t0 = time.monotonic()
    second = json.loads(cli(home, "wake", "sweep", "--json").stdout)["key"]  # queued behind the spinning run
    assert time.monotonic() - t0 < 5  # recording it did not wait for the writer
    d.kill()
    for pgid in sandbox:  # a session of its own: kill -9 of the daemon does not reach it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    (skills / "stale_relationships.py").unlink()

    d = daemons(home).ready()
    for key in (first, second):
        d.wait_log(
            lambda x, k=key: (
                x.get("msg") == "run finished"
                and any(
                    y.get("run_id") == x.get("run_id") and y.get("wake_key") == k
                    for y in d.lines()
                    if y.get("msg") == "run started"
                )
            )
        )
    d.stop()
    assert not any(x.get("msg") == "wake skipped" for x in d.lines())  # the resumed first one not queued again
    assert any(x.get("msg") == "re-queueing requested wakes" and x.get("keys") == [second] for x in d.lines())
    with _db(home) as store:
        for key in (first, second):
            assert [r["status"] for r in store.query("SELECT status FROM runs WHERE wake_key = ?", [key])] == ["done"]
        assert [e["key"] for e in store.events(kind="wake.requested")] == [first, second]
    d = daemons(home).ready()  # a further start finds nothing left to re-queue
    d.stop()
    assert not any(x.get("msg") == "re-queueing requested wakes" for x in d.lines())


def test_kill9_after_an_inbox_file_moved_closes_its_run(home, daemons):
    _config(home)
    inbox = home / "data" / "inbox"
    d = daemons(home, BACKCHANNEL_TEST_CRASH_AT="inbox.after_move").ready()
    (inbox / "tom.vtt").write_text(NEW_TRANSCRIPT)
    assert d.wait_exit() == 137
    assert (home / "data" / "processed" / "tom.vtt").exists()
    d = daemons(home).ready()  # the file moved after its commit: the run closes with that reason
    d.stop()
    with _db(home) as store:
        assert store.scalar("SELECT count(*) FROM sources") == 1
        [run] = store.query("SELECT status, reason FROM runs WHERE wake_kind = 'inbox'")
        assert run["status"] == "closed" and "already moved" in run["reason"]


def test_start_waits_for_a_cli_that_holds_the_store(home, daemons):
    """A CLI command that found no daemon opened the store itself: the daemon that
    starts meanwhile waits for it (and still obeys SIGTERM) instead of crashing."""
    import duckdb

    _config(home)
    cli(home, "init")
    db = home / "data" / "backchannel.duckdb"
    con = duckdb.connect(str(db))
    try:
        d = daemons(home)
        d.wait_log(lambda x: x.get("msg") == "the database is held by another process; waiting for it")
        assert d.stop() < 10  # a stop while waiting is prompt
        d = daemons(home)
        d.wait_log(lambda x: x.get("msg") == "the database is held by another process; waiting for it")
    finally:
        con.close()
    d.ready()
    assert json.loads(cli(home, "status", "--json").stdout)["daemon"]["pid"] == d.proc.pid
    d.stop()


def test_budget_spent_leaves_the_file_in_the_inbox_until_the_budget_returns(home, daemons, tmp_path):
    """A spent daily model budget defers an inbox file (not failed/): it stays in the
    inbox and is ingested once SIGHUP brings a raised budget."""
    answer = {
        "assertions": [
            {
                "utterance": 0,
                "quote": "I joined Hooli as head of procurement in September",
                "subject": "I",
                "predicate": "works_at",
                "object": "Hooli",
                "object_kind": "organisation",
                "qualifier": "head of procurement",
            }
        ]
    }
    scripts = tmp_path / "scripts.json"
    scripts.write_text(
        json.dumps(
            {
                "inbox": [
                    {"match": "Name as mentioned", "content": {"match_id": None, "confidence": 0.1}, "repeat": True},
                    {"content": answer, "repeat": True},
                ]
            }
        )
    )
    _config(home, models={"extract": "scripted/inbox"}, extra="[models.budget]\nper_day_tokens = 10\n")
    from tests.support.scripted_models import PLUGIN_FILE

    d = daemons(home, BACKCHANNEL_PLUGINS=PLUGIN_FILE, BACKCHANNEL_SCRIPTED_MODELS=str(scripts)).ready()
    inbox = home / "data" / "inbox"
    (inbox / "2026-11-02 tom.vtt").write_text(NEW_TRANSCRIPT)
    d.wait_log(lambda x: x.get("msg") == "run finished" and x.get("status") == "budget_stopped")
    time.sleep(0.5)
    assert (inbox / "2026-11-02 tom.vtt").exists()
    assert not (home / "data" / "failed").exists() or not any((home / "data" / "failed").iterdir())

    _config(home, models={"extract": "scripted/inbox"}, extra="[models.budget]\nper_day_tokens = 100000\n")
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 90  # the retry imports litellm: 7 s quiet, 15 s+ on a loaded 2-core machine
    while time.monotonic() < deadline and not (home / "data" / "processed" / "2026-11-02 tom.vtt").exists():
        time.sleep(0.1)
    assert (home / "data" / "processed" / "2026-11-02 tom.vtt").exists(), d.log_path.read_text()[-3000:]
    facts = json.loads(cli(home, "assertions", "--about", "Tom Becker", "--json").stdout)
    assert [(f["predicate"], f["object"], f["extractor"]) for f in facts][:1] == [
        ("works_at", "Hooli", "scripted/inbox")
    ]
    d.stop()


def test_wake_through_the_daemon_says_what_the_sweep_did(home, daemons):
    """`wake sweep` with a daemon waits for the queued run and prints its outcome."""
    _config(home)
    d = daemons(home).ready()
    out = cli(home, "wake", "sweep", "--wait", "45").stdout
    assert out.startswith("queued: manual wake in the running daemon; waiting for it...\n"), out
    line = out.splitlines()[1]
    assert line.startswith("manual ") and " done " in line and "nothing to propose" in line, out
    d.stop()


def test_a_daemon_run_records_its_edges_and_an_edge_limit_stops_it(home, daemons, tmp_path):
    """Through the real daemon, a scripted draft model: a signal's run records its edges
    (program, judge), and `[edges.draft] max_excerpts = 1` stops it before the drafter's call,
    with the reason in `status` and `trace` (docs/configuration.md, "Edges")."""
    from tests.support.scripted_models import PLUGIN_FILE

    _seed(home, sorted(CORPUS.iterdir()), meeting_in_h=30)
    scripts = tmp_path / "scripts.json"
    scripts.write_text(
        json.dumps(
            {
                "edges": [
                    {
                        "match": "deserves to interrupt",
                        "repeat": True,
                        "content": {"worth_it": True, "score": 0.95, "reason": "x"},
                    },
                    {
                        "repeat": True,
                        "content": {"title": "Ask Marc", "body": "Marc knows Sophie.", "message": "Hi Marc"},
                    },
                ]
            }
        )
    )
    _config(home, models={"draft": "scripted/edges", "retries": 0}, extra="[edges.draft]\nmax_excerpts = 1\n")
    d = daemons(home, BACKCHANNEL_PLUGINS=PLUGIN_FILE, BACKCHANNEL_SCRIPTED_MODELS=str(scripts)).ready()
    _signal(home / "data" / "signals")
    line = d.wait_log(lambda x: x.get("msg") == "run stopped at an edge", timeout=120)
    assert line["edge"] == "draft" and "[edges.draft] max_excerpts = 1" in line["reason"]
    st = json.loads(cli(home, "status", "--json").stdout)
    [run] = [r for r in st["recent_wakes"] if r["id"] == line["run_id"]]
    assert run["status"] == "failed" and "stopped at edge draft" in run["reason"]
    t = json.loads(cli(home, "trace", line["run_id"], "--json").stdout)
    assert [(e["edge"], e["outcome"]) for e in t["edges"]] == [("program", "ok"), ("judge", "ok"), ("draft", "stopped")]
    assert t["edges"][1]["tokens"] > 0 and t["edges"][1]["evidence"]["model_calls"]
    assert "edges:" in cli(home, "trace", line["run_id"]).stdout
    assert json.loads(cli(home, "proposals", "--json").stdout) == []
    d.stop()

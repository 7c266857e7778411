"""The daemon with an IMAP account (a real dovecot on loopback, a real `backchannel run`):
a kill -9 in the middle of a sync loses and doubles nothing; an email introduction, a
calendar meeting and a signal produce a proposal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.support import mail_fixtures as fx
from tests.support.daemon_support import DaemonLog
from tests.support.imap_server import PASSWORD, dovecot  # noqa: F401 - the fixture

BASE = """[owner]
name = "Alex Moreau"
email = "alex@example.com"
[inbox]
quiet_period_s = 0.4
poll_interval_s = 0.1
[schedule]
sweep = []
[signals]
drop_poll_s = 0.2
[gate]
quiet_hours = "off"
min_gap_minutes = 0
"""


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_") and k != "NOTIFY_SOCKET"}
    env.update(BACKCHANNEL_HOME=str(home), PYTHONUNBUFFERED="1", **extra)
    return env


class Daemon(DaemonLog):
    def __init__(self, home: Path, **env: str):
        self.log_path = home / f"daemon-{time.monotonic_ns()}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "backchannel", "run"],
            env=_env(home, **env),
            stdout=subprocess.DEVNULL,
            stderr=self.log_path.open("w"),
        )

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=15) == 0, self.log_path.read_text()[-3000:]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    p = subprocess.run(
        [sys.executable, "-m", "backchannel", *args], env=_env(home), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p


def _home(home: Path, server, extra: str = "", **mail) -> None:
    (home / "config.toml").write_text(BASE + server.config(["INBOX"], sync_interval_s=3600, **mail) + extra)
    (home / "secrets").mkdir(exist_ok=True)
    (home / "secrets" / "imap_password").write_text(PASSWORD)


def _mail_runs_done(d: Daemon) -> int:
    return sum(1 for x in d.lines() if x.get("msg") == "run finished" and x.get("status") == "done")


def test_kill9_mid_sync_loses_and_doubles_nothing(home, dovecot):  # noqa: F811
    messages = fx.numbered(120)
    dovecot.append("INBOX", messages)
    _home(home, dovecot, batch=10)
    # 1. Die right after the first message's commit, before the folder's last UID moved.
    d = Daemon(home, BACKCHANNEL_TEST_CRASH_AT="mail.after_message")
    assert d.proc.wait(timeout=60) == 137
    # 2. Restart; SIGKILL from outside while the resumed sync is under way.
    d = Daemon(home)
    d.wait_log(lambda x: x.get("msg") == "run started", timeout=30)
    time.sleep(1.0)
    d.kill()
    import duckdb

    con = duckdb.connect(str(home / "data" / "backchannel.duckdb"), read_only=True)
    try:
        stored = con.execute("SELECT count(*) FROM mail_messages").fetchone()[0]
        last_uid = con.execute("SELECT last_uid FROM mail_sync_state").fetchone()[0]
    finally:
        con.close()
    # The folder's position never runs ahead of what is stored (UIDs 1..120 are all readable).
    assert stored >= 1 and last_uid <= stored
    # 3. A clean start finishes the folder; then one more message arrives and is synced alone.
    d = Daemon(home)
    d.wait_log(lambda x: x.get("msg") == "daemon ready", timeout=30)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        st = json.loads(cli(home, "status", "--json").stdout)
        folders = (st.get("mail") or {}).get("folders") or []
        if folders and folders[0]["last_uid"] == 120:
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"sync did not finish: {st.get('mail')}\n{d.log_path.read_text()[-3000:]}")
    assert st["mail"]["messages"] == 120 and folders[0]["failed"] == 0 and folders[0]["last_error"] is None
    d.stop()
    con = duckdb.connect(str(home / "data" / "backchannel.duckdb"), read_only=True)
    try:
        q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        assert q("SELECT count(*) FROM mail_messages") == 120
        assert q("SELECT count(*) FROM sources") == 120
        assert q("SELECT count(DISTINCT content_hash) FROM sources") == 120
        assert q("SELECT count(*) FROM (SELECT source_id FROM mail_messages GROUP BY 1 HAVING count(*) > 1)") == 0
        assert q("SELECT count(*) FROM runs WHERE status = 'running'") == 0
        per_source = con.execute(
            "SELECT s.assertion_count, count(a.id) FROM sources s LEFT JOIN assertions a "
            "ON a.source_id = s.id GROUP BY s.id, s.assertion_count"
        ).fetchall()
        assert all(n == c for n, c in per_source)  # no half-written source
    finally:
        con.close()


def _ics(path: Path, start: datetime) -> None:
    fmt = "%Y%m%dT%H%M%SZ"
    path.write_text(
        "\r\n".join(
            [
                "BEGIN:VCALENDAR",
                "VERSION:2.0",
                "PRODID:-//backchannel tests//EN",
                "BEGIN:VEVENT",
                "UID:coffee-marc@example.com",
                f"DTSTAMP:{start.strftime(fmt)}",
                f"DTSTART:{start.strftime(fmt)}",
                f"DTEND:{(start + timedelta(hours=1)).strftime(fmt)}",
                "SUMMARY:Coffee with Marc",
                "ORGANIZER;CN=Alex Moreau:mailto:alex@example.com",
                "ATTENDEE:mailto:marc.dupont@initech.example",  # no name: found by its address
                "END:VEVENT",
                "END:VCALENDAR",
                "",
            ]
        )
    )


def test_email_intro_calendar_meeting_and_signal_make_a_proposal(home, dovecot):  # noqa: F811
    dovecot.append("INBOX", [fx.INTRO, fx.REPLY])
    ics = home / "calendar.ics"
    _ics(ics, (datetime.now(UTC) + timedelta(hours=30)).replace(microsecond=0))
    _home(home, dovecot, extra=f'[calendar]\nsources = ["{ics}"]\nrefresh_s = 3600\nlead_hours = 48\n')
    d = Daemon(home)
    try:
        d.wait_log(lambda x: x.get("msg") == "daemon ready", timeout=30)
        # The mail wake runs at start; the calendar is read then too: wait for the meeting's run.
        d.wait_log(
            lambda x: x.get("msg") == "run finished" and any(y.get("wake_kind") == "meeting_soon" for y in d.lines()),
            timeout=60,
        )
        # Email dropped in the inbox: a good message is stored, a broken one goes to failed/
        # with its reason, and the daemon carries on.
        inbox = home / "data" / "inbox"
        (inbox / ".tom.tmp").write_bytes(fx.OUTLOOK_REPLY)
        (inbox / ".tom.tmp").rename(inbox / "tom.eml")
        (inbox / ".broken.tmp").write_bytes(fx.BROKEN_MIME)
        (inbox / ".broken.tmp").rename(inbox / "broken.eml")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            (home / "data" / "processed" / "tom.eml").exists() and (home / "data" / "failed" / "broken.eml").exists()
        ):
            time.sleep(0.1)
        assert "broken MIME" in (home / "data" / "failed" / "broken.eml.error.txt").read_text()
        drop = home / "data" / "signals"
        drop.mkdir(parents=True, exist_ok=True)
        (drop / ".acme.tmp").write_text(
            json.dumps(
                {
                    "title": "Acme Corp publishes a tender",
                    "summary": "Acme Corp opens a tender for its data platform.",
                    "url": "https://acme.example/tenders/42",
                    "published_at": datetime.now(UTC).isoformat(),
                }
            )
        )
        (drop / ".acme.tmp").rename(drop / "acme.json")
        line = d.wait_log(lambda x: x.get("msg") == "proposal created", timeout=60)
        shown = json.loads(cli(home, "show", line["proposal_id"], "--json").stdout)
        assert shown["kind"] == "introduction" and "Marc" in shown["title"]
        quotes = [e["quote"] for e in shown["evidence"]]
        assert any("meet Sophie Martin" in q for q in quotes)  # the email introduction
        assert any("Chief Information Officer" in q for q in quotes)  # her signature: CIO of Acme
        assert {e["source_title"] for e in shown["evidence"]} >= {"Intro: Julie <> Sophie"}
        st = json.loads(cli(home, "status", "--json").stdout)
        assert st["mail"]["messages"] == 3 and st["mail"]["folders"][0]["last_sync_at"]
        assert "mail:" in cli(home, "status").stdout
        d.stop()
    finally:
        d.kill()

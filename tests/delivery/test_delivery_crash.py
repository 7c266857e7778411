"""kill -9 between "proposal stored" and "mail sent", then restart: exactly one mail.

A real child process stores a proposal and runs the outbox; the env-var test hook
(`BACKCHANNEL_TEST_CRASH_AT`) makes it stop at a precise point and announce it,
the test SIGKILLs it, and a fresh child (the restarted daemon) runs the outbox
again against a real aiosmtpd server that counts messages.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.delivery_support import OWNER, start_smtp

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from backchannel.config import load_settings, resolve_paths
from backchannel.core.crashpoints import crash_point
from backchannel.delivery import outbox
from backchannel.memory import Store
paths = resolve_paths()
settings = load_settings(paths)
store = Store.open(paths.db_file)
if sys.argv[1] == "store":
    from tests.support.delivery_support import add_proposal
    pid = add_proposal(store)
    crash_point("test.proposal_stored")
    outbox.enqueue(store, pid, settings.delivery.channels)
    crash_point("test.enqueued")
results = outbox.deliver_due(store, settings, paths)
print(json.dumps([r.to_dict() for r in results]))
store.close()
"""


def _env(home: Path, crash_at: str | None, marker: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_")}
    env["BACKCHANNEL_HOME"] = str(home)
    if crash_at:
        env["BACKCHANNEL_TEST_CRASH_AT"] = crash_at
        env["BACKCHANNEL_TEST_CRASH_FILE"] = str(marker)
    return env


def _kill_at(home: Path, point: str, tmp_path: Path) -> None:
    marker = tmp_path / f"reached-{point}"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, "store", str(ROOT)],
        env=_env(home, point, marker),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            if child.poll() is not None:
                raise AssertionError(f"child exited early: {child.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"child never reached {point}")
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()


def _restart(home: Path, tmp_path: Path) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "deliver", str(ROOT)],
        env=_env(home, None, tmp_path / "x"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def smtp_home(home: Path):
    smtp = start_smtp("plain")
    (home / "config.toml").write_text(
        f'[owner]\nname = "Owner"\nemail = "{OWNER}"\n\n'
        f'[delivery]\nchannels = ["email"]\n\n'
        f'[delivery.email]\nhost = "127.0.0.1"\nport = {smtp.port}\nsecurity = "none"\nsender = "bc@example.net"\n'
    )
    yield home, smtp
    smtp.stop()


@pytest.mark.parametrize("point", ["test.proposal_stored", "test.enqueued", "outbox.claimed"])
def test_kill_before_the_mail_went_out_then_restart_sends_exactly_one(smtp_home, tmp_path, point):
    home, smtp = smtp_home
    _kill_at(home, point, tmp_path)
    assert smtp.messages == []
    results = _restart(home, tmp_path)
    assert [r["ok"] for r in results] == [True]
    assert len(smtp.messages) == 1
    assert smtp.messages[0].rcpt_tos == [OWNER]
    assert _restart(home, tmp_path) == []  # a second restart has nothing left to send
    assert len(smtp.messages) == 1


def test_the_remaining_window_resends_with_the_same_message_id(smtp_home, tmp_path):
    """Killed after the server accepted the mail but before 'sent' committed: the
    one documented window. The restart sends it again with the same Message-ID."""
    home, smtp = smtp_home
    _kill_at(home, "outbox.sent", tmp_path)
    assert len(smtp.messages) == 1
    [r] = _restart(home, tmp_path)
    assert r["ok"] and r["attempts"] == 2
    assert len(smtp.messages) == 2
    assert smtp.messages[0].msg["Message-ID"] == smtp.messages[1].msg["Message-ID"]

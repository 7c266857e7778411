"""The three bottom helpers: one time module, one crash hook, one
secret-file writer. Real files, real processes."""

from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from backchannel.core import timeutil
from backchannel.core.secretfile import create_secret, write_secret

ROOT = Path(__file__).resolve().parents[2]


# -- timeutil ----------------------------------------------------------------


def test_naive_utc_is_the_column_form_and_aware_values_are_converted_not_stripped():
    paris = datetime(2026, 7, 1, 12, 0, tzinfo=ZoneInfo("Europe/Paris"))  # 10:00 UTC
    assert timeutil.as_naive_utc(paris) == datetime(2026, 7, 1, 10, 0)
    assert timeutil.as_naive_utc(datetime(2026, 7, 1, 12, 0)) == datetime(2026, 7, 1, 12, 0)  # naive: already UTC
    assert timeutil.parse_naive_utc("2026-07-01T12:00:00+02:00") == datetime(2026, 7, 1, 10, 0)
    assert timeutil.parse_naive_utc("") is None and timeutil.parse_naive_utc(None) is None
    now = timeutil.db_now()
    assert now.tzinfo is None and abs(now - datetime.now(UTC).replace(tzinfo=None)) < timedelta(seconds=5)


def test_aware_utc_reads_naive_values_as_utc_unless_told_the_zone():
    naive = datetime(2026, 1, 15, 9, 30)
    assert timeutil.as_aware_utc(naive) == datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    # A calendar's floating time is the owner's wall clock: 09:30 in Paris is 08:30 UTC in winter.
    assert timeutil.as_aware_utc(naive, assume=ZoneInfo("Europe/Paris")) == datetime(2026, 1, 15, 8, 30, tzinfo=UTC)
    assert timeutil.aware_now().utcoffset() == timedelta(0)


def test_the_store_and_the_wake_use_the_one_module():
    from backchannel.memory import store
    from backchannel.triggers.wake import Wake

    assert store.utcnow is timeutil.db_now
    w = Wake("manual", key="k")
    assert w.created_at.tzinfo is not None and w.created_at.utcoffset() == timedelta(0)


# -- crash points --------------------------------------------------------------

CRASHING = "from backchannel.core.crashpoints import crash_point\ncrash_point('a.other')\ncrash_point('a.point')\nprint('passed')\n"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_TEST_")}
    env["PYTHONPATH"] = str(ROOT)
    return {**env, **extra}


def test_a_crash_point_dies_at_once_with_137_when_no_marker_is_asked():
    p = subprocess.run(
        [sys.executable, "-c", CRASHING],
        env=_env(BACKCHANNEL_TEST_CRASH_AT="a.point"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 137 and "passed" not in p.stdout
    p = subprocess.run([sys.executable, "-c", CRASHING], env=_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "passed" in p.stdout  # no hook named: nothing happens


def test_a_crash_point_with_a_marker_announces_itself_and_waits_to_be_killed(tmp_path):
    marker = tmp_path / "reached"
    p = subprocess.Popen(
        [sys.executable, "-c", CRASHING],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(BACKCHANNEL_TEST_CRASH_AT="a.point", BACKCHANNEL_TEST_CRASH_FILE=str(marker)),
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.read_text() == "a.point"
        time.sleep(0.2)
        assert p.poll() is None  # still there, waiting for the test's SIGKILL
    finally:
        p.kill()
    assert p.wait(timeout=10) == -9
    assert "passed" not in p.stdout.read()


# -- secret files ----------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_write_secret_replaces_a_wider_file_without_ever_widening_the_new_one(tmp_path):
    f = tmp_path / "export.json"
    f.write_text("old")
    f.chmod(0o644)
    reader = f.open()  # someone who opened the old file never reads the secret through it
    old_inode = f.stat().st_ino
    old = os.umask(0)
    try:
        write_secret(f, "everything about Marc\n")
    finally:
        os.umask(old)
    assert f.read_text() == "everything about Marc\n" and _mode(f) == 0o600
    assert f.stat().st_ino != old_inode and reader.read() == "old"
    reader.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]  # no temporary file left


def _race(path: str, n: int, out: multiprocessing.Queue) -> None:
    out.put((n, create_secret(Path(path), f"key-{n}-" + "x" * 4096)))


def test_create_secret_first_writer_wins_whole_across_processes(tmp_path):
    f = tmp_path / "links.key"
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(f), n, q)) for n in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    results = dict(q.get(timeout=10) for _ in procs)
    winners = [n for n, won in results.items() if won]
    assert len(winners) == 1
    assert f.read_text() == f"key-{winners[0]}-" + "x" * 4096  # whole, never a mix or a prefix
    assert _mode(f) == 0o600
    assert create_secret(f, "another") is False and f.read_text().startswith(f"key-{winners[0]}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["links.key"]

"""The child started ahead (`prestart`): confined before its program is known,
used for exactly one program, never reused, replaced after each run; a spare
that died or has other limits is never used; stopping leaves no process."""

from __future__ import annotations

import os
import signal
import time

import pytest

from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import prestart, run_program, stop_prestarting
from backchannel.sandbox.runner import live_children, spare

LIMITS = SandboxSettings(cpu_s=3, wall_s=5.0, memory_mb=256)


@pytest.fixture
def prestarted():
    before = set(live_children())
    prestart(LIMITS)
    yield before
    stop_prestarting()


def _spare_pid() -> int:
    assert spare.ready(20), "no spare child became ready"
    session = spare.session
    assert session is not None and session.proc is not None
    return session.proc.pid


def _gone(pids: set[int], timeout: float = 3.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not pids & set(live_children()):
            return True
        time.sleep(0.02)
    return False


def test_each_run_gets_its_own_confined_child_started_ahead(prestarted):
    pids, seen = [], set()
    for i in range(3):
        waiting = _spare_pid()
        r = run_program(f"import functools\nfunctools.left_by_an_earlier_run = {i}\nresult = {i}", None, LIMITS)
        assert r.ok and r.result == i, r.error
        assert r.stats["prestarted"] and r.stats["pid"] == waiting
        assert r.stats["isolation_mode"] in ("root", "userns"), r.stats["isolation"]
        assert {"chroot", "seccomp", "audit_hook", "ast"} <= set(r.stats["isolation"])
        assert r.stats["start_s"] is not None and r.stats["startup_s"] is not None
        pids.append(waiting)
        seen.add(waiting)
    assert len(seen) == 3, "a child ran more than one program"
    # Nothing a run left in its interpreter is there for the next one.
    _spare_pid()
    r = run_program(
        "import functools\ntry:\n    result = functools.left_by_an_earlier_run\n"
        "except AttributeError:\n    result = 'none'",
        None,
        LIMITS,
    )
    assert r.ok and r.result == "none" and r.stats["prestarted"]
    assert _gone(set(pids)), "a used child outlived its run"


def test_a_run_with_other_limits_starts_cold_and_the_spare_stays(prestarted):
    waiting = _spare_pid()
    r = run_program("result = 1", None, SandboxSettings(cpu_s=4, wall_s=5.0, memory_mb=256))
    assert r.ok and not r.stats["prestarted"] and r.stats["pid"] != waiting
    assert _spare_pid() == waiting


def test_a_dead_spare_is_never_used(prestarted):
    waiting = _spare_pid()
    os.killpg(waiting, signal.SIGKILL)
    time.sleep(0.2)
    r = run_program("result = 2", None, LIMITS)
    assert r.ok and r.result == 2 and not r.stats["prestarted"], r.error
    assert _spare_pid() != waiting


def test_a_refused_program_costs_the_spare_nothing_and_errors_still_come_back(prestarted):
    waiting = _spare_pid()
    r = run_program("import os", None, LIMITS)  # refused in the parent: no child used
    assert not r.ok and r.stats["error_kind"] == "policy"
    assert _spare_pid() == waiting
    r = run_program("x = 1 / 0", None, LIMITS)
    assert not r.ok and r.stats["error_kind"] == "exception" and r.stats["prestarted"]
    r2 = run_program("while True:\n    pass", None, SandboxSettings(cpu_s=1, wall_s=5.0, memory_mb=256))
    assert not r2.ok and r2.stats["error_kind"] == "cpu"


def test_the_spare_is_a_live_child_and_stopping_kills_it():
    before = set(live_children())
    prestart(LIMITS)
    waiting = _spare_pid()
    assert waiting in live_children()  # so the daemon's forced exit kills it too
    stop_prestarting()
    assert spare.session is None
    assert _gone({waiting}) and set(live_children()) <= before
    with pytest.raises(ProcessLookupError):
        deadline = time.time() + 3
        while time.time() < deadline:
            os.kill(waiting, 0)
            time.sleep(0.02)

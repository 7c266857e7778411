"""The sandbox: a teardown that cannot fail, and strict JSON on the wire.

remove_tree must delete whatever a program may leave where it has no tmpfs of
its own: trees deeper than PATH_MAX, directories without permissions, names that
are not UTF-8, symlinks to elsewhere (never followed), and must never raise.
The wire refuses non-finite numbers (1e999 parses to inf in plain json.loads)
and over-deep frames as protocol errors, never as `internal`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backchannel.sandbox import rpc, workdir

ROOT = Path(__file__).resolve().parents[2]


def _deep_tree(top: Path, levels: int) -> None:
    here = os.getcwd()
    try:
        os.chdir(top)
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        Path("leaf").write_text("x")
    finally:
        os.chdir(here)


def test_remove_tree_deeper_than_path_max(tmp_path):
    top = tmp_path / "run"
    top.mkdir()
    _deep_tree(top, 2500)  # 2 * 2500 bytes of path: past PATH_MAX (4096)
    assert workdir.remove_tree(str(top)) == []
    assert not top.exists()


def test_remove_tree_unreadable_dirs_odd_names_and_symlinks(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("precious")
    top = tmp_path / "run"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "f").write_text("x")
    os.symlink(outside, top / "a" / "to_outside")
    os.symlink(outside / "keep", top / "link_file")
    odd = os.fsencode(str(top)) + b"/\xff\xfe-not-utf8"
    os.mkdir(odd)
    with open(odd + b"/f", "wb") as fh:
        fh.write(b"x")
    for d in (top / "a" / "b", top / "a", Path(os.fsdecode(odd))):
        d.chmod(0)
    top.chmod(0o500)
    assert workdir.remove_tree(str(top)) == []
    assert not top.exists()
    assert (outside / "keep").read_text() == "precious"  # the symlinks were not followed


def test_remove_tree_never_raises(tmp_path):
    assert workdir.remove_tree(str(tmp_path / "missing")) == []
    f = tmp_path / "file"
    f.write_text("x")
    assert workdir.remove_tree(str(f)) == [] and not f.exists()
    out = workdir.remove_tree("\0bad")  # a path the kernel refuses
    assert isinstance(out, list) and out


@pytest.mark.parametrize(
    "frame,why",
    [
        (b'{"t":"done","ok":true,"result":1e999,"rss_mb":null}', "not finite"),
        (b'{"t":"done","ok":true,"result":[-1e400],"rss_mb":null}', "not finite"),
        (b'{"t":"done","ok":true,"result":NaN,"rss_mb":null}', "constant"),
        (b'{"t":"done","ok":true,"result":-Infinity,"rss_mb":null}', "constant"),
        (b'{"t":"done","ok":true,"result":' + b"[" * 100_000 + b"]" * 100_000 + b',"rss_mb":null}', "deeply"),
    ],
)
def test_decode_refuses_non_finite_and_deep_frames(frame, why):
    with pytest.raises(rpc.ProtocolError, match=why):
        rpc.decode(frame)


def test_depth_limit_of_child_messages():
    ok = json.loads(b'{"t":"done","ok":true,"result":' + b"[" * 90 + b"]" * 90 + b',"rss_mb":null}')
    assert rpc.check_child_message(ok) == "done"
    deep = json.loads(b'{"t":"done","ok":true,"result":' + b"[" * 120 + b"]" * 120 + b',"rss_mb":null}')
    with pytest.raises(rpc.ProtocolError, match="deeper"):
        rpc.check_child_message(deep)
    with pytest.raises(ValueError):
        rpc.encode({"t": "ret", "v": float("inf")})


def _strict(text: str):
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name} printed")

    return json.loads(text, parse_constant=refuse)


def test_cli_prints_strict_json(home, store, tmp_path):
    store.close()
    prog = tmp_path / "p.py"
    for program in ("result = float('1e308') * 10", "result = [float('nan')]", "result = 0.5"):
        prog.write_text(program)
        env = dict(os.environ, BACKCHANNEL_HOME=str(home), PYTHONPATH=str(ROOT))
        p = subprocess.run(
            [sys.executable, "-m", "backchannel.sandbox", "run", str(prog), "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        out = _strict(p.stdout)
        assert p.returncode == (0 if out["ok"] else 1)
        if program.endswith("0.5"):
            assert out["ok"] and out["result"] == 0.5
        else:
            assert not out["ok"] and out["stats"]["error_kind"] == "result"


DAEMON = """
import json, os, sys
import fcntl, resource, select, selectors, signal, tempfile  # the parent side's lazy imports
sys.path.insert(0, sys.argv[2])
from tests.support import sandbox_modes_driver as drv
from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import run_program
mode = sys.argv[1]
if mode == "nouserns":
    drv.block_user_namespaces(json.loads(sys.argv[3]))
if mode != "root" and drv.drop_to_nobody():
    print("skip", flush=True)
    sys.exit(0)
print("running", flush=True)
run_program("while True:\\n    pass", None, SandboxSettings(cpu_s=60, wall_s=90.0, allow_unisolated=True))
"""


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("mode", ["root", "userns", "nouserns"])
def test_the_child_dies_with_the_daemon(tmp_path, mode):
    """kill -9 of the daemon mid-run: the child (and, with a PID namespace, the
    program's process inside it) die too, since the program cannot clear its
    death signal (seccomp) and the namespace ends with its reaper."""
    if os.getuid() != 0:
        pytest.skip("needs root to run the three modes")
    from tests.sandbox.test_sandbox_modes import _resolve_clone_numbers

    script = tmp_path / "daemon.py"
    script.write_text(DAEMON)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    daemon = subprocess.Popen(
        [sys.executable, str(script), mode, str(ROOT), json.dumps(_resolve_clone_numbers())],
        env=env,
        cwd=str(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert daemon.stdout.readline().strip() in ("running", "skip")
        family: list[int] = []
        deadline = time.time() + 20
        while time.time() < deadline:
            kids = _children(daemon.pid)
            family = kids + [g for k in kids for g in _children(k)]
            if len(family) >= (1 if mode == "nouserns" else 2):
                break
            time.sleep(0.05)
        assert family, "no sandbox child appeared"
        time.sleep(0.3)  # let the program reach its loop
    finally:
        daemon.kill()
        daemon.wait()
    deadline = time.time() + 5
    while any(_alive(p) for p in family) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in family), f"sandbox processes outlived the daemon ({mode})"


def test_the_runner_knows_its_live_children_and_the_daemon_kills_them(tmp_path):
    """The daemon's forced exit asks the runner for its children (no process-table scan):
    a real spinning sandbox child is listed while it runs, leads its own process group,
    is killed by `kill_child_groups`, and is no longer listed once the run returns."""
    import threading

    from backchannel.config.sections import SandboxSettings
    from backchannel.daemon.service import kill_child_groups
    from backchannel.sandbox import run_program
    from backchannel.sandbox.runner import live_children

    before = set(live_children())
    results = []
    t = threading.Thread(
        target=lambda: results.append(
            run_program("while True:\n    pass", None, SandboxSettings(cpu_s=60, wall_s=60.0, allow_unisolated=True))
        )
    )
    t.start()
    try:
        deadline = time.monotonic() + 20
        new: list[int] = []
        while not new and time.monotonic() < deadline:
            new = sorted(set(live_children()) - before)
            time.sleep(0.02)
        assert len(new) == 1, "the runner did not list its child"
        child = new[0]
        assert _alive(child) and os.getpgid(child) == child  # a session of its own
        assert child in _children(os.getpid())  # what the kernel says: our child, the runner's word
        assert child in kill_child_groups()
    finally:
        t.join(timeout=30)
    assert not t.is_alive(), "the killed child's run did not return"
    assert results and not results[0].ok
    assert child not in live_children()
    assert not _alive(child)

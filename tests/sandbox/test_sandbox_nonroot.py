"""The sandbox is a wall also when the daemon is NOT root.

As root the child chroots and drops to nobody; as any other user it relies on a
user + network namespace with a chroot (where the kernel allows them), a seccomp
filter and landlock. Here a small driver imports the sandbox as root, drops
itself to uid/gid 65534 (the way an unprivileged daemon runs), then runs escape
attempts through the production path and with the language layer off
(tests/support/sandbox_bypass.py); each must fail and leak nothing:
the driver's environment, a secrets file the daemon user itself can read, a
root-only file, `/proc/<daemon>/environ`, TCP, unix and abstract sockets,
subprocesses, and kill() of the daemon. A second test checks the seccomp filter
alone, in a plain process with no namespace and no chroot.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

NOBODY = 65534
LIMITS_PY = Path(__file__).resolve().parents[2] / "backchannel" / "sandbox" / "limits.py"

DRIVER = textwrap.dedent("""
    import json, os, sys, subprocess
    import resource, selectors, signal, fcntl, tempfile, shutil  # lazily imported by the parent side
    from backchannel.config.sections import SandboxSettings
    from tests.support.sandbox_bypass import execute_layers

    spec = json.loads(sys.argv[1])
    if os.getuid() == 0:
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        if not os.access(sys.executable, os.X_OK):
            # This interpreter lives where nobody may not go (e.g. under /root): use a
            # system Python of the same version for the child (stdlib only, -I -S).
            want = "python%d.%d" % sys.version_info[:2]
            for d in ("/usr/bin", "/usr/local/bin", "/bin"):
                cand = os.path.join(d, want)
                if os.access(cand, os.X_OK):
                    sys.executable = cand
                    break
            else:
                print(json.dumps({"skip": "no Python executable by uid 65534"}))
                sys.exit(0)
    limits = SandboxSettings(cpu_s=2, wall_s=4.0, memory_mb=256, max_output_bytes=100000)
    out = {"uid": os.getuid(), "pid": os.getpid(), "results": {}}
    for name, code, layers in spec["cases"]:
        code = code.replace("PARENT_PID", str(os.getpid()))
        r = execute_layers(code, None, limits, frozenset(layers))
        out["results"][name] = r.to_json()
    out["alive"] = True
    print(json.dumps(out))
""")

ATTEMPTS = {
    "env": "import os\nresult = dict(os.environ)",
    "own_file": "result = open(SECRET_FILE).read()",
    "own_file_os": "import os\nresult = os.read(os.open(SECRET_FILE, os.O_RDONLY), 200).decode()",
    "root_file": "result = open(ROOT_FILE).read()",
    "parent_environ": "result = open('/proc/PARENT_PID/environ', 'rb').read().decode('latin-1')",
    "parent_environ_ppid": "import os\nresult = open('/proc/%d/environ' % os.getppid(), 'rb').read().decode('latin-1')",
    "tcp": "import socket\ns = socket.socket()\ns.connect(('127.0.0.1', TCP_PORT))\nresult = 'connected'",
    "unix": "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(UNIX_PATH)\nresult = 'connected'",
    "abstract": "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(ABSTRACT)\nresult = 'connected'",
    "system": "import os\nrc = os.system('echo x > ' + MARKER)\nresult = 'ran' if rc == 0 else rc",
    "subprocess": "import subprocess\nsubprocess.run(['/bin/sh', '-c', 'echo x > ' + MARKER])\nresult = 'ran'",
    "fork": "import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nresult = pid",
    "kill_parent": "import os\nos.kill(PARENT_PID, 0)\nresult = 'could signal the daemon'",
    # Every Python layer off: the frame walk reaches the child's own `os`.
    "frame_walk": (
        "def walker():\n    f = it.gi_frame\n    while f.f_back is not None:\n        f = f.f_back\n"
        "    yield f.f_globals\nit = walker()\nosm = next(it)['os']\n"
        "result = osm.read(osm.open(SECRET_FILE, 0), 200).decode()"
    ),
    "frame_walk_kill": (
        "def walker():\n    f = it.gi_frame\n    while f.f_back is not None:\n        f = f.f_back\n"
        "    yield f.f_globals\nit = walker()\nosm = next(it)['os']\nosm.kill(PARENT_PID, 0)\n"
        "result = 'could signal the daemon'"
    ),
}
# The language layer on (the production path) or off (the OS layers alone).
LAYERS = {"all": ["ast", "builtins", "audit", "os"], "os": ["os"]}


@pytest.fixture
def world(tmp_path):
    """A directory nobody may enter, holding a secrets file that uid 65534 owns
    (the daemon user's own secret), a root-only file and a unix socket; plus TCP
    and abstract listeners."""
    if os.getuid() != 0:
        pytest.skip("needs root to drop to another uid (a non-root run is the daemon's own case)")
    if not hasattr(os, "setresuid") or sys.platform != "linux":
        pytest.skip("Linux only")
    base = Path(tempfile.mkdtemp(prefix="bc-nonroot-"))
    base.chmod(0o777)
    value = "S3CRET-" + secrets.token_hex(8)
    own = base / "secrets.toml"
    own.write_text(value)
    os.chown(own, NOBODY, NOBODY)
    own.chmod(0o600)
    root_only = base / "root-secret"
    root_only.write_text(value)
    root_only.chmod(0o600)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(5)
    tcp.settimeout(0.05)
    unix_path = str(base / "api.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(unix_path)
    os.chmod(unix_path, 0o777)
    unix.listen(5)
    unix.settimeout(0.05)
    abstract_name = "\0bc-test-" + secrets.token_hex(4)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(abstract_name)
    abstract.listen(5)
    abstract.settimeout(0.05)
    subst = {
        "SECRET_FILE": repr(str(own)),
        "ROOT_FILE": repr(str(root_only)),
        "TCP_PORT": str(tcp.getsockname()[1]),
        "UNIX_PATH": repr(unix_path),
        "ABSTRACT": repr(abstract_name),
        "MARKER": repr(str(base / "ran")),
    }
    yield {"value": value, "subst": subst, "base": base, "listeners": (tcp, unix, abstract)}
    for s in (tcp, unix, abstract):
        s.close()
    shutil.rmtree(base, ignore_errors=True)


def _accepted(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except (TimeoutError, BlockingIOError):
        return False
    conn.close()
    return True


def _drive(world, cases, tmp_path) -> dict:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    resolved = []
    for name, code, layers in cases:
        for k, v in world["subst"].items():
            code = code.replace(k, v)
        resolved.append([name, code, layers])
    repo = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        "BACKCHANNEL_TEST_SECRET": world["value"],
        "PYTHONPATH": repo + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = subprocess.run(
        [sys.executable, str(driver), json.dumps({"cases": resolved})],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    assert out["uid"] == NOBODY and out["alive"]
    return out


def test_escapes_fail_when_the_daemon_is_not_root(world, tmp_path):
    cases = [
        [f"{name}@{ls}", code, LAYERS[ls]]
        for name, code in ATTEMPTS.items()
        for ls in LAYERS
        if not name.startswith("frame_walk")
    ]
    cases += [[f"{name}@os", ATTEMPTS[name], ["os"]] for name in ("frame_walk", "frame_walk_kill")]
    cases.append(["sanity", "result = 6 * 7", LAYERS["all"]])
    out = _drive(world, cases, tmp_path)
    res = out["results"]
    if res["sanity"]["stats"].get("error_kind") == "isolation":
        # No user namespaces on this kernel: generated code is refused outright
        # (tests/sandbox/test_sandbox_modes.py covers the opt-in on such a kernel).
        assert "allow_unisolated" in res["sanity"]["error"]
        for name, r in res.items():
            if name == "sanity" or "os" in LAYERS[name.split("@")[1]]:
                assert not r["ok"] and r["stats"]["error_kind"] == "isolation", name
        assert not (world["base"] / "ran").exists()
        return
    assert res["sanity"]["ok"] and res["sanity"]["result"] == 42
    isolation = res["sanity"]["stats"]["isolation"]
    assert "uid_nobody" not in isolation  # the non-root path really ran
    walled = "chroot" in isolation and "netns" in isolation
    for name, r in res.items():
        if name == "sanity":
            continue
        attempt, layers = name.split("@")
        assert world["value"] not in json.dumps(r), f"{name} leaked the secret"
        if attempt == "env" and r["ok"]:
            assert set(r["result"]) <= {"LC_CTYPE"}, name
            continue
        unguarded = ("own_file", "own_file_os", "parent_environ", "parent_environ_ppid", "frame_walk")
        if "seccomp" not in isolation:
            unguarded += ("unix", "tcp", "abstract", "fork", "kill_parent", "frame_walk_kill")
        if layers == "os" and not walled and attempt in unguarded:
            continue  # without user namespaces only the Python layers guard files (tested with them on)
        if attempt == "system" and r["ok"]:
            assert r["result"] != "ran", name  # glibc reports a refused spawn as status 127
            continue
        assert not r["ok"], f"{name} succeeded: {r['result']!r}"
    assert not (world["base"] / "ran").exists()
    assert not any(_accepted(s) for s in world["listeners"])
    if walled:
        assert {"userns", "netns", "chroot", "no_caps", "no_new_privs"} <= set(isolation)


SECCOMP_PROBE = textwrap.dedent("""
    import ctypes, json, os, socket, sys
    sys.path.insert(0, os.path.dirname(sys.argv[1]))
    import confine_calls, limits, seccomp_policy
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(limits.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    prog = seccomp_policy.child_program(os.uname().machine)
    if prog is None or not seccomp_policy.install(confine_calls.load()[0], prog):
        print(json.dumps({"skip": "no seccomp table for " + os.uname().machine}), flush=True)
        os._exit(0)
    out = {}
    def attempt(name, fn):
        try:
            out[name] = repr(fn())
        except OSError as exc:
            out[name] = type(exc).__name__
    attempt("tcp", lambda: socket.socket())
    attempt("unix", lambda: socket.socket(socket.AF_UNIX))
    attempt("socketpair", lambda: socket.socketpair())
    attempt("fork", os.fork)
    attempt("kill_parent", lambda: os.kill(os.getppid(), 0))
    attempt("kill_self_group", lambda: os.killpg(0, 0))
    attempt("exec", lambda: os.execv("/bin/true", ["true"]))
    attempt("spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))
    out["still_works"] = [os.getpid() > 0, len(open(sys.argv[1]).read()) > 0]
    print(json.dumps(out), flush=True)
    os._exit(0)
""")


def test_seccomp_refuses_sockets_processes_and_signals_without_any_namespace(tmp_path):
    """The kernel-level wall that holds for a non-root daemon even where user
    namespaces are disabled: no socket, no new process, no exec, no kill()."""
    if sys.platform != "linux":
        pytest.skip("Linux only")
    probe = tmp_path / "probe.py"
    probe.write_text(SECCOMP_PROBE)
    proc = subprocess.run(
        [sys.executable, "-I", str(probe), str(LIMITS_PY)], capture_output=True, text=True, timeout=30, env={}
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    if "skip" in out:
        pytest.skip(out["skip"])
    for name in ("tcp", "unix", "socketpair", "fork", "kill_parent", "kill_self_group", "exec", "spawn"):
        assert out[name] == "PermissionError", (name, out[name])
    assert out["still_works"] == [True, True]


def test_seccomp_filter_layout():
    """The filter's frame: foreign ABIs killed, everything unlisted refused. Which
    calls it allows is checked against libseccomp in test_sandbox_seccomp.py."""
    from backchannel.sandbox import seccomp_policy

    for machine, arch in seccomp_policy.ARCH_TOKENS.items():
        prog = seccomp_policy.child_program(machine)
        assert prog[0] == (0x20, 0, 0, 4) and prog[1][3] == arch
        assert prog[2] == (0x06, 0, 0, seccomp_policy.RET_KILL_PROCESS)
        assert prog[-1] == (0x06, 0, 0, seccomp_policy.RET_ERRNO | seccomp_policy.EPERM)
        listed = {row[3] for row in prog if row[0] == 0x15}
        for name in (
            "socket",
            "clone",
            "clone3",
            "execve",
            "kill",
            "tgkill",
            "ptrace",
            "memfd_create",
            "io_uring_setup",
            "shmget",
        ):
            assert seccomp_policy.SYSCALLS[machine].get(name, -1) not in listed, name
    assert seccomp_policy.child_program("sparc") is None

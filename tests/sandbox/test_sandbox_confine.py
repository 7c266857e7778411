"""The confinement calls (backchannel/sandbox/_confine.c and its ctypes stand-in in
confine_calls.py): only restricting operations, the same functions in both, and
once the lock-down has begun no namespace or mount can be made any more.

Each check runs in a fresh interpreter: no_new_privs, seccomp and the sealing are
for the life of a process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from backchannel.sandbox import confine_calls

SANDBOX_DIR = Path(confine_calls.__file__).resolve().parent
FUNCTIONS = {
    "unshare_namespaces",
    "make_mounts_private",
    "mount_workdir_tmpfs",
    "drop_capabilities",
    "set_pdeathsig_kill",
    "set_no_new_privs",
    "landlock_abi",
    "landlock_restrict",
    "install_seccomp",
}

NOT_BUILT = "backchannel/sandbox/_confine*.so is not built: pip install -e . (or python setup.py build_ext --inplace)"
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux only")


def run_probe(body: str, native: bool) -> dict:
    """Run `body` in `python -I -S` with `calls` bound to the extension (native)
    or to the ctypes stand-in, and return the dict it prints as JSON."""
    if native and confine_calls.extension_path() is None:
        pytest.fail(NOT_BUILT)
    script = (
        textwrap.dedent("""
        import errno, json, os, sys
        sys.path.insert(0, sys.argv[1])
        import confine_calls
        calls = confine_calls.load()[0] if sys.argv[2] == "native" else confine_calls.CtypesCalls()
        out = {"ctypes_loaded": None}
        def attempt(name, fn, *args):
            try:
                fn(*args)
                out[name] = "ok"
            except OSError as exc:
                out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
            except (ValueError, TypeError) as exc:
                out[name] = type(exc).__name__
    """)
        + textwrap.dedent(body)
        + textwrap.dedent("""
        out["ctypes_loaded"] = sorted(m for m in sys.modules if "ctypes" in m)
        print(json.dumps(out))
    """)
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, str(SANDBOX_DIR), "native" if native else "ctypes"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_the_extension_is_built_and_loads_without_ctypes():
    """pip install builds _confine beside child.py; loading it loads no ctypes."""
    assert confine_calls.extension_path() is not None, NOT_BUILT
    out = run_probe(
        "out['native'] = type(calls).__name__ == 'module'\nout['abi'] = calls.landlock_abi()\n", native=True
    )
    assert out["native"] is True and out["ctypes_loaded"] == []
    assert isinstance(out["abi"], int) and out["abi"] >= 0


@pytest.mark.parametrize("native", [True, False], ids=["extension", "ctypes_stand_in"])
def test_only_the_confinement_functions_exist(native):
    """No generic primitive (syscall, dlsym, a pointer): exactly the restricting
    and set-up calls, the same in the extension and in the stand-in."""
    out = run_probe("out['names'] = sorted(n for n in dir(calls) if not n.startswith('_'))\n", native)
    assert set(out["names"]) == FUNCTIONS


def test_namespace_flags_only():
    out = run_probe(
        "attempt('clone_vm', calls.unshare_namespaces, 0x100)\n"
        "attempt('clone_files', calls.unshare_namespaces, 0x400)\n"
        "attempt('newns_and_files', calls.unshare_namespaces, 0x00020000 | 0x400)\n",
        native=True,
    )
    assert out["clone_vm"] == out["clone_files"] == out["newns_and_files"] == "ValueError"


def test_sealed_after_the_lock_down_begins(tmp_path):
    """After no_new_privs, the extension refuses to make a namespace or a mount,
    even for root, before any seccomp filter would."""
    if os.getuid() != 0:
        pytest.skip("needs root for the unsealed mount and unshare to succeed first")
    target = tmp_path / "mnt"
    target.mkdir()
    out = run_probe(
        f"""
        attempt("unshare_before", calls.unshare_namespaces, 0x00020000)
        attempt("private_before", calls.make_mounts_private)
        attempt("tmpfs_before", calls.mount_workdir_tmpfs, {str(target)!r}, 64, 16, -1)
        calls.set_no_new_privs()
        attempt("unshare_after", calls.unshare_namespaces, 0x00020000)
        attempt("private_after", calls.make_mounts_private)
        attempt("tmpfs_after", calls.mount_workdir_tmpfs, {str(target)!r}, 64, 16, -1)
        attempt("pdeathsig_after", calls.set_pdeathsig_kill)
    """,
        native=True,
    )
    assert out["unshare_before"] == out["private_before"] == out["tmpfs_before"] == "ok", out
    assert out["unshare_after"] == out["private_after"] == out["tmpfs_after"] == "EPERM", out
    assert out["pdeathsig_after"] == "ok"  # restricting calls still work
    assert not os.path.ismount(target)  # the mount stayed in the probe's own namespace


@pytest.mark.parametrize("native", [True, False], ids=["extension", "ctypes_stand_in"])
def test_seccomp_and_landlock_restrict(tmp_path, native):
    """Both implementations install a real filter and a real landlock domain: after
    them, a refused call answers EPERM and a file outside the directory is out of reach."""
    (tmp_path / "inside").mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    out = run_probe(
        f"""
        import seccomp_policy, landlock
        calls.set_no_new_privs()
        out["landlock"] = landlock.restrict_to(calls, {str(tmp_path / "inside")!r})
        attempt("read_outside", open, {str(outside)!r})
        attempt("bad_program", calls.install_seccomp, b"123")
        out["seccomp"] = seccomp_policy.install(calls, seccomp_policy.child_program(os.uname().machine))
        attempt("fork", os.fork)
        attempt("getpid", os.getpid)
    """,
        native,
    )
    if out["seccomp"] is False and os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("no seccomp table for this machine")
    assert out["seccomp"] is True and out["fork"] == "EPERM" and out["getpid"] == "ok"
    assert out["bad_program"] == ("ValueError" if native else "EINVAL")
    if out["landlock"]:
        assert out["read_outside"] == "EACCES"
    if native:
        assert out["ctypes_loaded"] == []


def test_without_a_tmpfs_writes_must_be_bounded_by_the_kernel():
    """No guarantee rests on the language layer: without the private tmpfs the run's
    directory must be read-only under landlock, and without namespaces the opt-in
    needs that domain and the seccomp filter, or nothing runs."""
    from backchannel.sandbox import limits

    assert limits.bounded_writes(["tmpfs", "chroot"])
    assert limits.bounded_writes(["landlock_fs", "landlock_read_only"])
    assert not limits.bounded_writes(["chroot", "uid_nobody", "landlock_fs"])
    assert limits.unisolated_walls(["landlock_fs", "landlock_read_only", "seccomp"]) is None
    for missing in ("landlock_fs", "landlock_read_only", "seccomp"):
        applied = [n for n in ("landlock_fs", "landlock_read_only", "seccomp") if n != missing]
        assert missing in (limits.unisolated_walls(applied) or "")


@pytest.mark.parametrize("native", [True, False], ids=["extension", "ctypes_stand_in"])
def test_read_only_landlock_domain(tmp_path, native):
    """Both implementations make a read-only domain: a file inside may be read, none
    may be created, written, truncated or removed, no directory made."""
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "kept.txt").write_text("kept")
    out = run_probe(
        f"""
        import landlock
        calls.set_no_new_privs()
        out["landlock"] = landlock.restrict_to(calls, {str(inside)!r}, read_only=True)
        attempt("read_inside", lambda: open({str(inside / "kept.txt")!r}).read())
        attempt("create", open, {str(inside / "new.txt")!r}, "w")
        attempt("write", open, {str(inside / "kept.txt")!r}, "a")
        attempt("mkdir", os.mkdir, {str(inside / "d")!r})
        attempt("unlink", os.unlink, {str(inside / "kept.txt")!r})
    """,
        native,
    )
    if not out["landlock"]:
        pytest.skip("no landlock on this kernel")
    assert out["landlock"] == ["landlock_fs", "landlock_read_only"] + out["landlock"][2:]
    assert out["read_inside"] == "ok"
    assert out["create"] == out["write"] == out["mkdir"] == out["unlink"] == "EACCES", out
    assert (inside / "kept.txt").read_text() == "kept" and not (inside / "new.txt").exists()

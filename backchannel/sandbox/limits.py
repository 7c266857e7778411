"""Operating-system confinement of the child, applied to itself before any
untrusted code runs: rlimits, a network namespace, a chroot into its temp
directory, and the loss of every privilege.

Each step is tried and skipped silently where the kernel or the account does not
allow it; the names of the steps that applied go back to the parent and into the
run's stats, so a deployment can see which isolation it really has.

- As root: unshare(CLONE_NEWNET), chroot into the temp dir, then setuid/setgid
  to nobody (which drops every capability and makes RLIMIT_NPROC bite).
- As another user: unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWNET), map the
  user's own uid/gid, chroot into the temp dir, then drop every capability
  (so the classic chroot-in-chroot escape is refused).
- Always: PR_SET_NO_NEW_PRIVS and the rlimits below.

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import os
import resource
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
_CAP_VERSION_3 = 0x20080522
NOBODY = 65534


def _libc() -> Any:
    try:
        import ctypes

        return ctypes, ctypes.CDLL(None, use_errno=True)
    except Exception:  # noqa: BLE001 - no ctypes means no namespaces, not a failure
        return None, None


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _drop_caps(ctypes: Any, libc: Any) -> bool:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(_CAP_VERSION_3, 0)
    data = (Data * 2)()  # all zero: no capability at all
    return libc.capset(ctypes.byref(header), data) == 0


def _chroot(workdir: str) -> bool:
    try:
        os.chroot(workdir)
        os.chdir("/")
        return True
    except OSError:
        return False


def confine_namespaces(workdir: str) -> list[str]:
    """Network namespace, chroot and privilege drop; returns the steps applied."""
    applied: list[str] = []
    ctypes, libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        if libc is not None and libc.unshare(CLONE_NEWNET) == 0:
            applied.append("netns")
        try:
            os.chown(workdir, NOBODY, NOBODY)
        except OSError:
            pass
        if _chroot(workdir):
            applied.append("chroot")
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            applied.append("uid_nobody")
        except OSError:
            pass
    elif libc is not None and libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) == 0:
        applied += ["userns", "netns"]
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError:
            pass
        if _chroot(workdir):
            applied.append("chroot")
        if _drop_caps(ctypes, libc):
            applied.append("no_caps")
    if libc is not None and libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        applied.append("no_new_privs")
    # ctypes stays loaded in memory, but no program can reach it by import:
    # the import allowlist and the audit hook refuse it.
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    return applied


def set_rlimits(limits: dict[str, Any]) -> list[str]:
    """Apply the run's resource limits (soft and hard, so they cannot be raised)."""
    applied: list[str] = []

    def setr(name: str, res: int, soft: int, hard: int | None = None) -> None:
        try:
            resource.setrlimit(res, (soft, soft if hard is None else hard))
            applied.append(name)
        except (ValueError, OSError):
            pass

    setr("core", resource.RLIMIT_CORE, 0)
    cpu = max(1, int(limits["cpu_s"]))
    # The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
    setr("cpu", resource.RLIMIT_CPU, cpu, cpu + 1)
    setr("fsize", resource.RLIMIT_FSIZE, int(limits["max_file_bytes"]))
    setr("nofile", resource.RLIMIT_NOFILE, int(limits["max_open_files"]))
    # 0: no new process or thread at all (not enforced for root; see confine_namespaces).
    setr("nproc", resource.RLIMIT_NPROC, 0)
    setr("as", resource.RLIMIT_AS, int(limits["memory_mb"]) * 1024 * 1024)
    return applied

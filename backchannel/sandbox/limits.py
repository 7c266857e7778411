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
- Always: PR_SET_NO_NEW_PRIVS, a seccomp filter (below) and the rlimits.

The seccomp filter makes the kernel refuse (EPERM) the system calls that reach
beyond the child whatever the account and whether or not user namespaces exist:
socket creation, new processes and threads, exec, signals to other processes,
ptrace and cross-process memory access. A non-root daemon without user
namespaces thus still has a kernel-level wall against network, subprocesses and
killing the daemon (same-uid `kill()` would otherwise be allowed).

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
PR_SET_PDEATHSIG = 1
_CAP_VERSION_3 = 0x20080522
NOBODY = 65534
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_RET_KILL_PROCESS = 0x80000000
_X32_BIT = 0x40000000
# arch token of seccomp_data, and the syscalls refused, per machine.
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, {
        "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62,
        "ptrace": 101, "rt_sigqueueinfo": 129, "tkill": 200, "tgkill": 234, "rt_tgsigqueueinfo": 297,
        "process_vm_readv": 310, "process_vm_writev": 311, "execveat": 322, "pidfd_send_signal": 424,
        "pidfd_open": 434, "clone3": 435}),
    "aarch64": (0xC00000B7, {
        "ptrace": 117, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "socket": 198,
        "socketpair": 199, "clone": 220, "execve": 221, "rt_tgsigqueueinfo": 240, "process_vm_readv": 270,
        "process_vm_writev": 271, "execveat": 281, "pidfd_send_signal": 424, "pidfd_open": 434, "clone3": 435}),
}


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


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The classic-BPF filter for `machine` (os.uname().machine) as (code, jt, jf, k)
    rows, or None for a machine we have no syscall table for. A foreign arch token
    (e.g. 32-bit calls on x86_64) kills the process; on x86_64 so does the x32 ABI."""
    if machine not in _SECCOMP_ARCH:
        return None
    arch, table = _SECCOMP_ARCH[machine]
    numbers = sorted(set(table.values()))
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    # Layout: ld arch; jeq arch; ld nr; [jge x32]; jeq nr * N; ret allow; ret eperm; ret kill.
    head = 4 if machine == "x86_64" else 3
    allow = head + len(numbers)
    eperm, kill = allow + 1, allow + 2
    prog = [(ld, 0, 0, 4), (jeq, 0, kill - 2, arch), (ld, 0, 0, 0)]
    if machine == "x86_64":
        prog.append((jge, kill - 4, 0, _X32_BIT))
    for nr in numbers:
        prog.append((jeq, eperm - (len(prog) + 1), 0, nr))
    prog += [(ret, 0, 0, _RET_ALLOW), (ret, 0, 0, _RET_EPERM), (ret, 0, 0, _RET_KILL_PROCESS)]
    return prog


def _install_seccomp(ctypes: Any, libc: Any) -> bool:
    prog = seccomp_program(os.uname().machine)
    if prog is None:
        return False

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    rows = (SockFilter * len(prog))(*[SockFilter(*row) for row in prog])
    fprog = SockFprog(len(prog), rows)
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


def confine_namespaces(workdir: str) -> list[str]:
    """Network namespace, chroot and privilege drop; returns the steps applied."""
    applied: list[str] = []
    ctypes, libc = _libc()
    parent = os.getppid()
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
    # Die with the daemon, even on its kill -9. Set after the uid change, which clears it.
    if libc is not None and libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0) == 0:
        applied.append("pdeathsig")
        if os.getppid() != parent:  # the daemon died before the line above
            os._exit(137)
    if libc is not None and libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        applied.append("no_new_privs")
        # Last: the filter refuses clone/kill, which the steps above do not need.
        if _install_seccomp(ctypes, libc):
            applied.append("seccomp")
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

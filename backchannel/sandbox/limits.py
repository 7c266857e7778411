"""Operating-system confinement of the child, applied to itself before any
untrusted code runs: namespaces, a private tmpfs as its only file system, the
loss of every privilege, an allow-list seccomp filter and rlimits.

Each step is tried and skipped where the kernel or the account refuses it; the
names of the steps that applied go back to the parent and into the run's stats
(`stats.isolation`), so a deployment sees which isolation it really has.

- As root: unshare(CLONE_NEWNS|NEWNET|NEWIPC|NEWPID|NEWUTS).
- As another user: the same plus CLONE_NEWUSER, mapping the user's own uid/gid.
- With a new PID namespace the process forks: the copy becomes PID 1 of the
  namespace and runs the program; the original stays outside it, only reaps
  the copy and ends the same way (so the daemon is in no namespace the program
  can see, and killing the original's process group, or the original dying,
  kills the namespace).
- With a new mount namespace: every mount made private, then a tmpfs limited in
  size and inodes (noexec, nosuid, nodev) mounted on the run's directory; it
  vanishes with the namespace, so nothing the program wrote needs deleting.
- chroot into that directory; as root, setuid/setgid to nobody; in a user
  namespace, drop every capability.
- Always: PR_SET_PDEATHSIG (re-armed after each credential change),
  PR_SET_NO_NEW_PRIVS, landlock (landlock.py: files only beneath the run's
  directory, no TCP, no signal out) where the kernel has it, and the seccomp
  allow list of seccomp_policy.py, which also forbids clearing the death
  signal, memfd, SysV IPC and io_uring.

The system calls Python 3.11's os module lacks (unshare, mount, prctl, capset,
landlock, seccomp) come from confine_calls.py: the `_confine` C extension, so
the child never loads ctypes; the extension is dropped once the lock-down is done.

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Callable
from typing import Any

try:
    from backchannel.sandbox import confine_calls, landlock, seccomp_policy
except ImportError:  # the child loads its siblings by path, without the package
    import confine_calls  # type: ignore[no-redef]
    import landlock  # type: ignore[no-redef]
    import seccomp_policy  # type: ignore[no-redef]

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = (
    ("mountns", CLONE_NEWNS),
    ("netns", CLONE_NEWNET),
    ("ipcns", CLONE_NEWIPC),
    ("pidns", CLONE_NEWPID),
    ("utsns", CLONE_NEWUTS),
)
PR_SET_NO_NEW_PRIVS = confine_calls.PR_SET_NO_NEW_PRIVS
NOBODY = 65534
# PID 1 of a namespace ignores SIGXCPU's default action, so the program's process
# turns it into this exit status and the reaper outside re-raises SIGXCPU.
EXIT_CPU = 128 + 24


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _done(call: Callable[..., None], *args: Any) -> bool:
    """True when the confinement call succeeded; the kernel's refusal is a step skipped."""
    try:
        call(*args)
    except OSError:
        return False
    return True


def unisolated_walls(applied: list[str]) -> str | None:
    """Where there is no chroot (`allow_unisolated`), the kernel layers that must
    still stand for the program to run: a read-only landlock domain beneath the
    run's directory and the seccomp filter. None when they do, else what is missing."""
    missing = [name for name in ("landlock_fs", "landlock_read_only", "seccomp") if name not in applied]
    if not missing:
        return None
    return "without a chroot the sandbox needs " + ", ".join(missing) + " from the kernel, which refused"


def bounded_writes(applied: list[str]) -> bool:
    """True when the kernel bounds what the program can write: its directory is a
    private tmpfs (size and inodes), or landlock makes it read-only."""
    return "tmpfs" in applied or "landlock_read_only" in applied


def os_isolated(applied: list[str]) -> bool:
    """True when the kernel, not only Python, keeps the program from the host's
    files and processes: a chroot plus either nobody or a user namespace."""
    return "chroot" in applied and ("uid_nobody" in applied or "no_caps" in applied)


def _reap_and_mirror(pid: int, keep: int) -> None:
    """The original process, outside the PID namespace: wait for the copy, then end
    the same way (status or signal), so the parent's wait4 sees what happened."""
    os.closerange(0, keep)
    os.closerange(keep + 1, 1 << 16)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    _, status = os.waitpid(pid, 0)
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_CPU:
        sig = signal.SIGXCPU
    if sig:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _enter_pid_namespace() -> int:
    """Fork into the new PID namespace. Returns, in the copy, a pipe end that reads
    EOF once the original is gone; the original never returns."""
    alive_r, alive_w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(alive_r)
        try:
            _reap_and_mirror(pid, alive_w)
        finally:
            os._exit(1)
    os.close(alive_w)
    signal.signal(signal.SIGXCPU, lambda *_: os._exit(EXIT_CPU))
    return alive_r


def _mount_workdir(calls: Any, workdir: str, limits: dict[str, Any], owner: int | None) -> bool:
    """A private tmpfs on the run's directory, bounded in bytes and inodes."""
    if not _done(calls.make_mounts_private):
        return False  # never mount where the host could see it
    size_kb = max(64, int(limits.get("workdir_mb", 64)) * 1024)
    inodes = max(16, int(limits.get("workdir_inodes", 2048)))
    if not _done(calls.mount_workdir_tmpfs, workdir, size_kb, inodes, -1 if owner is None else owner):
        return False
    os.chdir(workdir)  # the cwd still pointed at the directory under the mount
    return True


class Confinement:
    """The confinement in two steps, so that the fork into the PID namespace
    happens before the child preloads its modules (a small process to copy, no
    copy-on-write of the preloaded heap) and the lock-down after them."""

    def __init__(self) -> None:
        self.applied: list[str] = []
        self.reason: str | None = None
        self.alive: int | None = None
        self.uid = os.getuid()
        try:
            self.calls, native = confine_calls.load()
        except Exception as exc:  # noqa: BLE001 - no way to make the calls means no namespaces, not a failure
            self.calls, native = None, False
            self.reason = f"the confinement calls are unavailable ({type(exc).__name__}: {exc})"
        if native:
            self.applied.append("native_confine")  # ctypes never loaded in this process

    def enter_namespaces(self) -> None:
        """unshare, uid map, death signal, and the fork into the PID namespace
        (only the copy returns)."""
        calls, uid = self.calls, self.uid
        if calls is None:
            return
        gid, parent = os.getgid(), os.getppid()
        flags = sum(flag for _, flag in NAMESPACES)
        if uid == 0:
            if _done(calls.unshare_namespaces, flags):
                self.applied += [name for name, _ in NAMESPACES]
            elif _done(calls.unshare_namespaces, CLONE_NEWNET):
                self.applied.append("netns")
        else:
            try:
                calls.unshare_namespaces(CLONE_NEWUSER | flags)
            except OSError as exc:
                self.reason = (
                    f"the daemon runs as uid {uid} and cannot create a user namespace: "
                    f"unshare(CLONE_NEWUSER) failed: {exc.strerror} (errno {exc.errno})"
                )
            else:
                self.applied += ["userns"] + [name for name, _ in NAMESPACES]
                try:
                    _write("/proc/self/setgroups", "deny")
                    _write("/proc/self/uid_map", f"{uid} {uid} 1")
                    _write("/proc/self/gid_map", f"{gid} {gid} 1")
                except OSError:
                    pass
        # Die with the daemon, even on its kill -9.
        if _done(calls.set_pdeathsig_kill) and os.getppid() != parent:
            os._exit(137)  # the daemon died before the line above
        if "pidns" in self.applied:
            self.alive = _enter_pid_namespace()

    def lock_down(self, workdir: str, limits: dict[str, Any]) -> tuple[list[str], str | None]:
        """tmpfs, chroot, privilege drop, death signal, no_new_privs, landlock,
        seccomp; then the confinement calls are forgotten. Returns the steps that
        applied and, when no OS isolation could be had, why."""
        calls, uid, applied = self.calls, self.uid, self.applied
        if calls is None:
            return applied, self.reason
        if "mountns" in applied and _mount_workdir(calls, workdir, limits, NOBODY if uid == 0 else None):
            applied.append("tmpfs")
        elif uid == 0:
            try:
                os.chown(workdir, NOBODY, NOBODY)
            except OSError:
                pass
        try:
            os.chroot(".")
            os.chdir("/")
            applied.append("chroot")
        except OSError:
            pass
        if uid == 0:
            try:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                applied.append("uid_nobody")
            except OSError:
                pass
        elif "userns" in applied and _done(calls.drop_capabilities):
            applied.append("no_caps")
        # Again: a credential change clears the death signal; in a PID namespace the
        # parent to die with is the reaper, and the pipe says whether it still lives.
        if _done(calls.set_pdeathsig_kill):
            applied.append("pdeathsig")
        if self.alive is not None:
            os.set_blocking(self.alive, False)
            try:
                if os.read(self.alive, 1) == b"":
                    os._exit(137)
            except BlockingIOError:
                pass
            os.close(self.alive)
        if _done(calls.set_no_new_privs):
            applied.append("no_new_privs")
            # Without the private tmpfs the directory is on the host's disk, where nothing
            # bounds what is written: read-only, so no file count needs a Python guard.
            applied += landlock.restrict_to(calls, ".", read_only="tmpfs" not in applied)
            prog = seccomp_policy.child_program(os.uname().machine)
            if prog is not None and seccomp_policy.install(calls, prog):
                applied.append("seccomp")
        if self.reason is None and not os_isolated(applied):
            self.reason = f"the daemon runs as uid {uid} and the kernel refused the chroot or the privilege drop"
        self.calls = None
        confine_calls.forget(calls)
        return applied, self.reason


def confine(
    workdir: str, limits: dict[str, Any], before_lock_down: Callable[[], None] = lambda: None
) -> tuple[list[str], str | None]:
    """Both steps of Confinement; `before_lock_down` runs in the process that will
    run the program, while the host's files are still visible."""
    confinement = Confinement()
    confinement.enter_namespaces()
    before_lock_down()
    return confinement.lock_down(workdir, limits)


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
    # 0: no new process or thread at all (not enforced for root; see confine).
    setr("nproc", resource.RLIMIT_NPROC, 0)
    setr("as", resource.RLIMIT_AS, int(limits["memory_mb"]) * 1024 * 1024)
    return applied

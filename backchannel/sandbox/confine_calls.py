"""The system calls by which the child confines itself (unshare, mount of the
run's tmpfs, capset, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, landlock, seccomp).

They come from the `_confine` C extension (_confine.c, built by `pip install`)
so that the child never loads `_ctypes`: in Python 3.11 ctypes' types are
static and would stay reachable from the program (a walk of
object.__subclasses__(), gc.get_objects()) after any clean-up of sys.modules,
whereas `_confine` can only restrict the process and is dropped entirely
(`forget`) before the program runs.

Where the extension is not built (a source tree that was never installed), a
ctypes stand-in with the same functions keeps the sandbox working; the child
then does not report the `native_confine` layer, and `doctor` warns.

Stdlib only: the child loads this file by path, without site-packages. The
extension is loaded by its path next to this file, so it is found in a
source tree (built in place by an editable install) and in site-packages alike.
"""

from __future__ import annotations

import os
import sys
from typing import Any

MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 22, 38
SECCOMP_MODE_FILTER = 2
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_CAP_VERSION_3 = 0x20080522


def extension_path() -> str | None:
    """The built `_confine` extension beside this file, or None."""
    import importlib.machinery

    here = os.path.dirname(os.path.abspath(__file__))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(here, "_confine" + suffix)
        if os.path.isfile(path):
            return path
    return None


def load() -> tuple[Any, bool]:
    """(the calls, True) from the C extension, or (a ctypes stand-in, False)
    where it is not built. Raises OSError/ImportError when neither can load."""
    path = extension_path()
    if path is None:
        return CtypesCalls(), False
    import importlib.machinery

    # Loaded by hand: never entered in sys.modules, nothing but `calls` refers to it.
    loader = importlib.machinery.ExtensionFileLoader("_confine", path)
    module = loader.create_module(importlib.machinery.ModuleSpec("_confine", loader, origin=path))
    loader.exec_module(module)
    return module, True


def forget(calls: Any) -> None:
    """Leave nothing of `calls` the program could find: the extension's module
    (never in sys.modules) loses its functions, so it is freed at once, without
    waiting for the cycle collector; for the stand-in, every ctypes module leaves
    sys.modules (its static types stay in memory: the reason for the extension)."""
    if isinstance(calls, CtypesCalls):
        for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
            del sys.modules[name]
    elif calls is not None:
        calls.__dict__.clear()


class CtypesCalls:
    """The `_confine` functions through ctypes, for a source tree where the
    extension was never built."""

    def __init__(self) -> None:
        import ctypes

        self._ct = ctypes
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.syscall.restype = ctypes.c_long

    def _check(self, rc: int) -> None:
        if rc != 0:
            err = self._ct.get_errno()
            raise OSError(err, os.strerror(err))

    def unshare_namespaces(self, flags: int) -> None:
        self._check(self._libc.unshare(flags))

    def make_mounts_private(self) -> None:
        self._check(self._libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None))

    def mount_workdir_tmpfs(self, target: str, size_kb: int, nr_inodes: int, owner: int) -> None:
        opts = f"size={size_kb}k,nr_inodes={nr_inodes},mode=0700"
        if owner >= 0:
            opts += f",uid={owner},gid={owner}"
        self._check(
            self._libc.mount(b"tmpfs", os.fsencode(target), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts.encode())
        )

    def drop_capabilities(self) -> None:
        ct = self._ct
        header = (ct.c_uint32 * 2)(_CAP_VERSION_3, 0)
        data = (ct.c_uint32 * 6)()  # two {effective, permitted, inheritable}, all zero
        self._check(self._libc.capset(ct.byref(header), ct.byref(data)))

    def set_pdeathsig_kill(self) -> None:
        self._check(self._libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0))

    def set_no_new_privs(self) -> None:
        self._check(self._libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))

    def landlock_abi(self) -> int:
        ct = self._ct
        abi = self._libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ct.c_size_t(0), ct.c_uint32(1))
        return max(0, abi)

    def landlock_restrict(
        self, fs: int, net: int, scoped: int, size: int, dir_fd: int, allowed: int = (1 << 64) - 1
    ) -> None:
        ct, syscall = self._ct, self._libc.syscall
        attr = (ct.c_uint64 * 3)(fs, net, scoped)
        ruleset = syscall(SYS_LANDLOCK_CREATE_RULESET, ct.byref(attr), ct.c_size_t(size), ct.c_uint32(0))
        if ruleset < 0:
            self._check(-1)
        try:
            rule = ct.create_string_buffer((fs & allowed).to_bytes(8, "little") + dir_fd.to_bytes(4, "little"), 12)
            self._check(syscall(SYS_LANDLOCK_ADD_RULE, ct.c_int(ruleset), ct.c_int(1), rule, ct.c_uint32(0)))
            self._check(syscall(SYS_LANDLOCK_RESTRICT_SELF, ct.c_int(ruleset), ct.c_uint32(0)))
        finally:
            os.close(ruleset)

    def install_seccomp(self, program: bytes) -> None:
        ct = self._ct
        rows = ct.create_string_buffer(program, len(program))
        fprog = (ct.c_uint64 * 2)(len(program) // 8, ct.addressof(rows))  # {u16 len; pad; filter*}
        self._check(self._libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ct.byref(fprog), 0, 0))

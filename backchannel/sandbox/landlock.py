"""Landlock (Linux 5.13+, no privilege needed): the child may open files only
beneath its own directory, bind or connect no TCP port, and (ABI 6+) signal no
process and reach no abstract unix socket outside its own domain.

It is what keeps the host's files (the secrets dir, `/proc/<daemon>/environ`
and `mem`) out of reach where there is no chroot, i.e. for a non-root daemon
without user namespaces; elsewhere it is one more layer under the chroot.
Must run after PR_SET_NO_NEW_PRIVS and before the seccomp filter (which does
not allow the landlock calls).

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import os
from typing import Any

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same on x86_64 and aarch64
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
# Filesystem rights by ABI version: 13 in v1, REFER in v2, TRUNCATE in v3, IOCTL_DEV in v5.
_FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


def restrict_to(ctypes: Any, libc: Any, directory: str) -> list[str]:
    """Confine this process (and anything it could start) to `directory`.
    Returns the layers applied: [] where the kernel has no landlock."""
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    if abi < 1:
        return []
    fs_rights = (1 << _FS_BITS.get(abi, 16)) - 1

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    attr = RulesetAttr(fs_rights, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                       SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return []
    try:
        dir_fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            rule = PathBeneath(fs_rights, dir_fd)
            if libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                            ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                return []
        finally:
            os.close(dir_fd)
        if libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return []
    finally:
        os.close(ruleset)
    applied = ["landlock_fs"]
    if abi >= 4:
        applied.append("landlock_net")
    if abi >= 6:
        applied.append("landlock_scope")
    return applied

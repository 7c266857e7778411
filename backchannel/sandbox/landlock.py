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

# Filesystem rights by ABI version: 13 in v1, REFER in v2, TRUNCATE in v3, IOCTL_DEV in v5.
_FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
# The rights a read-only domain keeps: EXECUTE, READ_FILE, READ_DIR (no write,
# remove, make, refer or truncate).
READ_ONLY_FS = (1 << 0) | (1 << 2) | (1 << 3)
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


def restrict_to(calls: Any, directory: str, *, read_only: bool = False) -> list[str]:
    """Confine this process (and anything it could start) to `directory`, through
    `calls` (confine_calls.load()); with `read_only`, files there may be read but
    nothing may be created, written, removed or truncated. Returns the layers
    applied: [] where the kernel has no landlock or refuses (or the extension is
    older than the read-only argument)."""
    abi = calls.landlock_abi()
    if abi < 1:
        return []
    fs_rights = (1 << _FS_BITS.get(abi, 16)) - 1
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8  # struct landlock_ruleset_attr grew by ABI
    try:
        dir_fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            if read_only:
                calls.landlock_restrict(fs_rights, net, scoped, size, dir_fd, READ_ONLY_FS)
            else:
                calls.landlock_restrict(fs_rights, net, scoped, size, dir_fd)
        finally:
            os.close(dir_fd)
    except (OSError, TypeError):
        return []
    applied = ["landlock_fs"] + (["landlock_read_only"] if read_only else [])
    if abi >= 4:
        applied.append("landlock_net")
    if abi >= 6:
        applied.append("landlock_scope")
    return applied

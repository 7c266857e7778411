"""The daemon's lock file: an exclusive flock held for the process's lifetime.

Cheap to import (no DuckDB): the CLI checks `lock_held()` before talking to the API.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


class AlreadyRunning(Exception):
    """Another daemon holds the lock; the message names its PID."""


class DaemonLock:
    """An exclusive flock on the lock file, held for the process's lifetime; the
    file holds the PID. The kernel drops the lock when the process dies, even by
    kill -9, so a stale file never blocks a restart."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                pid = os.pread(fd, 32, 0).decode().strip() or "unknown"
            finally:
                os.close(fd)
            raise AlreadyRunning(
                f"another backchannel daemon is already running (PID {pid}); it holds {self.path}. "
                f"Stop it first (kill {pid}, or `systemctl --user stop backchannel`)."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        os.fsync(fd)
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)
            self.fd = None


def lock_held(path: Path) -> bool:
    """True when some process holds the daemon lock on `path`."""
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)

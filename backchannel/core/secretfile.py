"""Files only the owner may read (tokens, keys, a privacy export), written atomically.
Standard library only.

The content goes to a temporary file in the same directory, created with O_EXCL and mode
0600 from its first byte (a new inode: an existing file's wider mode or another process's
open descriptor never sees it), is fsynced, then put in place in one step: `os.replace`
(the new file wins) or `os.link` (the first writer wins; the others read its file). A
reader therefore sees the old file, or the new file complete, never a half-written one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

MODE = 0o600


def _temp_with(path: Path, data: bytes) -> Path:
    """A complete, fsynced 0600 temporary file beside `path` holding `data`."""
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), MODE)
            break
        except FileExistsError:
            continue  # a name taken (astronomically unlikely): draw another
    try:
        os.fchmod(fd, MODE)  # the umask may have narrowed it; never widens past 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _sync_dir(directory: Path) -> None:
    """Make the rename or link itself durable (best effort where a directory cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def write_secret(path: Path | str, data: bytes | str) -> None:
    """Write `data` to `path` with mode 0600, replacing any file there in one step."""
    path = Path(path)
    tmp = _temp_with(path, _bytes(data))
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _sync_dir(path.parent)


def create_secret(path: Path | str, data: bytes | str) -> bool:
    """Create `path` (mode 0600) holding `data` unless it exists already: True when this
    call created it. Two processes racing both return; exactly one file wins, whole."""
    path = Path(path)
    tmp = _temp_with(path, _bytes(data))
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _sync_dir(path.parent)
    return True

"""The run's directory on the host: made before the child starts, removed after,
whatever the program left in it.

Where the child has a mount namespace, it mounts a private tmpfs over this
directory, so what the program writes never reaches the host and the directory
is still empty at teardown. Where it has none (a deployment that opted into
running without OS isolation), the program writes here, and the removal must
hold against what it may have built: trees deeper than PATH_MAX, directories
without read or search permission, names that are not UTF-8, symlinks to
elsewhere (never followed), and a mount point left behind.

`remove_tree` is iterative (no recursion limit), works with directory file
descriptors (no path length limit), never follows a symlink, never raises, and
reports what it could not remove instead.
"""

from __future__ import annotations

import os
import stat
import tempfile

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MNT_DETACH = 2


def make() -> str:
    return tempfile.mkdtemp(prefix="backchannel-sandbox-")


def _unmount(path: str) -> None:
    """Detach anything mounted on `path` (only reachable from the host's mount
    namespace if the child had none of its own)."""
    try:
        if not os.path.ismount(path):
            return
        import ctypes  # lazily: only this rare case needs it

        ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(path), MNT_DETACH)
    except Exception:  # noqa: BLE001 - best effort; removal reports what is left
        pass


def _clear(fd: int) -> str | None:
    """Delete every entry of the directory `fd` but one subdirectory that is not
    empty; return that subdirectory's name (to descend into) or None when `fd` is
    empty now."""
    with os.scandir(fd) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=fd)
            continue
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            # Not empty (or not searchable): make it ours to read and enter it.
            os.chmod(name, 0o700, dir_fd=fd)  # a directory, checked above: no symlink is followed
            return name
    return None


def remove_tree(path: str) -> list[str]:
    """Remove `path` and everything under it; return the errors met (empty when
    all is gone). Never raises."""
    errors: list[str] = []
    try:
        _unmount(path)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return errors
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(path)
            return errors
        os.chmod(path, 0o700)
        fd = os.open(path, _DIR_FLAGS)
    except Exception as exc:  # noqa: BLE001 - a teardown reports, never raises
        return [f"{path}: {type(exc).__name__}: {exc}"]
    depth = 0
    failures = 0
    try:
        while True:
            try:
                sub = _clear(fd)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{type(exc).__name__}: {exc}")
                failures += 1
                if failures > 1000:
                    break
                sub = None if depth == 0 else ".."  # give up on this level; go back up
                if sub is None:
                    break
            if sub is not None and sub != "..":
                child = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd, depth = child, depth + 1
                continue
            if depth == 0:
                break
            # Nothing is running any more (the child's group is dead), so ".."
            # is the directory we came from; its now-empty entry goes next round.
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd, depth = parent, depth - 1
    except Exception as exc:  # noqa: BLE001
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001
        errors.append(f"{path}: {type(exc).__name__}: {exc}")
    return errors[:20]

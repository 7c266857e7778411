"""The inbox folder: a file dropped there becomes one `inbox` wake once it has
stopped changing; after the daemon commits its ingest, `finish()` moves it to
`processed/` (or `failed/` with `NAME.error.txt`), beside the inbox folder.

Filesystem events are hints, never facts: they are lost while the daemon is
down, inotify drops them on overflow, editors write through temp files and
rename, and a copy in progress fires many of them. So every path is looked at
until its size and mtime agree across two looks a quiet period apart, the whole
folder is rescanned at start and periodically, and a wake's key is the content
hash, so a file seen twice is ingested once.

Crash safety: a file stays in the inbox until `finish()` runs after the
daemon's commit. A crash before that leaves it in place; the rescan at the next
start enqueues it again and the content-hash key makes the second ingest a no-op.
"""

from __future__ import annotations

import asyncio
import errno
import fnmatch
import hashlib
import logging
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from backchannel.config.sections import InboxSettings
from backchannel.core.wake import Wake
from backchannel.extraction.formats.parse import unreadable_reason
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, cancel_task, enqueue

log = logging.getLogger(__name__)

IGNORED_PATTERNS: tuple[str, ...] = (".*", "~*", "*.tmp", "*.part", "*.crdownload", "*.swp", "#*#")
_INOTIFY_LIMIT_ERRNOS = {errno.ENOSPC, errno.EMFILE, errno.ENFILE}


def is_ignored(name: str) -> bool:
    """Temp, partial-download, editor swap and dot files never count as drops."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pat) for pat in IGNORED_PATTERNS)


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """The content hash of a plain file; never through a link, never blocking on a FIFO."""
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


# -- moving a handled file out -------------------------------------------------


NAME_MAX = 255  # bytes in one path component, on every common filesystem


def _fit(name: str, room: int) -> str:
    """`name` with its stem shortened so that `room` more bytes still fit in NAME_MAX
    (a 250-byte name dropped in the inbox must still get its `.error.txt`)."""
    limit = NAME_MAX - room
    if len(os.fsencode(name)) <= limit:
        return name
    suffix = Path(name).suffix
    suffix = suffix if len(os.fsencode(suffix)) <= 16 else ""
    stem = name[: len(name) - len(suffix)]
    while stem and len(os.fsencode(stem + suffix)) > limit:
        stem = stem[:-1]
    return (stem or "file") + suffix


def _free_name(folder: Path, name: str, also: str = "") -> Path:
    """`folder/name`, or `stem-1.ext`, `stem-2.ext`... when taken. `also` is a
    suffix whose companion file must be free too (the .error.txt)."""
    name = _fit(name, len(also) + 8)  # 8: room for "-1234567"
    p = Path(name)
    stem, suffix = p.stem, p.suffix
    n = 0
    while True:
        candidate = folder / (name if n == 0 else f"{stem}-{n}{suffix}")
        # lexists: a dangling link moved out earlier still holds its name
        if not os.path.lexists(candidate) and not (also and os.path.lexists(str(candidate) + also)):
            return candidate
        n += 1


def _fsync_dir(folder: Path) -> None:
    # A rename is durable only once its directory is synced; best effort (not on every OS).
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _move(src: Path, dst: Path) -> None:
    try:
        os.replace(src, dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        shutil.move(str(src), str(dst))  # inbox on another filesystem than its parent


def finish(path: Path | str, ok: bool, error: str | None = None, inbox_dir: Path | str | None = None) -> Path:
    """Move a handled inbox file out; call it only AFTER the ingest committed.

    ok: to `<inbox parent>/processed/NAME`; failed: to `<inbox parent>/failed/NAME`
    with `NAME.error.txt` holding `error`. A taken name gets `-1`, `-2`... Returns
    the new path. Raises FileNotFoundError when the file is already gone."""
    src = Path(path)
    inbox = Path(inbox_dir) if inbox_dir is not None else src.parent
    dest_dir = inbox.parent / ("processed" if ok else "failed")
    dest_dir.mkdir(parents=True, exist_ok=True)
    if not os.path.lexists(src):  # a dangling link is still moved out, not followed
        raise FileNotFoundError(f"inbox file {src} is gone (already moved?)")
    if ok:
        dest = _free_name(dest_dir, src.name)
    else:
        dest = _free_name(dest_dir, src.name, also=".error.txt")
        # The reason is written first, atomically, so a failed file never sits
        # in failed/ without its why (a crash in between leaves the file in the
        # inbox, to be retried).
        reason = Path(str(dest) + ".error.txt")
        tmp = reason.with_name("." + reason.name + ".tmp")
        tmp.write_text((error or "unknown error").rstrip() + "\n", encoding="utf-8")
        os.replace(tmp, reason)
    _move(src, dest)
    _fsync_dir(dest_dir)
    log.info("inbox file finished", extra={"path": str(src), "dest": str(dest), "ok": ok})
    return dest


class InboxFolder:
    """An inbox with no trigger watching it (a wake run in-process, or the daemon with
    `[inbox] enabled = false`): `finish()` moves the file out; a deferred file simply
    stays where it is, to be offered again by whoever looks next."""

    def __init__(self, inbox_dir: Path | str) -> None:
        self.inbox_dir = Path(inbox_dir)

    def finish(self, path: Path, ok: bool, error: str | None) -> Path:
        return finish(path, ok, error, self.inbox_dir)

    def defer(self, path: Path, retry_after_s: float) -> None:
        return None


# -- watching --------------------------------------------------------------------


@dataclass
class _Candidate:
    sig: tuple[int, int] | None = None  # (size, mtime_ns) at the last look
    changed_at: float = 0.0  # monotonic time the signature last changed


class _Hints(FileSystemEventHandler):
    """Runs on watchdog's thread: hands paths to the event loop, nothing more."""

    def __init__(self, trigger: InboxTrigger, loop: asyncio.AbstractEventLoop) -> None:
        self._trigger = trigger
        self._loop = loop

    def on_any_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        paths: list[tuple[str, str]] = []
        if kind in ("created", "modified", "closed"):
            paths.append(("hint", os.fsdecode(event.src_path)))
        elif kind == "moved":
            paths.append(("gone", os.fsdecode(event.src_path)))
            paths.append(("hint", os.fsdecode(event.dest_path)))
        elif kind == "deleted":
            paths.append(("gone", os.fsdecode(event.src_path)))
        if event.is_directory and kind in ("created", "moved"):
            paths = [("rescan", "")]  # a folder moved in: its files fire no events of their own
        for what, p in paths:
            try:
                self._loop.call_soon_threadsafe(self._trigger._on_hint, what, p)
            except RuntimeError:  # loop closed during shutdown
                return


class InboxTrigger:
    """Watches `inbox_dir` (recursively) and enqueues
    `Wake("inbox", key="inbox:<sha256>", payload={"path", "sha256", "size"})`
    once per (path, content)."""

    def __init__(
        self,
        inbox_dir: Path | str,
        queue: asyncio.Queue,
        quiet_period_s: float = 2.0,
        rescan_interval_s: float = 300.0,
        poll_interval_s: float = 1.0,
        force_polling: bool = False,
        clock: Clock = SYSTEM_CLOCK,
        max_bytes: int | None = 20_000_000,
    ) -> None:
        self.inbox_dir = Path(inbox_dir)
        self.max_bytes = max_bytes
        self._queue = queue
        self.quiet_period_s = quiet_period_s
        self.rescan_interval_s = rescan_interval_s
        self.poll_interval_s = poll_interval_s
        self.force_polling = force_polling
        self._clock = clock
        self._candidates: dict[Path, _Candidate] = {}
        # path -> (sha256, (size, mtime_ns)) of what was enqueued for it
        self._emitted: dict[Path, tuple[str, tuple[int, int]]] = {}
        self._observer: BaseObserver | None = None
        self.observer_kind: str | None = None  # "native" or "polling", for status
        self._task: asyncio.Task | None = None
        self._rescan_due = True
        # path -> monotonic time after which a deferred file is offered again
        self._deferred: dict[Path, float] = {}

    @classmethod
    def from_settings(
        cls, settings: InboxSettings, inbox_dir: Path, queue: asyncio.Queue, clock: Clock = SYSTEM_CLOCK
    ) -> InboxTrigger:
        return cls(
            inbox_dir,
            queue,
            quiet_period_s=settings.quiet_period_s,
            rescan_interval_s=settings.rescan_interval_s,
            poll_interval_s=settings.poll_interval_s,
            force_polling=settings.force_polling,
            clock=clock,
            max_bytes=int(settings.max_file_mb * 1_000_000),
        )

    # -- lifecycle -------------------------------------------------------------

    def _make_observer(self, polling: bool) -> BaseObserver:
        """The observer class to try; a seam for tests that simulate inotify limits."""
        return PollingObserver(timeout=self.poll_interval_s) if polling else Observer()

    def _start_observer(self, loop: asyncio.AbstractEventLoop) -> None:
        handler = _Hints(self, loop)
        if not self.force_polling:
            observer = self._make_observer(False)
            try:
                observer.schedule(handler, str(self.inbox_dir), recursive=True)
                observer.start()
            except OSError as exc:
                try:
                    observer.stop()
                except Exception:  # it may never have started; nothing to release then
                    pass
                hint = ""
                if exc.errno in _INOTIFY_LIMIT_ERRNOS:
                    hint = " (inotify watch/instance limit reached: raise fs.inotify.max_user_watches / max_user_instances)"
                log.warning(f"native file watching unavailable{hint}; falling back to polling: {exc}")
            else:
                self._observer, self.observer_kind = observer, "native"
                return
        observer = self._make_observer(True)
        observer.schedule(handler, str(self.inbox_dir), recursive=True)
        observer.start()
        self._observer, self.observer_kind = observer, "polling"

    async def start(self) -> None:
        """Create the folder, start watching, rescan now (files dropped while
        the daemon was down) and start the look loop."""
        if self._task is not None:
            return
        self.inbox_dir.mkdir(parents=True, exist_ok=True)
        self._start_observer(asyncio.get_running_loop())
        self.rescan()
        self._rescan_due = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name="inbox-looks")
        log.info("inbox watching", extra={"path": str(self.inbox_dir), "observer": self.observer_kind})

    async def stop(self) -> None:
        await cancel_task(self._task)
        self._task = None
        if self._observer is not None:
            observer, self._observer = self._observer, None
            observer.stop()
            await asyncio.to_thread(observer.join, 5.0)

    # -- hints and looks ---------------------------------------------------------

    def _relevant(self, path: Path) -> bool:
        try:
            rel = path.relative_to(self.inbox_dir)
        except ValueError:
            return False
        return bool(rel.parts) and not any(is_ignored(part) for part in rel.parts)

    def _on_hint(self, what: str, raw: str) -> None:
        if what == "rescan":
            self._rescan_due = True
            return
        path = Path(raw)
        if what == "gone":
            self._candidates.pop(path, None)
            self._emitted.pop(path, None)
            return
        if self._relevant(path):
            cand = self._candidates.setdefault(path, _Candidate())
            cand.changed_at = self._clock.monotonic()  # something happened: restart its quiet period

    def rescan(self) -> int:
        """Look at every file in the inbox (events are lost while down, and on
        overflow); returns how many became candidates."""
        present: set[Path] = set()
        added = 0
        for root, dirs, files in os.walk(self.inbox_dir):
            dirs[:] = [d for d in dirs if not is_ignored(d)]
            for name in files:
                if is_ignored(name):
                    continue
                path = Path(root) / name
                present.add(path)
                if path in self._candidates:
                    continue
                done = self._emitted.get(path)
                if done is not None:
                    try:
                        st = path.stat()
                    except OSError:
                        continue
                    if (st.st_size, st.st_mtime_ns) == done[1]:
                        continue  # already enqueued, unchanged: no need to hash again
                self._candidates[path] = _Candidate(changed_at=self._clock.monotonic())
                added += 1
        now = self._clock.monotonic()
        for path, retry_at in list(self._deferred.items()):
            if now >= retry_at or path not in present:
                del self._deferred[path]
                if path in present and self._emitted.pop(path, None) is not None:
                    self._candidates[path] = _Candidate(changed_at=now)
                    added += 1
        for gone in [p for p in self._emitted if p not in present]:
            del self._emitted[gone]  # moved out or deleted: the same content may come back later
        return added

    async def look(self) -> list[Wake]:
        """One look at every candidate; enqueue those stable for the quiet period."""
        out: list[Wake] = []
        now = self._clock.monotonic()
        for path, cand in list(self._candidates.items()):
            try:
                st = os.lstat(path)  # never follow a link someone dropped here
            except FileNotFoundError:
                self._candidates.pop(path, None)
                continue
            except OSError as exc:
                log.warning("cannot stat inbox file", extra={"path": str(path), "error": str(exc)})
                continue
            if stat.S_ISDIR(st.st_mode):
                self._candidates.pop(path, None)
                continue
            # Links, FIFOs, devices: refused at once, never opened; hard links and size once stable.
            why = None if stat.S_ISREG(st.st_mode) else unreadable_reason(st, None)
            sig = (st.st_size, st.st_mtime_ns)
            if why is None and sig != cand.sig:
                cand.sig, cand.changed_at = sig, now  # changed (or first look): not stable yet
                continue
            if why is None and now - cand.changed_at < self.quiet_period_s:
                continue
            why = why or unreadable_reason(st, self.max_bytes)
            if why is not None:
                self._refuse(path, why)
                continue
            try:
                digest = await asyncio.to_thread(file_sha256, path)
                st2 = os.lstat(path)
            except OSError as exc:
                log.warning("cannot read inbox file", extra={"path": str(path), "error": str(exc)})
                continue
            if (st2.st_size, st2.st_mtime_ns) != sig:
                cand.sig, cand.changed_at = (st2.st_size, st2.st_mtime_ns), self._clock.monotonic()
                continue  # written to while hashing
            self._candidates.pop(path, None)
            if self._emitted.get(path, ("",))[0] == digest:
                continue
            self._emitted[path] = (digest, sig)
            wake = Wake(
                "inbox",
                key=f"inbox:{digest}",
                payload={"path": str(path), "sha256": digest, "size": st.st_size},
                created_at=self._clock.now(),
            )
            enqueue(self._queue, wake)
            out.append(wake)
        return out

    async def _run(self) -> None:
        interval = max(0.05, min(self.poll_interval_s, self.quiet_period_s / 2 or self.poll_interval_s))
        last_rescan = self._clock.monotonic()
        while True:
            try:
                if self._rescan_due or self._clock.monotonic() - last_rescan >= self.rescan_interval_s:
                    self._rescan_due = False
                    last_rescan = self._clock.monotonic()
                    self.rescan()
                await self.look()
            except Exception:  # one bad file or look must not stop the watch
                log.exception("inbox look failed")
            await self._clock.sleep(interval)

    def _refuse(self, path: Path, why: str) -> None:
        """Move an entry that must not be read to failed/ with its reason, unread."""
        self._candidates.pop(path, None)
        if self.max_bytes and "too large" in why:
            why += f" (the inbox limit is [inbox] max_file_mb = {self.max_bytes / 1e6:g})"
        log.warning("inbox entry refused", extra={"path": str(path), "reason": why})
        try:
            self.finish(path, False, f"not read: {why}")
        except OSError as exc:
            log.warning("cannot move refused inbox entry", extra={"path": str(path), "error": str(exc)})

    def finish(self, path: Path | str, ok: bool, error: str | None = None) -> Path:
        """`finish()` for a file of this inbox; also forgets it, so the same
        content dropped again later is picked up again."""
        dest = finish(path, ok, error, self.inbox_dir)
        self._emitted.pop(Path(path), None)
        self._candidates.pop(Path(path), None)
        return dest

    def defer(self, path: Path | str, retry_after_s: float) -> None:
        """Leave a file in the inbox and offer it again after `retry_after_s` (its
        ingest waits for the model budget to come back)."""
        self._deferred[Path(path)] = self._clock.monotonic() + max(0.0, retry_after_s)

    def retry_deferred(self) -> int:
        """Offer every deferred file again at the next look (the config was reloaded)."""
        n = len(self._deferred)
        for path in self._deferred:
            self._deferred[path] = 0.0
        self._rescan_due = True
        return n

    @property
    def pending(self) -> int:
        """Files seen but not yet stable."""
        return len(self._candidates)

"""The inbox trigger with a real watchdog observer on a temp folder."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import threading
import time
from pathlib import Path

import pytest
from watchdog.observers import Observer

from backchannel.core.wake import Wake
from backchannel.triggers.inbox import InboxTrigger, finish, is_ignored

QUIET = 0.3
SLOW_QUIET = 0.6
POLL = 0.1


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def collect(q: asyncio.Queue, seconds: float, until: int | None = None) -> list[Wake]:
    """Wakes arriving within `seconds` (stop early once `until` have come)."""
    out: list[Wake] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            out.append(await asyncio.wait_for(q.get(), timeout=max(0.01, deadline - time.monotonic())))
        except TimeoutError:
            break
        if until is not None and len(out) >= until:
            break
    return out


def make(inbox: Path, q: asyncio.Queue, **kw) -> InboxTrigger:
    return InboxTrigger(
        inbox, q, quiet_period_s=QUIET, rescan_interval_s=kw.pop("rescan_interval_s", 60.0), poll_interval_s=POLL, **kw
    )


def test_ignored_names():
    for name in (".hidden", "~lock.docx", "a.tmp", "b.PART", "c.crdownload", ".d.swp", "x.swp", "#autosave#"):
        assert is_ignored(name), name
    for name in ("meeting.vtt", "notes.txt", "call.srt", "a#b.txt"):
        assert not is_ignored(name), name


def test_drop_is_picked_once_after_quiet_period(tmp_path: Path):
    inbox = tmp_path / "inbox"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q)
        await trig.start()
        try:
            assert trig.observer_kind == "native"
            data = b"WEBVTT\n\n00:00.000 --> 00:01.000\nMarc: hello\n"
            t0 = time.monotonic()
            (inbox / "call.vtt").write_bytes(data)
            wakes = await collect(q, 3.0, until=1)
            waited = time.monotonic() - t0
            # A rescan and more events for the same unchanged file add nothing.
            trig.rescan()
            os.utime(inbox / "call.vtt")
            more = await collect(q, 1.0)
        finally:
            await trig.stop()
        return data, wakes, waited, more

    data, wakes, waited, more = asyncio.run(main())
    assert len(wakes) == 1
    w = wakes[0]
    assert w.kind == "inbox" and w.key == f"inbox:{sha(data)}"
    assert w.payload["path"] == str(inbox / "call.vtt") and w.payload["size"] == len(data)
    assert waited >= QUIET
    assert more == []


def test_slow_partial_write_is_not_picked_before_stable(tmp_path: Path):
    inbox = tmp_path / "inbox"
    chunks = [f"line {i}: {'x' * 200}\n".encode() for i in range(8)]
    done_at: list[float] = []

    def slow_writer():
        with open(inbox / "slow.txt", "wb") as f:
            for c in chunks:
                f.write(c)
                f.flush()
                done_at[:] = [time.monotonic()]  # time of the last write so far
                time.sleep(0.15)  # gaps shorter than the quiet period

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q)
        trig.quiet_period_s = SLOW_QUIET  # 4x the writer's pauses: robust on a loaded machine
        await trig.start()
        try:
            writer = threading.Thread(target=slow_writer)
            writer.start()
            wakes = await collect(q, 4.0, until=1)
            got_at = time.monotonic()
            writer.join()
            wakes += await collect(q, 0.8)
        finally:
            await trig.stop()
        return wakes, got_at

    wakes, got_at = asyncio.run(main())
    assert len(wakes) == 1, [w.payload for w in wakes]
    assert wakes[0].key == f"inbox:{sha(b''.join(chunks))}"  # the complete file, not a prefix
    assert got_at >= done_at[0] + SLOW_QUIET - 0.02  # only a full quiet period after the last write


def test_temp_and_dot_files_ignored_until_renamed(tmp_path: Path):
    inbox = tmp_path / "inbox"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q)
        await trig.start()
        try:
            for name in (".hidden.vtt", "~$notes.docx", "dl.crdownload", "copy.part", "x.tmp", ".x.swp", "#x#"):
                (inbox / name).write_text("partial")
            (inbox / ".git").mkdir()
            (inbox / ".git" / "config.txt").write_text("in a dot folder")
            quiet = await collect(q, 1.0)
            # A browser download finishes: the .part file is renamed to its real name.
            os.rename(inbox / "copy.part", inbox / "copy.vtt")
            renamed = await collect(q, 2.0, until=1)
        finally:
            await trig.stop()
        return quiet, renamed

    quiet, renamed = asyncio.run(main())
    assert quiet == []
    assert [Path(w.payload["path"]).name for w in renamed] == ["copy.vtt"]


def test_rescan_at_start_and_periodic_rescan_find_files_without_events(tmp_path: Path):
    inbox = tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    (inbox / "before.vtt").write_text("dropped while the daemon was down")
    (inbox / "sub" / "nested.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nhi\n")

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q, force_polling=True, rescan_interval_s=0.5)
        await trig.start()
        try:
            first = await collect(q, 3.0, until=2)
            # Stop watching events entirely: only the periodic rescan can see this one.
            trig._observer.stop()
            (inbox / "later.vtt").write_text("arrived with no watcher")
            second = await collect(q, 3.0, until=1)
        finally:
            await trig.stop()
        return first, second

    first, second = asyncio.run(main())
    assert sorted(Path(w.payload["path"]).name for w in first) == ["before.vtt", "nested.srt"]
    assert [Path(w.payload["path"]).name for w in second] == ["later.vtt"]


def test_forced_polling_sees_drops(tmp_path: Path):
    inbox = tmp_path / "inbox"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q, force_polling=True)
        await trig.start()
        try:
            assert trig.observer_kind == "polling"
            (inbox / "p.vtt").write_text("polled")
            return await collect(q, 3.0, until=1)
        finally:
            await trig.stop()

    wakes = asyncio.run(main())
    assert [Path(w.payload["path"]).name for w in wakes] == ["p.vtt"]


class WatchLimitObserver(Observer):  # type: ignore[misc, valid-type]
    """The native observer as it behaves when fs.inotify.max_user_watches is exhausted."""

    def start(self) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


class LimitedInbox(InboxTrigger):
    def _make_observer(self, polling: bool):
        return super()._make_observer(True) if polling else WatchLimitObserver()


def test_falls_back_to_polling_when_inotify_limit_hit(tmp_path: Path):
    inbox = tmp_path / "inbox"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = LimitedInbox(inbox, q, quiet_period_s=QUIET, poll_interval_s=POLL)
        await trig.start()
        try:
            assert trig.observer_kind == "polling"
            (inbox / "f.vtt").write_text("still seen")
            return await collect(q, 3.0, until=1)
        finally:
            await trig.stop()

    assert len(asyncio.run(main())) == 1


def test_finish_moves_beside_inbox_with_suffix_and_error(tmp_path: Path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "a.vtt").write_text("one")
    dest = finish(inbox / "a.vtt", ok=True, inbox_dir=inbox)
    assert dest == tmp_path / "processed" / "a.vtt" and dest.read_text() == "one"
    (inbox / "a.vtt").write_text("two")
    dest2 = finish(inbox / "a.vtt", ok=True, inbox_dir=inbox)
    assert dest2 == tmp_path / "processed" / "a-1.vtt" and dest2.read_text() == "two"

    (inbox / "bad.txt").write_text("garbage")
    failed = finish(inbox / "bad.txt", ok=False, error="no speaker turns found", inbox_dir=inbox)
    assert failed == tmp_path / "failed" / "bad.txt"
    assert (tmp_path / "failed" / "bad.txt.error.txt").read_text() == "no speaker turns found\n"
    (inbox / "bad.txt").write_text("garbage again")
    failed2 = finish(inbox / "bad.txt", ok=False, error="still bad", inbox_dir=inbox)
    assert failed2.name == "bad-1.txt" and (tmp_path / "failed" / "bad-1.txt.error.txt").exists()
    assert not list(inbox.iterdir())
    assert not [p for p in (tmp_path / "failed").iterdir() if p.name.startswith(".")]
    with pytest.raises(FileNotFoundError):
        finish(inbox / "bad.txt", ok=True, inbox_dir=inbox)


def test_crash_before_finish_rescans_and_same_content_again_after_finish(tmp_path: Path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    data = b"Marc: we work with the CIO of Acme\n"
    (inbox / "t.txt").write_bytes(data)

    async def run_once(then_finish: bool):
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q)
        await trig.start()
        try:
            wakes = await collect(q, 3.0, until=1)
            if then_finish:
                trig.finish(wakes[0].payload["path"], ok=True)
                # The same content dropped again later is a new drop (ingest dedupes it).
                await asyncio.sleep(0.2)
                (inbox / "t.txt").write_bytes(data)
                wakes += await collect(q, 3.0, until=1)
        finally:
            await trig.stop()
        return wakes

    # First run "crashes" (stops) before finish: the file is still there...
    first = asyncio.run(run_once(False))
    assert (inbox / "t.txt").exists()
    # ...and the next start enqueues it again, under the same idempotency key.
    second = asyncio.run(run_once(True))
    assert [w.key for w in first] == [f"inbox:{sha(data)}"]
    assert [w.key for w in second] == [f"inbox:{sha(data)}"] * 2
    assert (tmp_path / "processed" / "t.txt").read_bytes() == data


def test_changed_content_gives_a_new_wake(tmp_path: Path):
    inbox = tmp_path / "inbox"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        trig = make(inbox, q)
        await trig.start()
        try:
            (inbox / "n.txt").write_text("v1")
            a = await collect(q, 3.0, until=1)
            (inbox / "n.txt").write_text("v2, edited")
            b = await collect(q, 3.0, until=1)
        finally:
            await trig.stop()
        return a + b

    wakes = asyncio.run(main())
    assert [w.key for w in wakes] == [f"inbox:{sha(b'v1')}", f"inbox:{sha(b'v2, edited')}"]

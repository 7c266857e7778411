"""`backchannel run`: the service process.

- A lock file (fcntl.flock on paths.lock_file) makes a second instance refuse,
  naming the PID that holds it.
- One asyncio loop, ONE queue. Triggers only enqueue Wakes; API calls that
  write enqueue an op with a future. One consumer takes items in order and runs
  each on the single writer thread that owns the DuckDB connection (DuckDB
  connections are not thread-safe; blocking work must not stall the loop, which
  keeps answering the API, signals and the watchdog).
- Read-only API ops run concurrently on a cursor of their own (serialised
  among themselves).
- The store is opened after the lock; a CLI command that opened it just before
  is waited for (STORE_WAIT_S), not crashed into.
- SIGTERM/SIGINT: stop triggers, ask the current run to stop at its next
  checkpoint, wait at most STOP_GRACE_S, exit; an unfinished run stays
  `running` and is resumed (or closed with a reason) at the next start. A
  step still running then (a sandbox run cannot checkpoint) is abandoned: the
  process groups of our children are killed, then the process exits.
- SIGHUP: reload the config (checked by triggers.checks) and re-plan the
  triggers; a bad config is logged and the old one kept.
- sd_notify READY/STATUS/WATCHDOG when NOTIFY_SOCKET is set.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel.config import ConfigError, Paths, Settings, load_settings
from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log
from backchannel.core.ports import InboxFiles
from backchannel.core.timeutil import aware_now
from backchannel.daemon.lockfile import DaemonLock
from backchannel.daemon.notify import Notifier
from backchannel.engine import runs
from backchannel.memory.store import Store, StoreLocked, utcnow

if TYPE_CHECKING:
    from backchannel.core.wake import Wake
    from backchannel.daemon.api import ApiServer
    from backchannel.engine.runs import WakeRecord
    from backchannel.ops import OpEnv
    from backchannel.triggers.setup import Triggers

logger = get_logger("service")

STOP_GRACE_S = 8.0  # the whole stop must fit in systemd's and the tests' 10 s
STORE_WAIT_S = 30.0  # a CLI command that opened the store just before we took the lock
DELIVERY_TICK_S = 15.0


@dataclass
class OpCall:
    """An API operation that writes: handled by the consumer, in queue order."""

    name: str
    args: dict[str, Any]
    future: asyncio.Future
    fn: Any = None  # an internal call: fn(store) instead of the op `name`


class Daemon:
    def __init__(self, paths: Paths, settings: Settings, *, clock: Any = None, environ: dict[str, str] | None = None):
        from backchannel.triggers.wake import SYSTEM_CLOCK

        self.paths = paths.ensure()
        self.settings = settings
        self.clock = clock or SYSTEM_CLOCK
        self.notifier = Notifier(environ)
        self.lock = DaemonLock(paths.lock_file)
        self.store: Store | None = None
        self.read_store: Store | None = None
        self.queue: asyncio.Queue | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="backchannel-writer")
        self.reader = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="backchannel-reader")
        self.cancel = threading.Event()
        self.abandon = threading.Event()  # set just before a forced exit: commit nothing more
        self.started_at: datetime | None = None
        self.started_mono = time.monotonic()
        self.current: dict[str, Any] | None = None
        self.recent: deque[dict[str, Any]] = deque(maxlen=20)
        self.triggers: Triggers | None = None  # while running
        self.api: ApiServer | None = None
        self._stop: asyncio.Event | None = None
        self._busy = False
        self.exit_code = 0
        self._tasks: list[asyncio.Task] = []
        self.inbox = InboxOnLoop(self)  # where the engine sends a handled inbox file

    # What exists only while the service runs (made by _main and _open_store): a call
    # before that, or after the store is closed, is a bug and says so.
    @property
    def _live_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            raise RuntimeError("the daemon's event loop is not running")
        return self.loop

    @property
    def _live_queue(self) -> asyncio.Queue:
        if self.queue is None:
            raise RuntimeError("the daemon's queue does not exist before it runs")
        return self.queue

    @property
    def _live_stop(self) -> asyncio.Event:
        if self._stop is None:
            raise RuntimeError("the daemon's stop event does not exist before it runs")
        return self._stop

    @property
    def _writer_store(self) -> Store:
        if self.store is None:
            raise RuntimeError("the daemon's database is not open")
        return self.store

    @property
    def _reader_store(self) -> Store:
        if self.read_store is None:
            raise RuntimeError("the daemon's database is not open")
        return self.read_store

    # -- lifecycle ----------------------------------------------------------
    def run(self) -> int:
        """Run until stopped; returns the exit status."""
        self.lock.acquire()
        from backchannel import embedding

        embedding.use_worker_unless_overridden()  # torch lives in a worker that each wake releases
        try:
            return asyncio.run(self._main())
        except StoreLocked as exc:
            log(logger, 50, "cannot open the database; exiting", error=str(exc), waited_s=STORE_WAIT_S)
            return 1
        finally:
            self.lock.release()

    async def _main(self) -> int:
        self.loop = asyncio.get_running_loop()
        self.queue = asyncio.Queue()
        self._stop = asyncio.Event()
        self.started_at = aware_now()
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, self.request_stop, sig.name)
        self._live_loop.add_signal_handler(signal.SIGHUP, lambda: self._live_loop.create_task(self.reload()))
        if not await self._open_store_waiting():
            log(logger, 20, "stopped before the database could be opened")
            return self.exit_code
        log(logger, 20, "daemon starting", pid=os.getpid(), db=str(self.paths.db_file))
        resumed = await self._on_writer(lambda: runs.recover(self._writer_store))
        for run_id, wake in resumed:
            self._live_queue.put_nowait(("resume", run_id, wake))
        if resumed:
            log(logger, 20, "resuming unfinished runs", runs=[r for r, _ in resumed])
        from backchannel.core.wake import Wake

        requested = await self._on_writer(lambda: runs.pending_requests(self._writer_store))
        for data in requested:  # `wake sweep` answered "queued" but never started: a crash or stop
            self._live_queue.put_nowait(Wake.from_dict(data))
        if requested:
            log(logger, 20, "re-queueing requested wakes", keys=[w["key"] for w in requested])
        from backchannel.daemon.api import ApiServer

        self.api = ApiServer(self)
        await self.api.start()  # the local API, the feedback links and, with [web] enabled, the web app
        await self._start_triggers()
        from backchannel.sandbox import prestart

        prestart(self.settings.sandbox)  # one confined child waits for the next wake's program
        self.notifier.ready(status="idle")
        log(logger, 20, "daemon ready", pid=os.getpid(), socket=str(self.paths.api_socket), tcp_port=self.api.tcp_port)
        if self.notifier.watchdog_interval_s:
            self._tasks.append(self._live_loop.create_task(self._watchdog(), name="watchdog"))
        self._tasks.append(self._live_loop.create_task(self._deliveries(), name="deliveries"))
        consumer = self._live_loop.create_task(self._consume(), name="consumer")
        consumer.add_done_callback(self._consumer_ended)
        await self._stop.wait()
        return await self._shutdown(consumer)

    def _consumer_ended(self, task: asyncio.Task) -> None:
        if self._live_stop.is_set() or task.cancelled():
            return
        # Without its consumer the daemon is useless: exit non-zero so the service manager restarts it.
        log(logger, 50, "the consumer stopped unexpectedly", error=repr(task.exception()))
        self.exit_code = 1
        self.request_stop("consumer ended")

    def request_stop(self, why: str = "stop") -> None:
        if self._stop is None or self._stop.is_set():
            return
        log(logger, 20, "stopping", signal=why)
        self.notifier.stopping()
        self.cancel.set()  # the current run stops at its next checkpoint
        self._stop.set()

    async def _shutdown(self, consumer: asyncio.Task) -> int:
        from backchannel.sandbox import stop_prestarting

        deadline = time.monotonic() + STOP_GRACE_S
        stop_prestarting()
        await self._stop_triggers()
        if self.api is not None:
            await self.api.stop()
        if not self._busy:
            consumer.cancel()  # idle, waiting on the queue: nothing to finish
        try:
            await asyncio.wait_for(asyncio.shield(consumer), timeout=max(0.1, deadline - time.monotonic()))
        except asyncio.CancelledError:
            pass
        except TimeoutError:
            consumer.cancel()
            log(
                logger,
                30,
                "current step did not finish in time; its run resumes at the next start",
                current=self.current,
            )
            # The writer thread cannot be interrupted. Every committed step is durable and
            # the unfinished run is resumed at the next start, so exiting now is safe; but a
            # sandbox child (its own session, so our exit does not reach it) would live on:
            # kill its whole process group first. `abandon` stops the writer from recording
            # the result of the sweep that this kill cuts short.
            self.abandon.set()
            killed = kill_child_groups()
            if killed:
                log(logger, 30, "killed child process groups before exiting", pids=killed)
            os._exit(0)
        for t in self._tasks:
            t.cancel()
        dropped = self._drain()
        if dropped:
            log(logger, 20, "wakes not handled before the stop", count=dropped)
        await self._on_writer(self._close_store)
        self.writer.shutdown(wait=False)
        self.reader.shutdown(wait=False)
        log(logger, 20, "stopped")
        return self.exit_code

    def _drain(self) -> int:
        n = 0
        while self.queue is not None and not self.queue.empty():
            item = self.queue.get_nowait()
            n += 1
            if isinstance(item, OpCall) and not item.future.done():
                item.future.set_exception(RuntimeError("the daemon is stopping"))
        return n

    # -- the store, on the writer thread ------------------------------------
    async def _on_writer(self, fn: Any) -> Any:
        return await self._live_loop.run_in_executor(self.writer, fn)

    async def _open_store_waiting(self) -> bool:
        """Open the store, waiting up to STORE_WAIT_S while another process holds it:
        a CLI command that found no daemon (we had not taken the lock yet) opened
        it itself, and lets go when it is done; later ones see the lock and use the API.
        False when a stop was requested meanwhile."""
        deadline = time.monotonic() + STORE_WAIT_S
        warned = False
        while not self._live_stop.is_set():
            try:
                await self._on_writer(self._open_store)
                return True
            except StoreLocked as exc:
                if time.monotonic() >= deadline:
                    raise
                if not warned:
                    warned = True
                    log(logger, 30, "the database is held by another process; waiting for it", error=str(exc))
                    self.notifier.status("waiting for the database")
            await asyncio.sleep(0.25)
        return False

    def _open_store(self) -> None:
        from backchannel.memory import entities, withdrawal

        self.store = Store.open(self.paths.db_file)
        entities.ensure_owner(self.store, self.settings.owner.name, self.settings.owner.aliases)
        if withdrawal.apply_configured(self.store, self.settings.consent.withdrawn):
            # People newly listed in `[consent] withdrawn` were erased: reopening rewrites the file.
            self.store.close()
            self.store = Store.open(self.paths.db_file)
        self.read_store = Store(self.store.con.cursor(), self.paths.db_file, False)

    def _close_store(self) -> None:
        if self.read_store is not None:
            self.read_store.close()
        if self.store is not None:
            with contextlib.suppress(Exception):
                self.store.con.execute("CHECKPOINT")
            self.store.close()

    async def _rewrite_store(self) -> None:
        """After an erasure (the retention sweep): close the store, rewrite the file so no
        deleted byte remains (Store.open finishes the pending rewrite), open it again. Runs
        on the reader thread while the writer waits for it, so neither cursor is in use."""

        def reopen() -> None:
            self._close_store()
            self._open_store()
            log(logger, 20, "database file rewritten after an erasure", db=str(self.paths.db_file))

        await self._on_writer(lambda: self.reader.submit(reopen).result())

    # -- triggers -----------------------------------------------------------
    def inbox_dir(self) -> Path:
        from backchannel.triggers.setup import inbox_dir

        return inbox_dir(self.settings, self.paths)

    async def _last_sweep_fire(self) -> datetime | None:
        """The scheduled time of the last sweep handled, for the schedule's catch-up."""

        def q() -> datetime | None:
            rows = self._writer_store.query(
                "SELECT wake_payload FROM runs WHERE wake_kind = 'sweep' ORDER BY started_at DESC LIMIT 1"
            )
            when = json.loads(rows[0]["wake_payload"] or "{}").get("scheduled_for") if rows else None
            return datetime.fromisoformat(when) if when else None

        return await self._on_writer(q)

    async def _start_triggers(self) -> None:
        from backchannel.triggers.setup import build_triggers

        self.triggers = build_triggers(self.settings, self.paths, self._live_queue, self.clock)
        await self.triggers.start(last_sweep=await self._last_sweep_fire())

    async def _stop_triggers(self) -> None:
        if self.triggers is not None:
            with contextlib.suppress(Exception):
                await self.triggers.stop()
            self.triggers = None

    async def reload(self) -> None:
        """SIGHUP: re-read the config, then re-plan every trigger from it."""
        self.notifier.reloading()
        from backchannel.triggers.checks import problems

        try:
            new = load_settings(self.paths)
            bad = problems(new)
            if bad:
                raise ConfigError("; ".join(bad))
            if self.triggers is not None:
                await self.triggers.reload(new)  # a bad cron string raises before anything changes
        except (ConfigError, ValueError) as exc:
            log(logger, 40, "config reload failed; keeping the running config", error=str(exc))
            self.notifier.ready(status="config reload failed; old config kept")
            return
        self.settings = new
        from backchannel.sandbox import prestart

        prestart(new.sandbox)  # the spare child waiting now has the old limits
        if self.triggers is not None and self.triggers.inbox is not None:
            self.triggers.inbox.retry_deferred()  # the model budget may have been raised
        log(logger, 20, "config reloaded", config=str(self.paths.config_file))
        self.notifier.ready(status="config reloaded")

    def request_wake(self, kind: str, store: Store) -> dict[str, Any]:
        """Make the wake the request `kind` names and queue it (the request's row in the wake
        table, engine/wakes/). Called on the reader thread with its cursor `store`: a wake
        made on the spot (a manual sweep, a retention sweep) is recorded there (durable
        before the answer; re-queued at the next start if it never ran), not on the writer
        thread, where it would wait behind a long run; the others are a running trigger's
        work, on the event loop."""
        from backchannel.engine import wakes

        request = wakes.request(kind)
        if request.needs_triggers and self.triggers is None:
            raise RuntimeError("the triggers are not running")
        if request.keyed is not None:
            wake = request.keyed(aware_now())
            # One keyed append to the append-only log, on a cursor of the daemon's own
            # connection: DuckDB lets it commit beside the writer's transaction.
            runs.record_request(store, wake)
            self._live_loop.call_soon_threadsafe(self._live_queue.put_nowait, wake)
            return {"enqueued": wake.kind, "key": wake.key}
        if self.triggers is None or request.on_trigger is None or request.answer is None:
            raise ValueError(f"unknown wake {kind!r}; use sweep, calendar or signals")
        asyncio.run_coroutine_threadsafe(request.on_trigger(self.triggers), self._live_loop)
        return request.answer(self.settings, self.triggers)

    def next_wakes(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.triggers is None:
            return out
        out += [{"kind": "sweep", "at": t.isoformat()} for t in self.triggers.schedule.next_fire_times()[:5]]
        lead = timedelta(hours=self.settings.calendar.lead_hours)
        now = aware_now()
        for ev in self.triggers.calendar.events:
            if ev.starts_at - lead > now:  # inside the lead window its wake has already fired
                out.append({"kind": "meeting_soon", "at": (ev.starts_at - lead).isoformat(), "summary": ev.summary})
            if len(out) >= 10:
                break
        return sorted(out, key=lambda w: w["at"])

    # -- the consumer --------------------------------------------------------
    async def _watchdog(self) -> None:
        interval = self.notifier.watchdog_interval_s
        if interval is None:  # started only when systemd asked for a watchdog
            return
        while True:
            self.notifier.watchdog()
            await asyncio.sleep(interval)

    async def _consume(self) -> None:
        while True:
            item = await self._live_queue.get()
            if self.cancel.is_set():
                self._live_queue.put_nowait(item)  # left for _drain
                return
            self._busy = True
            try:
                if isinstance(item, OpCall):
                    await self._handle_op(item)
                else:
                    await self._handle_wake(item)
            except Exception:  # noqa: BLE001 - one bad item must never stop the consumer
                logger.exception("consumer item failed")
            finally:
                self._busy = False
                self.current = None
                self.notifier.status("idle")
            if self._live_queue.empty():  # the last queued item is done: the embedding model goes with it
                from backchannel import embedding

                await self._on_writer(embedding.release)
            if self.cancel.is_set():
                return

    async def _handle_wake(self, item: Wake | tuple[str, str, WakeRecord]) -> None:
        from backchannel.engine.pipeline import run_wake_once

        run_id: str | None = None
        wake: Wake | WakeRecord
        if isinstance(item, tuple):  # ("resume", run_id, wake): an unfinished run, at start
            _, run_id, wake = item
        else:
            wake = item
        kind = wake.kind
        self.current = {"kind": kind, "key": wake.key, "since": utcnow().isoformat()}
        self.notifier.status(f"handling {kind} wake")
        t0 = time.monotonic()
        outcome = await self._on_writer(
            lambda: run_wake_once(
                self._writer_store,
                self.settings,
                self.paths,
                wake,
                run_id=run_id,
                cancel=self.cancel,
                inbox=self.inbox,
                abandon=self.abandon,
            )
        )
        if outcome.detail.get("rewrite"):
            await self._rewrite_store()
        if outcome.proposals and self.settings.delivery.channels:
            # Deliver now rather than at the next tick; the outbox makes it exactly once.
            from backchannel.delivery import outbox

            self._live_loop.create_task(self._deliver_now(outbox))
        if (
            kind == "mail"
            and (outcome.detail.get("mail") or {}).get("more")
            and self.triggers is not None
            and self.triggers.mail is not None
        ):
            self.triggers.mail.fire("more")  # a long first sync goes on in slices, each its own wake
        if outcome.status == "skipped":
            log(logger, 20, "wake skipped", wake_kind=kind, wake_key=wake.key, reason=outcome.reason)
        self.recent.appendleft(
            {
                "kind": kind,
                "run_id": outcome.run_id,
                "status": outcome.status,
                "proposals": outcome.proposals,
                "ms": round((time.monotonic() - t0) * 1000, 1),
                "at": utcnow().isoformat(),
            }
        )

    def op_env(self, store: Store) -> OpEnv:
        from backchannel.ops import OpEnv

        return OpEnv(store=store, settings=self.settings, paths=self.paths, daemon=OpsView(self, store))

    async def _handle_op(self, call: OpCall) -> None:
        from backchannel.ops import invoke

        self.current = {"kind": "op", "name": call.name, "since": utcnow().isoformat()}

        def work() -> Any:
            try:
                if call.fn is not None:
                    return call.fn(self._writer_store)
                return invoke(self.op_env(self._writer_store), call.name, call.args)
            except BaseException:
                # An op that failed inside a transaction must not leave it open for the next one.
                with contextlib.suppress(Exception):
                    self._writer_store.con.execute("ROLLBACK")
                raise

        try:
            result = await self._on_writer(work)
        except Exception as exc:  # noqa: BLE001 - handed back to the API caller
            if not call.future.done():
                call.future.set_exception(exc)
        else:
            if not call.future.done():
                call.future.set_result(result)

    async def call_op(self, name: str, args: dict[str, Any]) -> Any:
        """Run an operation for the API: reads (`@op(read=True)`, and `wake`) concurrently on the
        reader cursor, so a page never waits behind a long wake; writes on the consumer."""
        from backchannel.ops import lookup

        spec = lookup(name)
        if spec.on_reader:
            return await self._live_loop.run_in_executor(
                self.reader, lambda: spec.fn(self.op_env(self._reader_store), **args)
            )
        fut = self._live_loop.create_future()
        self._live_queue.put_nowait(OpCall(name, args, fut))
        return await fut

    async def call_internal(self, fn: Any, name: str = "internal") -> Any:
        """Run `fn(store)` on the consumer, in queue order (for writers outside the ops)."""
        fut = self._live_loop.create_future()
        self._live_queue.put_nowait(OpCall(name, {}, fut, fn))
        return await fut

    async def _deliver_now(self, outbox: Any) -> None:
        try:
            await self.call_internal(lambda st: outbox.deliver_due(st, self.settings, self.paths), "deliver")
        except Exception:  # noqa: BLE001 - the periodic tick retries
            logger.exception("delivery failed")

    async def _deliveries(self) -> None:
        """Send what the outbox holds, on the consumer, every DELIVERY_TICK_S."""
        from backchannel.delivery import outbox

        delay = 0.0  # at start: what a crash left queued or in doubt goes out now, not a tick later
        while True:
            await asyncio.sleep(delay)
            delay = DELIVERY_TICK_S
            if not self.settings.delivery.channels:
                continue
            try:
                await self.call_internal(lambda st: outbox.deliver_due(st, self.settings, self.paths), "deliver")
            except Exception:  # noqa: BLE001 - retried at the next tick; the outbox keeps the rows
                logger.exception("delivery tick failed")

    # -- status ---------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "uptime_s": round(time.monotonic() - self.started_mono, 1),
            "queue_length": self.queue.qsize() if self.queue else 0,
            "current": self.current,
            "recent_in_process": list(self.recent)[:10],
            "next_wakes": self.next_wakes(),
            "triggers": self.triggers.status() if self.triggers is not None else None,
            "api": {"socket": str(self.paths.api_socket), "tcp_port": self.api.tcp_port if self.api else None},
            "web": self.api.web_url if self.api else None,
        }


class InboxOnLoop:
    """The engine's inbox port (core.ports.InboxFiles) in the daemon. Called on the writer
    thread, after the ingest committed; the move runs on the event loop, where the inbox
    trigger keeps its state (with `[inbox] enabled = false`, no trigger: the file is moved
    out of the configured folder, and a deferred one stays where it is)."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    def _here(self) -> InboxFiles:
        """On the loop: the inbox trigger, or the folder alone."""
        triggers = self.daemon.triggers
        if triggers is not None and triggers.inbox is not None:
            return triggers.inbox
        from backchannel.triggers.inbox import InboxFolder

        return InboxFolder(self.daemon.inbox_dir())

    def finish(self, path: Path, ok: bool, error: str | None) -> Path:
        async def move() -> Path:
            return self._here().finish(path, ok, error)

        return asyncio.run_coroutine_threadsafe(move(), self.daemon._live_loop).result(timeout=60)

    def defer(self, path: Path, retry_after_s: float) -> None:
        self.daemon._live_loop.call_soon_threadsafe(lambda: self._here().defer(path, retry_after_s))


@dataclass
class OpsView:
    """The daemon as an operation served through its API sees it (core.ports.RunningDaemon):
    bound to the cursor the operation runs on."""

    daemon: Daemon
    store: Store

    def request_wake(self, kind: str) -> dict[str, Any]:
        return self.daemon.request_wake(kind, self.store)

    def info(self) -> dict[str, Any]:
        return self.daemon.info()


def kill_child_groups() -> list[int]:
    """SIGKILL every sandbox child this process runs and, when it leads one (the sandbox
    starts each run in a session of its own), its whole process group, so no orphan
    outlives a forced exit. The runner knows its children: no scan of the process table.
    Returns the children's PIDs."""
    from backchannel.sandbox.runner import live_children

    me = os.getpgrp()
    pids = live_children()
    for pid in pids:
        try:
            if os.getpgid(pid) == pid and pid != me:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return pids


def run_daemon(paths: Paths, settings: Settings) -> int:
    """Entry point of `backchannel run`."""
    return Daemon(paths, settings).run()

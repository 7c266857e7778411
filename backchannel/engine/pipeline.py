"""The wake pipeline: what one wake does, as one durable run.

`run_wake_once()` is the entry point for the daemon's consumer and for in-process
callers (the demo, `backchannel wake` without a daemon): it starts the run (or resumes
it), hands it to its kind's handler (engine/wakes/, one module per kind, found from one
table), and finishes it: done, failed with the reason, or interrupted (the daemon is
stopping; the run resumes at the next start). A run's failure is recorded, never raised.
What a handler does with the run (sweep, gate, judge, draft, propose) is engine/run.py.

`collect_wakes()` makes, without a daemon, the wakes a request names (the same table).
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.crashpoints import crash_point
from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log
from backchannel.core.ports import InboxFiles
from backchannel.core.timeutil import as_naive_utc
from backchannel.core.wake import Wake
from backchannel.engine import runs, wakes
from backchannel.engine.run import Interrupted, Run, RunOutcome, rollback_quietly
from backchannel.engine.runs import WakeRecord
from backchannel.memory.edges import EdgeStopped
from backchannel.memory.store import Store, utcnow

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway

__all__ = ["Interrupted", "RunOutcome", "collect_wakes", "inbox_dir", "make_gateway", "run_wake_once"]

logger = get_logger("pipeline")


def inbox_dir(settings: Settings, paths: Paths) -> Path:
    from backchannel.triggers.setup import inbox_dir as configured_inbox_dir

    return configured_inbox_dir(settings, paths)


def make_gateway(store: Store, settings: Settings, paths: Paths) -> Gateway | None:
    """The model gateway when any role has a real model; None when all are offline."""
    m = settings.models
    if all(v == "offline" for v in (m.extract, m.sweep, m.draft)):
        return None
    from backchannel.agent import models

    return models.Gateway(settings, store, paths)


def _erase_configured_withdrawals(run: Run) -> None:
    """People newly listed in `[consent] withdrawn` (a reload or a restart brought them):
    erased at the next wake, once, recorded; the daemon rewrites the file after the run."""
    from backchannel.memory import withdrawal

    erased = withdrawal.apply_configured(run.store, run.settings.consent.withdrawn)
    if erased:
        runs.step(run.store, run.run_id, "consent.configured_erased", {"people": erased})
        run.outcome.detail["rewrite"] = True


def _without_withdrawn(store: Store, settings: Settings, w: WakeRecord) -> WakeRecord:
    """The wake as recorded and handled: no one withdrawn in it (memory/consent.py scrub)."""
    from backchannel.memory import consent

    m = consent.matcher(store, settings.consent.withdrawn)
    return WakeRecord(w.kind, w.key, consent.scrub(m, w.payload), w.created_at) if m else w


def run_wake_once(
    store: Store,
    settings: Settings,
    paths: Paths,
    wake: Wake | WakeRecord | dict[str, Any],
    *,
    run_id: str | None = None,
    gateway: Gateway | None = None,
    cancel: threading.Event | None = None,
    inbox: InboxFiles | None = None,
    now: datetime | None = None,
    abandon: threading.Event | None = None,
) -> RunOutcome:
    """Handle one wake as one run, start to finish. `run_id` resumes an unfinished run.
    `inbox` is where a handled inbox file goes (default: moved out of the configured
    inbox folder, `triggers.inbox.InboxFolder`; the daemon hands in its inbox trigger's).
    `abandon`, once set, means the sandbox may have been killed under the sweep: its
    result is not recorded (the run resumes and sweeps again).
    Never raises for a failure of the work itself: the run is marked failed instead."""
    w = WakeRecord.of(wake)
    if w.kind == "inbox" and run_id is None and not Path(str(w.payload.get("path", ""))).is_file():
        # Seen twice (a rescan after a resumed run moved it): nothing to do, no run needed.
        return RunOutcome("", w.kind, "skipped", f"{w.payload.get('path')} is gone (already handled)")
    when = as_naive_utc(now or utcnow())
    if run_id is None and w.key and w.kind != "inbox":
        prior = store.scalar("SELECT id FROM runs WHERE wake_key = ? AND status = 'done' LIMIT 1", [w.key])
        if prior:
            return RunOutcome(prior, w.kind, "skipped", f"wake {w.key} already handled by run {prior}")
    if gateway is None:
        gateway = make_gateway(store, settings, paths)
    if inbox is None:
        from backchannel.triggers.inbox import InboxFolder

        inbox = InboxFolder(inbox_dir(settings, paths))
    w = _without_withdrawn(store, settings, w)
    rid = runs.start(store, w, run_id, clock=when, settings=settings)
    out = RunOutcome(rid, w.kind, "done")
    run = Run(store, settings, paths, rid, w, when, gateway, cancel, inbox, out, abandon)
    log(logger, 20, "run started", run_id=rid, wake_kind=w.kind, wake_key=w.key)
    try:
        _erase_configured_withdrawals(run)
        wakes.handler(w.kind)(run)
    except Interrupted:
        runs.step(
            store, rid, "run.interrupted", {"at": utcnow().isoformat()}, key=f"{rid}:interrupted:{utcnow().isoformat()}"
        )
        out.status, out.reason = "interrupted", "the daemon stopped; the run resumes at the next start"
        log(logger, 20, "run interrupted", run_id=rid)
        return out
    except EdgeStopped as exc:  # a limit of [edges.*]: the run stops with the reason, as a failure
        rollback_quietly(store)
        out.status, out.reason = "failed", str(exc)
        runs.step(store, rid, "edge.stopped", {"edge": exc.edge, "reason": exc.reason})
        runs.finish(store, rid, "failed", out.reason[:1000])
        log(logger, 30, "run stopped at an edge", run_id=rid, edge=exc.edge, reason=exc.reason)
        return out
    except Exception as exc:  # noqa: BLE001 - a run's failure is recorded, never raised into the daemon
        logger.exception("run failed", extra={"fields": {"run_id": rid, "wake_kind": w.kind}})
        rollback_quietly(store)
        out.status, out.reason = "failed", f"{type(exc).__name__}: {exc}"
        runs.finish(store, rid, "failed", out.reason[:1000])
        return out
    crash_point("run.before_finish")
    runs.finish(store, rid, out.status, out.reason)
    log(
        logger,
        20,
        "run finished",
        run_id=rid,
        status=out.status,
        proposals=out.proposals,
        suppressed=len(out.suppressed),
        candidates=out.candidates,
    )
    return out


def collect_wakes(settings: Settings, paths: Paths, kind: str) -> list[Wake]:
    """The wakes a request would make right now, without a daemon: a manual sweep, a
    calendar refresh (calendar + meeting_soon wakes), a signal poll, an IMAP sync."""
    request = wakes.request(kind)
    if request.collect is None:
        raise ValueError(f"unknown wake {kind!r}; use sweep, calendar or signals")
    return request.collect(settings, paths)

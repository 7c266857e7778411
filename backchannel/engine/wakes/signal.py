"""A `signal` wake: an external item (a feed entry, a file in the signals folder). It is
stored once, linked to the organisations its text mentions, read like speech (its
people, roles and organisations become assertions of a news source), linked to the
organisations other sources talk about, then swept. Asked for (`backchannel wake
signals`), the signal trigger polls its feeds and folder, which makes these wakes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.crashpoints import crash_point
from backchannel.core.payloads import Signal
from backchannel.core.timeutil import parse_naive_utc
from backchannel.core.wake import Wake
from backchannel.engine import judge, runs
from backchannel.engine.wakes.kind import Kind, WakeRequest, nothing_missing
from backchannel.memory import calendar, signals
from backchannel.memory.store import Store

if TYPE_CHECKING:
    from backchannel.engine.run import Run
    from backchannel.triggers.setup import Triggers


def store_signal(store: Store, p: dict[str, Any]) -> dict[str, Any]:
    """Insert the signal once (by id), linked to the organisations its text mentions
    (those memory knew besides the signal's own reading: signal_reading.py). A signal
    stored before (a resumed run) keeps its stored links. `p` is a `signal` wake's
    payload; one that is not a signal raises PayloadError."""
    from backchannel.engine.signal_reading import news_source_id
    from backchannel.triggers import signals as signals_mod

    sig = Signal.from_payload(p)
    published = sig.published_at.isoformat() if sig.published_at else None
    out = {"id": sig.id, "title": sig.title, "summary": sig.summary, "url": sig.url, "published_at": published}
    before = signals.stored(store, sig.id)
    if before is not None:
        return {**out, "org_ids": before["org_ids"], "org_matches": json.loads(before["org_matches"] or "[]")}
    own = news_source_id({**out, "source": sig.source})
    matches = signals_mod.match_org_details(f"{sig.title} {sig.summary}", signals.organisations(store, besides=own))
    org_ids = sorted({m.org_id for m in matches if m.confidence >= signals_mod.MIN_MATCH_CONFIDENCE})
    signals.insert(
        store,
        sig.id,
        source=sig.source,
        title=sig.title or "(untitled)",
        summary=sig.summary,
        url=sig.url,
        published_at=parse_naive_utc(published),
        org_ids=org_ids,
        org_matches_json=json.dumps([m.to_dict() for m in matches]),
    )
    return {**out, "org_ids": org_ids, "org_matches": [m.to_dict() for m in matches]}


def handle(run: Run) -> None:
    from backchannel.engine import signal_reading

    sig = store_signal(run.store, run.wake.payload)
    runs.step(run.store, run.run_id, "signal.stored", sig)
    crash_point("signal.after_store")
    # The item read like speech: its people, roles and organisations become assertions of a
    # news source (once, by content); then the organisations other sources talk about.
    read = signal_reading.read_signal(
        run.store, run.settings, {**run.wake.payload, **sig}, gateway=run.gateway, run_id=run.run_id, now=run.now
    )
    runs.step(run.store, run.run_id, "signal.read", read)
    run.outcome.detail["signal_source"] = read
    crash_point("signal.after_read")
    linked = signal_reading.link_discussed(run.store, sig)
    if linked is not None:
        sig["org_ids"] = linked["org_ids"]
        runs.step(run.store, run.run_id, "signal.linked", linked)
    if not sig["org_ids"]:
        run.outcome.reason = "the signal mentions no organisation known to memory"
        return
    run.checkpoint()
    context: dict[str, Any] = {"wake": "signal", "signal": sig}
    soon = calendar.imminent_attendees(run.store, run.now, max(run.settings.calendar.lead_hours, judge.MEETING_FULL_H))
    if soon:
        # A signal landing while meetings are imminent: the people met soon are the
        # introducers worth asking (the judge rewards exactly that convergence).
        context["via_ids"] = soon
    run.sweep_and_propose(context)


def collect(settings: Settings, paths: Paths) -> list[Wake]:
    """What the signal trigger would enqueue now: one wake per new item."""
    from backchannel.triggers.setup import signals_dir
    from backchannel.triggers.signals import SignalTrigger

    queue: asyncio.Queue = asyncio.Queue()
    sig = SignalTrigger(settings.signals, signals_dir(settings, paths), queue)
    return asyncio.run(sig.poll())


def on_trigger(triggers: Triggers) -> Coroutine[Any, Any, object]:
    return triggers.signals.poll()


def answer(settings: Settings, triggers: Triggers) -> dict[str, Any]:
    return {"enqueued": "signals", "drop_dir": str(triggers.signals.drop_dir), "feeds": len(settings.signals.feeds)}


REQUEST = WakeRequest("signals", nothing_missing, collect=collect, on_trigger=on_trigger, answer=answer)
WAKE = Kind(("signal",), handle, REQUEST)

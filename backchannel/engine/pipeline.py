"""The wake pipeline: what one wake does, as one durable run.

    inbox        -> ingest the file, then move it (processed/ or failed/)
    calendar     -> upsert calendar_events, attendees resolved to entities
    signal       -> store the signal with the organisations it mentions, then sweep
    meeting_soon -> sweep with the meeting as context
    sweep/manual -> sweep

    sweep -> candidates -> gate (dedupe, rejection memory, rate limit, quiet
    hours) -> judge -> gate (score threshold) -> draft -> proposal (pending) -> outbox

Each step is appended to the event log with an idempotency key (runs.py), so a
run resumed after a crash skips what it already did: the sweep's candidates are
read back from its event, a proposal is created once per dedupe key (and the
gate's dedupe check sees it), an ingested transcript is skipped by content hash.

`run_wake_once()` is the entry point for the daemon's consumer and for
in-process callers (the demo, `backchannel wake` without a daemon).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from backchannel.config import Paths, Settings
from backchannel.core.crashpoints import crash_point
from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log
from backchannel.core.payloads import CalendarEvent, CalendarRefresh, Signal
from backchannel.core.timeutil import as_naive_utc, aware_now, parse_naive_utc
from backchannel.engine import calibrate, gate, judge, judge_kinds, runs
from backchannel.engine.runs import WakeRecord
from backchannel.memory import calendar, edges, proposals, signals, sources
from backchannel.memory.assertions import load_evidence_many
from backchannel.memory.calendar import upsert_events
from backchannel.memory.edges import EdgeStopped
from backchannel.memory.store import Store, utcnow

logger = get_logger("pipeline")


class Interrupted(Exception):
    """The daemon is stopping: the run stays `running` and resumes at the next start."""


@dataclass
class RunOutcome:
    run_id: str
    kind: str
    status: str  # done, failed, closed, skipped, interrupted
    reason: str | None = None
    proposals: list[str] = field(default_factory=list)
    suppressed: list[dict[str, Any]] = field(default_factory=list)
    candidates: int = 0
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "status": self.status,
            "reason": self.reason,
            "proposals": self.proposals,
            "suppressed": self.suppressed,
            "candidates": self.candidates,
            "detail": self.detail,
        }


@dataclass
class _Ctx:
    store: Store
    settings: Settings
    paths: Paths
    run_id: str
    wake: WakeRecord
    now: datetime  # naive UTC
    gateway: Any
    cancel: threading.Event | None
    inbox_finish: Callable[..., Any] | None
    outcome: RunOutcome
    abandon: threading.Event | None = None  # a forced exit is under way: record nothing more
    inbox_defer: Callable[..., Any] | None = None  # (path, retry_after_s): leave it, offer it later

    def checkpoint(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Interrupted()


def inbox_dir(settings: Settings, paths: Paths) -> Path:
    from backchannel.triggers.setup import inbox_dir as _inbox_dir

    return _inbox_dir(settings, paths)


def make_gateway(store: Store, settings: Settings, paths: Paths) -> Any:
    """The model gateway when any role has a real model; None when all are offline."""
    m = settings.models
    if all(v == "offline" for v in (m.extract, m.sweep, m.draft)):
        return None
    from backchannel.agent import models

    return models.Gateway(settings, store, paths)


def _erase_configured_withdrawals(ctx: _Ctx) -> None:
    """People newly listed in `[consent] withdrawn` (a reload or a restart brought them):
    erased at the next wake, once, recorded; the daemon rewrites the file after the run."""
    from backchannel.memory import withdrawal

    erased = withdrawal.apply_configured(ctx.store, ctx.settings.consent.withdrawn)
    if erased:
        runs.step(ctx.store, ctx.run_id, "consent.configured_erased", {"people": erased})
        ctx.outcome.detail["rewrite"] = True


def run_wake_once(
    store: Store,
    settings: Settings,
    paths: Paths,
    wake: Any,
    *,
    run_id: str | None = None,
    gateway: Any = None,
    cancel: threading.Event | None = None,
    inbox_finish: Callable[..., Any] | None = None,
    now: datetime | None = None,
    abandon: threading.Event | None = None,
    inbox_defer: Callable[..., Any] | None = None,
) -> RunOutcome:
    """Handle one wake as one run, start to finish. `run_id` resumes an unfinished run.
    `inbox_finish(path, ok, error)` moves an inbox file (default: triggers.inbox.finish);
    `inbox_defer(path, retry_after_s)` leaves one in the inbox while the model budget is spent.
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
    rid = runs.start(store, w, run_id, clock=when, settings=settings)
    out = RunOutcome(rid, w.kind, "done")
    ctx = _Ctx(store, settings, paths, rid, w, when, gateway, cancel, inbox_finish, out, abandon, inbox_defer)
    log(logger, 20, "run started", run_id=rid, wake_kind=w.kind, wake_key=w.key)
    try:
        _erase_configured_withdrawals(ctx)
        HANDLERS.get(w.kind, _unknown)(ctx)
    except Interrupted:
        runs.step(
            store, rid, "run.interrupted", {"at": utcnow().isoformat()}, key=f"{rid}:interrupted:{utcnow().isoformat()}"
        )
        out.status, out.reason = "interrupted", "the daemon stopped; the run resumes at the next start"
        log(logger, 20, "run interrupted", run_id=rid)
        return out
    except EdgeStopped as exc:  # a limit of [edges.*]: the run stops with the reason, as a failure
        _rollback_quietly(store)
        out.status, out.reason = "failed", str(exc)
        runs.step(store, rid, "edge.stopped", {"edge": exc.edge, "reason": exc.reason})
        runs.finish(store, rid, "failed", out.reason[:1000])
        log(logger, 30, "run stopped at an edge", run_id=rid, edge=exc.edge, reason=exc.reason)
        return out
    except Exception as exc:  # noqa: BLE001 - a run's failure is recorded, never raised into the daemon
        logger.exception("run failed", extra={"fields": {"run_id": rid, "wake_kind": w.kind}})
        _rollback_quietly(store)
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


def _rollback_quietly(store: Store) -> None:
    try:
        store.con.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - no transaction was open: nothing to roll back
        pass


def _unknown(ctx: _Ctx) -> None:
    ctx.outcome.status, ctx.outcome.reason = "closed", f"no handler for wake kind {ctx.wake.kind!r}"


# -- inbox ---------------------------------------------------------------------


def _inbox(ctx: _Ctx) -> None:
    path = Path(ctx.wake.payload.get("path", ""))
    if not os.path.lexists(path):  # a link is not followed here: strict ingest refuses it, and it moves out
        ctx.outcome.status, ctx.outcome.reason = "closed", f"{path} is gone (already moved?)"
        return
    from backchannel.extraction import ingest

    try:
        # strict: a link, FIFO or hard link swapped in since the trigger looked is still refused.
        result = ingest.ingest_file(
            ctx.store,
            ctx.settings,
            path,
            gateway=ctx.gateway,
            run_id=ctx.run_id,
            strict=True,
            max_bytes=int(ctx.settings.inbox.max_file_mb * 1_000_000),
        )
        status, error, detail = result.status, result.error, result.to_dict()
    except Exception as exc:  # noqa: BLE001 - a bug in one file's ingest must not wedge the inbox
        _rollback_quietly(ctx.store)
        status, error, detail = "failed", f"internal error: {type(exc).__name__}: {exc}", {"path": str(path)}
    runs.step(ctx.store, ctx.run_id, "ingest.done", {**detail, "status": status})
    ctx.outcome.detail["ingest"] = {**detail, "status": status}
    crash_point("inbox.after_ingest")
    if status == "deferred":
        # The daily model budget is spent: the file stays in the inbox and is offered
        # again when the budget resets (or on SIGHUP, after a budget change).
        from backchannel.agent.budget import next_reset

        retry_after = max(60.0, (next_reset(ctx.now) - ctx.now).total_seconds())
        if ctx.inbox_defer is not None:
            ctx.inbox_defer(path, retry_after)
        runs.step(ctx.store, ctx.run_id, "inbox.deferred", {"path": str(path), "retry_after_s": round(retry_after)})
        ctx.outcome.status, ctx.outcome.reason = "budget_stopped", error
        return
    ok = status in ("ingested", "skipped")
    if ctx.inbox_finish is not None:
        dest = ctx.inbox_finish(path, ok, error)
    else:
        from backchannel.triggers import inbox as triggers_inbox

        dest = triggers_inbox.finish(path, ok, error, inbox_dir(ctx.settings, ctx.paths))
    crash_point("inbox.after_move")
    if status == "ingested" and detail.get("source_id"):
        # `show` then says where the transcript is now (processed/), not where it was dropped.
        sources.set_path(ctx.store, detail["source_id"], str(dest), str(path))
    runs.step(ctx.store, ctx.run_id, "inbox.moved", {"to": str(dest), "ok": ok})
    if status == "ingested":
        # What this meeting taught may make an earlier signal or an upcoming meeting relevant.
        from backchannel.engine.reevaluate import after_ingest

        after_ingest(ctx, detail.get("source_id"))
    if not ok:
        # The file failed (it is in failed/ with its .error.txt); say so in status and trace.
        ctx.outcome.status, ctx.outcome.reason = "failed", error


# -- calendar --------------------------------------------------------------------


def _calendar(ctx: _Ctx) -> None:
    upcoming = CalendarRefresh.from_payload(ctx.wake.payload)
    _withdraw_from_invites(ctx, upcoming)
    rows = upsert_events(ctx.store, [e.to_dict() for e in upcoming.events], upcoming.calendar)
    resolved = sum(1 for r in rows if r["attendee_ids"])
    runs.step(
        ctx.store,
        ctx.run_id,
        "calendar.upserted",
        {"events": len(rows), "with_known_attendees": resolved, "errors": upcoming.errors},
    )
    ctx.outcome.detail["calendar"] = {"events": len(rows), "with_known_attendees": resolved}


def _withdraw_from_invites(ctx: _Ctx, upcoming: CalendarRefresh) -> None:
    """Attendees an invite marks as opted out (triggers/calendar.py CONSENT_PROPERTY) are
    withdrawn as `consent withdraw` does, each once; the daemon rewrites the file after."""
    from backchannel.memory import withdrawal

    people = 0
    for ev in upcoming.events:
        for address in ev.withdrawn:
            name, email = calendar.attendee_name_email(address)
            names = [n for n in (name, email, address) if n]
            if withdrawal.withdraw_and_erase(ctx.store, names, via="calendar") is not None:
                people += 1
    if people:
        runs.step(ctx.store, ctx.run_id, "consent.calendar_withdrawn", {"people": people})
        ctx.outcome.detail["rewrite"] = True
        ctx.outcome.detail["consent_withdrawn"] = people


def _meeting_soon(ctx: _Ctx) -> None:
    event = CalendarEvent.from_payload(ctx.wake.payload)
    meeting = event.to_dict()
    starts = as_naive_utc(event.starts_at)
    stored = calendar.attendee_ids_of(ctx.store, event.uid, starts) if event.uid else None
    if stored:
        ids = stored
    else:
        upserted = upsert_events(ctx.store, [meeting])
        ids = upserted[0]["attendee_ids"] if upserted else []
    meeting["attendee_ids"] = ids
    meeting["starts_at"] = starts.isoformat()
    runs.step(ctx.store, ctx.run_id, "meeting.resolved", {"uid": event.uid, "attendee_ids": ids})
    if not ids:
        ctx.outcome.reason = "no attendee of this meeting is known to memory"
        return
    _sweep_and_propose(ctx, {"wake": "meeting_soon", "event": meeting})


# -- signals ---------------------------------------------------------------------


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


def _signal(ctx: _Ctx) -> None:
    from backchannel.engine import signal_reading

    sig = store_signal(ctx.store, ctx.wake.payload)
    runs.step(ctx.store, ctx.run_id, "signal.stored", sig)
    crash_point("signal.after_store")
    # The item read like speech: its people, roles and organisations become assertions of a
    # news source (once, by content); then the organisations other sources talk about.
    read = signal_reading.read_signal(
        ctx.store, ctx.settings, {**ctx.wake.payload, **sig}, gateway=ctx.gateway, run_id=ctx.run_id, now=ctx.now
    )
    runs.step(ctx.store, ctx.run_id, "signal.read", read)
    ctx.outcome.detail["signal_source"] = read
    crash_point("signal.after_read")
    linked = signal_reading.link_discussed(ctx.store, sig)
    if linked is not None:
        sig["org_ids"] = linked["org_ids"]
        runs.step(ctx.store, ctx.run_id, "signal.linked", linked)
    if not sig["org_ids"]:
        ctx.outcome.reason = "the signal mentions no organisation known to memory"
        return
    ctx.checkpoint()
    context: dict[str, Any] = {"wake": "signal", "signal": sig}
    soon = calendar.imminent_attendees(ctx.store, ctx.now, max(ctx.settings.calendar.lead_hours, judge.MEETING_FULL_H))
    if soon:
        # A signal landing while meetings are imminent: the people met soon are the
        # introducers worth asking (the judge rewards exactly that convergence).
        context["via_ids"] = soon
    _sweep_and_propose(ctx, context)


def _sweep(ctx: _Ctx) -> None:
    _sweep_and_propose(ctx, {**ctx.wake.payload, "wake": "sweep", "trigger": ctx.wake.kind})


# -- sweep, gate, judge, draft, propose -----------------------------------------


def _graph_api(store: Store, settings: Settings) -> Any:
    from backchannel.graph import api as api_mod

    return api_mod.GraphAPI(store, settings, scopes=settings.scope.sweep)


def run_sweep(ctx: _Ctx, context: dict[str, Any], tag: str | None = None) -> list[Any]:
    """The sweep step, or its recorded result when this run already swept (`tag` tells
    apart several sweeps of one run: those an ingest's re-evaluation starts)."""
    from backchannel.graph import types

    name = f"sweep.done:{tag}" if tag else "sweep.done"
    done = runs.done_step(ctx.store, ctx.run_id, name)
    if done is not None:
        return [types.Candidate.from_dict(c) for c in done.get("candidates", [])]
    from backchannel.agent import sweeper
    from backchannel.graph.edge_guard import GuardedAPI

    api = GuardedAPI(_graph_api(ctx.store, ctx.settings), ctx.settings.edges.program)  # the program edge
    result = sweeper.sweep(
        context, api=api, settings=ctx.settings, paths=ctx.paths, gateway=ctx.gateway, run_id=ctx.run_id
    )
    if ctx.abandon is not None and ctx.abandon.is_set():
        raise Interrupted()  # the daemon killed the sandbox to exit: a cut-short sweep is no result
    stats = dict(getattr(result, "sandbox_stats", None) or {})
    cands = list(result.candidates)
    for c in cands:
        if c.kind == "introduction" and c.evidence_ids:
            c.evidence_ids = judge_kinds.strongest_links(ctx.store, c.evidence_ids)
    promises = [c for c in cands if c.kind == "commitment"]
    for c, ev in zip(promises, load_evidence_many(ctx.store, promises)):
        c.entities = judge_kinds.commitment_entities(ctx.store, c.entities, ev)  # the maker and the recipient
    touched = int(stats.get("assertions_touched") or stats.get("rows") or 0)
    with ctx.store.transaction():
        runs.add_counts(ctx.store, ctx.run_id, touched=touched)
        runs.step(
            ctx.store,
            ctx.run_id,
            "sweep.done",
            key=f"{ctx.run_id}:{name}",
            data={
                "context": context,
                "skill": getattr(result, "skill", None),
                "code": getattr(result, "code", None),
                "attempts": getattr(result, "attempts", None),
                "sandbox_stats": stats,
                "errors": list(getattr(result, "errors", None) or []),
                "candidates": [c.to_dict() for c in cands],
            },
        )
        seq = ctx.store.scalar("SELECT seq FROM events WHERE key = ?", [f"{ctx.run_id}:{name}"])
        api.record(
            ctx.store,
            ctx.run_id,
            getattr(result, "skill", None),
            stats,
            [i for c in cands for i in (c.evidence_ids or [])],
            seq,
        )
    crash_point("sweep.after_commit")
    if api.stopped:
        raise EdgeStopped("program", api.stopped)
    return cands


def _draft(
    ctx: _Ctx, candidate: Any, evidence: list[dict[str, Any]], context: dict[str, Any]
) -> tuple[dict[str, Any], int]:
    """The drafter role on one candidate, with the evidence this run loaded:
    (title/body/action, evidence excerpts that reached a model)."""
    from backchannel.agent import drafter

    d = drafter.draft(
        candidate,
        evidence=evidence,
        context=context,
        store=ctx.store,
        settings=ctx.settings,
        gateway=ctx.gateway,
        run_id=ctx.run_id,
    )
    errors = list(getattr(d, "errors", None) or [])
    if errors:
        runs.step(
            ctx.store,
            ctx.run_id,
            "draft.notes",
            {"errors": errors},
            key=f"{ctx.run_id}:draftnotes:" + gate.dedupe_key(candidate.kind, candidate.entities),
        )
    sent = len(d.candidate.evidence)  # passed to the drafter (a template offline, else the draft model)
    return {"title": d.title, "body": d.body, "action": d.action, "drafted_by": d.drafted_by}, sent


def _action_hash(action: Any) -> str | None:
    """The hash an approval binds to (delivery.approval's canonical form)."""
    if not action:
        return None
    from backchannel.delivery.approval import action_hash

    return action_hash(action)


def create_proposal(
    ctx: _Ctx, candidate: Any, dkey: str, evidence: list[dict[str, Any]], draft: dict[str, Any], score: float
) -> str | None:
    """Insert the pending proposal, its event and its outbox rows in one transaction.
    Returns None when this run already created one for the dedupe key (a resumption)."""
    store = ctx.store
    ev_json = [
        {
            k: e.get(k)
            for k in ("assertion_id", "quote", "speaker", "said_at", "source_id", "source_title", "date_origin")
        }
        for e in evidence
    ]
    action = draft.get("action")
    from backchannel.memory import scopes

    # A channel never carries evidence from a scope it may not see ([scope] channels).
    channels, withheld = scopes.channels_for(
        ctx.settings.scope,
        list(ctx.settings.delivery.channels),
        scopes.scopes_of(store, [e.get("source_id") for e in evidence]),
    )
    with store.transaction():
        if store.scalar("SELECT 1 FROM events WHERE key = ?", [f"proposal:{ctx.run_id}:{dkey}"]):
            return None
        pid = proposals.next_id(store)
        proposals.insert_pending(
            store,
            pid,
            run_id=ctx.run_id,
            dedupe_key=dkey,
            kind=candidate.kind,
            entity_ids=sorted({int(e) for e in candidate.entities}),
            title=str(draft.get("title") or candidate.kind),
            body=str(draft.get("body") or candidate.why),
            score=float(score),
            why=candidate.why,
            evidence_json=json.dumps(ev_json, default=str),
            action_json=json.dumps(action, default=str) if action else None,
            action_hash=_action_hash(action),
            now=utcnow(),
        )
        store.append_event(
            "proposal.created",
            {
                "proposal_id": pid,
                "dedupe_key": dkey,
                "score": score,
                "channels": channels,
                "withheld_by_scope": withheld,
            },
            run_id=ctx.run_id,
            key=f"proposal:{ctx.run_id}:{dkey}",
        )
        if channels:
            from backchannel.delivery import outbox

            outbox.enqueue(store, pid, channels, settings=ctx.settings)
    crash_point("proposal.after_commit")
    return pid


def _sweep_and_propose(ctx: _Ctx, context: dict[str, Any], tag: str | None = None) -> None:
    ctx.checkpoint()
    candidates = run_sweep(ctx, context, tag)
    ctx.outcome.candidates += len(candidates)
    ordered = sorted(candidates, key=lambda c: -float(c.score))
    ranked = list(zip(ordered, load_evidence_many(ctx.store, ordered)))
    texts = [" ".join([c.why or ""] + [str(e.get("quote") or "") for e in ev]) for c, ev in ranked]
    gate.prefetch_rejections(ctx.store, [(c.kind, t) for (c, _), t in zip(ranked, texts)], ctx.now)
    held = runs.HeldEvents(ctx.store)  # the gate's and judge's records: one commit, not one per candidate
    try:
        excerpts_sent = _gate_judge_propose(ctx, ranked, texts, context, held)
        held.flush()
    except BaseException:
        if ctx.abandon is None or not ctx.abandon.is_set():  # a forced exit records nothing more
            try:
                held.flush()  # what was decided before the failure still shows in `trace`
            except Exception:  # noqa: BLE001 - the original failure is the one to report
                logger.warning("could not write the held gate records", extra={"fields": {"run_id": ctx.run_id}})
        raise
    if excerpts_sent:
        runs.add_counts(ctx.store, ctx.run_id, excerpts=excerpts_sent)


def _gate_judge_propose(
    ctx: _Ctx,
    ranked: list[tuple[Any, list[dict[str, Any]]]],
    texts: list[str],
    context: dict[str, Any],
    held: runs.HeldEvents,
) -> int:
    """Each candidate through gate, judge, gate, draft and proposal; returns the
    evidence excerpts that reached a model. Gate and judge records go to `held`."""
    # Nothing below writes assertions or entities: the judge's reads of the in-memory graph
    # index need not re-check its signature each time. Nor dismissals or suppressions: the
    # rejection memory's caches are checked once, not at each candidate's check.
    from backchannel.graph.index import IndexCache
    from backchannel.memory import rejections

    with IndexCache.unchanged_during(ctx.store), rejections.unchanged_during(ctx.store):
        return _each_candidate(ctx, ranked, texts, context, held)


def _each_candidate(
    ctx: _Ctx,
    ranked: list[tuple[Any, list[dict[str, Any]]]],
    texts: list[str],
    context: dict[str, Any],
    held: runs.HeldEvents,
) -> int:
    excerpts_sent = 0
    made = {
        str(k)
        for (k,) in ctx.store.con.execute(  # proposals this run made before a crash
            "SELECT key FROM events WHERE run_id = ? AND kind = 'proposal.created'", [ctx.run_id]
        ).fetchall()
    }
    weights_by_kind: dict[str, Any] = {}  # feedback does not change during a wake: fitted once per kind
    # What the gate and the judge read from the store, read once for the whole wake.
    facts = judge.facts_for(
        ctx.store,
        ctx.now,
        [(c.kind, sorted({int(e) for e in c.entities}), ev) for c, ev in ranked],
        ctx.settings.scope.sweep,
    )
    reads = gate.WakeReads(ctx.store, ctx.settings, ctx.now, [gate.dedupe_key(c.kind, c.entities) for c, _ in ranked])

    def weights_of(kind: str) -> Any:
        if kind not in weights_by_kind:
            weights_by_kind[kind] = calibrate.weights(ctx.store, kind)
        return weights_by_kind[kind]

    for (cand, evidence), text in zip(ranked, texts):
        ctx.checkpoint()
        ids = sorted({int(e) for e in cand.entities})
        dkey = gate.dedupe_key(cand.kind, ids)
        if f"proposal:{ctx.run_id}:{dkey}" in made:
            pid = proposals.id_for(ctx.store, ctx.run_id, dkey)
            if pid:
                ctx.outcome.proposals.append(pid)
            continue  # created before a crash; resumed runs do not make it twice
        d = gate.before_judge(ctx.store, ctx.settings, cand.kind, ids, text, ctx.now, reads)
        gate.record(held, ctx.run_id, dkey, d, "before_judge")
        if not d.passed:
            ctx.outcome.suppressed.append({"dedupe_key": dkey, **d.as_dict()})
            log(logger, 20, "candidate suppressed", run_id=ctx.run_id, dedupe_key=dkey, check=d.check, reason=d.reason)
            continue
        # The judge's and the drafter's model edges are written after this row (offline: none).
        mark = edges.last_id(ctx.store) if ctx.gateway is not None else None
        try:
            j = judge.offline(
                ctx.store,
                entity_ids=ids,
                evidence=evidence,
                now=ctx.now,
                horizon_days=ctx.settings.calendar.horizon_days,
                context=context,
                kind=cand.kind,
                weights=weights_of(cand.kind),
                facts=facts,
                path=list(cand.path or []),
            )
            if j.veto is None:  # the kind's agent decides: its model, else the offline judgement above
                by_model = ctx.gateway is not None and ctx.gateway.available("judge")
                if by_model:
                    excerpts_sent += min(len(evidence), judge.MAX_EXCERPTS)
                j = judge.decide(
                    j,
                    gateway=ctx.gateway if by_model else None,
                    evidence=evidence,
                    kind=cand.kind,
                    run_id=ctx.run_id,
                    candidate=cand,
                    names=facts.names(ids) if by_model else None,
                )
        except Exception as exc:  # noqa: BLE001 - when the judge fails, the default is silence
            reason = str(exc) if isinstance(exc, judge.JudgeError) else f"judge error: {type(exc).__name__}: {exc}"
            runs.step(
                held,
                ctx.run_id,
                "judge.failed",
                {"dedupe_key": dkey, "reason": reason},
                key=f"{ctx.run_id}:judge:{dkey}",
            )
            ctx.outcome.suppressed.append({"dedupe_key": dkey, "passed": False, "check": "judge", "reason": reason})
            log(logger, 30, "judge failed; staying silent", run_id=ctx.run_id, dedupe_key=dkey, reason=reason)
            _stop_at_edge(ctx, mark, dkey)
            continue
        if mark is not None:  # the judge's model edge, if it crossed one, is this candidate's
            edges.tag(ctx.store, ctx.run_id, mark, dedupe_key=dkey)
        d = gate.after_judge(ctx.settings, j.score, j.veto)
        runs.step(
            held, ctx.run_id, "judge.scored", {"dedupe_key": dkey, **j.as_dict()}, key=f"{ctx.run_id}:judge:{dkey}"
        )
        gate.record(held, ctx.run_id, dkey, d, "after_judge", {"score": round(j.score, 4)})
        if not d.passed:
            ctx.outcome.suppressed.append({"dedupe_key": dkey, **d.as_dict()})
            log(logger, 20, "candidate suppressed", run_id=ctx.run_id, dedupe_key=dkey, check=d.check, reason=d.reason)
            continue
        ctx.checkpoint()
        held.flush()  # before the draft (a model call, maybe long): the log keeps its order
        try:
            drafted, sent = _draft(ctx, cand, evidence, context)
        except Exception as exc:  # noqa: BLE001 - a failed draft is silence too
            reason = f"draft failed: {type(exc).__name__}: {exc}"
            runs.step(
                held,
                ctx.run_id,
                "draft.failed",
                {"dedupe_key": dkey, "reason": reason},
                key=f"{ctx.run_id}:draft:{dkey}",
            )
            ctx.outcome.suppressed.append({"dedupe_key": dkey, "passed": False, "check": "draft", "reason": reason})
            log(logger, 30, "draft failed; staying silent", run_id=ctx.run_id, dedupe_key=dkey, reason=reason)
            _stop_at_edge(ctx, mark, dkey)
            continue
        excerpts_sent += sent
        reasons = judge.why_now(j, evidence, ctx.now, ctx.settings.owner.timezone)
        if reasons:
            drafted["body"] = f"{drafted['body']}\n\nWhy now:\n" + "\n".join(f"- {r}" for r in reasons)
        crash_point("proposal.before_commit")
        pid = create_proposal(ctx, cand, dkey, evidence, drafted, j.score)
        reads.proposal_made()  # the next candidate's dedupe and rate limit count this one
        if mark is not None:
            edges.tag(ctx.store, ctx.run_id, mark, dedupe_key=dkey, proposal_id=pid)
        if pid:
            ctx.outcome.proposals.append(pid)
            log(
                logger,
                20,
                "proposal created",
                run_id=ctx.run_id,
                proposal_id=pid,
                dedupe_key=dkey,
                score=round(j.score, 3),
            )
    return excerpts_sent


def _stop_at_edge(ctx: _Ctx, mark: int | None, dkey: str) -> None:
    """After a candidate went silent: its model edges (rows after `mark`) are marked as its
    own, and when one of them was stopped by a limit the run stops there, with that reason
    (a judge or drafter that swallowed the stop does not turn it into a quieter path)."""
    if mark is None:
        return
    edges.tag(ctx.store, ctx.run_id, mark, dedupe_key=dkey)
    row = edges.stopped(ctx.store, ctx.run_id, after=mark)
    if row:
        raise EdgeStopped(str(row["edge"]), str(row["reason"]))


def _mail(ctx: _Ctx) -> None:
    from backchannel.engine.mail_sync import handle_wake

    handle_wake(ctx)  # IMAP sync (issue 14)


def _retention(ctx: _Ctx) -> None:
    """The retention sweep (engine/retention_run.py); the caller rewrites the file after."""
    from backchannel.engine import retention_run
    from backchannel.memory.erasure import pending_marker

    done = retention_run.sweep(ctx.store, ctx.settings, ctx.run_id, ctx.now)
    ctx.outcome.detail.update(retention=done, rewrite=pending_marker(ctx.store.path).exists())


HANDLERS: dict[str, Callable[[_Ctx], None]] = {
    "retention": _retention,
    "inbox": _inbox,
    "calendar": _calendar,
    "meeting_soon": _meeting_soon,
    "signal": _signal,
    "sweep": _sweep,
    "manual": _sweep,
    "mail": _mail,
}


def collect_wakes(settings: Settings, paths: Paths, kind: str) -> list[Any]:
    """The wakes a trigger would enqueue right now, without a daemon: a manual
    sweep, a calendar refresh (calendar + meeting_soon wakes), or a signal poll."""
    import asyncio

    from backchannel.core.wake import Wake

    now = aware_now()
    if kind == "mail":  # an IMAP sync (issue 14)
        return [Wake("mail", key=f"mail:{now.isoformat()}", payload={"reason": "manual"}, created_at=now)]
    if kind == "sweep":
        return [Wake("manual", key=f"manual:{now.isoformat()}", payload={"reason": "manual"}, created_at=now)]
    queue: asyncio.Queue = asyncio.Queue()
    if kind == "calendar":
        from backchannel.triggers.calendar import CalendarTrigger

        trig = CalendarTrigger(settings.calendar, queue, timezone=settings.owner.timezone)
        return asyncio.run(trig.refresh(force=True))
    if kind == "signals":
        from backchannel.triggers.setup import signals_dir
        from backchannel.triggers.signals import SignalTrigger

        sig = SignalTrigger(settings.signals, signals_dir(settings, paths), queue)
        return asyncio.run(sig.poll())
    raise ValueError(f"unknown wake {kind!r}; use sweep, calendar or signals")

"""Operations about the daemon and its proposals: status, proposals, proposal
(show), trace, wake. They run in the daemon (through the API) or in-process
when no daemon runs; `env.daemon` tells which."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from backchannel.core.timeutil import db_now
from backchannel.memory import edges
from backchannel.memory import proposals as proposals_table
from backchannel.ops import OpEnv, OpError, op

if TYPE_CHECKING:
    from backchannel.memory.store import Store

PROPOSAL_STATUSES = ("pending", "delivered", "accepted", "dismissed", "snoozed", "approved", "sent", "expired")


def _has_table(store: Store, name: str) -> bool:
    return bool(store.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]))


def spend_today(env: OpEnv) -> dict[str, Any]:
    """Model calls, tokens and cost since midnight UTC, the day the per-day budget counts."""
    if not _has_table(env.store, "model_calls"):
        return {"calls": 0, "tokens": 0, "cost_usd": 0.0}
    from backchannel.agent import budget

    s = budget.spent(env.store, since=budget.day_start())
    return {
        "calls": s.calls,
        "tokens": s.tokens,
        "cost_usd": round(s.cost_usd, 6),
        "budget_usd": env.settings.models.budget.per_day_cost_usd,
    }


@op(read=True)
def status(env: OpEnv) -> dict[str, Any]:
    """Uptime, recent wakes, queue length, next scheduled wakes, today's spend."""
    from backchannel.engine import runs

    out: dict[str, Any] = {"daemon": None}
    if env.daemon is not None:
        out["daemon"] = env.daemon.info()
    # Wakes (what the daemon did on its own) apart from the user's `ask` runs.
    recent = runs.recent(env.store, 10, asks=False)
    asked = runs.recent(env.store, 5, asks=True)
    for r in recent + asked:
        for k in ("started_at", "finished_at"):
            r[k] = r[k].isoformat() if r[k] else None
    out["recent_wakes"] = recent
    out["recent_asks"] = asked
    out["running_runs"] = int(env.store.scalar("SELECT count(*) FROM runs WHERE status = 'running'") or 0)
    out["proposals"] = proposals_table.counts_by_status(env.store)
    out["spend_today"] = spend_today(env)
    out["upcoming_meetings"] = _upcoming_meetings(env)
    if _has_table(env.store, "outbox"):  # queued and failing deliveries stay visible here
        from backchannel.delivery.outbox import summary

        out["deliveries"] = summary(env.store, env.settings)
    if _has_table(env.store, "mail_sync_state"):  # email: last sync per folder, and errors
        from backchannel.engine.mail_sync import status as mail_status

        out["mail"] = mail_status(env.store, env.settings)
    from backchannel.triggers.checks import problems

    out["config_problems"] = problems(env.settings)
    # One place for scripts to read, daemon or not (the daemon's own copy stays in `daemon`).
    if env.daemon is not None:
        out["next_wakes"] = list(out["daemon"].get("next_wakes") or [])
    else:
        out["next_wakes"] = [] if out["config_problems"] else _planned_wakes(env)
    return out


def _upcoming_meetings(env: OpEnv, limit: int = 5) -> list[dict[str, Any]]:
    """The next meetings from the calendars, and when each wakes the daemon (lead_hours before)."""
    lead = timedelta(hours=env.settings.calendar.lead_hours)
    now = db_now()
    rows = env.store.query(
        """SELECT summary, starts_at, len(attendee_ids) AS known_attendees FROM calendar_events
           WHERE starts_at >= ? ORDER BY starts_at LIMIT ?""",
        [now, int(limit)],
    )
    return [
        {
            "summary": r["summary"],
            "starts_at": r["starts_at"].isoformat(),
            "known_attendees": int(r["known_attendees"]),
            "wakes_at": (r["starts_at"] - lead).isoformat() if r["known_attendees"] else None,
        }
        for r in rows
    ]


def _planned_wakes(env: OpEnv) -> list[dict[str, Any]]:
    """Next scheduled sweeps from the config (no daemon: what it would do)."""
    from backchannel.triggers.schedule import build_triggers  # APScheduler: only here

    s = env.settings
    tz = ZoneInfo(s.schedule.timezone or s.owner.timezone)
    now = datetime.now(tz)
    out = []
    for _, trig in build_triggers(s.schedule, tz):
        t = trig.get_next_fire_time(None, now)
        if t is not None:
            out.append({"kind": "sweep", "at": t.astimezone(UTC).isoformat()})
    return sorted(out, key=lambda w: w["at"])


def _proposal_row(r: dict[str, Any], full: bool = False) -> dict[str, Any]:
    out = {k: r[k] for k in ("id", "kind", "status", "title", "score", "run_id", "created_at") if k in r}
    out["score"] = round(float(out.get("score") or 0), 4)
    out["created_at"] = r["created_at"].isoformat() if r.get("created_at") else None
    out["entity_ids"] = [int(e) for e in (r.get("entity_ids") or [])]
    if full:
        out["body"] = r["body"]
        out["why"] = r["why"]
        out["dedupe_key"] = r["dedupe_key"]
        out["evidence"] = json.loads(r["evidence"]) if r.get("evidence") else []
        out["action"] = json.loads(r["action"]) if r.get("action") else None
        out["action_hash"] = r.get("action_hash")
        out["updated_at"] = r["updated_at"].isoformat() if r.get("updated_at") else None
    return out


@op(read=True)
def proposals(env: OpEnv, status: str | None = None, limit: int = 50, full: bool = False) -> list[dict[str, Any]]:
    """Proposals, newest first; `status` filters (pending, delivered, ...); `full` adds
    each one's why, body and evidence (the web app's list shows the why-now)."""
    if status is not None and status not in PROPOSAL_STATUSES:
        raise OpError(f"unknown status {status!r}; use one of {', '.join(PROPOSAL_STATUSES)}")
    return [_proposal_row(r, full=bool(full)) for r in proposals_table.listing(env.store, status, limit)]


def _normalise_id(proposal_id: str) -> str:
    pid = str(proposal_id).strip()
    return f"P-{pid}" if pid.isdigit() else pid.upper()


def _get(env: OpEnv, proposal_id: str) -> dict[str, Any]:
    pid = _normalise_id(proposal_id)
    row = proposals_table.row(env.store, pid)
    if row is None:
        raise OpError(f"no proposal {pid}")
    return row


@op(read=True)
def proposal(env: OpEnv, id: str) -> dict[str, Any]:  # noqa: A002 - the user's word for it
    """One proposal in full: body, evidence, action, entity names."""
    r = _get(env, id)
    out = _proposal_row(r, full=True)
    ids = out["entity_ids"] or [-1]
    out["entities"] = env.store.query(
        "SELECT id, kind, name FROM entities WHERE list_contains(?, id) ORDER BY id", [ids]
    )
    out["evidence_trust"] = _evidence_trust(env.store, r)
    return out


def _model_calls(store: Store, run_id: str) -> list[dict[str, Any]]:
    if not _has_table(store, "model_calls"):
        return []
    return store.query(
        """SELECT role, model, attempt, repair, prompt_tokens, completion_tokens, cost_usd, latency_ms, outcome,
                  error, created_at FROM model_calls WHERE run_id = ? ORDER BY id""",
        [run_id],
    )


def _spend(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "calls": len(calls),
        "tokens": sum((c["prompt_tokens"] or 0) + (c["completion_tokens"] or 0) for c in calls),
        "cost_usd": round(sum(c["cost_usd"] or 0 for c in calls), 6),
    }


def _ingest_step(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """An inbox run's file: what ingest did with it (a duplicate names the source it
    duplicates) and where the file went; None for other runs."""
    done = next((e["data"] for e in events if e["kind"] == "ingest.done"), None)
    if done is None:
        return None
    moved: dict[str, Any] = next((e["data"] for e in events if e["kind"] == "inbox.moved"), {})
    out = {
        k: done.get(k)
        for k in (
            "path",
            "status",
            "source_id",
            "assertions",
            "error",
            "title",
            "meeting_date",
            "date_origin",
            "redated",
        )
    }
    out["duplicate_of"] = done.get("source_id") if done.get("status") == "skipped" else None
    out["moved_to"] = moved.get("to")
    return out


def run_trace(env: OpEnv, run_id: str) -> dict[str, Any]:
    """What one run did, proposal or not: its trigger, sweep, and for every
    candidate the gate's decisions and the judge's score (why it stayed silent)."""
    store = env.store
    rows = store.query("SELECT * FROM runs WHERE id = ?", [run_id])
    if not rows:
        raise OpError(f"no run {run_id}")
    run_d = rows[0]
    run_d["wake_payload"] = json.loads(run_d["wake_payload"]) if run_d.get("wake_payload") else {}
    events = store.events(run_id=run_id, limit=10_000)
    sweep: dict[str, Any] = next((e["data"] for e in events if e["kind"] == "sweep.done"), {})
    from backchannel.engine.gate import dedupe_key

    by_key: dict[str, dict[str, Any]] = {}
    ungated = (
        "answered, not gated: `ask` shows answers and proposes nothing"
        if run_d["wake_kind"] == "ask"
        else "not gated (run unfinished?)"
    )
    # An ingest's re-evaluation may sweep several times in one run (engine/reevaluate.py).
    swept = [c for e in events if e["kind"] == "sweep.done" for c in e["data"].get("candidates", [])]
    for c in swept:
        k = dedupe_key(c.get("kind") or "?", c.get("entities") or [])
        by_key[k] = {
            "dedupe_key": k,
            "kind": c.get("kind"),
            "why": c.get("why"),
            "score": c.get("score"),
            "gate": [],
            "judge": None,
            "proposal": None,
            "outcome": ungated,
        }
    for e in events:
        d, k = e["data"], e["data"].get("dedupe_key")
        if k is None:
            continue
        c = by_key.setdefault(k, {"dedupe_key": k, "gate": [], "judge": None, "proposal": None})
        if e["kind"].startswith("gate."):
            c["gate"].append(
                {"stage": d.get("stage"), "passed": d.get("passed"), "check": d.get("check"), "reason": d.get("reason")}
            )
            if not d.get("passed"):
                c["outcome"] = f"suppressed by {d.get('check')}: {d.get('reason')}"
        elif e["kind"] == "judge.scored":
            c["judge"] = {
                "score": d.get("score"),
                "signals": d.get("signals"),
                "model": d.get("model"),
                "reasons": d.get("reasons"),
                "veto": d.get("veto"),
            }
        elif e["kind"] in ("judge.failed", "draft.failed"):
            c["outcome"] = f"silent: {d.get('reason')}"
        elif e["kind"] == "proposal.created":
            c["proposal"], c["outcome"] = d.get("proposal_id"), f"proposal {d.get('proposal_id')}"
    calls = _model_calls(store, run_id)
    from backchannel.ops.trust_view import candidates_evidence_trust

    return {
        "evidence_trust": candidates_evidence_trust(store, sweep.get("candidates", [])),
        "run": {k: run_d.get(k) for k in ("id", "status", "reason", "started_at", "finished_at")},
        "trigger": {"kind": run_d.get("wake_kind"), "key": run_d.get("wake_key"), "payload": run_d.get("wake_payload")},
        "ingest": _ingest_step(events),
        "sweep": {
            "skill": sweep.get("skill"),
            "attempts": sweep.get("attempts"),
            "errors": sweep.get("errors"),
            "candidates": len(sweep.get("candidates", [])),
        }
        if sweep
        else None,
        "sandbox": {
            "stats": sweep.get("sandbox_stats") or {},
            "assertions_touched": run_d.get("assertions_touched", 0),
            "excerpts_sent": run_d.get("excerpts_sent", 0),
        },
        "candidates": list(by_key.values()),
        "model_calls": calls,
        "spend": _spend(calls),
        "edges": edges.for_run(store, run_id),
        "events": [{"seq": e["seq"], "at": e["occurred_at"], "kind": e["kind"]} for e in events],
    }


@op(read=True)
def trace(env: OpEnv, id: str) -> dict[str, Any]:  # noqa: A002
    """Why a proposal exists: trigger, skill or code, sandbox stats, model calls,
    gate decisions and delivery, rebuilt from runs, events, model_calls, outbox.
    Given a run id (R...; `backchannel status` lists them), what that run did
    and why each of its candidates was or was not proposed."""
    ref = str(id).strip()
    if ref[:1] in ("R", "r") and not ref[1:].isdigit():
        return run_trace(env, "R" + ref[1:].lower())
    p = _get(env, id)
    store = env.store
    run_id = p["run_id"]
    run = store.query("SELECT * FROM runs WHERE id = ?", [run_id])
    run_d = run[0] if run else {}
    if run_d:
        run_d["wake_payload"] = json.loads(run_d["wake_payload"]) if run_d.get("wake_payload") else {}
    events = store.events(run_id=run_id, limit=10_000)
    sweep: dict[str, Any] = next((e["data"] for e in events if e["kind"] == "sweep.done"), {})
    dkey = p["dedupe_key"]
    gate_events = [
        {"kind": e["kind"], "at": e["occurred_at"], **e["data"]}
        for e in events
        if e["kind"].startswith("gate.") and e["data"].get("dedupe_key") == dkey
    ]
    other_gate = [
        {"kind": e["kind"], **e["data"]}
        for e in events
        if e["kind"] == "gate.suppressed" and e["data"].get("dedupe_key") != dkey
    ]
    judgement = next(
        (e["data"] for e in events if e["kind"] == "judge.scored" and e["data"].get("dedupe_key") == dkey), None
    )
    calls = _model_calls(store, run_id)
    delivery: list[dict[str, Any]] = []
    if _has_table(store, "outbox"):
        delivery = store.query(
            """SELECT channel, status, attempts, last_error, message_id, created_at, sent_at FROM outbox
               WHERE proposal_id = ? ORDER BY id""",
            [p["id"]],
        )
    feedback: list[dict[str, Any]] = []
    if _has_table(store, "feedback"):
        feedback = store.query(
            "SELECT verdict, reason, scope, via, created_at FROM feedback WHERE proposal_id = ? ORDER BY id", [p["id"]]
        )
    candidate = next(
        (
            c
            for c in sweep.get("candidates", [])
            if sorted({int(e) for e in c.get("entities", [])}) == [int(e) for e in (p["entity_ids"] or [])]
            and c.get("kind") == p["kind"]
        ),
        None,
    )
    return {
        "proposal": _proposal_row(p, full=True),
        "trigger": {
            "kind": run_d.get("wake_kind"),
            "key": run_d.get("wake_key"),
            "payload": run_d.get("wake_payload"),
            "context": sweep.get("context"),
        },
        "run": {k: run_d.get(k) for k in ("id", "status", "reason", "started_at", "finished_at")},
        "sweep": {
            "skill": sweep.get("skill"),
            "code": sweep.get("code"),
            "attempts": sweep.get("attempts"),
            "errors": sweep.get("errors"),
            "candidates": len(sweep.get("candidates", [])),
            "candidate": candidate,
        },
        "sandbox": {
            "stats": sweep.get("sandbox_stats") or {},
            "assertions_touched": run_d.get("assertions_touched", 0),
            "excerpts_sent": run_d.get("excerpts_sent", 0),
        },
        "judge": judgement,
        "gate": gate_events,
        "other_suppressions_in_run": other_gate,
        "model_calls": calls,
        "spend": _spend(calls),
        "delivery": delivery,
        "feedback": feedback,
        "suppressed_since": _suppressed_since(env, p) if feedback else [],
        "evidence_trust": _evidence_trust(store, p),
        # One row per governed edge behind this proposal (memory/edges.py): who acted, what it
        # could reach and reached, what crossed, what it spent, and the records that survive.
        "edges": edges.for_proposal(store, run_id, p["id"], dkey),
        "events": [{"seq": e["seq"], "at": e["occurred_at"], "kind": e["kind"]} for e in events],
    }


def _evidence_trust(store: Store, p: dict[str, Any]) -> list[dict[str, Any]]:
    """Each evidence assertion's trust and the reasons behind it (ops/trust_view.py)."""
    from backchannel.ops.trust_view import evidence_trust

    ev = p.get("evidence")
    ev = json.loads(ev) if isinstance(ev, str) else (ev or [])
    return evidence_trust(store, [e.get("assertion_id") if isinstance(e, dict) else e for e in ev])


def _suppressed_since(env: OpEnv, p: dict[str, Any]) -> list[dict[str, Any]]:
    """Later re-derivations the gate suppressed because of this (answered) proposal."""
    from backchannel.ops.feedback_ops import suppressed_since

    return suppressed_since(env, p)


@op(read=False, on_reader=True)  # through the daemon it only enqueues: see Op.on_reader
def wake(env: OpEnv, kind: str) -> dict[str, Any]:
    """Wake now: through the running daemon's queue, or, with no daemon, run the
    wake(s) here in-process and report what they did. What each kind makes is its
    row of the wake table (engine/wakes/)."""
    from backchannel.engine import wakes

    if kind not in wakes.WAKE_COMMAND:
        raise OpError(f"unknown wake {kind!r}; use one of {', '.join(wakes.WAKE_COMMAND)}")
    missing = wakes.request(kind).unavailable(env.settings)
    if missing:
        raise OpError(missing)
    if env.daemon is not None:
        try:
            return env.daemon.request_wake(kind)
        except RuntimeError as exc:
            raise OpError(str(exc)) from None
    from backchannel.engine.pipeline import collect_wakes, run_wake_once

    outcomes = [
        run_wake_once(env.store, env.settings, env.paths, w).to_dict()
        for w in collect_wakes(env.settings, env.paths, kind)
    ]
    return {"ran_in_process": True, "runs": outcomes}

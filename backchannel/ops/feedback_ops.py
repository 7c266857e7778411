"""Feedback operations: dismiss, accept, snooze, approve, stats, the outbox view
and the signed-link endpoint. The CLI, the daemon's API and the web handlers all
land here, so a verdict is recorded the same way wherever it was given."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from backchannel.core.timeutil import as_aware_utc, as_naive_utc
from backchannel.memory import proposals
from backchannel.memory.store import utcnow
from backchannel.ops import OpEnv, OpError, op

SCOPES = ("this", "entity", "kind")
# A verdict cannot be given on a proposal in these states.
CLOSED = ("sent", "expired")


def _proposal(env: OpEnv, proposal_id: str) -> dict[str, Any]:
    from backchannel.delivery.render import load_proposal

    pid = proposal_id.strip()
    if pid.isdigit():
        pid = f"P-{pid}"
    p = load_proposal(env.store, pid.upper() if pid.lower().startswith("p-") else pid)
    if p is None:
        raise OpError(f"no proposal {proposal_id!r}; see `backchannel proposals`")
    return p


def parse_until(env: OpEnv, value: str | None, *, required: bool = False) -> datetime | None:
    """A date (YYYY-MM-DD: midnight at its start in the owner's zone) or an ISO
    datetime, as naive UTC. It must lie in the future."""
    if not value:
        if required:
            raise OpError("--until DATE is required (YYYY-MM-DD)")
        return None
    tz = ZoneInfo(env.settings.owner.timezone)
    try:
        if len(value.strip()) == 10:
            local = datetime.combine(date.fromisoformat(value.strip()), time(0, 0), tz)
        else:
            local = datetime.fromisoformat(value.strip())
    except ValueError:
        raise OpError(f"--until must be a date like 2026-12-31, got {value!r}") from None
    until = as_naive_utc(as_aware_utc(local, assume=tz))
    if until <= utcnow():
        raise OpError(f"--until {value} is not in the future")
    return until


def _record(
    env: OpEnv,
    p: dict[str, Any],
    verdict: str,
    *,
    via: str,
    reason: str | None = None,
    scope: str | None = None,
    until: datetime | None = None,
    action: dict[str, Any] | None = None,
    action_hash: str | None = None,
) -> int:
    now = utcnow()
    fid = env.store.scalar(
        """INSERT INTO feedback (proposal_id, verdict, reason, scope, until, action, action_hash, via, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
        [p["id"], verdict, reason, scope, until, json.dumps(action) if action else None, action_hash, via, now],
    )
    env.store.append_event(
        f"feedback.{verdict}",
        {
            "proposal_id": p["id"],
            "reason": reason,
            "scope": scope,
            "until": until,
            "via": via,
            "action_hash": action_hash,
        },
        run_id=p.get("run_id"),
    )
    return int(fid)


def _set_status(env: OpEnv, pid: str, status: str) -> None:
    proposals.set_status(env.store, pid, status)


def _entity_ids(env: OpEnv, p: dict[str, Any], entity: str | None) -> list[int] | None:
    """--entity narrows an entity-scoped dismissal to one of the proposal's entities (id or name)."""
    if not entity:
        return None
    ids = p["entity_ids"]
    rows = env.store.query("SELECT id, name FROM entities WHERE id IN (SELECT unnest(?::BIGINT[]))", [ids])
    for r in rows:
        if entity.strip() == str(r["id"]) or entity.strip().casefold() == r["name"].casefold():
            return [int(r["id"])]
    names = ", ".join(f"{r['name']} (#{r['id']})" for r in rows)
    raise OpError(f"{entity!r} is not one of {p['id']}'s entities: {names}")


@op(read=False)
def dismiss(
    env: OpEnv,
    id: str,
    reason: str | None = None,
    scope: str = "this",
    until: str | None = None,
    entity: str | None = None,
    via: str = "cli",
) -> dict[str, Any]:
    """Dismiss a proposal and remember it: structured suppression by scope, and its
    text for the semantic net."""
    from backchannel.delivery.outbox import cancel_pending
    from backchannel.memory.rejections import remember_dismissal

    if scope not in SCOPES:
        raise OpError(f"--scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    p = _proposal(env, id)
    if p["status"] in CLOSED:
        raise OpError(f"{p['id']} is {p['status']}; nothing to dismiss")
    until_at = parse_until(env, until)
    narrowed = _entity_ids(env, p, entity) if scope == "entity" else None
    reason = (reason or "").strip() or None
    with env.store.transaction():
        fid = _record(env, p, "dismiss", via=via, reason=reason, scope=scope, until=until_at)
        sids = remember_dismissal(
            env.store, p, scope=scope, reason=reason, until=until_at, feedback_id=fid, entity_ids=narrowed
        )
        _set_status(env, p["id"], "dismissed")
        cancel_pending(env.store, p["id"], "dismissed")
    _refit(env, p["kind"])
    return {
        "id": p["id"],
        "status": "dismissed",
        "scope": scope,
        "reason": reason,
        "until": until_at,
        "suppressions": sids,
    }


def _refit(env: OpEnv, kind: str) -> None:
    """The judge's weights for `kind` learn from this verdict (engine/calibrate.py); a
    failed fit keeps the previous weights and never loses the verdict."""
    from backchannel.engine import calibrate

    try:
        calibrate.refit(env.store, kind)
    except Exception as exc:  # noqa: BLE001 - the verdict is recorded; the weights catch up at the next one
        env.store.append_event("judge.refit_failed", {"kind": kind, "error": f"{type(exc).__name__}: {exc}"})


@op(read=False)
def accept(env: OpEnv, id: str, via: str = "cli") -> dict[str, Any]:
    """Record that the proposal was useful (after a dismissal: undo its suppressions)."""
    from backchannel.delivery.outbox import cancel_pending
    from backchannel.memory.rejections import lift

    p = _proposal(env, id)
    if p["status"] in CLOSED:
        raise OpError(f"{p['id']} is {p['status']}")
    with env.store.transaction():
        _record(env, p, "accept", via=via)
        lift(env.store, p["id"])
        if p["status"] not in ("approved",):
            _set_status(env, p["id"], "accepted")
        cancel_pending(env.store, p["id"], "accepted")
    _refit(env, p["kind"])
    return {"id": p["id"], "status": "accepted" if p["status"] != "approved" else p["status"]}


@op(read=False)
def snooze(env: OpEnv, id: str, until: str | None = None, via: str = "cli") -> dict[str, Any]:
    """Put a proposal aside; it is delivered again when the snooze lapses."""
    from backchannel.delivery.outbox import cancel_pending

    p = _proposal(env, id)
    if p["status"] in CLOSED + ("approved",):
        raise OpError(f"{p['id']} is {p['status']}; it cannot be snoozed")
    until_at = parse_until(env, until, required=True)
    with env.store.transaction():
        _record(env, p, "snooze", via=via, until=until_at)
        _set_status(env, p["id"], "snoozed")
        cancel_pending(env.store, p["id"], "snoozed")
    return {"id": p["id"], "status": "snoozed", "until": until_at}


@op(read=True)
def proposal_action(env: OpEnv, id: str) -> dict[str, Any]:
    """The outbound draft of a proposal and its hash, for `approve` to show or edit;
    `problem` says why it cannot be sent as it stands (a name instead of an address)."""
    from backchannel.delivery.approval import action_hash, problem

    p = _proposal(env, id)
    if not p["action"]:
        raise OpError(f"{p['id']} has no outbound action to approve")
    return {
        "id": p["id"],
        "status": p["status"],
        "title": p["title"],
        "action": p["action"],
        "action_hash": action_hash(p["action"]),
        "stored_hash": p.get("action_hash"),
        "problem": problem(p["action"]),
    }


@op(read=False)
def approve(
    env: OpEnv,
    id: str,
    expected_hash: str | None = None,
    action: dict[str, Any] | None = None,
    via: str = "cli",
    send: bool = True,
) -> dict[str, Any]:
    """Approve the exact outbound payload whose sha256 is `expected_hash`, then queue
    it (and, with `send`, try it at once) over the harness's own email channel.

    With `action`, the user edited the draft: that payload replaces the proposal's
    and `expected_hash` must be its hash. Without `expected_hash` nothing is approved.
    """
    from backchannel.delivery.approval import action_hash, validate_action
    from backchannel.delivery.outbox import cancel_superseded_actions, deliver_keys, enqueue_action
    from backchannel.memory.rejections import lift

    p = _proposal(env, id)
    if p["status"] in CLOSED:
        raise OpError(f"{p['id']} is {p['status']}; nothing to approve")
    if not p["action"]:
        raise OpError(f"{p['id']} has no outbound action to approve")
    if not expected_hash:
        raise OpError("approval needs the sha256 of the payload being approved")
    if not env.settings.delivery.email.host:
        raise OpError(
            "approved messages go out through your own mail server, and none is configured: "
            "set [delivery.email] host, sender and username (password in the secrets folder), "
            "then approve again"
        )
    payload = dict(action) if action is not None else p["action"]
    try:
        validate_action(payload)
    except ValueError as exc:
        fix = (
            "fix it in the editor and approve again"
            if action is not None
            else f"run `backchannel approve {p['id']} --edit` to correct the To: line (or the draft), then approve"
        )
        raise OpError(f"cannot approve this draft: {exc}; {fix}") from None
    h = action_hash(payload)
    if h != expected_hash:
        raise OpError(
            f"the draft changed since it was shown (sha256 {h[:12]}…, approved {expected_hash[:12]}…); "
            f"look at it again and re-approve"
        )
    if action is None and p.get("action_hash") and p["action_hash"] != h:
        raise OpError(f"{p['id']}'s stored hash does not match its payload; refusing to approve")
    if env.store.scalar(
        "SELECT 1 FROM outbox WHERE proposal_id = ? AND channel = 'action' AND status IN ('sent', 'sending')", [p["id"]]
    ):
        raise OpError(f"{p['id']}'s action was already sent")
    with env.store.transaction():
        if action is not None and payload != p["action"]:
            env.store.append_event(
                "proposal.action_edited",
                {"proposal_id": p["id"], "before": p["action"], "after": payload, "hash": h},
                run_id=p.get("run_id"),
            )
            proposals.set_action(env.store, p["id"], json.dumps(payload), h)
        # An earlier approval of another payload that has not gone out yet is void now.
        cancel_superseded_actions(env.store, p["id"], h)
        _record(env, p, "approve", via=via, action=payload, action_hash=h)
        if p["status"] == "dismissed":  # changed their mind, as with accept: the dismissal no longer teaches
            lift(env.store, p["id"])
        _set_status(env, p["id"], "approved")
        key = enqueue_action(env.store, p["id"], h)
    _refit(env, p["kind"])
    out: dict[str, Any] = {
        "id": p["id"],
        "status": "approved",
        "action_hash": h,
        "to": payload["to"],
        "delivery": key,
        "sent": False,
    }
    if send:
        for r in deliver_keys(env.store, env.settings, env.paths, [key]):
            out["sent"] = r.ok
            out["detail"] = r.detail
    return out


@op(read=False)
def outbox_status(env: OpEnv) -> dict[str, Any]:
    """Deliveries per channel and status, and every one still waiting (with its last error)."""
    from backchannel.delivery.outbox import summary

    return summary(env.store, env.settings)


@op(read=False)
def deliver_now(env: OpEnv) -> list[dict[str, Any]]:
    """Run the outbox once (the daemon does this on every turn)."""
    from backchannel.delivery.outbox import deliver_due

    return [r.to_dict() for r in deliver_due(env.store, env.settings, env.paths)]


@op(read=False)
def stats(env: OpEnv, days: int = 30) -> dict[str, Any]:
    """Proposals per day, acceptance and dismissal rates, suppressions by reason."""
    since = utcnow() - timedelta(days=int(days))
    s = env.store
    per_day = s.query(
        """SELECT CAST(created_at AS DATE) AS day, count(*) AS proposals FROM proposals
                         WHERE created_at >= ? GROUP BY 1 ORDER BY 1""",
        [since],
    )
    total = int(s.scalar("SELECT count(*) FROM proposals WHERE created_at >= ?", [since]) or 0)
    verdicts = {
        r["verdict"]: int(r["n"])
        for r in s.query(
            """SELECT f.verdict, count(DISTINCT f.proposal_id) AS n FROM feedback f
           JOIN proposals p ON p.id = f.proposal_id WHERE p.created_at >= ? GROUP BY 1""",
            [since],
        )
    }
    # Rates count each proposal once, by the user's latest word on it (they may change their mind).
    latest = {
        r["verdict"]: int(r["n"])
        for r in s.query(
            """SELECT verdict, count(*) AS n FROM (
               SELECT f.proposal_id, arg_max(f.verdict, f.id) AS verdict FROM feedback f
               JOIN proposals p ON p.id = f.proposal_id
               WHERE p.created_at >= ? AND f.verdict IN ('accept', 'approve', 'dismiss') GROUP BY 1)
           GROUP BY 1""",
            [since],
        )
    }
    accepted = latest.get("accept", 0) + latest.get("approve", 0)
    dismissed = latest.get("dismiss", 0)
    gate = s.query(
        """SELECT coalesce(json_extract_string(data, '$.check'), 'unknown') AS check, count(*) AS n
           FROM events WHERE kind = 'gate.suppressed' AND occurred_at >= ? GROUP BY 1 ORDER BY 2 DESC""",
        [since],
    )
    rejection = s.query(
        """SELECT CASE WHEN r LIKE '%similar to%' THEN 'semantic' WHEN r LIKE '%anything about%' THEN 'entity'
                       WHEN r LIKE '%every %proposal%' THEN 'kind' WHEN r LIKE '%same %' THEN 'this'
                       ELSE 'other' END AS scope, count(*) AS n
           FROM (SELECT json_extract_string(data, '$.reason') AS r FROM events
                 WHERE kind = 'gate.suppressed' AND json_extract_string(data, '$.check') = 'rejection'
                   AND occurred_at >= ?) GROUP BY 1 ORDER BY 2 DESC""",
        [since],
    )
    reasons = s.query(
        """SELECT coalesce(reason, '(no reason)') AS reason, scope, count(*) AS n FROM feedback
           WHERE verdict = 'dismiss' AND created_at >= ? GROUP BY ALL ORDER BY n DESC LIMIT 20""",
        [since],
    )
    active = s.query(
        """SELECT scope, count(*) AS n FROM suppressions WHERE lifted_at IS NULL AND (until IS NULL OR until > ?)
           GROUP BY 1 ORDER BY 1""",
        [utcnow()],
    )
    per_kind = {}
    for r in s.query(
        """SELECT p.kind, count(*) AS proposals,
                      count(*) FILTER (WHERE v.verdict IN ('accept', 'approve')) AS accepted,
                      count(*) FILTER (WHERE v.verdict = 'dismiss') AS dismissed
               FROM proposals p LEFT JOIN (
                   SELECT proposal_id, arg_max(verdict, id) AS verdict FROM feedback
                   WHERE verdict IN ('accept', 'approve', 'dismiss') GROUP BY 1) v ON v.proposal_id = p.id
               WHERE p.created_at >= ? GROUP BY 1 ORDER BY 1""",
        [since],
    ):
        judged = int(r["accepted"]) + int(r["dismissed"])
        # Precision from feedback: of the proposals the owner judged, the share they found useful.
        per_kind[r["kind"]] = {
            "proposals": int(r["proposals"]),
            "accepted": int(r["accepted"]),
            "dismissed": int(r["dismissed"]),
            "precision": round(int(r["accepted"]) / judged, 4) if judged else None,
        }
    from backchannel.engine import calibrate

    return {
        "days": int(days),
        "proposals": total,
        "per_kind": per_kind,
        "judge_weights": calibrate.table(s),
        "per_day": [{"day": str(r["day"]), "proposals": int(r["proposals"])} for r in per_day],
        "verdicts": verdicts,
        "acceptance_rate": round(accepted / total, 4) if total else None,
        "dismissal_rate": round(dismissed / total, 4) if total else None,
        "suppressed_by_check": {r["check"]: int(r["n"]) for r in gate},
        "rejections_by_scope": {r["scope"]: int(r["n"]) for r in rejection},
        "dismissal_reasons": [{"reason": r["reason"], "scope": r["scope"], "n": int(r["n"])} for r in reasons],
        "active_suppressions": {r["scope"]: int(r["n"]) for r in active},
    }


def suppressed_since(env: OpEnv, proposal: dict[str, Any], limit: int = 20) -> list[dict[str, Any]]:
    """Later gate suppressions because of this proposal: its re-derivations caught by
    dedupe (same kind on the same entities) or by the rejection memory (a reason that
    names it, semantic hits included), newest first, for `trace`."""
    pid, dkey = proposal["id"], proposal.get("dedupe_key")
    rows = env.store.query(
        """SELECT run_id, occurred_at, json_extract_string(data, '$.check') AS check,
                  json_extract_string(data, '$.dedupe_key') AS dedupe_key,
                  json_extract_string(data, '$.reason') AS reason
           FROM events WHERE kind = 'gate.suppressed' AND run_id IS DISTINCT FROM ?
             AND (json_extract_string(data, '$.dedupe_key') = ?
                  OR regexp_matches(json_extract_string(data, '$.reason'), ?))
           ORDER BY seq DESC LIMIT ?""",
        [proposal.get("run_id"), dkey, rf"\b{pid}\b", int(limit)],
    )
    out = []
    for r in rows:
        at = r.pop("occurred_at")
        out.append({"at": at.isoformat() if at else None, **r})
    return out


@op(read=False)
def feedback_link_get(env: OpEnv, token: str) -> dict[str, Any]:
    """GET /feedback?t=TOKEN: the confirmation page; changes nothing."""
    from backchannel.ops.feedback_pages import handle_get

    status, html = handle_get(env.store, env.settings, env.paths, token)
    return {"status": status, "html": html}


@op(read=False)
def feedback_link_post(env: OpEnv, form: dict[str, str]) -> dict[str, Any]:
    """POST /feedback: apply the verdict the signed token in the form names."""
    from backchannel.ops.feedback_pages import handle_post

    status, html = handle_post(env.store, env.settings, env.paths, form)
    return {"status": status, "html": html}

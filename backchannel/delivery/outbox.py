"""The outbox: one row per (proposal, channel) with a UNIQUE idempotency key.

The daemon's consumer calls `deliver_due` on every turn. A delivery is
*claimed* (status 'sending', attempts + 1, a Message-ID derived from its key)
and that claim is committed BEFORE anything goes out; it is marked 'sent' in a
second transaction after the channel accepted it. A failure puts it back to
'queued' with `next_attempt_at` pushed out exponentially; nothing is ever
dropped, a failing channel's deliveries stay queued and visible (`summary`).

Crash safety (kill -9 at any point, then restart):
- before the proposal row commits: no proposal, nothing to send;
- proposal committed, outbox rows not yet: `deliver_due` reconciles pending
  proposals that have no rows and enqueues them;
- row queued or claimed, nothing sent: a claim left by a dead process is "in
  doubt" and is sent again at once, with the same Message-ID: one mail;
- the one window left: the server accepted the message (250 after DATA) and the
  process dies before the 'sent' commit (microseconds to a few ms). The restart
  sends it again with the SAME Message-ID, so the duplicate is recognisable and
  most mail stores collapse it; webhooks carry the key in X-Backchannel-Delivery.
  SMTP has no two-phase commit, so at-least-once with a stable id is the best
  any sender can do; the alternative (never re-send an in-doubt claim) would
  lose the mail in the far larger window before the send.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from backchannel.config import Paths, Settings
from backchannel.core.crashpoints import crash_point
from backchannel.core.timeutil import as_naive_utc
from backchannel.delivery._http import DeliveryError
from backchannel.delivery.redact import scrub
from backchannel.memory import proposals as proposals_table
from backchannel.memory.edges import json_bytes
from backchannel.memory.store import utcnow

if TYPE_CHECKING:
    from backchannel.memory.store import Store

CHANNELS = ("email", "slack", "webhook", "apprise")
ACTION_CHANNEL = "action"
# A claim by this process; a 'sending' row claimed by any other token was left by a dead process.
PROCESS_TOKEN = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


class Blocked(Exception):
    """A delivery that must never go out (an action without a matching approval)."""


@dataclass
class DeliveryResult:
    idem_key: str
    proposal_id: str
    channel: str
    ok: bool
    detail: str
    attempts: int
    message_id: str | None = None
    next_attempt_at: datetime | None = None
    blocked: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["next_attempt_at"] = self.next_attempt_at.isoformat() if self.next_attempt_at else None
        return d


def message_id(idem_key: str, domain: str = "backchannel.local") -> str:
    return f"<{hashlib.sha256(idem_key.encode()).hexdigest()[:40]}@{domain}>"


def _backoff(settings: Settings, attempts: int) -> timedelta:
    d = settings.delivery
    return timedelta(seconds=min(d.retry_max_s, d.retry_base_s * (2 ** max(0, attempts - 1))))


def next_digest_time(settings: Settings, now: datetime) -> datetime:
    """The next `delivery.email.digest_time` in the owner's zone, as naive UTC."""
    hh, _, mm = settings.delivery.email.digest_time.partition(":")
    tz = ZoneInfo(settings.owner.timezone)
    local = now.replace(tzinfo=ZoneInfo("UTC")).astimezone(tz)
    at = local.replace(hour=int(hh), minute=int(mm or 0), second=0, microsecond=0)
    if at <= local:
        at += timedelta(days=1)
    return as_naive_utc(at)


# -- enqueue ---------------------------------------------------------------
def enqueue(
    store: Store,
    proposal_id: str,
    channels: Sequence[str],
    *,
    settings: Settings | None = None,
    now: datetime | None = None,
    generation: int = 0,
) -> list[str]:
    """Queue `proposal_id` on each channel; returns the keys newly queued (a key
    already there is left alone, so enqueueing twice is harmless)."""
    now = now or utcnow()
    added = []
    for ch in channels:
        # An unknown channel (a typo in the config) is queued anyway: it fails visibly in
        # `status` and keeps the proposal, instead of aborting the caller's transaction.
        key = f"{proposal_id}:{ch}" + (f":r{generation}" if generation else "")
        due = now
        if ch == "email" and settings is not None and settings.delivery.email.digest:
            due = next_digest_time(settings, now)
        n = store.scalar(
            """INSERT INTO outbox (idem_key, proposal_id, channel, status, next_attempt_at, message_id,
                                   created_at, updated_at)
               VALUES (?, ?, ?, 'queued', ?, ?, ?, ?) ON CONFLICT (idem_key) DO NOTHING RETURNING id""",
            [key, proposal_id, ch, due, message_id(key), now, now],
        )
        if n is not None:
            added.append(key)
    return added


def enqueue_action(store: Store, proposal_id: str, payload_hash: str, now: datetime | None = None) -> str:
    """Queue the approved outbound action; the key binds to the payload hash."""
    now = now or utcnow()
    key = f"action:{proposal_id}:{payload_hash}"
    store.con.execute(
        """INSERT INTO outbox (idem_key, proposal_id, channel, status, next_attempt_at, message_id, payload_hash,
                               created_at, updated_at)
           VALUES (?, ?, 'action', 'queued', ?, ?, ?, ?, ?) ON CONFLICT (idem_key) DO NOTHING""",
        [key, proposal_id, now, message_id(key), payload_hash, now, now],
    )
    return key


def cancel_superseded_actions(store: Store, proposal_id: str, payload_hash: str) -> None:
    """An approval of another payload that has not gone out yet is void once a new one is given."""
    store.con.execute(
        """UPDATE outbox SET status = 'cancelled', last_error = 'superseded by a new approval', updated_at = ?
           WHERE proposal_id = ? AND channel = 'action' AND status = 'queued' AND payload_hash <> ?""",
        [utcnow(), proposal_id, payload_hash],
    )


def _reconcile(store: Store, settings: Settings, now: datetime) -> None:
    """Pending proposals with no outbox row (a crash between storing and
    enqueueing, or a pipeline that only stores) get queued now."""
    channels = settings.delivery.channels
    if not channels:
        return
    orphans = store.query(
        """SELECT p.id FROM proposals p WHERE p.status = 'pending'
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.proposal_id = p.id AND o.channel <> 'action')
           ORDER BY p.created_at""",
    )
    for r in orphans:
        enqueue(store, r["id"], channels, settings=settings, now=now)


def _wake_snoozed(store: Store, settings: Settings, now: datetime) -> None:
    """A snoozed proposal whose snooze lapsed becomes pending and is delivered again."""
    rows = store.query(
        """SELECT p.id, count(*) AS n, arg_max(f.until, f.created_at) AS until
           FROM proposals p JOIN feedback f ON f.proposal_id = p.id AND f.verdict = 'snooze'
           WHERE p.status = 'snoozed' GROUP BY p.id""",
    )
    for r in rows:
        if r["until"] is None or r["until"] > now:
            continue
        with store.transaction():
            proposals_table.end_snooze(store, r["id"], now)
            if settings.delivery.channels:
                enqueue(store, r["id"], settings.delivery.channels, settings=settings, now=now, generation=int(r["n"]))


def _hold_for_digest(store: Store, settings: Settings) -> None:
    """In digest mode a fresh email delivery waits for the next digest time after
    it was queued (enqueue may have been called without settings)."""
    rows = store.query(
        """SELECT id, created_at, next_attempt_at FROM outbox
           WHERE channel = 'email' AND status = 'queued' AND attempts = 0"""
    )
    for r in rows:
        at = next_digest_time(settings, r["created_at"])
        if r["next_attempt_at"] < at:
            store.con.execute("UPDATE outbox SET next_attempt_at = ? WHERE id = ?", [at, r["id"]])


# -- delivering ------------------------------------------------------------
def _due_rows(store: Store, now: datetime, limit: int) -> list[dict[str, Any]]:
    return store.query(
        """SELECT * FROM outbox
           WHERE (status = 'queued' AND next_attempt_at <= ?)
              OR (status = 'sending' AND coalesce(claimed_by, '') <> ?)
           ORDER BY next_attempt_at, id LIMIT ?""",
        [now, PROCESS_TOKEN, int(limit)],
    )


def _groups(rows: list[dict[str, Any]], settings: Settings) -> list[list[dict[str, Any]]]:
    """One group per delivery, except digest email: in-doubt rows regroup by the
    Message-ID they were claimed with (the same mail again), fresh ones form one mail."""
    groups: list[list[dict[str, Any]]] = []
    in_doubt: dict[str, list[dict[str, Any]]] = {}
    fresh_digest: list[dict[str, Any]] = []
    for r in rows:
        if r["channel"] == "email" and settings.delivery.email.digest:
            if r["status"] == "sending":
                in_doubt.setdefault(r["message_id"], []).append(r)
            else:
                fresh_digest.append(r)
        else:
            groups.append([r])
    groups.extend(in_doubt.values())
    if fresh_digest:
        groups.append(fresh_digest)
    return groups


def deliver_due(
    store: Store, settings: Settings, paths: Paths, now: datetime | None = None, limit: int = 50
) -> list[DeliveryResult]:
    """Send every delivery that is due; returns one result per outbox row handled."""
    now = now or utcnow()
    _reconcile(store, settings, now)
    _wake_snoozed(store, settings, now)
    if settings.delivery.email.digest:
        _hold_for_digest(store, settings)
    results: list[DeliveryResult] = []
    for group in _groups(_due_rows(store, now, limit), settings):
        results.extend(_deliver_group(store, settings, paths, group, now))
    return results


def deliver_keys(
    store: Store, settings: Settings, paths: Paths, keys: list[str], now: datetime | None = None
) -> list[DeliveryResult]:
    """Send these queued deliveries now, whatever their next_attempt_at (approve uses it)."""
    now = now or utcnow()
    results: list[DeliveryResult] = []
    for key in keys:
        rows = store.query("SELECT * FROM outbox WHERE idem_key = ? AND status = 'queued'", [key])
        if rows:
            results.extend(_deliver_group(store, settings, paths, rows, now))
    return results


def cancel_pending(store: Store, proposal_id: str, why: str) -> int:
    """Cancel a proposal's queued notifications (it was answered already); actions stay."""
    return len(
        store.con.execute(
            """UPDATE outbox SET status = 'cancelled', last_error = ?, updated_at = ?
           WHERE proposal_id = ? AND channel <> 'action' AND status = 'queued' RETURNING id""",
            [why, utcnow(), proposal_id],
        ).fetchall()
    )


def _claim(store: Store, group: list[dict[str, Any]], mid: str, now: datetime) -> None:
    with store.transaction():
        for r in group:
            store.con.execute(
                """UPDATE outbox SET status = 'sending', attempts = attempts + 1, claimed_by = ?,
                   message_id = ?, updated_at = ? WHERE id = ?""",
                [PROCESS_TOKEN, mid, now, r["id"]],
            )
            r["attempts"] += 1


def _deliver_group(
    store: Store, settings: Settings, paths: Paths, group: list[dict[str, Any]], now: datetime
) -> list[DeliveryResult]:
    from backchannel.delivery.render import load_proposal

    results: list[DeliveryResult] = []
    live: list[dict[str, Any]] = []
    proposals: list[dict[str, Any]] = []
    for r in group:
        p = load_proposal(store, r["proposal_id"])
        if p is None:
            results.append(_finish(store, settings, r, now, error="the proposal no longer exists", blocked=True))
        elif r["channel"] != ACTION_CHANNEL and p["status"] not in ("pending", "delivered"):
            # Dismissed, accepted or snoozed before this channel got to it: nothing to tell.
            results.append(_finish(store, settings, r, now, error=f"proposal is {p['status']}", cancelled=True))
        else:
            live.append(r)
            proposals.append(p)
    if not live:
        return results
    if live[0]["status"] == "sending" and all(r["message_id"] == live[0]["message_id"] for r in live):
        mid = live[0]["message_id"]  # in doubt: the same mail again, with the same id
    elif len(live) == 1:
        mid = message_id(live[0]["idem_key"])
    else:
        mid = message_id("digest:" + "|".join(sorted(r["idem_key"] for r in live)))
    _claim(store, live, mid, now)
    crash_point("outbox.claimed")
    try:
        detail = _send(store, settings, paths, live, proposals, mid)
    except Blocked as exc:
        return results + [_finish(store, settings, r, now, error=str(exc), blocked=True) for r in live]
    except Exception as exc:  # noqa: BLE001 - a channel's failure of any type keeps the delivery queued
        msg = str(exc) if isinstance(exc, DeliveryError) else f"{type(exc).__name__}: {exc}"
        # A library's message may quote a credential; the row, the event and `status` must not.
        msg = scrub(settings, paths, msg) or msg
        return results + [_finish(store, settings, r, now, error=msg[:500]) for r in live]
    crash_point("outbox.sent")
    return results + [_finish(store, settings, r, now, detail=detail) for r in live]


def _send(
    store: Store,
    settings: Settings,
    paths: Paths,
    group: list[dict[str, Any]],
    proposals: list[dict[str, Any]],
    mid: str,
) -> str:
    """Render, then send across the delivery edge (delivery/edge.py): its limits are
    checked on the rendered message, before it goes out; a stop blocks the delivery."""
    from backchannel.delivery import edge, email, render

    ch = group[0]["channel"]

    def across(payload: Any, send: Any) -> str:
        try:
            return edge.cross(store, settings, ch, group, proposals, json_bytes(payload), send)
        except edge.Stopped as exc:
            raise Blocked(str(exc)) from None

    if ch == ACTION_CHANNEL:
        action = proposals[0].get("action") or {}
        return across(action, lambda: _send_action(store, settings, paths, group[0], proposals[0], mid))
    if ch == "email":
        msg = (
            render.proposal_message(settings, paths, proposals[0])
            if len(proposals) == 1
            else render.digest_message(settings, paths, proposals)
        )
        headers = {"X-Backchannel-Proposal": ", ".join(p["id"] for p in proposals)}
        return across(
            {"subject": msg["subject"], "text": msg["text"], "html": msg["html"]},
            lambda: email.send_to_owner(
                settings,
                paths,
                subject=msg["subject"],
                text=msg["text"],
                html=msg["html"],
                message_id=mid,
                headers=headers,
            ),
        )
    v = render.chat_text(settings, paths, proposals[0])
    key = group[0]["idem_key"]
    if ch == "slack":
        from backchannel.delivery import slack

        return across(v, lambda: slack.send(settings, paths, v, key))
    if ch == "webhook":
        from backchannel.delivery import webhook

        return across(v, lambda: webhook.send(settings, paths, v, key))
    if ch == "apprise":
        from backchannel.delivery import apprise_channel

        return across(v, lambda: apprise_channel.send(settings, paths, v, key))
    raise DeliveryError(f"unknown channel {ch!r}: [delivery] channels takes {', '.join(CHANNELS)}")


def _send_action(
    store: Store, settings: Settings, paths: Paths, row: dict[str, Any], proposal: dict[str, Any], mid: str
) -> str:
    """Send an approved action to its recipient, only if the approval on record
    matches the exact payload about to go out."""
    from backchannel.delivery import email
    from backchannel.delivery.approval import action_hash, validate_action

    action = proposal.get("action")
    if not action:
        raise Blocked("the proposal has no action to send")
    h = action_hash(action)
    if h != row["payload_hash"] or h != proposal.get("action_hash"):
        raise Blocked("the payload changed after approval; approve it again")
    approved = store.scalar(
        "SELECT count(*) FROM feedback WHERE proposal_id = ? AND verdict = 'approve' AND action_hash = ?",
        [proposal["id"], h],
    )
    if not approved or proposal["status"] not in ("approved", "sent"):
        raise Blocked("no approval of this exact payload on record")
    try:
        validate_action(action)
    except ValueError as exc:
        raise Blocked(str(exc)) from None
    msg = email.build_message(
        settings, to=action["to"].strip(), subject=action["subject"], text=action["body"], html=None, message_id=mid
    )
    return email.send_message(settings, paths, msg, [action["to"].strip()])


def _finish(
    store: Store,
    settings: Settings,
    row: dict[str, Any],
    now: datetime,
    *,
    detail: str = "",
    error: str | None = None,
    blocked: bool = False,
    cancelled: bool = False,
) -> DeliveryResult:
    key, pid, ch = row["idem_key"], row["proposal_id"], row["channel"]
    res = DeliveryResult(
        key,
        pid,
        ch,
        ok=error is None,
        detail=error or detail,
        attempts=row["attempts"],
        message_id=row.get("message_id"),
        blocked=blocked,
    )
    if cancelled:
        store.con.execute(
            "UPDATE outbox SET status = 'cancelled', last_error = ?, updated_at = ? WHERE id = ?",
            [error, utcnow(), row["id"]],
        )
        return res
    with store.transaction():
        if error is None:
            store.con.execute(
                "UPDATE outbox SET status = 'sent', sent_at = ?, updated_at = ?, last_error = NULL WHERE id = ?",
                [utcnow(), utcnow(), row["id"]],
            )
            if ch == ACTION_CHANNEL:
                proposals_table.mark_sent(store, pid)
            else:
                open_rows = store.scalar(
                    """SELECT count(*) FROM outbox WHERE proposal_id = ? AND channel <> 'action'
                       AND status IN ('queued', 'sending')""",
                    [pid],
                )
                if not open_rows:
                    proposals_table.mark_delivered(store, pid)
            store.append_event(
                "delivery.sent",
                {"proposal": pid, "channel": ch, "detail": detail, "attempts": row["attempts"]},
                key=f"delivery.sent:{key}",
            )
        elif blocked:
            store.con.execute(
                "UPDATE outbox SET status = 'blocked', last_error = ?, updated_at = ? WHERE id = ?",
                [error, utcnow(), row["id"]],
            )
            store.append_event("delivery.blocked", {"proposal": pid, "channel": ch, "reason": error})
        else:
            res.next_attempt_at = now + _backoff(settings, row["attempts"])
            store.con.execute(
                "UPDATE outbox SET status = 'queued', next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ?",
                [res.next_attempt_at, error, utcnow(), row["id"]],
            )
            store.append_event(
                "delivery.failed",
                {
                    "proposal": pid,
                    "channel": ch,
                    "error": error,
                    "attempts": row["attempts"],
                    "next_attempt_at": res.next_attempt_at.isoformat(),
                    "stuck": row["attempts"] >= settings.delivery.max_attempts,
                },
            )
    return res


# -- visibility --------------------------------------------------------------
def summary(store: Store, settings: Settings | None = None) -> dict[str, Any]:
    """What `status` shows: counts per channel and status, and every delivery still
    waiting to go out (queued or in flight) or blocked; cancelled ones only count."""
    counts = store.query("SELECT channel, status, count(*) AS n FROM outbox GROUP BY ALL ORDER BY ALL")
    waiting = store.query(
        """SELECT idem_key, proposal_id, channel, status, attempts, next_attempt_at, last_error
           FROM outbox WHERE status IN ('queued', 'sending', 'blocked') ORDER BY next_attempt_at, id LIMIT 100"""
    )
    stuck_after = settings.delivery.max_attempts if settings else 8
    for w in waiting:
        w["stuck"] = w["attempts"] >= stuck_after
    return {"counts": counts, "waiting": json.loads(json.dumps(waiting, default=str))}

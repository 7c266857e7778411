"""The last two steps of a candidate that passed the gate and the judge: its draft (the
drafter role: a template offline, else the draft model) and the pending proposal, with
its event and its outbox rows, in one transaction."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from backchannel.config import Settings
from backchannel.core.crashpoints import crash_point
from backchannel.engine import gate, runs
from backchannel.memory import proposals
from backchannel.memory.store import Store, utcnow

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway
    from backchannel.graph.types import Candidate


def draft(
    store: Store,
    settings: Settings,
    *,
    run_id: str,
    gateway: Gateway | None,
    candidate: Candidate,
    evidence: list[dict[str, Any]],
    context: dict[str, Any],
) -> tuple[dict[str, Any], int]:
    """The drafter role on one candidate, with the evidence this run loaded:
    (title/body/action, evidence excerpts that reached a model)."""
    from backchannel.agent import drafter

    d = drafter.draft(
        candidate,
        evidence=evidence,
        context=context,
        store=store,
        settings=settings,
        gateway=gateway,
        run_id=run_id,
    )
    errors = list(d.errors or [])
    if errors:
        runs.step(
            store,
            run_id,
            "draft.notes",
            {"errors": errors},
            key=f"{run_id}:draftnotes:" + gate.dedupe_key(candidate.kind, candidate.entities),
        )
    sent = len(d.candidate.evidence)  # passed to the drafter (a template offline, else the draft model)
    return {"title": d.title, "body": d.body, "action": d.action, "drafted_by": d.drafted_by}, sent


def action_hash(action: dict[str, Any] | None) -> str | None:
    """The hash an approval binds to (delivery.approval's canonical form)."""
    if not action:
        return None
    from backchannel.delivery.approval import action_hash as canonical_hash

    return canonical_hash(action)


def create(
    store: Store,
    settings: Settings,
    *,
    run_id: str,
    candidate: Candidate,
    dkey: str,
    evidence: list[dict[str, Any]],
    drafted: dict[str, Any],
    score: float,
) -> str | None:
    """Insert the pending proposal, its event and its outbox rows in one transaction.
    Returns None when this run already created one for the dedupe key (a resumption)."""
    ev_json = [
        {
            k: e.get(k)
            for k in ("assertion_id", "quote", "speaker", "said_at", "source_id", "source_title", "date_origin")
        }
        for e in evidence
    ]
    action = drafted.get("action")
    from backchannel.memory import scopes

    # A channel never carries evidence from a scope it may not see ([scope] channels).
    channels, withheld = scopes.channels_for(
        settings.scope,
        list(settings.delivery.channels),
        scopes.scopes_of(store, [e.get("source_id") for e in evidence]),
    )
    with store.transaction():
        if runs.event_seq(store, f"proposal:{run_id}:{dkey}") is not None:
            return None
        pid = proposals.next_id(store)
        proposals.insert_pending(
            store,
            pid,
            run_id=run_id,
            dedupe_key=dkey,
            kind=candidate.kind,
            entity_ids=sorted({int(e) for e in candidate.entities}),
            title=str(drafted.get("title") or candidate.kind),
            body=str(drafted.get("body") or candidate.why),
            score=float(score),
            why=candidate.why,
            evidence_json=json.dumps(ev_json, default=str),
            action_json=json.dumps(action, default=str) if action else None,
            action_hash=action_hash(action),
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
            run_id=run_id,
            key=f"proposal:{run_id}:{dkey}",
        )
        if channels:
            from backchannel.delivery import outbox

            outbox.enqueue(store, pid, channels, settings=settings)
    crash_point("proposal.after_commit")
    return pid

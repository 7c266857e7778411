"""What was said about one entity, in time: each assertion at the date it was said, the
span it held for (valid_from..valid_to, either end possibly unknown), whether it was
superseded, whether its meeting was dated by the file rather than the transcript, and for
a promise its due date and state (open, kept, overdue), by the judge's own rule for a
kept promise (engine/judge_kinds), so the page and the reminders never disagree."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from backchannel.core.timeutil import db_now
from backchannel.ops import OpEnv, op
from backchannel.ops.memory_ops import ASSERTION_COLUMNS, ASSERTION_JOINS
from backchannel.ops.privacy_ops import find_one
from backchannel.ops.ties_ops import FILE_DATED, iso

MAX_ITEMS = 2000


def _day(value: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def promise_state(facts: Any, a: dict[str, Any], today: date) -> tuple[str, str | None]:
    """('kept', why) | ('overdue', None) | ('open', None) for a committed_to assertion."""
    from backchannel.engine.judge_kinds import why_kept

    kept = why_kept(facts, {**a, "literal": a.get("object_literal")})
    if kept:
        return "kept", kept
    due = _day(a.get("valid_to"))
    return ("overdue" if due is not None and due < today else "open"), None


@op(read=True)
def entity_timeline(env: OpEnv, ref: str) -> dict[str, Any]:
    """{entity, today, items [{id, fact, predicate, said_at, valid_from, valid_to,
    superseded_at, speaker, quote, trust, date_origin, file_dated, promise: {due, state,
    kept} | None}]}, items in the order they were said."""
    from backchannel.engine.judge_facts import WakeFacts

    e = find_one(env, ref)
    ids = [e.id] + [
        r[0] for r in env.store.con.execute("SELECT id FROM entities WHERE merged_into = ?", [e.id]).fetchall()
    ]
    rows = env.store.query(
        f"SELECT {ASSERTION_COLUMNS} {ASSERTION_JOINS} WHERE list_contains($1, a.subject_id) "
        "OR list_contains($1, a.object_id) ORDER BY a.said_at NULLS LAST, a.id LIMIT ?",
        [ids, MAX_ITEMS],
    )
    now = db_now()
    facts = WakeFacts(env.store, now)
    items = []
    for a in rows:
        promise = None
        if a["predicate"] == "committed_to":
            state, kept = promise_state(facts, a, now.date())
            promise = {"due": iso(_day(a["valid_to"])), "state": state, "kept": kept}
        obj = a["object"] or a["object_literal"] or ""
        items.append(
            {
                "id": a["id"],
                "predicate": a["predicate"],
                "subject": a["subject"],
                "object": obj,
                "subject_id": a["subject_id"],
                "object_id": a["object_id"],
                "fact": f"{a['subject']} {a['predicate'].replace('_', ' ')} {obj}".strip()
                + (f" ({a['qualifier']})" if a["qualifier"] else ""),
                "said_at": iso(a["said_at"]),
                "valid_from": iso(_day(a["valid_from"])),
                "valid_to": None if promise else iso(_day(a["valid_to"])),
                "superseded_at": iso(a["superseded_at"]),
                "speaker": a["speaker"],
                "quote": a["quote"],
                "trust": round(float(a["trust"] or 0.0), 3),
                "date_origin": a["date_origin"],
                "file_dated": a["date_origin"] in FILE_DATED,
                "promise": promise,
            }
        )
    return {
        "entity": {"id": e.id, "name": e.name, "kind": e.kind},
        "today": now.date().isoformat(),
        "items": items,
        "truncated": len(rows) >= MAX_ITEMS,
    }


@op(read=True)
def entity_drawings(env: OpEnv, ref: str, max_nodes: int = 40) -> dict[str, Any]:
    """What an entity's page draws, in one call (one opening of the store when no daemon
    runs): {"ties": entity_ties(ref, 2, max_nodes), "timeline": entity_timeline(ref)}."""
    from backchannel.ops.ties_ops import entity_ties

    return {"ties": entity_ties(env, ref, hops=2, max_nodes=max_nodes), "timeline": entity_timeline(env, ref)}

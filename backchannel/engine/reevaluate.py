"""After an ingest: what the new meeting taught may make earlier wakes relevant.

A signal that arrived before its organisation was known was stored unlinked,
and a calendar attendee nobody knew was left unmatched; both used to be lost
for good. After each ingest, in the same run:

- every signal of the last `judge.SIGNAL_ZERO_D` days is matched again against
  the organisations now known; a signal that gains an organisation, or whose
  organisations the new meeting talks about, is swept again as a signal wake;
- the attendees of upcoming calendar events are resolved again; a meeting within
  `[calendar] lead_hours` that gains a known attendee, or whose attendees the new
  meeting talks about, is swept again as a meeting_soon wake.

The gate's dedupe keeps anything already proposed from being proposed twice.
Each re-evaluation is a step of the run (`reevaluate.signal`, `reevaluate.meeting`)
with its own sweep, so `trace RUN_ID` shows why it ran and what it found.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log
from backchannel.engine import judge, runs
from backchannel.engine.run import Interrupted, Run, rollback_quietly
from backchannel.memory import calendar, entities, signals

if TYPE_CHECKING:
    from backchannel.memory.store import Store

logger = get_logger("reevaluate")
MAX_SWEEPS = 10  # per ingest: a bulk import must not turn into hundreds of sweeps


def _touched(store: Store, source_id: str | None) -> set[int]:
    """Entities the new source's assertions are about (subject or object)."""
    if not source_id:
        return set()
    rows = store.con.execute("SELECT subject_id, object_id FROM assertions WHERE source_id = ?", [source_id]).fetchall()
    return {int(x) for r in rows for x in r if x is not None}


def after_ingest(run: Run, source_id: str | None) -> None:
    """Re-link recent signals and re-match upcoming meetings; sweep what became relevant.
    A failure here is recorded in the run and never undoes the ingest."""
    try:
        touched = _touched(run.store, source_id)
        meetings = _meetings(run, touched)  # first: a signal's sweep then sees who is met soon
        todo = _signals(run, touched, source_id) + meetings
    except Interrupted:
        raise
    except Exception as exc:  # noqa: BLE001 - the ingest itself succeeded; say what could not be re-checked
        rollback_quietly(run.store)
        runs.step(run.store, run.run_id, "reevaluate.failed", {"reason": f"{type(exc).__name__}: {exc}"})
        log(logger, 30, "re-evaluation failed", run_id=run.run_id, error=str(exc))
        return
    for tag, context in todo[:MAX_SWEEPS]:
        run.sweep_and_propose(context, tag)


def _signals(run: Run, touched: set[int], new_source: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    from backchannel.triggers import signals as signals_mod

    store = run.store
    rows = signals.recent(store, run.now - timedelta(days=judge.SIGNAL_ZERO_D))
    if not rows:
        return []
    from backchannel.engine import signal_reading

    orgs = signals.organisations(store)
    own = signals.news_only_organisations(store)  # a news item never links to what only it named
    said_here = (
        "\n".join(
            r[0] for r in store.con.execute("SELECT text FROM utterances WHERE source_id = ?", [new_source]).fetchall()
        )
        if new_source
        else ""
    )
    out = []
    for r in rows:
        mine = own.get(signal_reading.news_source_id(r) or "", set())
        matches = signals_mod.match_org_details(
            f"{r['title']} {r['summary'] or ''}", [o for o in orgs if o[0] not in mine]
        )
        ids = sorted({m.org_id for m in matches if m.confidence >= signals_mod.MIN_MATCH_CONFIDENCE})
        old = sorted(int(i) for i in (r["org_ids"] or []))
        gained = sorted(set(ids) - set(old))
        if gained:
            signals.relink(store, r["id"], ids, json.dumps([m.to_dict() for m in matches]))
        elif not ids and said_here and signal_reading.may_be_discussed(r, said_here):
            # Nothing known by name: the new meeting may talk about one of its organisations.
            linked = signal_reading.link_discussed(store, r, source_id=new_source)
            if linked is not None:
                ids, gained = linked["org_ids"], linked["gained"]
        if not ids or not (gained or set(ids) & touched):
            continue
        why = f"now linked to {gained}" if gained else "the new meeting talks about its organisations"
        runs.step(
            store,
            run.run_id,
            "reevaluate.signal",
            {"signal": r["id"], "title": r["title"], "org_ids": ids, "gained": gained, "why": why},
            key=f"{run.run_id}:reevaluate:signal:{r['id']}",
        )
        sig = {
            "id": r["id"],
            "title": r["title"],
            "summary": r["summary"],
            "url": r["url"],
            "published_at": r["published_at"].isoformat() if r["published_at"] else None,
            "org_ids": ids,
        }
        context: dict[str, Any] = {"wake": "signal", "signal": sig, "reevaluated": why}
        soon = calendar.imminent_attendees(store, run.now, max(run.settings.calendar.lead_hours, judge.MEETING_FULL_H))
        if soon:
            context["via_ids"] = soon
        out.append((f"signal:{r['id'][:16]}", context))
    return out


def _meetings(run: Run, touched: set[int]) -> list[tuple[str, dict[str, Any]]]:
    store = run.store
    cal = run.settings.calendar
    rows = calendar.between(store, run.now, run.now + timedelta(days=cal.horizon_days))
    if not rows:
        return []
    me = entities.owner(store)
    owner_id = me.id if me else None
    out = []
    for r in rows:
        names = list(r["attendees"] or [])
        ids = sorted({i for i in (calendar.resolve_attendee(store, a, owner_id) for a in names) if i is not None})
        old = sorted(int(i) for i in (r["attendee_ids"] or []))
        gained = sorted(set(ids) - set(old))
        if gained:
            ids = sorted(set(ids) | set(old))  # a merge elsewhere never drops who was matched
            calendar.set_attendee_ids(store, r["uid"], r["starts_at"], ids)
        soon = r["starts_at"] - run.now <= timedelta(hours=cal.lead_hours)
        if not ids or not soon or not (gained or set(ids) & touched):
            continue
        why = f"attendees now known: {gained}" if gained else "the new meeting talks about its attendees"
        runs.step(
            store,
            run.run_id,
            "reevaluate.meeting",
            {"uid": r["uid"], "summary": r["summary"], "attendee_ids": ids, "gained": gained, "why": why},
            key=f"{run.run_id}:reevaluate:meeting:{r['uid']}:{r['starts_at'].isoformat()}",
        )
        event = {
            "uid": r["uid"],
            "starts_at": r["starts_at"].isoformat(),
            "summary": r["summary"],
            "location": r["location"],
            "attendees": names,
            "attendee_ids": ids,
        }
        out.append(
            (
                f"meeting:{r['uid']}:{r['starts_at']:%Y%m%d%H%M}",
                {"wake": "meeting_soon", "event": event, "reevaluated": why},
            )
        )
    return out

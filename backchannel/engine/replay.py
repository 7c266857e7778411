"""Replay: a past wake run again against memory as it was known when the run started,
with today's code, settings and weights, offline, and what would differ.

The store is never written. Its live contents are copied into a fresh DuckDB file in
a temporary directory (`COPY FROM DATABASE`, which a read-only connection can do);
the copy is then rewound by transaction time to the run's start: whatever was
recorded at or after it (sources, assertions, entities and aliases, merges,
corrections and retractions, supersessions, signals, calendar events, proposals,
feedback, dismissals, fitted judge weights, runs and events) is removed or undone
there. The same wake then runs on the copy with the run's own clock and no model,
and its candidates, gate decisions, judgements and drafts are compared, per dedupe
key, with what the run recorded.

What a rewind cannot undo is said in `limits`: a store older than the records that
make it exact (migration 0260: a calendar event's first sighting, an assertion's end
before a later fact closed it, the run's clock and settings), an erasure (forgotten
people stay forgotten), a merge undone after the run, a signal relinked after it.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from backchannel.memory.store import Store

# The wakes whose run is a sweep that can be run again on a copy; an inbox or a mail run's
# work is an ingest (its re-evaluation sweeps are not told apart here).
REPLAYABLE = ("sweep", "manual", "meeting_soon", "signal")
_STATUS_OF_VERDICT = {"dismiss": "dismissed", "accept": "accepted", "snooze": "snoozed", "approve": "approved"}


class ReplayError(ValueError):
    """A run that cannot be replayed; the message says why."""


def snapshot(store: Store, dest: Path) -> None:
    """Copy the store's live contents into a new database file `dest` (the store is only read)."""
    name = store.con.execute("SELECT current_database()").fetchone()
    assert name is not None  # a connection always has a current database
    escaped = str(dest).replace("'", "''")
    alias = f"replay_{secrets.token_hex(4)}"  # two replays at once in the daemon do not collide
    store.con.execute(f"ATTACH '{escaped}' AS {alias} (READ_WRITE)")
    try:
        store.con.execute(f'COPY FROM DATABASE "{name[0]}" TO {alias}')
    finally:
        store.con.execute(f"DETACH {alias}")


def _has(store: Store, table: str, column: str | None = None) -> bool:
    if column is None:
        return bool(store.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]))
    return bool(
        store.scalar(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = ? AND column_name = ?", [table, column]
        )
    )


def rewind(store: Store, at: datetime, first_seq: int | None) -> list[str]:
    """Undo on `store` (a copy) what was recorded at or after `at`; returns what could not be."""
    limits: list[str] = []
    con = store.con
    with store.transaction():
        _rewind_memory(store, at, limits)
        _rewind_feedback(store, at)
        con.execute("DELETE FROM runs WHERE started_at >= ?", [at])
        if first_seq is not None:
            con.execute("DELETE FROM events WHERE seq >= ?", [first_seq])
        else:
            con.execute("DELETE FROM events WHERE occurred_at >= ?", [at])
        if _has(store, "model_calls"):
            con.execute("DELETE FROM model_calls WHERE created_at >= ?", [at])
        if _has(store, "consent_withdrawals") and store.scalar(
            "SELECT count(*) FROM consent_withdrawals WHERE withdrawn_at >= ?", [at]
        ):
            limits.append("people who withdrew consent after the run stay erased")
    return limits


def _rewind_memory(store: Store, at: datetime, limits: list[str]) -> None:
    con = store.con
    closings = _has(store, "assertion_closings")
    # Closed by a later fact after the run, with no record of the end it had before (a
    # store older than that record): the end date stays the one the later fact gave.
    unknown = store.scalar(
        "SELECT count(*) FROM assertions a WHERE superseded_at >= ? AND superseded_by IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM assertion_changes c WHERE c.assertion_id = a.id AND c.changed_at >= ?)"
        + (
            " AND NOT EXISTS (SELECT 1 FROM assertion_closings k WHERE k.assertion_id = a.id AND k.closed_at >= ?)"
            if closings
            else ""
        ),
        [at, at, at] if closings else [at, at],
    )
    if unknown:
        limits.append(
            f"{unknown} assertion(s) closed by a later fact keep the end date it gave them"
            " (closings are recorded from migration 0260 on)"
        )
    # Corrections and retractions after the run: the fields as they were, newest change first.
    for aid, before in con.execute(
        "SELECT assertion_id, before FROM assertion_changes WHERE changed_at >= ? ORDER BY changed_at DESC, id DESC",
        [at],
    ).fetchall():
        fields = {k: v for k, v in json.loads(before).items() if k != "said_at"}
        if fields:
            con.execute(
                f"UPDATE assertions SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?", [*fields.values(), aid]
            )
    con.execute("DELETE FROM assertion_changes WHERE changed_at >= ?", [at])
    if closings:
        con.execute(
            """UPDATE assertions a SET valid_to = c.valid_to_before FROM (
                           SELECT assertion_id, arg_min(valid_to_before, closed_at) AS valid_to_before
                           FROM assertion_closings WHERE closed_at >= ? GROUP BY assertion_id) c
                       WHERE a.id = c.assertion_id""",
            [at],
        )
        con.execute("DELETE FROM assertion_closings WHERE closed_at >= ?", [at])
    con.execute("UPDATE assertions SET superseded_at = NULL, superseded_by = NULL WHERE superseded_at >= ?", [at])
    con.execute("DELETE FROM assertions WHERE recorded_at >= ?", [at])
    _rewind_merges(store, at, limits)
    con.execute("DELETE FROM aliases WHERE created_at >= ?", [at])
    con.execute("DELETE FROM entities WHERE created_at >= ? AND NOT is_owner", [at])
    con.execute("DELETE FROM utterances WHERE source_id IN (SELECT id FROM sources WHERE ingested_at >= ?)", [at])
    con.execute("DELETE FROM sources WHERE ingested_at >= ?", [at])
    if _has(store, "mail_messages"):
        con.execute("DELETE FROM mail_messages WHERE ingested_at >= ?", [at])
    relinked = store.scalar("SELECT count(*) FROM signals WHERE seen_at < ? AND relinked_at >= ?", [at, at])
    if relinked:
        limits.append(f"{relinked} signal(s) relinked to organisations after the run keep their new links")
    con.execute("DELETE FROM signals WHERE seen_at >= ?", [at])
    if _has(store, "calendar_events", "first_seen_at"):
        con.execute("DELETE FROM calendar_events WHERE first_seen_at >= ?", [at])
        old = store.scalar("SELECT count(*) FROM calendar_events WHERE first_seen_at IS NULL AND seen_at >= ?", [at])
    else:
        old = store.scalar("SELECT count(*) FROM calendar_events WHERE seen_at >= ?", [at])
    if old:
        limits.append(
            f"{old} calendar event(s) seen again after the run are kept as seen last"
            " (first sightings are recorded from migration 0260 on)"
        )


def _rewind_merges(store: Store, at: datetime, limits: list[str]) -> None:
    from backchannel.memory import merges

    for (mid,) in store.con.execute(
        "SELECT id FROM entity_merges WHERE merged_at >= ? AND undone_at IS NULL ORDER BY merged_at DESC, id DESC", [at]
    ).fetchall():
        try:
            merges.split(store, int(mid), transaction=False)
        except Exception as exc:  # noqa: BLE001 - one merge that cannot be undone is a limit, not a failure
            limits.append(f"merge {mid} after the run could not be undone: {exc}")
    store.con.execute("DELETE FROM entity_merges WHERE merged_at >= ?", [at])
    undone = store.scalar("SELECT count(*) FROM entity_merges WHERE undone_at >= ?", [at])
    if undone:
        limits.append(f"{undone} merge(s) undone after the run stay undone")


def _rewind_feedback(store: Store, at: datetime) -> None:
    con = store.con
    con.execute("DELETE FROM outbox WHERE proposal_id IN (SELECT id FROM proposals WHERE created_at >= ?)", [at])
    con.execute("DELETE FROM proposals WHERE created_at >= ?", [at])
    changed = [r[0] for r in con.execute("SELECT id FROM proposals WHERE updated_at >= ?", [at]).fetchall()]
    for pid in changed:  # its status then: its last verdict before the run, else delivered or pending
        verdict = store.scalar(
            "SELECT verdict FROM feedback WHERE proposal_id = ? AND created_at < ?"
            " ORDER BY created_at DESC, id DESC LIMIT 1",
            [pid, at],
        )
        sent = store.scalar("SELECT count(*) FROM outbox WHERE proposal_id = ? AND sent_at < ?", [pid, at])
        status = _STATUS_OF_VERDICT.get(str(verdict), "delivered" if sent else "pending")
        con.execute("UPDATE proposals SET status = ? WHERE id = ?", [status, pid])
    con.execute("DELETE FROM feedback WHERE created_at >= ?", [at])
    con.execute("DELETE FROM suppressions WHERE created_at >= ?", [at])
    con.execute("UPDATE suppressions SET lifted_at = NULL WHERE lifted_at >= ?", [at])
    con.execute("DELETE FROM rejection_embeddings WHERE dismissed_at >= ?", [at])
    refit = [r[0] for r in con.execute("SELECT kind FROM judge_weights WHERE fitted_at >= ?", [at]).fetchall()]
    if refit:
        from backchannel.engine import calibrate

        for kind in refit:  # the fit the verdicts known then give (it replaced the one in use then)
            calibrate.refit(store, kind)


# -- what a run decided, per candidate ---------------------------------------------


def outcome_of(store: Store, run_id: str) -> dict[str, Any]:
    """What run `run_id` recorded: its status and, per dedupe key, the candidate's score,
    the gate's decisions, the judgement and the draft."""
    from backchannel.engine.gate import dedupe_key

    run = store.query("SELECT status, reason FROM runs WHERE id = ?", [run_id])
    by_key: dict[str, dict[str, Any]] = {}

    def entry(key: str) -> dict[str, Any]:
        return by_key.setdefault(key, {"dedupe_key": key})

    for e in store.events(run_id=run_id, limit=100_000):
        data = e["data"] or {}
        if e["kind"] == "sweep.done":
            for c in data.get("candidates", []):
                item = entry(dedupe_key(c.get("kind", "other"), c.get("entities") or []))
                ids = c.get("evidence_ids") or [
                    e.get("assertion_id") for e in c.get("evidence") or [] if isinstance(e, dict)
                ]
                item.update(
                    kind=c.get("kind"),
                    candidate_score=_round(c.get("score")),
                    why=c.get("why"),
                    evidence=sorted(int(i) for i in ids if i is not None),
                )
        elif e["kind"] in ("gate.passed", "gate.suppressed"):
            entry(data["dedupe_key"])[f"gate_{data.get('stage')}"] = _decision(data)
        elif e["kind"] == "judge.scored":
            item = entry(data["dedupe_key"])
            item["judge_score"] = _round(data.get("score"))
            item["veto"] = (
                (data.get("veto") or {}).get("check") if isinstance(data.get("veto"), dict) else data.get("veto")
            )
        elif e["kind"] in ("judge.failed", "draft.failed"):
            entry(data["dedupe_key"])[e["kind"].replace(".", "_")] = data.get("reason")
    for p in store.query("SELECT id, dedupe_key, title, body, score, action FROM proposals WHERE run_id = ?", [run_id]):
        item = entry(p["dedupe_key"])
        item.update(
            proposal=p["id"], title=p["title"], body=p["body"], action=json.loads(p["action"]) if p["action"] else None
        )
    for item in by_key.values():
        item["decision"] = _final(item)
    return {
        "status": run[0]["status"] if run else None,
        "reason": run[0]["reason"] if run else None,
        "candidates": [by_key[k] for k in sorted(by_key)],
    }


def _round(x: Any) -> float | None:
    return round(float(x), 4) if isinstance(x, (int, float)) else None


def _decision(data: dict[str, Any]) -> str:
    return "passed" if data.get("passed") else f"{data.get('check')}: {data.get('reason')}"


def _final(item: dict[str, Any]) -> str:
    if item.get("proposal"):
        return "proposed"
    for stage in ("gate_before_judge", "judge_failed", "gate_after_judge", "draft_failed"):
        got = item.get(stage)
        if got and got != "passed":
            return f"suppressed ({got})" if stage.startswith("gate") else f"silent ({got})"
    return "not judged"


COMPARED = (
    "candidate_score",
    "judge_score",
    "veto",
    "gate_before_judge",
    "gate_after_judge",
    "decision",
    "title",
    "body",
    "action",
    "evidence",
)


def differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[dict[str, Any]]:
    """Per dedupe key, each compared field whose value differs (a candidate only one side has
    is one difference, `only`)."""
    was = {c["dedupe_key"]: c for c in recorded["candidates"]}
    now = {c["dedupe_key"]: c for c in replayed["candidates"]}
    out: list[dict[str, Any]] = []
    for key in sorted(set(was) | set(now)):
        if key not in now or key not in was:
            side = "recorded" if key in was else "replayed"
            c = was.get(key) or now[key]
            out.append(
                {
                    "dedupe_key": key,
                    "only": side,
                    "decision": c.get("decision"),
                    "score": c.get("judge_score", c.get("candidate_score")),
                }
            )
            continue
        changed = {
            f: {"recorded": was[key].get(f), "replayed": now[key].get(f)}
            for f in COMPARED
            if was[key].get(f) != now[key].get(f)
        }
        if changed:
            out.append({"dedupe_key": key, "fields": changed})
    if recorded.get("status") != replayed.get("status"):
        out.append({"run": {"recorded": recorded.get("status"), "replayed": replayed.get("status")}})
    return out


def _changed_settings(then: dict[str, Any] | None, today: dict[str, Any]) -> dict[str, Any] | None:
    """Settings and code that differ between the run and today (None: the run predates the record)."""
    if then is None:
        return None
    out: dict[str, Any] = {}
    for section in sorted(set(then) | set(today)):
        a, b = then.get(section), today.get(section)
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    out[f"{section}.{k}"] = {"then": a.get(k), "today": b.get(k)}
        elif a != b:
            out[section] = {"then": a, "today": b}
    return out


def replay(store: Store, settings: Any, paths: Any, run_id: str) -> dict[str, Any]:
    """Run `run_id`'s wake again on a rewound copy of `store`, offline; compare."""
    from backchannel.engine import runs
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.graph.index import IndexCache

    rows = store.query("SELECT * FROM runs WHERE id = ?", [run_id])
    if not rows:
        raise ReplayError(f"no run {run_id!r} (backchannel status lists recent runs)")
    run = rows[0]
    if run["wake_kind"] not in REPLAYABLE:
        raise ReplayError(
            f"run {run_id} is a {run['wake_kind']!r} run; only runs that sweep can be replayed"
            f" ({', '.join(REPLAYABLE)})"
        )
    if run["status"] == "running":
        raise ReplayError(f"run {run_id} has not finished")
    at = run["started_at"]
    clock = run.get("clock_at")
    first_seq = store.scalar("SELECT min(seq) FROM events WHERE run_id = ?", [run_id])
    recorded = outcome_of(store, run_id)
    then = json.loads(run["decided_by"]) if run.get("decided_by") else None
    offline = settings.model_copy(
        update={
            "models": settings.models.model_copy(update={"extract": "offline", "sweep": "offline", "draft": "offline"})
        }
    )
    limits: list[str] = []
    if clock is None:
        limits.append("the run predates the record of its clock: replayed at its start time")
    if then is not None and any(v != "offline" for v in (then.get("models") or {}).values()):
        limits.append("the run used a model; the replay is offline (prepared skills, offline judge, templates)")
    payload = json.loads(run["wake_payload"]) if run.get("wake_payload") else {}
    with tempfile.TemporaryDirectory(prefix="backchannel-replay-") as tmp:
        copy_path = Path(tmp) / "replay.duckdb"
        snapshot(store, copy_path)
        with Store.open(copy_path) as copy:
            try:
                limits += rewind(copy, at, first_seq)
                out = run_wake_once(
                    copy,
                    offline,
                    paths,
                    runs.WakeRecord(run["wake_kind"], None, payload),
                    now=clock or at,
                    gateway=None,
                )
                replayed = outcome_of(copy, out.run_id)
            finally:
                IndexCache.drop(copy)  # the copy's index is not reused
    diffs = differences(recorded, replayed)
    return {
        "run_id": run_id,
        "wake_kind": run["wake_kind"],
        "as_of": at,
        "clock": clock or at,
        "recorded": recorded,
        "replayed": replayed,
        "differences": diffs,
        "same": not diffs,
        "settings_changed": _changed_settings(then, runs.decided_by(offline)),
        "limits": limits,
    }

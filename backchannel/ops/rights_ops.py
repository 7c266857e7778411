"""The data subject's rights as operations: rectification (correct, retract, history)
and the access record (`audit NAME`). Correct and retract are offered by the CLI and
the web app only; the MCP server exposes neither (web/mcp_server.py lists its tools)."""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from backchannel.agent.drafter import MAX_EXCERPTS
from backchannel.memory import entities as entity_repo
from backchannel.memory import rectify
from backchannel.ops import OpEnv, OpError, op
from backchannel.ops.privacy_ops import find_one

_DEDUPE = re.compile(r"^[a-z_]+:([\d,]+)$")


def _entity_for(env: OpEnv, name: str, predicate: str) -> int:
    found = entity_repo.find(env.store, name)
    if len(found) == 1:
        return found[0].id
    if len(found) > 1:
        raise OpError(f"{name!r} names {len(found)} entities; use an id")
    kind = "organisation" if predicate in ("works_at", "left") else "person"
    return entity_repo.create(env.store, name, kind).id


def _day(value: str | None, field: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise OpError(f"{field}: {value!r} is not a date (YYYY-MM-DD)") from None


@op(read=False)
def correct_assertion(
    env: OpEnv,
    assertion_id: int,
    object: str | None = None,  # noqa: A002
    literal: str | None = None,
    qualifier: str | None = None,
    predicate: str | None = None,
    subject: str | None = None,
    valid_from: str | None = None,
    valid_to: str | None = None,
    reason: str | None = None,
    via: str = "cli",
) -> dict[str, Any]:
    """Supersede an assertion by the owner's corrected version; returns both ids."""
    from backchannel.core.vocabulary import PREDICATES

    changes: dict[str, Any] = {}
    if predicate is not None:
        if predicate not in PREDICATES:
            raise OpError(f"predicate {predicate!r} is not one of {', '.join(PREDICATES)}")
        changes["predicate"] = predicate
    pred = predicate or env.store.scalar("SELECT predicate FROM assertions WHERE id = ?", [int(assertion_id)]) or ""
    if object is not None:
        changes["object_id"] = _entity_for(env, object, pred)
    if literal is not None:
        changes["object_literal"] = literal
    if subject is not None:
        changes["subject_id"] = _entity_for(env, subject, "")
    if qualifier is not None:
        changes["qualifier"] = qualifier or None
    if valid_from is not None:
        changes["valid_from"] = _day(valid_from or None, "--valid-from")
    if valid_to is not None:
        changes["valid_to"] = _day(valid_to or None, "--valid-to")
    if not changes:
        raise OpError(
            "say what to correct: --object, --literal, --qualifier, --predicate, --subject, --valid-from or --valid-to"
        )
    try:
        new_id = rectify.correct(
            env.store, int(assertion_id), changes, owner_name=env.settings.owner.name, reason=reason, via=via
        )
    except rectify.RectifyError as exc:
        raise OpError(str(exc)) from None
    return {"corrected": int(assertion_id), "new_id": new_id, "fields": sorted(changes)}


@op(read=False)
def retract_assertion(env: OpEnv, assertion_id: int, reason: str, via: str = "cli") -> dict[str, Any]:
    try:
        rectify.retract(env.store, int(assertion_id), owner_name=env.settings.owner.name, reason=reason, via=via)
    except rectify.RectifyError as exc:
        raise OpError(str(exc)) from None
    return {"retracted": int(assertion_id), "reason": reason}


@op(read=True)
def assertion_history(env: OpEnv, assertion_id: int) -> dict[str, Any]:
    """Who corrected or retracted this assertion (or the ones before and after it), when and why."""
    rows = rectify.history(env.store, int(assertion_id))
    for r in rows:
        r["before"] = json.loads(r["before"]) if r["before"] else {}
    return {"assertion_id": int(assertion_id), "changes": rows}


def _dedupe_entities(key: Any) -> set[int]:
    m = _DEDUPE.match(str(key or ""))
    return {int(x) for x in m[1].split(",") if x} if m else set()


@op(read=True)
def audit(env: OpEnv, ref: str) -> dict[str, Any]:
    """Every run, program, model call, MCP request and export that touched facts about one
    person, and what of it crossed to a model or a channel."""
    e = find_one(env, ref)
    store = env.store
    ids = {e.id} | {r[0] for r in store.con.execute("SELECT id FROM entities WHERE merged_into = ?", [e.id]).fetchall()}
    idl = sorted(ids)
    aids = {
        r[0]
        for r in store.con.execute(
            "SELECT id FROM assertions WHERE list_contains($1, subject_id) OR list_contains($1, object_id) "
            "OR list_contains($1, speaker_id) OR list_contains($1, recipient_id)",
            [idl],
        ).fetchall()
    }
    per_run: dict[str, dict[str, Any]] = {}

    def touch(run_id: str) -> dict[str, Any]:
        return per_run.setdefault(run_id, {"programs": set(), "excerpts": 0, "proposals": [], "per_candidate": []})

    for run_id, data in store.con.execute(
        "SELECT run_id, CAST(data AS VARCHAR) FROM events WHERE run_id IS NOT NULL ORDER BY seq"
    ).fetchall():
        try:
            d = json.loads(data) if data else {}
        except ValueError:
            continue
        if not isinstance(d, dict):
            continue
        hit = bool(_dedupe_entities(d.get("dedupe_key")) & ids)
        cands = d.get("candidates")
        per_candidate, excerpts = [], 0
        for c in cands if isinstance(cands, list) else []:
            if not isinstance(c, dict):
                continue
            ev = list(c.get("evidence_ids") or []) or [
                x.get("assertion_id") if isinstance(x, dict) else x for x in c.get("evidence") or []
            ]
            # The drafter is shown a candidate's first MAX_EXCERPTS excerpts, one call per candidate.
            mine = [x for x in ev[:MAX_EXCERPTS] if x in aids]
            per_candidate.append(len(mine))
            excerpts += len(mine)
            hit = hit or bool(mine or set(c.get("entities") or []) & ids)
        if hit:
            r = touch(run_id)
            r["excerpts"] += excerpts
            if per_candidate:
                r["per_candidate"] = per_candidate
            if d.get("skill"):
                r["programs"].add(str(d["skill"]))
    for p in store.query(
        "SELECT id, run_id, kind, entity_ids, CAST(evidence AS VARCHAR) AS evidence, status "
        "FROM proposals ORDER BY created_at"
    ):
        ev = [x.get("assertion_id") for x in json.loads(p["evidence"] or "[]") if isinstance(x, dict)]
        mine = [x for x in ev if x in aids]
        if mine or set(p["entity_ids"]) & ids:
            r = touch(p["run_id"])
            r["proposals"].append({"id": p["id"], "kind": p["kind"], "status": p["status"], "excerpts": len(mine)})
    run_rows = {
        r["id"]: r
        for r in store.query(
            "SELECT id, wake_kind, status, started_at, assertions_touched, excerpts_sent FROM runs "
            "WHERE list_contains(?, id)",
            [sorted(per_run)],
        )
    }
    calls = store.query(
        "SELECT id, run_id, role, model, attempt, repair, outcome, prompt_tokens, completion_tokens,"
        " created_at "
        "FROM model_calls WHERE list_contains(?, run_id) ORDER BY id",
        [sorted(per_run)],
    )
    runs_out = []
    for rid, r in sorted(per_run.items(), key=lambda kv: str(run_rows.get(kv[0], {}).get("started_at") or "")):
        mine_calls = _attribute(r, [c for c in calls if c["run_id"] == rid], run_rows.get(rid, {}).get("wake_kind"))
        runs_out.append(
            {
                "run_id": rid,
                **{k: v for k, v in run_rows.get(rid, {}).items() if k != "id"},
                "programs": sorted(r["programs"]),
                "proposals": r["proposals"],
                "model_calls": mine_calls,
                "excerpts_to_model": sum(c["excerpts_about_them"] for c in mine_calls),
            }
        )
    channels = store.query(
        """SELECT o.proposal_id, o.channel, o.status, o.sent_at FROM outbox o JOIN proposals p ON p.id = o.proposal_id
           WHERE list_has_any(p.entity_ids, ?) ORDER BY o.id""",
        [idl],
    )
    access = _access(env, ids)
    return {
        "entity": {"id": e.id, "name": e.name, "kind": e.kind},
        "assertions": len(aids),
        "runs": runs_out,
        "model_calls": sum(len(r["model_calls"]) for r in runs_out),
        "excerpts_to_models": sum(r["excerpts_to_model"] for r in runs_out),
        "channels": channels,
        "access": access,
    }


def _attribute(r: dict[str, Any], calls: list[dict[str, Any]], wake_kind: str | None) -> list[dict[str, Any]]:
    """Each model call with the excerpts about the person it was shown. An `ask` drafts its
    candidates in order, one call each (a retry or a repair of the same candidate follows it):
    the n-th first attempt is the n-th candidate's. In a wake, the judge and the drafter see
    the evidence of each proposal made; the proposal's count goes to that run's last
    successful judge or draft call of it (an upper bound per call, exact per run)."""
    out = [{**c, "excerpts_about_them": 0} for c in calls]
    drafts = [c for c in out if c["role"] in ("draft", "judge")]
    if wake_kind == "ask":
        k = -1
        for c in drafts:
            if c["role"] == "draft" and c.get("attempt", 1) == 1 and not c.get("repair"):
                k += 1
            if c["outcome"] == "ok" and 0 <= k < len(r["per_candidate"]):
                c["excerpts_about_them"] = r["per_candidate"][k]
        return out
    excerpts = max(r["excerpts"], sum(p["excerpts"] for p in r["proposals"]))
    ok = [c for c in drafts if c["outcome"] == "ok"]
    if ok:
        ok[-1]["excerpts_about_them"] = excerpts
    return out


ACCESS_FILE = "access.jsonl"


def record_access(
    env: OpEnv, kind: str, entity_ids: list[int], *, assertions: int = 0, excerpts: int = 0, detail: str | None = None
) -> None:
    """An export, an MCP read or a web page that read facts about these entities (empty: about
    everyone), appended to `<state dir>/access.jsonl` (0600): a read operation never writes the
    store, and the line holds entity ids and counts, never a name, so an erasure leaves nothing
    of the person in it."""
    import json as _json
    import os

    from backchannel.memory.store import utcnow

    line = (
        _json.dumps(
            {
                "accessed_at": utcnow().isoformat(),
                "kind": kind,
                "entity_ids": sorted(entity_ids),
                "assertions": assertions,
                "excerpts": excerpts,
                "detail": detail,
            }
        )
        + "\n"
    )
    try:
        fd = os.open(env.paths.state_dir / ACCESS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        return  # an unwritable state folder must not refuse the read itself


def _access(env: OpEnv, ids: set[int]) -> list[dict[str, Any]]:
    path = env.paths.state_dir / ACCESS_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and (not d.get("entity_ids") or set(d["entity_ids"]) & ids):
            out.append(d)
    return out

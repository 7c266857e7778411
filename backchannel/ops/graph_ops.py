"""Operations on the graph: ask a question, list and run skills, import assertions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backchannel.ops import OpEnv, OpError, op


def _api(env: OpEnv, reader: str = "ask") -> Any:
    from backchannel.graph.api import GraphAPI

    # Only the source scopes [scope] gives this reader (ask, or mcp when the MCP server asks).
    return GraphAPI(env.store, env.settings, scopes=getattr(env.settings.scope, reader, None))


def _gateway(env: OpEnv) -> Any:
    m = env.settings.models
    if m.sweep == "offline" and m.draft == "offline":
        return None
    from backchannel.agent.models import Gateway

    return Gateway(env.settings, env.store, env.paths)


@op(read=False)
def ask(env: OpEnv, question: str, show_code: bool = False, reader: str = "ask") -> dict[str, Any]:
    """Sweep then draft for a question; records a run (wake_kind "ask") with its
    assertions touched and excerpts sent. Returns the ranked drafts with evidence."""
    from backchannel.agent.drafter import draft
    from backchannel.agent.sweeper import sweep
    from backchannel.engine import runs

    question = (question or "").strip()
    if not question:
        raise OpError("ask needs a question")
    store = env.store
    if reader not in ("ask", "mcp"):
        raise OpError(f"unknown reader {reader!r}")
    from backchannel.graph.edge_guard import GuardedAPI
    from backchannel.memory.edges import EdgeStopped

    api = GuardedAPI(_api(env, reader), env.settings.edges.program)  # the program edge
    gateway = _gateway(env)
    run_id = runs.start(store, runs.WakeRecord("ask", None, {"question": question, "reader": reader}))
    status, reason = "done", None
    try:
        swept = sweep(
            {"wake": "ask", "question": question},
            api=api,
            settings=env.settings,
            paths=env.paths,
            gateway=gateway,
            run_id=run_id,
            question=question,
        )
        touched = int(swept.sandbox_stats.get("assertions_touched") or 0)
        runs.add_counts(store, run_id, touched=touched)
        seq = store.append_event(
            "sweep.done",
            {
                "skill": swept.skill,
                "attempts": swept.attempts,
                "errors": swept.errors,
                "sandbox_stats": swept.sandbox_stats,
                "candidates": [c.to_dict() for c in swept.candidates],
                "route": swept.route,
                "notes": swept.notes,
            },
            run_id=run_id,
            key=f"{run_id}:sweep.done",
        )
        api.record(
            store,
            run_id,
            swept.skill,
            swept.sandbox_stats,
            [i for c in swept.candidates for i in (c.evidence_ids or [])],
            seq,
        )
        if api.stopped:
            raise EdgeStopped("program", api.stopped)
        drafted = draft(swept.candidates, api=api.api, settings=env.settings, gateway=gateway, run_id=run_id)
        runs.add_counts(store, run_id, excerpts=drafted.excerpts_sent)
        runs.step(
            store,
            run_id,
            "draft.done",
            {"drafts": len(drafted.drafts), "excerpts_sent": drafted.excerpts_sent, "errors": drafted.errors},
        )
        if swept.budget_stopped:
            status, reason = "budget_stopped", "; ".join(e for e in swept.errors if e.startswith("budget"))
    except EdgeStopped as exc:  # a limit of [edges.*]: the run stops, and the answer says why
        runs.step(store, run_id, "edge.stopped", {"edge": exc.edge, "reason": exc.reason})
        runs.finish(store, run_id, "failed", str(exc)[:1000])
        return {
            "run_id": run_id,
            "question": question,
            "skill": None,
            "attempts": 0,
            "candidates": [],
            "assertions_touched": 0,
            "excerpts_sent": 0,
            "errors": [str(exc)],
            "status": "failed",
            "sandbox_stats": {},
            "why_nothing": str(exc),
            "notes": [],
            "route": None,
            **({"code": "# stopped at an edge\n"} if show_code else {}),
        }
    except BaseException as exc:
        runs.finish(store, run_id, "failed", f"{type(exc).__name__}: {exc}")
        raise
    runs.finish(store, run_id, status, reason)
    out = {
        "run_id": run_id,
        "question": question,
        "skill": swept.skill,
        "attempts": swept.attempts,
        "candidates": [d.to_dict() for d in drafted.drafts],
        "assertions_touched": touched,
        "excerpts_sent": drafted.excerpts_sent,
        "errors": swept.errors + drafted.errors,
        "status": status,
        "sandbox_stats": swept.sandbox_stats,
        # Why nothing was found, when the skill could tell ("no one named X in memory"); null otherwise.
        "why_nothing": "; ".join(swept.nothing_found) if not drafted.drafts and swept.nothing_found else None,
        # What the answer assumed ("Nick: 2 people (...); answering for both"), and how the skill was picked.
        "notes": swept.notes,
        "route": swept.route,
    }
    if show_code:
        # The program that ran, always: a skill's source with its arguments, the generated code,
        # or a line saying why nothing ran.
        out["code"] = swept.code or "# no program ran\n"
    return out


@op(read=False)
def skills(env: OpEnv) -> list[dict[str, Any]]:
    """Every skill (built-in and the user's) with its doc and parameters, `error`
    null; then each user skill file that cannot be used, with `error` saying why."""
    from backchannel.skills import broken_skills, list_skills

    rows = [{**s.summary(), "error": None} for s in list_skills(env.paths)]
    rows += [
        {
            "name": b["name"],
            "doc": "",
            "params": {},
            "origin": b["file"],
            "kind": None,
            "wakes": [],
            "error": b["error"],
        }
        for b in broken_skills(env.paths)
    ]
    return rows


@op(read=True)
def agents(env: OpEnv) -> list[dict[str, Any]]:
    """Every agent's methods and how each runs under this configuration: "python" (a
    method with a body), "model" (a completed method, with its model string), "offline"
    (a completed method's registered implementation), "sandbox" (a user agent's body);
    then the user's agents (agent/user_agents.py), a file that cannot be used with `error`."""
    from backchannel.agent.base import describe
    from backchannel.agent.drafter import Drafter
    from backchannel.agent.loop import Proactive
    from backchannel.agent.sweeper import Sweeper
    from backchannel.agent.user_agents import describe_user_agents
    from backchannel.agent.work import Answers, Briefs, Commitments, Introductions, Reconnects

    rows: list[dict[str, Any]] = []
    for cls in (Proactive, Sweeper, Drafter, Introductions, Briefs, Commitments, Reconnects, Answers):
        rows += [{**r, "origin": "builtin", "error": None} for r in describe(cls, env.settings)]
    return rows + describe_user_agents(env.paths, env.settings)


@op(read=False)
def agent_call(env: OpEnv, name: str, method: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Call METHOD of the user agent NAME (loaded from the skills folder now): a completed
    method through the model gateway, a method with a body in the sandbox."""
    from backchannel.agent.base import CompletionFailed
    from backchannel.agent.user_agents import UserAgentError, load_agent
    from backchannel.engine import runs

    run_id = runs.start(env.store, runs.WakeRecord("agent", None, {"agent": name, "method": method}))
    try:
        agent = load_agent(name, env.paths, gateway=_gateway(env), run_id=run_id, settings=env.settings, api=_api(env))
        value = agent.call(method, **(args or {}))
    except (UserAgentError, CompletionFailed, TypeError) as exc:
        runs.finish(env.store, run_id, "failed", str(exc))
        raise OpError(str(exc)) from None
    runs.finish(env.store, run_id, "done", None)
    result = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    return {
        "agent": name,
        "method": method,
        "run_id": run_id,
        "result": result,
        "calls": [c.__dict__ for c in agent.calls],
    }


@op(read=False)
def skill_run(env: OpEnv, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one skill through the sandbox; candidates come back with their evidence."""
    from backchannel.agent.drafter import fill_evidence
    from backchannel.agent.questions import nothing_found_reasons
    from backchannel.agent.skill_args import check_args
    from backchannel.agent.sweeper import run_skill
    from backchannel.skills import SkillError, get_skill

    api = _api(env)
    try:
        skill = get_skill(name, env.paths)
        check_args(skill, args or {})
        candidates, res = run_skill(skill, api, env.settings, args=args or {})
    except SkillError as exc:
        raise OpError(str(exc)) from None
    fill_evidence(candidates, api)
    reasons = nothing_found_reasons(res.output) if res.ok and not candidates else []
    return {
        "skill": name,
        "origin": skill.origin,
        "ok": res.ok,
        "error": res.error,
        "stats": res.stats,
        "candidates": [c.to_dict() for c in candidates],
        # why the answer is empty, as the skill printed it (the same words `ask` shows); null otherwise
        "why_nothing": "; ".join(reasons) or None,
    }


@op(read=False)
def import_assertions(env: OpEnv, path: str) -> dict[str, Any]:
    """Import a JSONL file of entities and assertions (docs/import-format.md), in one
    transaction; importing the same lines again is a no-op."""
    from backchannel.graph.importer import ImportFailed, import_jsonl

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpError(f"cannot read {path}: {exc}") from None
    try:
        report = import_jsonl(
            env.store,
            text.splitlines(),
            owner_name=env.settings.owner.name,
            owner_aliases=env.settings.owner.aliases,
            source_file=str(p),
        )
    except ImportFailed as exc:
        raise OpError(f"{path}: nothing imported: {exc}") from None
    return {"file": str(p), **report.to_dict()}

"""The sweeper role: from a wake or a question to candidates, by running code.

With a sweep model, the model reads the question (or wake context), the graph
API stubs and the docs of the relevant skills, and writes a program; the sandbox
runs it; a failure goes back to the model with its error for a bounded number of
attempts, inside the run's budget. Offline (or when the model path fails for a
reason other than the budget), the matching prepared skills run instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from backchannel.agent.base import Agent
from backchannel.agent.questions import nothing_found_reasons, question_args
from backchannel.graph.types import Candidate, CandidateError, candidates_from_result
from backchannel.skills import WAKE_SKILLS, Skill, SkillError, get_skill, relevant_skills

_CODE_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\r?\n(.*?)```", re.S | re.I)
MAX_ERROR_CHARS = 4000  # a traceback longer than this is cut before it goes back to the model


@dataclass
class SweepResult:
    candidates: list[Candidate]
    skill: str | None  # the skill(s) that ran ("a+b"), or "generated"
    code: str | None  # the program that produced the candidates
    attempts: int  # model attempts (0 offline)
    sandbox_stats: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    budget_stopped: bool = False
    nothing_found: list[str] = field(default_factory=list)  # why a skill found nothing, as it printed
    notes: list[str] = field(default_factory=list)  # what the user should know (a name fitting several people)
    route: dict[str, Any] | None = None  # how a question picked its skill (routing.Route.to_dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "skill": self.skill,
            "code": self.code,
            "attempts": self.attempts,
            "sandbox_stats": self.sandbox_stats,
            "errors": self.errors,
            "budget_stopped": self.budget_stopped,
            "nothing_found": self.nothing_found,
            "notes": self.notes,
            "route": self.route,
        }


def prompt_text(name: str) -> str:
    return (resources.files("backchannel.agent") / "prompts" / name).read_text(encoding="utf-8")


def extract_code(text: str) -> str:
    """The program in a model answer: the longest fenced block, else the whole text."""
    blocks = _CODE_BLOCK.findall(text or "")
    return (max(blocks, key=len) if blocks else (text or "")).strip() + "\n"


def _add_stats(total: dict[str, Any], stats: dict[str, Any]) -> None:
    for k in ("api_calls", "assertions_touched", "rows_returned", "cpu_s", "wall_s", "api_s"):
        v = stats.get(k)
        if isinstance(v, (int, float)):
            total[k] = round(total.get(k, 0) + v, 4)
    total["runs"] = total.get("runs", 0) + int(stats.get("runs", 1))


# -- offline: prepared skills ------------------------------------------------
def _wake_args(skill: Skill, context: dict[str, Any]) -> dict[str, Any]:
    """Skill parameters implied by a wake's context (a signal's orgs, a meeting's people)."""
    out: dict[str, Any] = {}
    signal = context.get("signal") or {}
    if "org_ids" in skill.params and signal.get("org_ids") and not context.get("org_ids"):
        out["org_ids"] = list(signal["org_ids"])
    event = context.get("event") or {}
    if "attendee_ids" in skill.params and event.get("attendee_ids") and not context.get("attendee_ids"):
        out["attendee_ids"] = list(event["attendee_ids"])
    return out


def wake_kind(context: dict[str, Any]) -> str:
    """The wake kind of a context: "wake", "trigger" or "kind" (the daemon says "trigger")."""
    return str(context.get("wake") or context.get("trigger") or context.get("kind") or "sweep")


def choose_skills(context: dict[str, Any], question: str | None, paths: Any) -> list[Skill]:
    """The prepared skills for a question (best keyword match) or a wake kind."""
    if context.get("skill"):
        return [get_skill(str(context["skill"]), paths)]
    if question:
        found = relevant_skills(question, paths)
        return found[:1]
    wake = wake_kind(context)
    if wake in WAKE_SKILLS:
        return [get_skill(n, paths) for n in WAKE_SKILLS[wake]]
    # Another trigger (inbox, manual, ...): its keywords, else the periodic sweep's skills.
    return relevant_skills(wake, paths) or [get_skill(n, paths) for n in WAKE_SKILLS["sweep"]]


def run_skill(
    skill: Skill, api: Any, settings: Any, *, args: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> tuple[list[Candidate], Any]:
    """Run one skill through the sandbox; returns (candidates, SandboxResult)."""
    ctx = skill.context_for(args, {**(context or {}), **_wake_args(skill, context or {})})
    return _run_one(skill, ctx, api, settings)


def _run_one(skill: Skill, ctx: dict[str, Any], api: Any, settings: Any) -> tuple[list[Candidate], Any]:
    from backchannel.sandbox import run_program

    res = run_program(skill.source_code, api, settings.sandbox, context=ctx)
    if not res.ok:
        return [], res
    try:
        return candidates_from_result(res.result), res
    except CandidateError as exc:
        res.ok, res.error = False, f"skill {skill.name} returned bad candidates: {exc}"
        return [], res


def _run_together(ready: list[tuple[Skill, dict[str, Any]]], api: Any, settings: Any) -> Any:
    """The skills of one sweep in one sandbox child (skill_batch); None to run them apart."""
    from backchannel.agent.skill_batch import run_batch

    return run_batch([s for s, _ in ready], [c for _, c in ready], api, settings)


def _skill_candidates(skill: Skill, outcome: dict[str, Any]) -> tuple[list[Candidate], str | None]:
    """(candidates, error) of one skill's outcome in a combined run."""
    if not outcome.get("ok"):
        return [], f"the program raised {outcome.get('error')}"
    try:
        return candidates_from_result(outcome.get("result")), None
    except CandidateError as exc:
        return [], f"skill {skill.name} returned bad candidates: {exc}"


def _program_text(skill: Skill, args: dict[str, Any]) -> str:
    """The program as it ran: the skill's source, after the arguments it was given."""
    given = json.dumps(args, ensure_ascii=False, default=str) if args else "(defaults)"
    return f"# skill: {skill.name}\n# arguments: {given}\n{skill.source_code.strip()}"


def _offline(
    context: dict[str, Any], question: str | None, api: Any, settings: Any, paths: Any, errors: list[str]
) -> SweepResult:
    routed = None
    try:
        if question and not context.get("skill"):
            from backchannel.agent.routing import resolve_targets, route

            routed = resolve_targets(route(question, paths), api)
            skills = [routed.skill] if routed.skill else []
        else:
            skills = choose_skills(context, question, paths)
    except SkillError as exc:
        return SweepResult([], None, None, 0, {}, errors + [str(exc)])
    if not skills:
        errors = errors + ["no prepared skill matches this question; configure a sweep model for open questions"]
        why = "; ".join(routed.notes) if routed and routed.notes else "no prepared skill matches this question"
        return SweepResult(
            [],
            None,
            f"# no program ran: {why}\n",
            0,
            {},
            errors,
            notes=routed.notes if routed else [],
            route=routed.to_dict() if routed else None,
        )
    candidates: list[Candidate] = []
    stats: dict[str, Any] = {}
    reasons: list[str] = []
    ran_args: dict[str, dict[str, Any]] = {}
    ready: list[tuple[Skill, dict[str, Any]]] = []  # (skill, its context) for those whose arguments fit
    for skill in skills:
        if routed is not None:
            args = routed.args
        else:
            args = question_args(skill, question) if question else {}
        ran_args[skill.name] = args
        try:
            ready.append((skill, skill.context_for(args, {**context, **_wake_args(skill, context)})))
        except SkillError as exc:
            errors.append(str(exc))
    batch = _run_together(ready, api, settings) if len(ready) > 1 else None
    if batch is not None:
        outcomes, outputs, res = batch
        _add_stats(stats, res.stats)
        for (skill, _), outcome, output in zip(ready, outcomes, outputs):
            found, error = _skill_candidates(skill, outcome)
            if error:
                errors.append(f"{skill.name}: {error}")
            elif not found:
                reasons.extend(nothing_found_reasons(output))
            candidates.extend(found)
    else:  # one skill, or a combined run that failed as a whole: one child each, errors kept apart
        for skill, ctx in ready:
            found, res = _run_one(skill, ctx, api, settings)
            _add_stats(stats, res.stats)
            if not res.ok:
                errors.append(f"{skill.name}: {res.error}")
            elif not found:
                reasons.extend(nothing_found_reasons(res.output))
            candidates.extend(found)
    candidates.sort(key=lambda c: -c.score)
    code = "\n\n".join(_program_text(s, ran_args.get(s.name) or {}) for s in skills)
    return SweepResult(
        candidates,
        "+".join(s.name for s in skills),
        code,
        0,
        stats,
        errors,
        nothing_found=[] if candidates else reasons,
        notes=routed.notes if routed else [],
        route=routed.to_dict() if routed else None,
    )


# -- with a model: generated code --------------------------------------------
def build_messages(context: dict[str, Any], question: str | None, skills: list[Skill]) -> list[dict[str, str]]:
    """What the sweep model reads: only these skills and the API they walk (agent/sweep_prompt.py)."""
    from backchannel.agent import sweep_prompt

    return sweep_prompt.build_messages(context, question, skills, wake_kind(context))


def _log(api: Any, run_id: str | None, kind: str, data: dict[str, Any], key: str) -> None:
    store = getattr(api, "store", None)
    if store is not None and run_id and not getattr(store, "read_only", False):
        store.append_event(kind, data, run_id=run_id, key=f"{run_id}:{key}")


class Sweeper(Agent):
    """The sweeper role as an agent: its own model (`[models] sweep`), its own context
    (the wake's context or the question, the graph API stubs, the relevant skills' docs:
    `build_messages`, the prompt files under agent/prompts) and its own budget. Its one
    capability has a body: it writes its own prompt, and the program the model answers
    runs in the sandbox; offline, the prepared skills run instead."""

    role = "sweep"
    api: Any = None  # the graph API served to its programs
    skill_paths: Any = None  # where the user's skills are

    def sweep(self, context: dict[str, Any], question: str | None = None) -> SweepResult:
        """Candidates for a wake (`context["wake"]`) or a question; never raises for what a
        program or a model does (see `errors`)."""
        return _sweep(self, context, question)


def sweep(
    context: dict[str, Any],
    *,
    api: Any,
    settings: Any,
    paths: Any,
    gateway: Any = None,
    run_id: str | None = None,
    question: str | None = None,
) -> SweepResult:
    """Candidates for a wake (`context["wake"]`: meeting_soon, signal, sweep...) or a
    question. Never raises for what a program or a model does; see `errors`."""
    agent = Sweeper(gateway=gateway, run_id=run_id, settings=settings, api=api, skill_paths=paths)
    return agent.sweep(context, question)


def _sweep(agent: Sweeper, context: dict[str, Any], question: str | None) -> SweepResult:
    api, settings, paths = agent.api, agent.settings, agent.skill_paths
    gateway, run_id = agent.gateway, agent.run_id
    context = dict(context or {})
    if question and "question" not in context:
        context["question"] = question
    offline = gateway is None or settings.models.sweep == "offline"
    if offline:
        result = _offline(context, question, api, settings, paths, [])
        _log(
            api,
            run_id,
            "sweep.offline",
            {
                "skill": result.skill,
                "candidates": len(result.candidates),
                "errors": result.errors,
                "stats": result.sandbox_stats,
            },
            "sweep:offline",
        )
        return result
    from backchannel.agent import sweep_prompt
    from backchannel.agent.models import BudgetExhausted, GatewayError
    from backchannel.sandbox import run_program

    skills = relevant_skills(question or wake_kind(context), paths)
    bases = [s.context_for({}, {**context, **_wake_args(s, context)}) for s in skills]  # what run_skill starts from
    messages = build_messages(context, question, skills)
    attempts_allowed = max(1, int(settings.models.sweep_attempts))
    errors: list[str] = []
    stats: dict[str, Any] = {}
    code = None
    for attempt in range(1, attempts_allowed + 1):
        try:
            completion = agent.model_messages("sweep", messages)
        except BudgetExhausted as exc:
            errors.append(f"budget: {exc.reason}")
            _log(api, run_id, "sweep.budget_stopped", {"attempt": attempt, "reason": exc.reason}, f"sweep:{attempt}")
            return SweepResult([], "generated", code, attempt - 1, stats, errors, budget_stopped=True)
        except GatewayError as exc:
            errors.append(f"model: {exc}")
            _log(api, run_id, "sweep.model_failed", {"attempt": attempt, "error": str(exc)}, f"sweep:{attempt}")
            break
        code = extract_code(completion.text)
        runnable, offset = sweep_prompt.with_skills(code, skills, bases)
        res = run_program(runnable, api, settings.sandbox, context=context)
        _add_stats(stats, res.stats)
        error = sweep_prompt.own_lines(res.error, offset)
        candidates: list[Candidate] = []
        if res.ok:
            try:
                candidates = candidates_from_result(res.result)
            except CandidateError as exc:
                error = f"the result is not a list of candidates: {exc}"
        _log(
            api,
            run_id,
            "sweep.attempt",
            {
                "attempt": attempt,
                "ok": error is None,
                "error": error,
                "candidates": len(candidates),
                "stats": res.stats,
            },
            f"sweep:{attempt}",
        )
        if error is None:
            return SweepResult(candidates, "generated", code, attempt, stats, errors)
        errors.append(f"attempt {attempt}: {error}")
        if res.output:
            error = f"{error}\n\nThe program printed:\n{res.output[-1000:]}"
        messages = messages + [
            {"role": "assistant", "content": completion.text},
            {
                "role": "user",
                "content": prompt_text("sweep_retry.md").format(
                    attempt=attempt, attempts=attempts_allowed, error=(error or "")[-MAX_ERROR_CHARS:]
                ),
            },
        ]
    fallback = _offline(context, question, api, settings, paths, errors + ["falling back to prepared skills"])
    fallback.attempts = attempt
    _add_stats(fallback.sandbox_stats, stats)
    return fallback

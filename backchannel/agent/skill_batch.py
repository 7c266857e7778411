"""Several prepared skills in ONE sandbox child.

A wake runs up to two skills; each sandbox child costs ~55 ms to start, most of a
sweep wake's overhead at 1M assertions. So the skills of one sweep run as one
program: each skill's PROGRAM becomes the body of its own function (its own
`context`, its own names), the functions run in order, and an exception in one
is caught and returned as that skill's error while the others still run.

The rewrite is done on the AST (never by indenting text, which would change a
multi-line string): a trailing bare expression becomes `result = ...`, as the
sandbox does for a whole program, and the function returns `result`.

Anything that makes the combined run fail as a whole (a result that is not JSON,
a time limit) is reported by `run_batch` as None: the caller then runs the skills
one child each, so each keeps its own error.
"""

from __future__ import annotations

import ast
from typing import Any

from backchannel.skills import Skill

_RESULTS = "_batch_results"
SKILL_MARK = "# skill output: "  # printed before each skill runs, to split the output


def skill_function(skill: Skill, index: int) -> ast.FunctionDef:
    tree = ast.parse(skill.source_code, f"<skill {skill.name}>")
    body = list(tree.body)
    if body and isinstance(body[-1], ast.Expr):
        last = body[-1]
        body[-1] = ast.copy_location(ast.Assign(targets=[ast.Name("result", ast.Store())], value=last.value), last)
    # `result = None` first: a skill that assigns nothing returns None, as a lone program would.
    start = ast.Assign(targets=[ast.Name("result", ast.Store())], value=ast.Constant(None))
    ret = ast.Return(value=ast.Name("result", ast.Load()))
    args = ast.arguments(
        posonlyargs=[], args=[ast.arg("context")], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    func = ast.FunctionDef(name=f"_skill_{index}", args=args, body=[start, *body, ret], decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        setattr(func, "type_params", [])  # noqa: B010 - a field this Python's stubs do not declare
    return func


def combined_program(skills: list[Skill]) -> str:
    """One program running `skills` in order; `context["skills"][i]` is skill i's context.
    Its result is a list with, per skill, {"ok": True, "result": ...} or {"ok": False, "error": ...}."""
    funcs = [skill_function(s, i) for i, s in enumerate(skills)]
    names = ", ".join(f.name for f in funcs)
    driver = ast.parse(
        f"{_RESULTS} = []\n"
        f"for _i, _run in enumerate([{names}]):\n"
        f"    print({SKILL_MARK!r} + str(_i))\n"
        f"    try:\n"
        f"        {_RESULTS}.append({{'ok': True, 'result': _run(context['skills'][_i])}})\n"
        f"    except Exception as _exc:\n"
        f"        {_RESULTS}.append({{'ok': False, 'error': repr(_exc)}})\n"
        f"result = {_RESULTS}\n"
    )
    module = ast.Module(body=[*funcs, *driver.body], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


def split_output(output: str | None, count: int) -> list[str]:
    """The printed output of each skill, by the marks the program printed."""
    parts = [""] * count
    current = None
    for line in (output or "").splitlines(keepends=True):
        if line.startswith(SKILL_MARK):
            tail = line[len(SKILL_MARK) :].strip()
            if tail.isdigit() and int(tail) < count:
                current = int(tail)
                continue
        if current is not None:
            parts[current] += line
    return parts


def run_batch(
    skills: list[Skill], contexts: list[dict[str, Any]], api: Any, settings: Any
) -> tuple[list[dict[str, Any]], list[str], Any] | None:
    """Run `skills` (with their `contexts`) in one sandbox child. Returns
    (per-skill outcomes, per-skill output, the SandboxResult), or None when the
    combined run failed as a whole and the skills should run one child each."""
    from backchannel.sandbox import run_program

    res = run_program(combined_program(skills), api, settings.sandbox, context={"skills": contexts})
    if not res.ok or not isinstance(res.result, list) or len(res.result) != len(skills):
        return None
    if not all(isinstance(r, dict) and isinstance(r.get("ok"), bool) for r in res.result):
        return None
    return res.result, split_output(res.output, len(skills)), res


__all__ = ["SKILL_MARK", "combined_program", "run_batch", "split_output"]

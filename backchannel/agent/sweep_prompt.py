"""What the sweep model reads, and only that: capability on demand.

A wake or a question needs a few prepared skills and the few graph API methods
they walk. The prompt carries exactly those: each relevant skill as one callable
(`run_skill(NAME, **params)`: its doc and parameters, not its source), the full
stubs (signature and docstring, generated from the real GraphAPI) of the methods
those skills call plus the few every program needs, and the other served methods
as one compact signature line each. The generated program that calls
`run_skill` gets the skills' programs defined before it (`with_skills`), so the
model neither reads nor rewrites a prepared traversal to use it, and the sandbox
runs it as it runs any skill.
"""

from __future__ import annotations

import ast
import json
import re
from importlib import resources
from typing import Any

from backchannel.agent.skill_batch import skill_function
from backchannel.core.vocabulary import CANDIDATE_KINDS
from backchannel.graph.api import API_METHODS
from backchannel.graph.stubs import method_signature, method_stub
from backchannel.skills import Skill

# Every program starts from the owner, a name or an id, and ends with evidence.
CORE_METHODS = ("me", "resolve", "entity", "evidence")
RUN_SKILL = "run_skill"
_LINE = re.compile(r"\bline (\d+)\b")
CANDIDATE_LINE = (
    f"# Candidate(kind: {' | '.join(CANDIDATE_KINDS)}, entities: [ids], path: [ids],"
    " evidence: [assertion ids], score: 0..1, why: str); a dict of the same keys will do."
)


def prompt_text(name: str) -> str:
    return (resources.files("backchannel.agent") / "prompts" / name).read_text(encoding="utf-8")


def methods_called(source: str) -> set[str]:
    """The `api.X` methods a program calls (read on its AST)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "api"
    }


def methods_for(skills: list[Skill]) -> list[str]:
    """The API methods shown in full: the core ones and those the skills walk, in API order."""
    wanted = set(CORE_METHODS).union(*(methods_called(s.source_code) for s in skills))
    return [m for m in API_METHODS if m in wanted]


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


def api_text(methods: list[str]) -> str:
    """The `api` class as the model reads it: full stubs for `methods`, one line for the rest."""
    parts = ["class api:  # every call is a read-only query; pass whole lists of ids"]
    parts += [_indent(method_stub(m)) for m in methods]
    rest = [method_signature(m).removeprefix("def ").removesuffix(":") for m in API_METHODS if m not in methods]
    if rest:
        parts.append("    # also served (no docs here; same conventions):\n" + "\n".join(f"    # {r}" for r in rest))
    parts.append(CANDIDATE_LINE)
    return "\n".join(parts)


def skill_stub(skill: Skill) -> str:
    """One prepared skill as a callable: `run_skill("name", param=default, ...)` and its doc."""
    params = ", ".join(f"{k}={v.get('default')!r}" for k, v in skill.params.items())
    docs = "".join(f"\n    {k}: {v.get('doc', '')}" for k, v in skill.params.items() if v.get("doc"))
    head = f"{RUN_SKILL}({skill.name!r}{', ' + params if params else ''}) -> list[Candidate]"
    return f'{head}\n    """{skill.doc}{docs}"""'


def build_messages(
    context: dict[str, Any], question: str | None, skills: list[Skill], wake: str
) -> list[dict[str, str]]:
    task = (
        f"Answer this question from the user: {question}"
        if question
        else (f"A wake of kind {wake!r} happened. Find what the user should act on now.")
    )
    skill_text = ""
    if skills:
        skill_text = (
            "\n## Prepared skills (call them; parameters not given come from `context`)\n```python\n"
            + "\n".join(skill_stub(s) for s in skills)
            + "\n```\n"
        )
    user = prompt_text("sweep_task.md").format(
        task=task,
        context=json.dumps(context, default=str, ensure_ascii=False, separators=(",", ":")),
        stubs=api_text(methods_for(skills)),
        skills=skill_text,
    )
    return [{"role": "system", "content": prompt_text("sweep_system.md").strip()}, {"role": "user", "content": user}]


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def skills_prelude(skills: list[Skill], bases: list[dict[str, Any]]) -> str:
    """The program that defines `run_skill` over `skills`; `bases[i]` is skill i's
    context before the call's arguments (its defaults and the wake's)."""
    funcs = [skill_function(s, i) for i, s in enumerate(skills)]
    table = {
        s.name: (i, _plain(b), sorted(k for k, v in s.params.items() if v.get("list")))
        for i, (s, b) in enumerate(zip(skills, bases))
    }
    driver = ast.parse(
        f"_skill_table = {table!r}\n"
        f"_skill_funcs = [{', '.join(f.name for f in funcs)}]\n"
        f"def {RUN_SKILL}(name, **args):\n"
        "    if name not in _skill_table:\n"
        "        raise ValueError(f'no prepared skill {name!r} here (these are: {sorted(_skill_table)})')\n"
        "    index, base, lists = _skill_table[name]\n"
        "    ctx = dict(base)\n"
        "    for key, value in args.items():\n"
        "        if key not in base:\n"
        "            raise TypeError(f'skill {name!r} has no parameter {key!r} (it takes: {sorted(base)})')\n"
        "        if key in lists and value is not None and not isinstance(value, (list, tuple)):\n"
        "            value = [value]\n"
        "        ctx[key] = value\n"
        "    return _skill_funcs[index](ctx)\n"
    )
    module = ast.Module(body=[*funcs, *driver.body], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


def with_skills(code: str, skills: list[Skill], bases: list[dict[str, Any]]) -> tuple[str, int]:
    """The program as the sandbox runs it, and how many lines come before the model's own
    (0 when it calls no skill: then it runs exactly as written)."""
    if not skills or RUN_SKILL not in code:
        return code, 0
    prelude = skills_prelude(skills, bases)
    return prelude + code, prelude.count("\n")


def own_lines(error: str | None, offset: int) -> str | None:
    """An error's line numbers as the model's program numbers them (the prelude removed);
    a line inside the prelude is a prepared skill's."""
    if not error or not offset:
        return error

    def shift(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return f"line {n - offset}" if n > offset else "line (in a prepared skill)"

    return _LINE.sub(shift, error)

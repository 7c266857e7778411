"""Skills: prepared traversals, each a program that runs in the sandbox against
`api`, with a short doc the sweeper model may read.

A skill is a .py file (in this package, or in the user skills folder) holding a
module docstring and literal assignments: NAME, KIND, WAKES (wake kinds it
serves), KEYWORDS (words of a question it answers), PARAMS ({name: {"default",
"doc", optional "list": True}}) and PROGRAM (the source that runs in the sandbox;
its parameters arrive in `context`). Files are parsed with `ast`, never imported or executed here: a
user skill runs only inside the sandbox, like any generated code.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import logging
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FIELDS = ("NAME", "KIND", "WAKES", "KEYWORDS", "PARAMS", "PROGRAM")
_WORD = re.compile(r"[a-z][a-z_']+")


class SkillError(Exception):
    """A skill file that cannot be used; the message names the file and why."""


@dataclass
class Skill:
    name: str
    doc: str
    params: dict[str, dict[str, Any]]
    source_code: str
    origin: str  # "builtin" or the user file's path
    kind: str = "other"
    wakes: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "doc": self.doc,
            "params": self.params,
            "origin": self.origin,
            "kind": self.kind,
            "wakes": list(self.wakes),
        }

    def prompt_doc(self) -> str:
        """What a model reads about this skill: its doc, its params and its program."""
        params = "\n".join(
            f"#   {k} (default {v.get('default')!r}): {v.get('doc', '')}" for k, v in self.params.items()
        )
        return (
            f"# Skill `{self.name}`: {self.doc}\n# Parameters (in `context`):\n{params}\n{self.source_code.strip()}\n"
        )

    def context_for(self, args: dict[str, Any] | None = None, base: dict[str, Any] | None = None) -> dict[str, Any]:
        """The `context` the program sees: the defaults, then `base` (the wake), then `args`."""
        ctx = {k: v.get("default") for k, v in self.params.items()}
        ctx.update(base or {})
        unknown = set(args or {}) - set(self.params)
        if unknown:
            raise SkillError(
                f"skill {self.name!r} has no parameter {', '.join(sorted(unknown))}"
                f" (it takes: {', '.join(self.params) or 'none'})"
            )
        for k, v in (args or {}).items():
            # A list parameter given one value (`--arg attendees="Kay Martin"`) means a list of one;
            # a bare string would otherwise be walked character by character.
            if self.params[k].get("list") and v is not None and not isinstance(v, (list, tuple)):
                v = [v]
            ctx[k] = v
        return ctx


def parse_skill(text: str, origin: str) -> Skill:
    """A Skill from a skill file's source, by reading its literals (no execution)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise SkillError(f"{origin}: not valid Python: {exc}") from None
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in FIELDS:
                try:
                    values[name] = ast.literal_eval(node.value)
                except ValueError:
                    raise SkillError(f"{origin}: {name} must be a literal") from None
    for required in ("NAME", "PROGRAM"):
        if not isinstance(values.get(required), str):
            raise SkillError(f"{origin}: missing {required} (a string)")
    from backchannel.sandbox.policy import PolicyViolation, check_source

    try:
        check_source(values["PROGRAM"], f"<skill {values['NAME']}>")  # parses only, never runs
    except SyntaxError as exc:
        raise SkillError(f"{origin}: PROGRAM is not valid Python: {exc}") from None
    except PolicyViolation as exc:
        raise SkillError(f"{origin}: PROGRAM would be refused by the sandbox: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise SkillError(f"{origin}: PROGRAM cannot be parsed: {exc}") from None
    params = values.get("PARAMS") or {}
    if not isinstance(params, dict) or not all(isinstance(v, dict) for v in params.values()):
        raise SkillError(f"{origin}: PARAMS must be a dict of {{name: {{'default': ..., 'doc': ...}}}}")
    for listed in ("WAKES", "KEYWORDS"):
        got = values.get(listed)
        if got is not None and (not isinstance(got, (tuple, list)) or not all(isinstance(x, str) for x in got)):
            raise SkillError(f'{origin}: {listed} must be a tuple of strings, e.g. {listed} = ("signal",)')
    doc = (ast.get_docstring(tree) or "").strip()
    return Skill(
        name=values["NAME"],
        doc=" ".join(doc.split("\n\n")[0].split()),
        params=params,
        source_code=values["PROGRAM"],
        origin=origin,
        kind=str(values.get("KIND") or "other"),
        wakes=tuple(values.get("WAKES") or ()),
        keywords=tuple(values.get("KEYWORDS") or ()),
    )


def _builtin_files() -> list[tuple[str, str]]:
    pkg = resources.files("backchannel.skills")
    return sorted(
        (p.name, p.read_text(encoding="utf-8"))
        for p in pkg.iterdir()
        if p.name.endswith(".py") and not p.name.startswith("_")
    )


_NAME_LINE = re.compile(r"^NAME\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)
_AGENT_CLASS = re.compile(r"^class\s+\w+\s*\(\s*(?:\w+\.)?Agent\s*\)", re.MULTILINE)
_warned: set[tuple[str, str]] = set()  # (file, error) already logged by this process


@functools.lru_cache(maxsize=256)
def _parse_cached(text: str, origin: str) -> Skill:
    # Parsing and the policy check cost ~5 ms a file; every wake lists the skills.
    return parse_skill(text, origin)


def _parse(text: str, origin: str) -> Skill:
    return dataclasses.replace(_parse_cached(text, origin))  # a copy: callers may not share state


def _load(paths: Any) -> tuple[dict[str, Skill], list[dict[str, str]]]:
    skills: dict[str, Skill] = {}
    broken: list[dict[str, str]] = []
    for _file_name, text in _builtin_files():
        s = _parse(text, "builtin")
        skills[s.name] = s
    user_dir = Path(paths.user_skills_dir) if paths is not None else None
    if user_dir is not None and user_dir.is_dir():
        for f in sorted(user_dir.glob("*.py")):
            text = ""
            try:
                text = f.read_text(encoding="utf-8")
                if _AGENT_CLASS.search(text) and not _NAME_LINE.search(text):
                    continue  # a user agent (agent/user_agents.py), not a skill
                s = _parse(text, str(f))
            except (SkillError, OSError, UnicodeDecodeError) as exc:
                m = _NAME_LINE.search(text)
                broken.append({"name": m.group(1) if m else f.stem, "file": str(f), "error": str(exc)})
                if (str(f), str(exc)) not in _warned:
                    _warned.add((str(f), str(exc)))
                    log.warning("skipping user skill %s: %s", f, exc)
                continue
            skills[s.name] = s
    return skills, broken


def list_skills(paths: Any = None) -> list[Skill]:
    """Every skill: the built-in ones, then the user's (`paths.user_skills_dir`), a
    user skill replacing a built-in one of the same NAME. Broken user files are
    skipped with a warning (see `broken_skills`)."""
    return sorted(_load(paths)[0].values(), key=lambda s: s.name)


def broken_skills(paths: Any = None) -> list[dict[str, str]]:
    """The user skill files that cannot be used: [{"name", "file", "error"}]."""
    return _load(paths)[1]


def get_skill(name: str, paths: Any = None) -> Skill:
    """The skill NAME. Raises SkillError naming the file and the reason when NAME is
    a broken user skill (and no built-in one of that name exists), or listing the
    known skills."""
    skills, broken = _load(paths)
    if name in skills:
        return skills[name]
    for b in broken:
        if b["name"] == name or Path(b["file"]).stem == name:
            raise SkillError(f"user skill {name!r} cannot be used: {b['error']}")
    raise SkillError(f"no skill named {name!r} (known: {', '.join(sorted(skills))})")


def relevant_skills(wake_or_question: str, paths: Any = None) -> list[Skill]:
    """The skills that serve a wake kind ("meeting_soon", "signal", "sweep"), or,
    for question text, those whose keywords it contains, best match first."""
    skills = list_skills(paths)
    text = (wake_or_question or "").strip().lower()
    by_wake = [s for s in skills if text in s.wakes]
    if by_wake:
        return _wake_order(by_wake, text)
    words = set(_WORD.findall(text))
    scored = []
    for s in skills:
        score = 0
        for kw in s.keywords:
            kw = kw.lower()
            if " " in kw:
                score += 2 if kw in text else 0
            elif kw in words or any(w.startswith(kw) for w in words):
                score += 1
        if score:
            scored.append((-score, s.name, s))
    return [t[2] for t in sorted(scored, key=lambda t: t[:2])]


# The order skills run in for a wake: the one listed first in WAKE_SKILLS leads.
WAKE_SKILLS: dict[str, tuple[str, ...]] = {
    "meeting_soon": ("pre_meeting_brief", "introductions"),
    "signal": ("introductions",),
    "sweep": ("stale_relationships", "open_commitments"),
}


def _wake_order(skills: list[Skill], wake: str) -> list[Skill]:
    order = WAKE_SKILLS.get(wake, ())
    return sorted(skills, key=lambda s: (order.index(s.name) if s.name in order else len(order), s.name))


__all__ = [
    "WAKE_SKILLS",
    "Skill",
    "SkillError",
    "broken_skills",
    "get_skill",
    "list_skills",
    "parse_skill",
    "relevant_skills",
]

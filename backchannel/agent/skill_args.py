"""Checks `skills run NAME --arg key=value` values against the skill's PARAMS before
the program runs, so that a wrong value is a sentence naming the parameter, not a
traceback from inside the sandbox."""

from __future__ import annotations

from typing import Any

from backchannel.skills import Skill, SkillError


def _kind(name: str, spec: dict[str, Any]) -> str:
    """What a parameter holds, from its name and default: ids, number, flag or text."""
    default = spec.get("default")
    if name.endswith("_ids") or name.endswith("_id"):
        return "ids"
    if isinstance(default, bool):
        return "flag"
    if isinstance(default, (int, float)):
        return "number"
    return "text"


def _bad(skill: Skill, name: str, value: Any, expected: str) -> SkillError:
    return SkillError(
        f"skill {skill.name}: --arg {name}={value!r} is not valid: {expected} "
        f"({skill.params[name].get('doc', '')}; default {skill.params[name].get('default')!r})"
    )


def check_args(skill: Skill, args: dict[str, Any]) -> None:
    """Raises SkillError for an unknown parameter or a value of the wrong kind."""
    unknown = set(args) - set(skill.params)
    if unknown:
        raise SkillError(
            f"skill {skill.name!r} has no parameter {', '.join(sorted(unknown))}"
            f" (it takes: {', '.join(skill.params) or 'none'})"
        )
    for name, value in args.items():
        if value is None:
            continue
        spec = skill.params[name]
        kind = _kind(name, spec)
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not spec.get("list"):
            raise _bad(skill, name, value, "one value is expected, not a list")
        if isinstance(value, dict):
            raise _bad(skill, name, value, "a plain value is expected, not an object")
        for v in values:
            if kind == "ids" and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise _bad(skill, name, value, "entity ids are whole numbers (see `backchannel entities --json`)")
            if kind == "number" and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise _bad(skill, name, value, "a number, 0 or more, is expected")
            if kind == "flag" and not isinstance(v, bool):
                raise _bad(skill, name, value, "true or false is expected")
            if kind == "text" and (not isinstance(v, (str, int, float)) or (isinstance(v, str) and not v.strip())):
                raise _bad(skill, name, value, "a non-empty text is expected")

"""The prompt of every model-completed method, exactly as sent, against a committed
snapshot (tests/snapshots/agent_prompts.json).

A completed method's prompt is its name, its typed parameters and its docstring, and its
answer is its return type's schema (agent/base.py): renaming a method or a parameter, or
editing a docstring, changes what the model is asked. That is a behaviour change, and this
test makes it visible: it fails, with the difference, until the snapshot is regenerated on
purpose:

    BACKCHANNEL_UPDATE_SNAPSHOTS=1 python -m pytest -q tests/agent/test_agent_prompts.py
"""

from __future__ import annotations

import difflib
import json
import os
import typing
from pathlib import Path as FilePath
from typing import Any

from backchannel.agent import drafter, sweeper, work  # noqa: F401 - importing defines the agents
from backchannel.agent.base import Agent
from backchannel.agent.work import Excerpt, Path

SNAPSHOT = FilePath(__file__).parents[1] / "snapshots" / "agent_prompts.json"

SAMPLE_PATH = Path(
    kind="introduction",
    why="Marc worked with Sophie Martin, now CIO of Acme.",
    people=["Marc Dupont", "Sophie Martin"],
    evidence=[
        Excerpt(
            quote="I worked with Sophie Martin at Globex from 2016 to 2021",
            speaker="Marc Dupont",
            when="2025-09-12",
            source="Coffee with Marc",
        )
    ],
    signals=["meeting 'Coffee with Marc' in 30 h", "best evidence strength 0.52"],
)


def _sample(annotation: Any) -> Any:
    """A fixed value of `annotation`, for the snapshot."""
    if annotation is Path:
        return SAMPLE_PATH
    origin = typing.get_origin(annotation)
    if origin is list:
        return [_sample(typing.get_args(annotation)[0])]
    return {str: "example", int: 1, float: 0.5, bool: True}.get(annotation, None)


def package_agents() -> list[type[Agent]]:
    seen: list[type[Agent]] = []
    todo = list(Agent.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("backchannel.") and cls not in seen:
            seen.append(cls)
    return sorted(seen, key=lambda c: c.__name__)


def prompts() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cls in package_agents():
        for name, spec in cls.completed_methods().items():
            if spec.owner != cls.__name__:
                continue  # inherited: snapshotted once, under the class that defines it
            values = {p: _sample(a) for p, a in spec.params}
            out[f"{cls.__name__}.{name}"] = {
                "role": spec.role or cls.role,
                "messages": spec.messages(values),
                "returns": spec.schema(),
            }
    return out


def _text(data: dict[str, Any]) -> list[str]:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def test_every_completed_prompt_matches_its_snapshot():
    now = prompts()
    if os.environ.get("BACKCHANNEL_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text("\n".join(_text(now)) + "\n", encoding="utf-8")
    saved = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert len(now) >= 9  # four kinds' judge and draft, and ask's
    gone, new = sorted(set(saved) - set(now)), sorted(set(now) - set(saved))
    changed = sorted(k for k in set(saved) & set(now) if saved[k] != now[k])
    if gone or new or changed:
        diff = "\n".join(difflib.unified_diff(_text(saved), _text(now), "snapshot", "code", lineterm="", n=2))
        raise AssertionError(
            "a completed method's prompt changed (what the model is asked is behaviour):\n"
            f"  methods gone: {gone}\n  methods new: {new}\n  prompts changed: {changed}\n{diff}\n"
            "If this is meant, regenerate: BACKCHANNEL_UPDATE_SNAPSHOTS=1 python -m pytest tests/agent/test_agent_prompts.py"
        )


def test_the_snapshot_holds_only_name_parameters_docstring_and_schema():
    """What a model receives for a completed call, and nothing else: the docstring, then
    the method's name and typed parameter values; the answer's schema goes as structured output."""
    spec = work.Introductions.completed_methods()["worth_an_introduction"]
    system, user = spec.messages({"path": SAMPLE_PATH})
    assert system == {"role": "system", "content": spec.doc}
    call = json.loads(user["content"])
    assert call == {
        "method": "worth_an_introduction",
        "parameters": [{"name": "path", "type": "Path", "value": SAMPLE_PATH.model_dump(mode="json")}],
    }
    # The offline judgement and the candidate travel with the path for offline code, never to a model.
    p = work.path_of(
        work.Candidate(kind="introduction", entities=[1, 2], score=0.5, why="w"), {1: "A", 2: "B"}, judged=object()
    )
    assert set(json.loads(spec.messages({"path": p})[1]["content"])["parameters"][0]["value"]) == {
        "kind",
        "why",
        "people",
        "evidence",
        "signals",
    }

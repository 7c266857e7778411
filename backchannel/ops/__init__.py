"""Operations: the one place where a user command's work is done.

A CLI command never touches the store itself; it calls an operation by name.
When a daemon runs, the call travels over the local API and the daemon (the one
writer) runs it; when none runs, the CLI opens the store and runs it in-process.
Either way the same function does the work, so the two paths cannot drift.

An operation is `fn(env: OpEnv, **args) -> JSON-able`; args are JSON-able too.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from backchannel.config import Paths, Settings

# name -> "module:function". Modules are imported on first use only.
OPERATIONS: dict[str, str] = {
    "ingest": "backchannel.ops.memory_ops:ingest",
    "sources": "backchannel.ops.memory_ops:sources",
    "source": "backchannel.ops.memory_ops:source",
    "assertions": "backchannel.ops.memory_ops:assertions",
    "entities": "backchannel.ops.memory_ops:entities",
    "export_entity": "backchannel.ops.privacy_ops:export_entity",
    "forget_plan": "backchannel.ops.privacy_ops:forget_plan",
    "usage": "backchannel.ops.model_ops:usage",
    "entities_merge": "backchannel.ops.model_ops:entities_merge",
    "entities_split": "backchannel.ops.model_ops:entities_split",
    "status": "backchannel.ops.daemon_ops:status",
    "proposals": "backchannel.ops.daemon_ops:proposals",
    "proposal": "backchannel.ops.daemon_ops:proposal",
    "trace": "backchannel.ops.daemon_ops:trace",
    "wake": "backchannel.ops.daemon_ops:wake",
    "dismiss": "backchannel.ops.feedback_ops:dismiss",
    "accept": "backchannel.ops.feedback_ops:accept",
    "snooze": "backchannel.ops.feedback_ops:snooze",
    "approve": "backchannel.ops.feedback_ops:approve",
    "proposal_action": "backchannel.ops.feedback_ops:proposal_action",
    "stats": "backchannel.ops.feedback_ops:stats",
    "outbox_status": "backchannel.ops.feedback_ops:outbox_status",
    "deliver_now": "backchannel.ops.feedback_ops:deliver_now",
    "feedback_link_get": "backchannel.ops.feedback_ops:feedback_link_get",
    "feedback_link_post": "backchannel.ops.feedback_ops:feedback_link_post",
    "ask": "backchannel.ops.graph_ops:ask",
    "skills": "backchannel.ops.graph_ops:skills",
    "skill_run": "backchannel.ops.graph_ops:skill_run",
    "import_assertions": "backchannel.ops.graph_ops:import_assertions",
    "search": "backchannel.ops.search_ops:search",  # issue 13: the web app's and MCP's search
}


class OpError(Exception):
    """An operation refused its arguments; the message is for the user."""


@dataclass
class OpEnv:
    store: Any  # backchannel.memory.Store
    settings: Settings
    paths: Paths
    daemon: Any = None  # the running daemon, when called through its API
    extra: dict[str, Any] = field(default_factory=dict)


def resolve(name: str) -> Callable[..., Any]:
    target = OPERATIONS.get(name)
    if target is None:
        raise OpError(f"unknown operation {name!r}")
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def invoke(env: OpEnv, name: str, args: dict[str, Any] | None = None) -> Any:
    return resolve(name)(env, **(args or {}))

"""Operations: the one place where a user command's work is done.

A CLI command never touches the store itself; it calls an operation by name.
When a daemon runs, the call travels over the local API and the daemon (the one
writer) runs it; when none runs, the CLI opens the store and runs it in-process.
Either way the same function does the work, so the two paths cannot drift.

An operation is `fn(env: OpEnv, **args) -> JSON-able`; args are JSON-able too.
Each is declared where it is defined, with `@op(name, read=...)`: the registry
is built from those declarations, so the list of operations and the list of
read-only ones cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from backchannel.config import Paths, Settings

if TYPE_CHECKING:
    from backchannel.core.ports import RunningDaemon
    from backchannel.memory.store import Store


class OpError(Exception):
    """An operation refused its arguments; the message is for the user."""


@dataclass
class OpEnv:
    store: Store
    settings: Settings
    paths: Paths
    daemon: RunningDaemon | None = None  # the running daemon, when called through its API
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Op:
    """A registered operation.

    read: it never writes the store, so the daemon serves it on its reader cursor,
    concurrently with the writer (a web page never waits behind a long wake).
    on_reader: served on the reader cursor although it is not a read (`wake`: through
    the daemon it only appends a keyed request to the log, which must not wait behind
    the run it asks for). Every other operation is queued to the one writer.
    """

    name: str
    fn: Callable[..., Any]
    read: bool
    on_reader: bool


REGISTRY: dict[str, Op] = {}
_loaded = False

F = TypeVar("F", bound=Callable[..., Any])


def op(name: str | None = None, *, read: bool, on_reader: bool | None = None) -> Callable[[F], F]:
    """Register the decorated function as operation `name` (default: its own name)."""

    def register(fn: F) -> F:
        key = name or fn.__name__
        if key in REGISTRY and REGISTRY[key].fn is not fn:
            raise RuntimeError(f"operation {key!r} registered twice: {REGISTRY[key].fn.__module__} and {fn.__module__}")
        REGISTRY[key] = Op(key, fn, read, read if on_reader is None else on_reader)
        return fn

    return register


def operations() -> dict[str, Op]:
    """Every registered operation, by name (imports the op modules on first use)."""
    global _loaded
    if not _loaded:
        # Importing the op modules registers their operations. They are imported together,
        # on the first lookup only (about 10 ms), so a command that runs no operation pays nothing.
        from backchannel.ops import (  # noqa: F401
            daemon_ops,
            edge_ops,
            feedback_ops,
            graph_ops,
            memory_ops,
            model_ops,
            privacy_ops,
            replay_ops,
            rights_ops,
            search_ops,
            ties_ops,
            timeline_ops,
        )

        _loaded = True
    return REGISTRY


def lookup(name: str) -> Op:
    found = operations().get(name)
    if found is None:
        raise OpError(f"unknown operation {name!r}")
    return found


def resolve(name: str) -> Callable[..., Any]:
    return lookup(name).fn


def invoke(env: OpEnv, name: str, args: dict[str, Any] | None = None) -> Any:
    return resolve(name)(env, **(args or {}))

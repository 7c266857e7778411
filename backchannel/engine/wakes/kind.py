"""The row of the wake table (wakes/__init__.py): what a kind of wake is, how it is
made on request, and how a run handles it."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.wake import Wake

if TYPE_CHECKING:
    from backchannel.engine.run import Run
    from backchannel.triggers.setup import Triggers


@dataclass(frozen=True)
class WakeRequest:
    """How a wake is made when someone asks for it (`backchannel wake NAME`, the retention
    operation), in the daemon or in-process.

    A request is made one of two ways. `keyed`: a wake made on the spot, which the daemon
    records (durable before it answers) and queues. `on_trigger`: the daemon's running
    trigger makes it, on the event loop (the coroutine returned), and `answer` says what
    was asked. In-process, `collect` gives the wakes to run now."""

    name: str  # the word the request uses: sweep, calendar, signals, mail, retention
    unavailable: Callable[[Settings], str | None]  # why these settings cannot make it, or None
    collect: Callable[[Settings, Paths], list[Wake]] | None = None
    keyed: Callable[[datetime], Wake] | None = None
    on_trigger: Callable[[Triggers], Coroutine[Any, Any, object]] | None = None
    answer: Callable[[Settings, Triggers], dict[str, Any]] | None = None
    needs_triggers: bool = True  # the daemon refuses it while its triggers are not running


@dataclass(frozen=True)
class Kind:
    """A kind of wake: the `Wake.kind` values it covers, its handler, its request."""

    kinds: tuple[str, ...]
    handle: Callable[[Run], None]
    request: WakeRequest | None = None  # None: only its trigger makes it (inbox, meeting_soon)


def nothing_missing(settings: Settings) -> str | None:
    return None

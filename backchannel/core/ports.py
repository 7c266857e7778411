"""What the engine and the operations need from the process they run in, as types.

A wake runs in the daemon or in-process (`backchannel wake`, the demo, tests), and an
operation runs through the daemon's API or in the CLI's own process. What differs is
not the work but who holds some state: the daemon's inbox trigger remembers the files
it offered, its triggers and queue make wakes. The engine and the operations ask for
that through these ports and never learn what is behind them; the daemon implements
them (daemon/service.py), and plain implementations serve the in-process case
(`triggers.inbox.InboxFolder`; no daemon: no `RunningDaemon`).

They live in `core` because the layers that use them (engine, ops) sit below the one
that implements them (daemon).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class InboxFiles(Protocol):
    """Where an inbox file goes once its ingest is decided."""

    def finish(self, path: Path, ok: bool, error: str | None) -> Path:
        """Move the file out (processed/ when `ok`, else failed/ with the error); the
        ingest has committed. Returns where the file is now."""
        ...

    def defer(self, path: Path, retry_after_s: float) -> None:
        """Leave the file in the inbox and offer it again after `retry_after_s`."""
        ...


class RunningDaemon(Protocol):
    """The running daemon, as an operation served through its API sees it."""

    def request_wake(self, kind: str) -> dict[str, Any]:
        """Make the wake a request names (`sweep`, `calendar`, `signals`, `mail`,
        `retention`) and queue it; returns what was queued. Raises ValueError for a
        kind the daemon cannot make, RuntimeError when its triggers are not running."""
        ...

    def info(self) -> dict[str, Any]:
        """Uptime, queue, current and recent wakes, next wakes, triggers, API."""
        ...

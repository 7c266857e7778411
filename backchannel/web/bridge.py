"""How the web app and the MCP server run operations: exactly as the CLI does.

- `DaemonOperations`: inside the daemon, through `Daemon.call_op` (reads on the
  reader cursor, writes on the one consumer, in queue order), the path its API takes.
- `ThreadedOperations`: from `backchannel web` / `backchannel mcp`, a blocking call
  the CLI hands in (`cli.client.web_operations`: `cli.client.call`, the running
  daemon's API when one runs, else the store opened for that one call and closed
  again, so `forget`, `ingest` and a daemon started later are never locked out by an
  idle page). This package imports neither cli nor daemon: both are handed in.

Results are normalised to JSON types (dates become ISO strings) so a page renders the
same whichever path served it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from datetime import date, datetime
from typing import Any


class OpFailed(Exception):
    """An operation refused (bad id, wrong state, a missing mail server): the message is for the user."""


def _default(o: Any) -> Any:
    if isinstance(o, (datetime, date)):
        return o.isoformat()
    return str(o)


def to_json(result: Any) -> Any:
    return json.loads(json.dumps(result, default=_default, ensure_ascii=False))


class DaemonOperations:
    """Operations on the daemon that serves the app (must be used on its loop)."""

    def __init__(self, daemon: Any):
        self.daemon = daemon

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        from backchannel.ops import OpError

        try:
            result = await self.daemon.call_op(name, dict(args or {}))
        except (OpError, ValueError) as exc:
            raise OpFailed(str(exc)) from None
        except RuntimeError as exc:  # "the daemon is stopping"
            raise OpFailed(str(exc)) from None
        return to_json(result)


class ThreadedOperations:
    """Operations run by a blocking `call(name, args)` (which raises OpFailed when one
    refuses), on a worker thread, one at a time (one writer, and the store is opened per call)."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]):
        self._call = call
        self._lock = threading.Lock()

    def call_sync(self, name: str, args: dict[str, Any] | None = None) -> Any:
        with self._lock:
            return to_json(self._call(name, dict(args or {})))

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return await asyncio.to_thread(self.call_sync, name, args)

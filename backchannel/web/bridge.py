"""How the web app and the MCP server run operations: exactly as the CLI does.

- `DaemonOperations`: inside the daemon, through `Daemon.call_op` (reads on the
  reader cursor, writes on the one consumer, in queue order), the path its API takes.
- `CliOperations`: from `backchannel web` / `backchannel mcp`, through
  `cli.client.call`: the running daemon's API when one runs, else the store opened
  for that one call and closed again (so `forget`, `ingest` and a daemon started
  later are never locked out by an idle page).

Results are normalised to JSON types (dates become ISO strings) so a page renders the
same whichever path served it.
"""

from __future__ import annotations

import asyncio
import json
import threading
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


class CliOperations:
    """Operations the way a CLI command runs them; blocking calls go to a worker
    thread, one at a time (one writer, and the store is opened per call)."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self._lock = threading.Lock()

    def call_sync(self, name: str, args: dict[str, Any] | None = None) -> Any:
        from backchannel.cli.client import call
        from backchannel.cli.common import UserError

        with self._lock:
            try:
                return to_json(call(self.ctx, name, dict(args or {})))
            except UserError as exc:
                raise OpFailed(str(exc)) from None

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return await asyncio.to_thread(self.call_sync, name, args)

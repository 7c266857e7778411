"""The local API, as routes of the one app (the daemon serves it on its unix socket,
mode 0600, and on loopback TCP):

    POST /ops/<name>   JSON args -> {"ok": true, "result": ...} | {"ok": false, "error": ...}
    GET  /health       {"ok": true, "pid": ..., "uptime_s": ...}

Both need `Authorization: Bearer <token>` (the token in paths.api_token_file). The
daemon is handed in (`call_op(name, args)`, `info()`): this module imports no daemon.
"""

from __future__ import annotations

import hmac
import inspect
import json
import logging
import os
from datetime import date, datetime
from typing import Any

from backchannel.web.guards import body_limits, read_body, send_json

logger = logging.getLogger("backchannel.api")


def bearer_ok(authorization: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time."""
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _default(o: Any) -> Any:
    if isinstance(o, (datetime, date)):
        return o.isoformat()
    return str(o)


def is_api_path(path: str) -> bool:
    return path == "/health" or path.startswith("/ops/")


class LocalApi:
    """ASGI app for /health and /ops/<name>; `daemon` runs the operations."""

    def __init__(self, daemon: Any, token: str):
        self.daemon, self.token = daemon, token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if not bearer_ok(headers.get(b"authorization", b"").decode("latin-1"), self.token):
            return await send_json(send, 401, {"ok": False, "error": "missing or wrong bearer token"})
        path, method = scope["path"], scope["method"]
        if path == "/health":
            if method != "GET":
                return await send_json(send, 405, {"ok": False, "error": "use GET"})
            return await send_json(
                send, 200, {"ok": True, "pid": os.getpid(), "uptime_s": self.daemon.info()["uptime_s"]}
            )
        if method != "POST":
            return await send_json(send, 405, {"ok": False, "error": "use POST"})
        body = await read_body(receive, body_limits(path)[1])  # its length was checked by the guard
        if body is None:
            return  # the client hung up
        if isinstance(body, int):
            return await send_json(send, 408, {"ok": False, "error": "request body too slow"})
        status, obj = await self._op(path.removeprefix("/ops/"), body)
        await send_json(send, status, obj, default=_default)  # dates as ISO strings, the rest as str()

    async def _op(self, name: str, body: bytes) -> tuple[int, dict[str, Any]]:
        from backchannel.ops import OpError, resolve

        try:
            args = json.loads(body or b"{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return 400, {"ok": False, "error": f"bad arguments: {exc}"}
        try:
            fn = resolve(name)
            inspect.signature(fn).bind(None, **args)  # unknown or missing arguments: the caller's error
        except OpError as exc:
            return (404 if "unknown operation" in str(exc) else 400), {"ok": False, "error": str(exc)}
        except TypeError as exc:
            return 400, {"ok": False, "error": f"bad arguments for {name}: {exc}"}
        try:
            result = await self.daemon.call_op(name, args)
        except (OpError, ValueError) as exc:
            return 400, {"ok": False, "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - reported to the caller, logged here
            logger.error("operation failed", extra={"fields": {"op": name, "error": f"{type(exc).__name__}: {exc}"}})
            return 500, {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        return 200, {"ok": True, "result": result}

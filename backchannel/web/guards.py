"""What every request to the one local server passes first, whichever listener it came
in on (pure ASGI, so it runs before any route and reads nothing it need not):

- loopback TCP only: the Host check (DNS rebinding: a foreign page whose name now
  resolves to 127.0.0.1 sends its own Host). The owner's unix socket is no browser target.
- a body cap by route (operations 16 MiB, feedback forms 64 KiB, anything else
  256 KiB, the web app's largest form), judged on Content-Length before a byte of body
  is read; a chunked body without a length is refused (411): every client of this
  server (the CLI, browsers) sends one;
- one deadline for the body (a feedback form must come at once, an operation's
  arguments within a minute). The body of a page or a feedback form is read here,
  within its cap, and handed on; an operation's is read by `local_api` only once the
  bearer token was checked (an unauthenticated client makes the server buffer nothing);
- one request per connection (`Connection: close` on every response): no idle
  keep-alive connection holds one of the TCP slots `http_limits` caps.

The head's limits (deadline, size, header count, connection cap) are uvicorn's protocol
in `web/http_limits.py`; the bearer token is `web/local_api.py`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

MAX_OPS_BODY = 16 * 1024 * 1024
MAX_FEEDBACK_BODY = 64 * 1024  # a feedback form is a few hundred bytes
MAX_OTHER_BODY = 256 * 1024  # the web app's forms (app.MAX_FORM_BYTES)
FEEDBACK_BODY_TIMEOUT_S = 10.0  # unauthenticated and tiny: no reason to wait long for it
BODY_TIMEOUT_S = 60.0
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

Scope = dict[str, Any]


def allowed_hosts(settings: Any) -> set[str]:
    """The host names a browser may send for this server: loopback, the configured
    `[api] host` and `[web] host`, and the host of `[delivery] public_base_url`."""
    names = set(LOOPBACK_NAMES) | {
        (settings.api.host or "").strip("[]").lower(),
        (settings.web.host or "").strip("[]").lower(),
    }
    if settings.delivery.public_base_url:
        names.add((urlsplit(settings.delivery.public_base_url).hostname or "").lower())
    return names - {""}


def host_allowed(host: str | None, allowed: Iterable[str]) -> bool:
    """No Host at all (an HTTP/1.0 client: never a browser) is allowed too."""
    if not host:
        return True
    try:
        name = urlsplit(f"//{host.strip()}").hostname or ""
    except ValueError:  # "[::1" and the like
        return False
    return name.lower() in set(allowed)


def body_limits(path: str) -> tuple[int, float]:
    """(largest body, seconds to receive it) for a request to `path`."""
    if path.startswith("/ops/"):
        return MAX_OPS_BODY, BODY_TIMEOUT_S
    if path == "/feedback" or path.startswith("/feedback/"):
        return MAX_FEEDBACK_BODY, FEEDBACK_BODY_TIMEOUT_S
    return MAX_OTHER_BODY, BODY_TIMEOUT_S


async def send_json(send: Any, status: int, obj: Any, default: Any = None) -> None:
    """`default` turns what JSON cannot carry into what it can (dates, for the API)."""
    body = json.dumps(obj, default=default, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def is_tcp(scope: Scope) -> bool:
    server = scope.get("server")
    if not server:
        return False
    return server[1] is not None  # a unix socket has no port


class ListenerGuard:
    def __init__(self, app: Any, allowed: Iterable[str]):
        self.app, self.allowed = app, set(allowed)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_closing(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        headers = dict(scope.get("headers") or [])
        if is_tcp(scope) and not host_allowed(headers.get(b"host", b"").decode("latin-1"), self.allowed):
            return await send_json(send_closing, 421, {"ok": False, "error": "unexpected Host header"})
        cap, timeout_s = body_limits(scope["path"])
        length = headers.get(b"content-length")
        if length is None and b"transfer-encoding" in headers:
            return await send_json(send_closing, 411, {"ok": False, "error": "a body needs a Content-Length"})
        size = int(length or 0)  # h11 has already refused a Content-Length that is not a number
        if size > cap:
            return await send_json(send_closing, 413, {"ok": False, "error": "body too large"})
        if scope["path"].startswith("/ops/"):
            return await self.app(scope, receive, send_closing)  # read after the token check
        body = await read_body(receive, timeout_s)
        if body is None:
            return  # the client hung up
        if isinstance(body, int):
            return await send_json(send_closing, 408, {"ok": False, "error": "request body too slow"})
        await self.app(scope, _replay(body, receive), send_closing)


async def read_body(receive: Any, timeout_s: float) -> bytes | int | None:
    """The whole body (the caller checked its length against the cap), None when the
    client hung up, or 408 when it did not arrive within `timeout_s`."""
    try:
        return await asyncio.wait_for(_read_all(receive), timeout_s)
    except TimeoutError:
        return 408


async def _read_all(receive: Any) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """A `receive` that yields the body read already, then waits on the client as usual."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay

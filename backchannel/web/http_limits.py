"""The connection-level limits uvicorn lacks, as its h11 protocol with a guard in front.

uvicorn 0.54 has no deadline for a request's head (a client that trickles header lines
holds its connection for ever), no cap on the number of headers, and its
`limit_concurrency` still accepts every connection past the limit (it answers 503 once a
request arrives, so idle connections pile up). A loopback TCP port is open to every local
user, so `GuardedH11Protocol` adds, per connection:

- a cap on open connections per server: past it a new connection is closed at once,
  unread (the owner's unix socket is another server, with no cap: a flood of TCP
  connections cannot starve it);
- one deadline for the request line and all headers together (408, then close);
- a cap on the head's size and on its number of lines (400, then close), checked on the
  raw bytes before h11 parses them.

Body size caps and the body deadline are ASGI middleware (`web/guards.py`): they depend
on the route.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0  # request line and all headers, together
MAX_HEAD_BYTES = 64 * 1024  # the old server's line limit (asyncio's 64 KiB), now for the whole head
MAX_HEADERS = 100
MAX_TCP_CONNECTIONS = 64


@dataclass(frozen=True)
class Limits:
    head_timeout_s: float = HEAD_TIMEOUT_S
    max_head_bytes: int = MAX_HEAD_BYTES
    max_headers: int = MAX_HEADERS
    max_connections: int | None = None  # None: no cap (the owner's unix socket)


def protocol_class(limits: Limits) -> type[H11Protocol]:
    """uvicorn's `http=` protocol for a server with these limits."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})


def _raw_response(status: int, reason: str, error: str) -> bytes:
    body = json.dumps({"ok": False, "error": error}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode() + body


class GuardedH11Protocol(H11Protocol):
    limits: Limits = Limits()

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._head = b""
        self._head_done = False
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        cap = self.limits.max_connections
        if cap is not None and len(self.connections) > cap:
            self._head_done = True  # nothing will be read
            transport.close()
            return
        self._head_timer = self.loop.call_later(self.limits.head_timeout_s, self._head_too_slow)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return
        if not self._head_done:
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            head = self._head if end < 0 else self._head[:end]
            if len(head) > self.limits.max_head_bytes:
                return self._refuse(400, "Bad Request", "request head too long")
            if head.count(b"\n") > self.limits.max_headers:  # the request line's own line is not counted
                return self._refuse(400, "Bad Request", "too many headers")
            if end >= 0:
                self._head_seen()
        super().data_received(data)
        if not self._head_done and self.scope is not None:  # h11 parsed a head ending in bare LFs
            self._head_seen()

    def _head_seen(self) -> None:
        self._head_done = True
        self._head = b""
        self._stop_head_timer()

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self._head_done:
            self._refuse(408, "Request Timeout", "request headers too slow")

    def _refuse(self, status: int, reason: str, error: str) -> None:
        """Answer before h11 has a request (so not through it), and hang up."""
        self._head_done = True
        self._stop_head_timer()
        if not self.transport.is_closing():
            self.transport.write(_raw_response(status, reason, error))
            self.transport.close()

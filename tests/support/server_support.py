"""The one local app (backchannel/web/app.py) served alone on loopback TCP from a
thread, its operations run in-process on a test's store: the feedback links without a
daemon (what `delivery.web.serve_feedback` used to be, now the real app and limits)."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn

from backchannel.ops import OpEnv, OpError, invoke
from backchannel.web.app import build_app
from backchannel.web.bridge import OpFailed, ThreadedOperations
from backchannel.web.http_limits import MAX_TCP_CONNECTIONS, Limits
from backchannel.web.server import base_url, bind, config


def store_operations(store: Any, settings: Any, paths: Any) -> ThreadedOperations:
    def run(name: str, args: dict[str, Any]) -> Any:
        try:
            return invoke(OpEnv(store=store, settings=settings, paths=paths), name, args)
        except OpError as exc:
            raise OpFailed(str(exc)) from None

    return ThreadedOperations(run)


class FeedbackServer:
    """`/feedback` (no pages, no API) on 127.0.0.1, any free port, until `close()`."""

    def __init__(self, store: Any, settings: Any, paths: Any, limits: Limits | None = None):
        app = build_app(store_operations(store, settings, paths), settings, paths, "unused-token", pages=False)
        sock = bind("127.0.0.1", 0)
        self.base = base_url(sock)
        self.port = sock.getsockname()[1]
        self.server = uvicorn.Server(config(app, limits or Limits(max_connections=MAX_TCP_CONNECTIONS)))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, name="feedback-http", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the feedback server did not start"
            time.sleep(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def serve_feedback(store: Any, settings: Any, paths: Any) -> tuple[FeedbackServer, str]:
    server = FeedbackServer(store, settings, paths)
    return server, server.base

"""A loopback OpenAI-compatible chat server that misbehaves on request.

Tests and the bench point the gateway at it (`openai/<anything>` with
`api_base=server.base_url`) to exercise retries, timeouts, fallbacks and the
repair path without a key or the internet. Each request consumes the next step
of the script; when the script runs out the `default` step answers.

Steps are dicts with a `kind`:
- ``{"kind": "ok", "content": "..."}``: a normal answer (`content` may be a dict,
  sent as JSON text); optional `prompt_tokens` / `completion_tokens`, or
  `"usage": false` to answer without usage, as some local servers do.
- ``{"kind": "429", "retry_after": 0.2}``: rate limited, with a Retry-After header
  when `retry_after` is given.
- ``{"kind": "500"}``: an internal server error.
- ``{"kind": "hang", "seconds": 5}``: wait that long before answering (past the
  client's timeout), then answer like "ok".
- ``{"kind": "truncated", "content": {...}}``: the answer's JSON text cut in half,
  finish_reason "length".
- ``{"kind": "wrong_schema"}``: valid JSON that matches no expected schema.
- ``{"kind": "401"}``: an authentication error whose message echoes the key it
  was sent (as some providers do), to check that keys never reach the audit rows.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WRONG_SCHEMA = {"answer": "forty-two", "items": "not a list"}


def _usage_for(body: dict[str, Any], content: str, step: dict[str, Any]) -> dict[str, int]:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    p = int(step.get("prompt_tokens", max(1, prompt_chars // 4)))
    c = int(step.get("completion_tokens", max(1, len(content) // 4)))
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


class FaultServer:
    """Start with `with FaultServer([...]) as srv:`; `srv.base_url` ends in /v1."""

    def __init__(self, script: list[dict[str, Any]] | None = None, default: dict[str, Any] | None = None):
        self.script = list(script or [])
        self.default = default or {"kind": "500"}
        self.requests: list[dict[str, Any]] = []  # request bodies, in arrival order
        self.kinds: list[str] = []  # the step kind each request got
        self.auth: list[str | None] = []  # the Authorization header of each request
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------
    def start(self) -> FaultServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_GET(self) -> None:
                server._send(self, 200, {"object": "list", "data": [{"id": "fault-model", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with server._lock:
                    server.auth.append(self.headers.get("Authorization"))
                server._answer(self, body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fault-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *steps: dict[str, Any]) -> None:
        with self._lock:
            self.script.extend(steps)

    # -- answering --------------------------------------------------------
    def _next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            step = self.script.pop(0) if self.script else dict(self.default)
            self.kinds.append(step["kind"])
            return step

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any] | str, headers: dict[str, str] | None = None
    ) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing to tell it

    def _completion(self, body: dict[str, Any], content: str, step: dict[str, Any], finish: str = "stop") -> dict:
        return {
            "id": f"chatcmpl-fault-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fault-model"),
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
            # "usage": False in a step leaves usage out, as some local servers do
            **({} if step.get("usage") is False else {"usage": _usage_for(body, content, step)}),
        }

    def _answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        step = self._next_step(body)
        kind = step["kind"]
        content = step.get("content", "")
        if not isinstance(content, str):
            content = json.dumps(content)
        if kind == "429":
            headers = {"Retry-After": str(step["retry_after"])} if "retry_after" in step else {}
            self._send(
                h,
                429,
                {
                    "error": {
                        "message": "rate limited (fault server)",
                        "type": "rate_limit_error",
                        "code": "rate_limit_exceeded",
                    }
                },
                headers,
            )
        elif kind == "401":
            sent = (h.headers.get("Authorization") or "").removeprefix("Bearer ")
            self._send(
                h,
                401,
                {
                    "error": {
                        "message": f"Incorrect API key provided: {sent}",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
        elif kind == "500":
            self._send(h, 500, {"error": {"message": "internal error (fault server)", "type": "server_error"}})
        elif kind == "hang":
            # Sleep in slices so that stop() is not held up by a hung handler.
            deadline = time.monotonic() + float(step.get("seconds", 30))
            while time.monotonic() < deadline and not self._stop.is_set():
                time.sleep(0.05)
            self._send(h, 200, self._completion(body, content, step))
        elif kind == "truncated":
            self._send(h, 200, self._completion(body, content[: max(1, len(content) // 2)], step, "length"))
        elif kind == "wrong_schema":
            self._send(h, 200, self._completion(body, json.dumps(WRONG_SCHEMA), step))
        elif kind == "ok":
            self._send(h, 200, self._completion(body, content, step))
        else:
            self._send(h, 400, {"error": {"message": f"unknown fault kind {kind!r}", "type": "invalid_request_error"}})

"""The local API: HTTP/1.1 over a unix socket (paths.api_socket, mode 0600) and,
when delivery is configured (its feedback links must open in a browser), also
on loopback TCP at `[api] host/port` (port 0: any free port, written to
`<state>/api.port`).

    POST /ops/<name>   JSON args -> {"ok": true, "result": ...} | {"ok": false, "error": ...}
    GET  /health       {"ok": true, "pid": ..., "uptime_s": ...}
    GET|POST /feedback/...  the delivery web handlers (signed links; no bearer token)

Everything but /feedback needs `Authorization: Bearer <token>`, the token in
paths.api_token_file (0600, created at the first start). One request per
connection (Connection: close): the clients are the CLI and a browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import json
import os
import secrets
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from backchannel.config import Paths
from backchannel.daemon.logging import get as get_logger, log
from backchannel.secretfile import write_secret

logger = get_logger("api")

MAX_BODY = 16 * 1024 * 1024
MAX_FEEDBACK_BODY = 64 * 1024  # a feedback form is a few hundred bytes (delivery.web caps it too)
MAX_HEADERS = 100
# The TCP port is open to every local user: a slow or idle client may hold only a
# few file descriptors, briefly, or it could starve the owner's socket and the inbox.
HEAD_TIMEOUT_S = 10.0  # request line and all headers, together
MAX_TCP_CONNECTIONS = 64
REASONS = {200: "OK", 204: "No Content", 303: "See Other", 400: "Bad Request", 401: "Unauthorized", 408: "Request Timeout", 421: "Misdirected Request",
           403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 410: "Gone", 409: "Conflict", 413: "Payload Too Large", 415: "Unsupported Media Type",
           500: "Internal Server Error", 503: "Service Unavailable"}


def ensure_token(paths: Paths) -> str:
    """The API token, created (mode 0600) when missing."""
    f = paths.api_token_file
    if f.is_file():
        token = f.read_text().strip()
        if token:
            os.chmod(f, 0o600)
            return token
    f.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    write_secret(f, token + "\n")
    return token


def _default(o: Any) -> Any:
    if isinstance(o, (datetime, date)):
        return o.isoformat()
    return str(o)


def _json(status: int, obj: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(obj, default=_default, ensure_ascii=False).encode()


class ApiServer:
    def __init__(self, daemon: Any):
        self.daemon = daemon
        self.paths: Paths = daemon.paths
        self.token = ensure_token(self.paths)
        self.unix_server: asyncio.AbstractServer | None = None
        self.tcp_server: asyncio.AbstractServer | None = None
        self.tcp_port: int | None = None
        self.tcp_open = 0  # TCP connections being served now

    @property
    def port_file(self) -> Path:
        return self.paths.state_dir / "api.port"

    async def start(self) -> None:
        sock = self.paths.api_socket
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()  # a stale socket of a dead daemon (we hold the lock, so it is stale)
        old = os.umask(0o177)
        try:
            self.unix_server = await asyncio.start_unix_server(self._serve, path=str(sock))
        finally:
            os.umask(old)
        os.chmod(sock, 0o600)
        s = self.daemon.settings
        if s.delivery.channels or s.api.port:
            self.tcp_server = await asyncio.start_server(self._serve_tcp, host=s.api.host, port=s.api.port)
            self.tcp_port = self.tcp_server.sockets[0].getsockname()[1]
            self.port_file.write_text(f"{self.tcp_port}\n")

    async def stop(self) -> None:
        for srv in (self.unix_server, self.tcp_server):
            if srv is not None:
                srv.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(srv.wait_closed(), 1.0)
        with contextlib.suppress(FileNotFoundError):
            self.paths.api_socket.unlink()
        if self.tcp_port is not None:
            with contextlib.suppress(FileNotFoundError):
                self.port_file.unlink()

    # -- HTTP ------------------------------------------------------------------
    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Over the cap, a TCP connection is closed at once, unread (the unix socket has no cap:
        only the owner can reach it)."""
        if self.tcp_open >= MAX_TCP_CONNECTIONS:
            writer.close()
            return
        self.tcp_open += 1
        try:
            await self._serve(reader, writer, tcp=True)
        finally:
            self.tcp_open -= 1

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tcp: bool = False) -> None:
        try:
            status, headers, body = await self._one(reader, tcp)
        except Exception:  # noqa: BLE001 - a bad request must not reach the loop
            logger.exception("api request failed")
            status, headers, body = _json(500, {"ok": False, "error": "internal error"})
        head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}", f"Content-Length: {len(body)}",
                "Connection: close"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        with contextlib.suppress(ConnectionError):
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            await writer.drain()
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, tcp: bool = False) -> tuple[int, dict[str, str], bytes]:
        try:
            head = await asyncio.wait_for(self._head(reader), HEAD_TIMEOUT_S)
        except asyncio.TimeoutError:
            return _json(408, {"ok": False, "error": "request headers too slow"})
        except ValueError:  # a line past the stream's 64 KiB limit
            return _json(400, {"ok": False, "error": "header line too long"})
        if isinstance(head[0], int):
            return head  # type: ignore[return-value]
        method, target, headers = head
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            return _json(400, {"ok": False, "error": "bad Content-Length"})
        url = urlsplit(target)
        feedback = url.path == "/feedback" or url.path.startswith("/feedback/")
        # Nothing unauthenticated is read beyond what a feedback form needs (the
        # TCP port is open to every local user).
        if not feedback and not self._authorised(headers):
            return _json(401, {"ok": False, "error": "missing or wrong bearer token"})
        if tcp and not self._host_allowed(headers.get("host")):
            # DNS rebinding: a web page whose name now resolves to 127.0.0.1 sends its own Host.
            return _json(421, {"ok": False, "error": "unexpected Host header"})
        if length < 0 or length > (MAX_FEEDBACK_BODY if feedback else MAX_BODY):
            return _json(413, {"ok": False, "error": "body too large"})
        # An unauthenticated (feedback) body is a few hundred bytes: no reason to wait long for it.
        body = await asyncio.wait_for(reader.readexactly(length), HEAD_TIMEOUT_S if feedback else 60) if length else b""
        if feedback:
            return await self._feedback(method, url.path, parse_qs(url.query), headers, body)
        if url.path == "/health" and method == "GET":
            return _json(200, {"ok": True, "pid": os.getpid(), "uptime_s": self.daemon.info()["uptime_s"]})
        if url.path.startswith("/ops/"):
            if method != "POST":
                return _json(405, {"ok": False, "error": "use POST"})
            return await self._op(url.path.removeprefix("/ops/"), body)
        return _json(404, {"ok": False, "error": f"no such endpoint {url.path}"})

    async def _head(self, reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]] | tuple[int, dict[str, str], bytes]:
        """(method, target, headers), or an error response."""
        line = await reader.readline()
        parts = line.decode("latin-1").split()
        if len(parts) != 3:
            return _json(400, {"ok": False, "error": "bad request line"})
        method, target, _ = parts
        headers: dict[str, str] = {}
        while True:
            h = await reader.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            if len(headers) >= MAX_HEADERS:
                return _json(400, {"ok": False, "error": "too many headers"})
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        return method, target, headers

    def _host_allowed(self, host: str | None) -> bool:
        """The Host a browser sends for a loopback URL or `delivery.public_base_url`; none
        at all (an HTTP/1.0 client) is allowed too."""
        if not host:
            return True
        try:
            name = urlsplit(f"//{host}").hostname or ""
        except ValueError:  # "[::1" and the like
            return False
        s = self.daemon.settings
        allowed = {"127.0.0.1", "localhost", "::1", (s.api.host or "").strip("[]").lower()}
        if s.delivery.public_base_url:
            allowed.add((urlsplit(s.delivery.public_base_url).hostname or "").lower())
        return name.lower() in allowed

    def _authorised(self, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.token.encode())

    async def _op(self, name: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        from backchannel.ops import OpError, resolve

        try:
            args = json.loads(body or b"{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return _json(400, {"ok": False, "error": f"bad arguments: {exc}"})
        try:
            fn = resolve(name)
            inspect.signature(fn).bind(None, **args)  # unknown or missing arguments: the caller's error
        except OpError as exc:
            return _json(404 if "unknown operation" in str(exc) else 400, {"ok": False, "error": str(exc)})
        except TypeError as exc:
            return _json(400, {"ok": False, "error": f"bad arguments for {name}: {exc}"})
        try:
            result = await self.daemon.call_op(name, args)
        except (OpError, ValueError) as exc:
            return _json(400, {"ok": False, "error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - reported to the caller, logged here
            log(logger, 40, "operation failed", op=name, error=f"{type(exc).__name__}: {exc}")
            return _json(500, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        return _json(200, {"ok": True, "result": result})

    async def _feedback(self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str],
                        body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Mount the delivery web handlers (signed links; they write, so they run on the consumer)."""
        try:
            from backchannel.delivery import web
        except ImportError:
            return _json(404, {"ok": False, "error": "feedback links are not available"})
        if path.rstrip("/") != "/feedback":
            return _html(404, "<p>not found</p>", web)
        d = self.daemon
        if method == "GET":
            token = query.get("t", [""])[0]
            status, html = await d.call_internal(lambda st: web.handle_get(st, d.settings, d.paths, token), "feedback")
        elif method == "POST":
            if len(body) > web.MAX_FORM_BYTES:
                return _html(413, "<p>too large</p>", web)
            if headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
                return _html(415, "<p>form posts only</p>", web)
            form = web.parse_form(body)
            status, html = await d.call_internal(lambda st: web.handle_post(st, d.settings, d.paths, form), "feedback")
        else:
            return _html(405, "<p>use GET or POST</p>", web)
        return _html(status, html, web)


def _html(status: int, html: str, web: Any) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "text/html; charset=utf-8", **getattr(web, "SECURITY_HEADERS", {})}
    return status, headers, html.encode("utf-8")

"""The one local server (web/app.py under uvicorn, as the daemon runs it: daemon/api.py)
under hostile local clients on its loopback TCP listener: slow or idle connections
(slowloris), connection floods, over-long or too many header lines, over-large or slow
bodies, and a DNS-rebound browser page (foreign Host header). The owner's unix socket
(0600, bearer token) must keep answering."""

from __future__ import annotations

import asyncio
import json
import stat
import time

from backchannel.config import Settings, resolve_paths
from backchannel.daemon import api
from backchannel.ops import OpEnv, invoke
from backchannel.web import guards, http_limits
from tests.support.server_support import FeedbackServer


class _Daemon:
    """The few attributes ApiServer reads of the daemon (a real object, not a mock)."""

    def __init__(self, paths, settings, store):
        self.paths, self.settings, self.store, self.t0 = paths, settings, store, time.monotonic()

    def info(self):
        return {"uptime_s": round(time.monotonic() - self.t0, 1)}

    async def call_op(self, name, args):
        if name.startswith("feedback_link_"):  # the real pages, on the test's store
            return invoke(OpEnv(store=self.store, settings=self.settings, paths=self.paths), name, args)
        return {"op": name}

    async def call_internal(self, fn, name="internal"):
        return fn(self.store)


async def _request(reader_writer, raw: bytes) -> bytes:
    reader, writer = reader_writer
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return data


def _serve(store, coro_fn, **settings_kw):
    paths = resolve_paths().ensure()
    settings = Settings()
    settings.api = settings.api.model_copy(update={"port": 0, **settings_kw})
    settings.delivery = settings.delivery.model_copy(update={"channels": ["webhook"]})

    async def main():
        server = api.ApiServer(_Daemon(paths, settings, store))
        await server.start()
        try:
            return await coro_fn(server, paths)
        finally:
            await server.stop()

    return asyncio.run(main())


def test_slow_and_flooding_tcp_clients_cannot_starve_the_owner(store, monkeypatch):
    monkeypatch.setattr(http_limits, "HEAD_TIMEOUT_S", 0.5)
    monkeypatch.setattr(http_limits, "MAX_TCP_CONNECTIONS", 8)

    async def attack(server, paths):
        port = server.tcp_port
        slow = []
        for _ in range(20):  # more than the cap, each sending half a request line and stalling
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(b"GET /health HTTP/1.1\r\n")
            slow.append((r, w))
        await asyncio.sleep(0.1)
        held = [not await _peek_closed(r) for r, _ in slow].count(True)  # still held by the server
        # The owner's socket still answers at once.
        t0 = time.monotonic()
        out = await _request(
            await asyncio.open_unix_connection(str(paths.api_socket)),
            f"GET /health HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode(),
        )
        owner_s = time.monotonic() - t0
        # Trickling headers does not keep a connection: the whole head has one deadline.
        r, w = slow[0]
        closed_at = None
        t0 = time.monotonic()
        for _ in range(30):
            await asyncio.sleep(0.1)
            w.write(b"X-Drip: 1\r\n")
            if r.at_eof() or (await _peek_closed(r)):
                closed_at = time.monotonic() - t0
                break
        await asyncio.sleep(0.3)
        left = [not await _peek_closed(r2) for r2, _ in slow[1:]].count(True)  # the deadline freed them all
        for _, w2 in slow:
            w2.close()
        return held, out, owner_s, closed_at, left

    held, out, owner_s, closed_at, left = _serve(store, attack)
    assert held <= 8
    assert out.startswith(b"HTTP/1.1 200") and owner_s < 2.0
    assert closed_at is not None and closed_at < 2.0
    assert left == 0


async def _peek_closed(reader: asyncio.StreamReader) -> bool:
    try:
        data = await asyncio.wait_for(reader.read(200), 0.05)
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return data.startswith(b"HTTP/1.1 4") or data == b""


def test_foreign_host_and_long_header_lines_are_refused(store):
    async def probe(server, paths):
        port = server.tcp_port
        got = {}
        for name, host in (
            ("evil", "evil.example"),
            ("loopback", f"127.0.0.1:{port}"),
            ("localhost", f"localhost:{port}"),
            ("broken", "[::1"),
        ):
            got[name] = await _request(
                await asyncio.open_connection("127.0.0.1", port),
                f"GET /feedback?t=x HTTP/1.1\r\nHost: {host}\r\n\r\n".encode(),
            )
        got["long"] = await _request(
            await asyncio.open_connection("127.0.0.1", port),
            b"GET /health HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",
        )
        # The owner's unix socket is not a browser target: no Host check there.
        got["unix"] = await _request(
            await asyncio.open_unix_connection(str(paths.api_socket)),
            f"POST /ops/status HTTP/1.1\r\nHost: anything\r\nAuthorization: Bearer "
            f"{server.token}\r\nContent-Length: 2\r\n\r\n{{}}".encode(),
        )
        return got

    got = _serve(store, probe)
    assert got["evil"].startswith(b"HTTP/1.1 421") and got["broken"].startswith(b"HTTP/1.1 421")
    # A loopback Host reaches the feedback handler (403: the link token is forged).
    assert got["loopback"].startswith(b"HTTP/1.1 403") and got["localhost"].startswith(b"HTTP/1.1 403")
    assert b"frame-ancestors 'none'" in got["loopback"]
    assert got["long"].startswith(b"HTTP/1.1 400") and b"too long" in got["long"]
    body = got["unix"].split(b"\r\n\r\n", 1)[1]
    assert json.loads(body) == {"ok": True, "result": {"op": "status"}}


def test_a_negative_length_is_refused_at_once(store):
    import socket

    server = FeedbackServer(store, Settings(), resolve_paths().ensure())
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=3) as s:
            # Waiting for -1 bytes would hold the connection until the client hangs up.
            s.sendall(
                b"POST /feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                b"Content-Length: -1\r\n\r\nt=x"
            )
            first = s.recv(100)
        assert first.split(b" ")[1] == b"400"  # h11 refuses a Content-Length that is not a number
    finally:
        server.close()


def _status(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1])


def test_token_socket_mode_and_header_caps(store):
    async def probe(server, paths):
        def unix():
            return asyncio.open_unix_connection(str(paths.api_socket))

        port = server.tcp_port
        got = {"mode": stat.S_IMODE(paths.api_socket.stat().st_mode)}
        got["no_token"] = await _request(await unix(), b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        got["wrong_token"] = await _request(
            await unix(),
            b"POST /ops/status HTTP/1.1\r\nHost: localhost\r\n"
            b"Authorization: Bearer nope\r\nContent-Length: 2\r\n\r\n{}",
        )
        # The token opens the API on TCP too, but not from a foreign Host.
        got["tcp_ok"] = await _request(
            await asyncio.open_connection("127.0.0.1", port),
            f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode(),
        )
        got["tcp_evil"] = await _request(
            await asyncio.open_connection("127.0.0.1", port),
            f"GET /health HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode(),
        )
        many = "".join(f"X-{i}: 1\r\n" for i in range(http_limits.MAX_HEADERS + 5))
        got["many"] = await _request(
            await asyncio.open_connection("127.0.0.1", port),
            f"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n".encode(),
        )
        got["unknown_op"] = await _request(
            await unix(),
            f"POST /ops/no_such_op HTTP/1.1\r\nHost: localhost\r\n"
            f"Authorization: Bearer {server.token}\r\n"
            f"Content-Length: 2\r\n\r\n{{}}".encode(),
        )
        got["get_op"] = await _request(
            await unix(),
            f"GET /ops/status HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode(),
        )
        return got

    got = _serve(store, probe)
    assert got["mode"] == 0o600
    assert _status(got["no_token"]) == 401 and _status(got["wrong_token"]) == 401
    assert b"missing or wrong bearer token" in got["wrong_token"]
    assert _status(got["tcp_ok"]) == 200 and b'"ok": true' in got["tcp_ok"]
    assert _status(got["tcp_evil"]) == 421
    assert _status(got["many"]) == 400 and b"too many headers" in got["many"]
    assert _status(got["unknown_op"]) == 404 and _status(got["get_op"]) == 405
    # One request per connection: every answer says so (and the connection was closed: read() returned).
    assert all(b"connection: close" in v.lower() for k, v in got.items() if k != "mode")


def test_body_caps_and_the_body_deadline(store, monkeypatch):
    monkeypatch.setattr(guards, "FEEDBACK_BODY_TIMEOUT_S", 0.5)
    monkeypatch.setattr(guards, "BODY_TIMEOUT_S", 1.0)

    async def probe(server, paths):
        port = server.tcp_port

        def tcp():
            return asyncio.open_connection("127.0.0.1", port)

        got = {}
        form = "Host: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        # Refused on the length alone, before any of the body is sent.
        got["feedback_big"] = await _request(
            await tcp(),
            f"POST /feedback HTTP/1.1\r\n{form}Content-Length: {guards.MAX_FEEDBACK_BODY + 1}\r\n\r\n".encode(),
        )
        got["ops_big"] = await _request(
            await asyncio.open_unix_connection(str(paths.api_socket)),
            f"POST /ops/status HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
            f"{server.token}\r\nContent-Length: {guards.MAX_OPS_BODY + 1}\r\n\r\n".encode(),
        )
        got["chunked"] = await _request(
            await tcp(), f"POST /feedback HTTP/1.1\r\n{form}Transfer-Encoding: chunked\r\n\r\n1\r\nt\r\n".encode()
        )
        # A body promised and never sent: cut off at the deadline.
        t0 = time.monotonic()
        got["slow"] = await _request(
            await tcp(), f"POST /feedback HTTP/1.1\r\n{form}Content-Length: 30\r\n\r\nt=".encode()
        )
        got["slow_s"] = time.monotonic() - t0
        # An operation's body is read only after its token was checked: a wrong one is
        # refused at once, with the promised megabyte never sent.
        ops = "POST /ops/status HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n"
        t0 = time.monotonic()
        got["ops_unauth"] = await _request(await tcp(), f"{ops}Authorization: Bearer wrong\r\n\r\n".encode())
        got["ops_unauth_s"] = time.monotonic() - t0
        got["ops_slow"] = await _request(await tcp(), f"{ops}Authorization: Bearer {server.token}\r\n\r\n{{".encode())
        return got

    got = _serve(store, probe)
    assert _status(got["feedback_big"]) == 413 and _status(got["ops_big"]) == 413
    assert _status(got["chunked"]) == 411
    assert _status(got["slow"]) == 408 and got["slow_s"] < 3.0
    assert _status(got["ops_unauth"]) == 401 and got["ops_unauth_s"] < 0.9
    assert _status(got["ops_slow"]) == 408

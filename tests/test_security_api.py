"""The local API's loopback TCP listener under hostile local clients: slow or idle
connections (slowloris), connection floods, over-long header lines, and a DNS-rebound
browser page (foreign Host header). The owner's unix socket must keep answering."""

from __future__ import annotations

import asyncio
import json
import time

from backchannel.config import Settings, resolve_paths
from backchannel.daemon import api


class _Daemon:
    """The few attributes ApiServer reads of the daemon (a real object, not a mock)."""

    def __init__(self, paths, settings, store):
        self.paths, self.settings, self.store, self.t0 = paths, settings, store, time.monotonic()

    def info(self):
        return {"uptime_s": round(time.monotonic() - self.t0, 1)}

    async def call_op(self, name, args):
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
    monkeypatch.setattr(api, "HEAD_TIMEOUT_S", 0.5, raising=False)
    monkeypatch.setattr(api, "MAX_TCP_CONNECTIONS", 8, raising=False)

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
        out = await _request(await asyncio.open_unix_connection(str(paths.api_socket)),
                             f"GET /health HTTP/1.1\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode())
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
    except asyncio.TimeoutError:
        return False
    except ConnectionError:
        return True
    return data.startswith(b"HTTP/1.1 4") or data == b""


def test_foreign_host_and_long_header_lines_are_refused(store):
    async def probe(server, paths):
        port = server.tcp_port
        got = {}
        for name, host in (("evil", "evil.example"), ("loopback", f"127.0.0.1:{port}"),
                           ("localhost", f"localhost:{port}"), ("broken", "[::1")):
            got[name] = await _request(await asyncio.open_connection("127.0.0.1", port),
                                       f"GET /feedback?t=x HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        got["long"] = await _request(await asyncio.open_connection("127.0.0.1", port),
                                     b"GET /health HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n")
        # The owner's unix socket is not a browser target: no Host check there.
        got["unix"] = await _request(await asyncio.open_unix_connection(str(paths.api_socket)),
                                     f"POST /ops/status HTTP/1.1\r\nHost: anything\r\nAuthorization: Bearer "
                                     f"{server.token}\r\nContent-Length: 2\r\n\r\n{{}}".encode())
        return got

    got = _serve(store, probe)
    assert got["evil"].startswith(b"HTTP/1.1 421") and got["broken"].startswith(b"HTTP/1.1 421")
    # A loopback Host reaches the feedback handler (403: the link token is forged).
    assert got["loopback"].startswith(b"HTTP/1.1 403") and got["localhost"].startswith(b"HTTP/1.1 403")
    assert b"frame-ancestors 'none'" in got["loopback"]
    assert got["long"].startswith(b"HTTP/1.1 400") and b"too long" in got["long"]
    body = got["unix"].split(b"\r\n\r\n", 1)[1]
    assert json.loads(body) == {"ok": True, "result": {"op": "status"}}


def test_standalone_feedback_server_refuses_a_negative_length_at_once(store):
    import socket

    from backchannel.delivery.web import serve_feedback

    server, base = serve_feedback(store, Settings(), resolve_paths().ensure())
    try:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
            # read(-1) would wait for the client to hang up, holding the one-at-a-time server.
            s.sendall(b"POST /feedback HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                      b"Content-Length: -1\r\n\r\nt=x")
            first = s.recv(100)
        assert first.split(b" ")[1] == b"413"
    finally:
        server.shutdown()
        server.server_close()

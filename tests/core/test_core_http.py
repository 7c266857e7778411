"""The one HTTP client (core/http.py) against real loopback servers: TCP and a unix
socket. Its callers' behaviour is tested with them (delivery, calendars, feeds,
the CLI's client of the daemon); here, what the client itself promises."""

from __future__ import annotations

import http.server
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from backchannel.core import http as client


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    seen: list[tuple[str, str, bytes]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.seen.append((self.command, self.path, self.rfile.read(length)))
        status, headers, body = self.routes.get(self.path, (404, {}, b"no"))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


def _serve(server: socketserver.BaseServer) -> threading.Thread:
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return t


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.routes, _Handler.seen = {}, []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    _serve(srv)
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_get_post_and_status_answers(server):
    _Handler.routes = {"/a?x=1": (200, {"X-Thing": "yes"}, b"hello"), "/hook": (500, {}, b"broken")}
    r = client.request("GET", f"{server}/a?x=1")
    assert (r.status, r.ok, r.body, r.headers["x-thing"]) == (200, True, b"hello", "yes")
    r = client.request("POST", f"{server}/hook", body=b'{"a": 1}', headers={"Content-Type": "application/json"})
    assert (r.status, r.ok, r.body) == (500, False, b"broken")  # an answer, not an exception
    assert _Handler.seen[-1] == ("POST", "/hook", b'{"a": 1}')
    with pytest.raises(ValueError):
        client.request("GET", "ftp://127.0.0.1/x")


def test_the_body_is_capped_whatever_the_length_header_says(server):
    big = b"x" * 5000
    _Handler.routes = {"/big": (200, {}, big), "/liar": (200, {"Content-Length": "10", "Connection": "close"}, big)}
    assert client.request("GET", f"{server}/big", max_bytes=5000).body == big
    with pytest.raises(client.ResponseTooLarge):
        client.request("GET", f"{server}/big", max_bytes=4999)
    assert len(client.request("GET", f"{server}/liar", max_bytes=100).body) == 10  # read no further than said


def test_redirects_only_when_asked_only_same_host_unless_any(server):
    other = server.replace("127.0.0.1", "localhost")  # the same server under another host name
    _Handler.routes = {
        "/moved": (302, {"Location": "/here"}, b""),
        "/away": (302, {"Location": f"{other}/here"}, b""),
        "/loop": (302, {"Location": "/loop"}, b""),
        "/here": (200, {}, b"arrived"),
    }
    assert client.request("GET", f"{server}/moved").status == 302  # not followed by default
    assert client.request("GET", f"{server}/moved", max_redirects=3).body == b"arrived"
    assert client.request("POST", f"{server}/moved", body=b"{}", max_redirects=3).status == 302  # never for a POST
    with pytest.raises(client.RedirectRefused, match="another host"):
        client.request("GET", f"{server}/away", max_redirects=3)
    assert client.request("GET", f"{server}/away", max_redirects=3, any_host=True).body == b"arrived"
    with pytest.raises(client.RedirectRefused, match="more than 3"):
        client.request("GET", f"{server}/loop", max_redirects=3)


def test_an_unreachable_or_silent_server_is_an_oserror(server):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OSError):
        client.request("GET", f"http://127.0.0.1:{port}/", timeout=2)
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        with pytest.raises(TimeoutError):
            client.request("GET", f"http://127.0.0.1:{silent.getsockname()[1]}/", timeout=0.3)


def test_https_verifies_the_certificate(tmp_path: Path):
    """A TLS server with a certificate no CA signed: refused, never read."""
    import ssl
    import subprocess

    key, cert = tmp_path / "k.pem", tmp_path / "c.pem"
    made = subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ],
        capture_output=True,
    )
    if made.returncode != 0:
        pytest.skip("openssl cannot make a certificate here")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    _serve(srv)
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            client.request("GET", f"https://127.0.0.1:{srv.server_address[1]}/", timeout=5)
    finally:
        srv.shutdown()
        srv.server_close()


def test_unix_socket_connection(tmp_path):
    class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    class Handler(_Handler):
        def address_string(self) -> str:  # a unix peer has no (host, port)
            return "unix"

    _Handler.routes = {"/health": (200, {"Content-Type": "application/json"}, b'{"ok": true}')}
    path = tmp_path / "api.sock"
    srv = UnixServer(str(path), Handler)
    _serve(srv)
    try:
        conn = client.UnixHTTPConnection(str(path), timeout=5)
        r = client.send(conn, "GET", "/health", None, {"Authorization": "Bearer t"}, max_bytes=100)
        assert (r.status, r.body) == (200, b'{"ok": true}')
        with pytest.raises(client.ResponseTooLarge):
            client.send(client.UnixHTTPConnection(str(path), timeout=5), "GET", "/health", None, {}, max_bytes=5)
    finally:
        srv.shutdown()
        srv.server_close()

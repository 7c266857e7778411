"""The one HTTP client: standard library only (http.client), for the three places
that speak HTTP outward or to the daemon: delivery's webhook and Slack POSTs, the
calendar and feed fetches, and the CLI's client of the daemon's unix socket.

What every request gets: a timeout (connect and each read), a cap on the
response body (`ResponseTooLarge`), TLS verified against the system's CAs for
https, and redirects followed only when the caller asks, only for GET and HEAD,
and only to the same host (an http -> https upgrade included) unless the caller
allows any host. A non-2xx answer is a `Response`, not an exception: each caller
says what it means. `ssl` is imported only for an https URL, so the CLI's fast
commands (which import this for the unix socket) pay nothing for it.
"""

from __future__ import annotations

import http.client
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


class HTTPClientError(Exception):
    """The request could not be made or its answer not read as asked. Never quotes the URL
    (it may be the credential, as a Slack webhook's is)."""


class ResponseTooLarge(HTTPClientError):
    def __init__(self, limit: int):
        super().__init__(f"the response is larger than {limit} bytes")
        self.limit = limit


class RedirectRefused(HTTPClientError):
    """A redirect this request may not follow (another host, an https -> http
    downgrade, too many hops)."""


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix socket (the daemon's local API); the Host header is "localhost"."""

    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except OSError:
            s.close()
            raise
        self.sock = s


def _connection(scheme: str, host: str, port: int | None, timeout: float) -> http.client.HTTPConnection:
    if scheme == "https":
        import ssl  # only when https is used: ~10 ms the CLI's unix-socket path never pays

        return http.client.HTTPSConnection(host, port, timeout=timeout, context=ssl.create_default_context())
    return http.client.HTTPConnection(host, port, timeout=timeout)


def read_capped(resp: http.client.HTTPResponse, max_bytes: int) -> bytes:
    """The body, or ResponseTooLarge as soon as it passes `max_bytes` (a lying or
    absent Content-Length changes nothing)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = resp.read(min(_CHUNK, max_bytes + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise ResponseTooLarge(max_bytes)


def send(
    conn: http.client.HTTPConnection,
    method: str,
    target: str,
    body: bytes | None,
    headers: dict[str, str],
    max_bytes: int,
) -> Response:
    """One request on `conn` (closed afterwards), its capped answer."""
    try:
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        data = read_capped(resp, max_bytes)
        return Response(resp.status, resp.reason, {k.lower(): v for k, v in resp.getheaders()}, data)
    finally:
        conn.close()


def _same_origin_or_upgrade(old: Any, new: Any) -> bool:
    if new.hostname != old.hostname:
        return False
    if (old.scheme, new.scheme) == ("http", "https"):
        return new.port in (None, 443)  # the usual upgrade, same host
    return new.scheme == old.scheme and new.port == old.port


def request(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 20.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = 0,
    any_host: bool = False,
) -> Response:
    """`method` on an http(s) `url`; see the module's docstring for what is checked.
    Raises ValueError for a URL that is not http(s), OSError when the server cannot
    be reached or answers too slowly, http.client.HTTPException for a broken answer,
    HTTPClientError for a refused redirect or an answer over `max_bytes`."""
    hops = 0
    while True:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an http(s) URL")
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        conn = _connection(parts.scheme, parts.hostname, parts.port, timeout)
        resp = send(conn, method, target, body, dict(headers or {}), max_bytes)
        location = resp.headers.get("location")
        if resp.status not in REDIRECTS or not location or max_redirects == 0 or method not in ("GET", "HEAD"):
            return resp
        hops += 1
        if hops > max_redirects:
            raise RedirectRefused(f"more than {max_redirects} redirects")
        nxt = urljoin(url, location)
        new = urlsplit(nxt)
        if new.scheme not in ("http", "https"):
            raise RedirectRefused("a redirect to a URL that is not http(s)")
        if parts.scheme == "https" and new.scheme == "http":
            raise RedirectRefused("a redirect from https to plain http")
        if not any_host and not _same_origin_or_upgrade(parts, new):
            raise RedirectRefused("a redirect to another host")
        url = nxt

"""The CLI's side of the local API: `connect(paths)` returns a client when a
daemon runs (its lock is held and its socket answers), else None, so the CLI
opens the store itself."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

from backchannel.config import Paths

DEFAULT_TIMEOUT_S = 900.0  # an ingest or a sweep through the API may take minutes


class _UnixHTTPConnection(http.client.HTTPConnection):
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


class DaemonError(Exception):
    """The daemon answered with an error that is not the user's to fix."""


class Client:
    def __init__(self, paths: Paths, token: str, timeout: float = DEFAULT_TIMEOUT_S):
        self.paths = paths
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        conn = _UnixHTTPConnection(str(self.paths.api_socket), timeout or self.timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(raw or b"null")
        except ValueError:
            return resp.status, raw.decode(errors="replace")

    def health(self, timeout: float = 5.0) -> dict[str, Any]:
        status, obj = self.request("GET", "/health", timeout=timeout)
        if status != 200:
            raise DaemonError(f"health check failed: {status} {obj}")
        return obj

    def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Run operation `name` in the daemon. Any failure raises UserError, like the
        in-process path does for OpError."""
        from backchannel.cli.common import UserError

        status, obj = self.request("POST", f"/ops/{name}", args or {})
        if status == 200 and isinstance(obj, dict) and obj.get("ok"):
            return obj.get("result")
        err = obj.get("error") if isinstance(obj, dict) else str(obj)
        if status in (400, 404):
            raise UserError(err)
        # The daemon logged the details; the user gets one line, not a traceback.
        raise UserError(f"the daemon failed to run {name} ({status}): {err}; see its log")


def connect(paths: Paths, timeout: float = DEFAULT_TIMEOUT_S) -> Client | None:
    """A client for the running daemon, or None when none runs: no socket, the
    lock not held, the connection refused, or no readable token."""
    from backchannel.daemon.lockfile import lock_held

    sock = paths.api_socket
    if not sock.exists() or not lock_held(paths.lock_file):
        return None
    try:
        token = paths.api_token_file.read_text().strip()
    except OSError:
        return None
    client = Client(paths, token, timeout)
    try:
        client.health(timeout=10.0)
    except (OSError, DaemonError, http.client.HTTPException):
        return None
    return client

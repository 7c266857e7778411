"""The CLI's side of the local API: `connect(paths)` returns a client when a
daemon runs (its lock is held), else None, so the CLI opens the store itself.
A daemon that runs but cannot be reached is a clear error, never a fallback."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any

from backchannel.config import Paths
from backchannel.core.http import UnixHTTPConnection, send

DEFAULT_TIMEOUT_S = 900.0  # an ingest or a sweep through the API may take minutes
# The daemon is ours and holds the token: the cap is only against a runaway answer
# (an export of a large memory is the biggest legitimate one).
MAX_ANSWER_BYTES = 1024 * 1024 * 1024


class DaemonError(Exception):
    """The daemon answered with an error that is not the user's to fix."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Client:
    def __init__(self, paths: Paths, token: str, timeout: float = DEFAULT_TIMEOUT_S):
        self.paths = paths
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        conn = UnixHTTPConnection(str(self.paths.api_socket), timeout or self.timeout)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        resp = send(conn, method, path, data, headers, MAX_ANSWER_BYTES)
        try:
            return resp.status, json.loads(resp.body or b"null")
        except ValueError:
            return resp.status, resp.body.decode(errors="replace")

    def health(self, timeout: float = 5.0) -> dict[str, Any]:
        status, obj = self.request("GET", "/health", timeout=timeout)
        if status != 200:
            raise DaemonError(f"health check failed: {status} {obj}", status)
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


class DaemonUnreachable(Exception):
    """A daemon holds the lock (so the store is not ours to open) but its API
    cannot be used: no socket, no answer, or a refused token."""


SOCKET_WAIT_S = 10.0  # a daemon that just started opens its store before its socket


def _holder_pid(paths: Paths) -> str:
    try:
        return paths.lock_file.read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def connect(paths: Paths, timeout: float = DEFAULT_TIMEOUT_S, health_timeout_s: float = 10.0) -> Client | None:
    """A client for the running daemon, or None when no daemon runs (its lock is
    free: the CLI then opens the store itself).

    When a daemon holds the lock the store is its alone (DuckDB allows one
    writer), so any failure to reach its API raises a UserError that says what
    is wrong (no socket yet, no answer, token unreadable or refused) instead of
    falling back to the store and failing on its lock."""
    from backchannel.cli.common import UserError
    from backchannel.daemon.lockfile import lock_held

    if not lock_held(paths.lock_file):
        return None
    sock = paths.api_socket
    deadline = time.monotonic() + SOCKET_WAIT_S
    while not sock.exists() and time.monotonic() < deadline and lock_held(paths.lock_file):
        time.sleep(0.1)  # starting up: migrations and crash recovery come before the API
    if not lock_held(paths.lock_file):
        return None  # it stopped meanwhile
    pid = _holder_pid(paths)
    if not sock.exists():
        raise UserError(
            f"the daemon (PID {pid}) is running but its API socket {sock} did not appear "
            f"within {SOCKET_WAIT_S:.0f} s; see its log (journalctl --user -u backchannel)"
        )
    try:
        token = paths.api_token_file.read_text().strip()
    except OSError as exc:
        raise UserError(
            f"cannot read the daemon's API token {paths.api_token_file}: {exc.strerror or exc}; "
            f"run this command as the user the daemon (PID {pid}) runs as"
        ) from None
    client = Client(paths, token, timeout)
    try:
        client.health(timeout=health_timeout_s)
    except DaemonError as exc:
        if exc.status == 401:
            raise UserError(
                f"the daemon (PID {pid}) refused the API token in {paths.api_token_file}; the file "
                f"changed after it started: restart the daemon to issue a new one"
            ) from None
        raise UserError(f"the daemon (PID {pid}) answered its health check with an error: {exc}") from None
    except (OSError, http.client.HTTPException) as exc:
        why = (
            f"no answer within {health_timeout_s:.0f} s"
            if isinstance(exc, TimeoutError)
            else f"{type(exc).__name__}: {exc}"
        )
        raise UserError(
            f"the daemon (PID {pid}) does not answer on {sock} ({why}); it may be busy or hung: "
            f"see its log, or restart it"
        ) from None
    return client

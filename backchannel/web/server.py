"""Serving the one app (web/app.py) with uvicorn, on sockets we bind ourselves:

- the owner's unix socket, created under umask 0177 and chmod 0600 (uvicorn's own
  `uds=` would leave a new socket 0666, readable by every local user);
- loopback TCP (the config refuses another host), where port 0 picks a free port that
  is then known and written down.

Each `Served` is one uvicorn.Server with the limits of `web/http_limits.py`; the daemon
runs two on its loop (the unix socket alone, so a flood on TCP cannot starve it; and its
TCP ports), `backchannel web` one. Inside the daemon uvicorn must not install its signal
handlers (uvicorn 0.54 has no option for that: `capture_signals` is overridden): SIGTERM
and SIGHUP belong to the daemon, which stops the servers in its shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import uvicorn

from backchannel.core.logging import get as get_logger
from backchannel.web.http_limits import MAX_TCP_CONNECTIONS, Limits, protocol_class

logger = get_logger("web")


def port_file(state_dir: Path) -> Path:
    """Where the daemon says on which port it serves the web app (absent when it does not)."""
    return state_dir / "web.port"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on a loopback address (OSError when the port is taken)."""
    name = "127.0.0.1" if host == "localhost" else host
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((name, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def bind_unix(path: Path) -> socket.socket:
    """A listening unix socket only its owner can connect to (mode 0600 from birth)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket of a dead daemon (the caller holds the lock, so it is stale)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def config(app: Any, limits: Limits, lifespan: Literal["auto", "on", "off"] = "off") -> uvicorn.Config:
    # Our own logger reports errors; uvicorn's access log would only repeat every URL (and
    # a feedback link's token). The head limits sit in the protocol; h11's own buffer cap
    # is set above ours so that ours answers first, with a clear message.
    return uvicorn.Config(
        app,
        http=protocol_class(limits),
        h11_max_incomplete_event_size=limits.max_head_bytes + 1024,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan=lifespan,
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=3,
    )


class QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: it runs on the daemon's loop, among its tasks."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class Served:
    """One uvicorn server on the running loop, on `sockets`, until `stop()`."""

    def __init__(self, app: Any, sockets: list[socket.socket], limits: Limits, name: str):
        self.sockets = sockets
        self.server = QuietServer(config(app, limits))
        self.task = asyncio.get_running_loop().create_task(self.server.serve(sockets=sockets), name=name)

    async def started(self) -> None:
        # uvicorn says it has started only by a flag, so there is no event to wait on.
        while not self.server.started and not self.task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if self.task.done():
            self.task.result()  # its error, if it failed to start

    async def stop(self) -> None:
        self.server.should_exit = True
        try:
            await asyncio.wait_for(self.task, 4.0)
        except (TimeoutError, Exception):  # noqa: BLE001 - stopping: a slow client must not hold us
            self.task.cancel()
        for sock in self.sockets:
            sock.close()


def daemon_web_url(state_dir: Path) -> str | None:
    """The running daemon's web app address, when it serves one and answers on it."""
    try:
        port = int(port_file(state_dir).read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return f"http://127.0.0.1:{port}"
    except OSError:
        return None


def serve_here(app: Any, sock: socket.socket) -> None:
    """`backchannel web` with no daemon serving the app: serve it from this process on
    `sock` until interrupted (uvicorn's signal handling is right here: Ctrl-C stops it)."""
    try:
        uvicorn.Server(config(app, Limits(max_connections=MAX_TCP_CONNECTIONS))).run(sockets=[sock])
    finally:
        sock.close()

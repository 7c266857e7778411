"""Serving the web app: inside the daemon (`[web] enabled`), or from `backchannel web`.

uvicorn serves it on a socket we bind ourselves (loopback only: the config refuses
anything else), so port 0 can pick a free port that is then known and written down.
Inside the daemon uvicorn must not install its own signal handlers: SIGTERM and
SIGHUP belong to the daemon, which stops the web server in its shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn

from backchannel.core.logging import get as get_logger, log

logger = get_logger("web")


def port_file(state_dir: Path) -> Path:
    """Where the daemon says on which port it serves the app (absent when it does not)."""
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


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _config(app: Any) -> uvicorn.Config:
    # Our own logger reports errors; uvicorn's access log would only repeat every URL.
    return uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="off",
                          server_header=False, proxy_headers=False)


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: it runs on the daemon's loop, among its tasks."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class DaemonWeb:
    """The app served by the running daemon, its operations on the daemon's queue."""

    def __init__(self, server: _QuietServer, task: asyncio.Task, sock: socket.socket, state_dir: Path):
        self.server, self.task, self.sock, self.state_dir = server, task, sock, state_dir
        self.url = base_url(sock)

    @classmethod
    async def start(cls, daemon: Any) -> "DaemonWeb | None":
        from backchannel.daemon.api import ensure_token
        from backchannel.web.app import build_app
        from backchannel.web.bridge import DaemonOperations

        web = daemon.settings.web
        try:
            sock = bind(web.host, web.port)
        except OSError as exc:
            log(logger, 40, "the web app could not start; the daemon runs without it", host=web.host,
                port=web.port, error=str(exc))
            return None
        app = build_app(DaemonOperations(daemon), daemon.settings, daemon.paths, ensure_token(daemon.paths))
        server = _QuietServer(_config(app))
        task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]), name="web")
        self = cls(server, task, sock, daemon.paths.state_dir)
        port_file(self.state_dir).write_text(f"{sock.getsockname()[1]}\n")
        log(logger, 20, "web app listening", url=self.url)
        return self

    async def stop(self) -> None:
        port_file(self.state_dir).unlink(missing_ok=True)
        self.server.should_exit = True
        try:
            await asyncio.wait_for(self.task, 3.0)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - stopping: a slow client must not hold us
            self.task.cancel()
        self.sock.close()


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


def serve_here(ctx: Any, host: str, port: int, announce: Any) -> None:
    """`backchannel web` with no daemon serving the app: serve it from this process until
    interrupted. `announce(base_url)` runs once the socket listens."""
    from backchannel.daemon.api import ensure_token
    from backchannel.web.app import build_app
    from backchannel.web.bridge import CliOperations

    sock = bind(host, port)
    app = build_app(CliOperations(ctx), ctx.settings, ctx.paths, ensure_token(ctx.paths))
    announce(base_url(sock))
    try:
        uvicorn.Server(_config(app)).run(sockets=[sock])
    finally:
        sock.close()

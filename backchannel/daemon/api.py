"""The daemon's side of the one local server (web/app.py, served by uvicorn: web/server.py):

- its unix socket (paths.api_socket, mode 0600): the local API, for the CLI;
- loopback TCP at `[api] host/port` when delivery is configured (its feedback links must
  open in a browser) or a port is set (port 0: any free port, written to `<state>/api.port`);
- loopback TCP at `[web] host/port` with `[web] enabled` (written to `<state>/web.port`).

Every listener serves the same app: the API (`POST /ops/NAME`, `GET /health`; bearer
token, the one in paths.api_token_file, 0600, created at the first start), `/feedback`
(the signed link is the credential) and, with `[web] enabled`, the web app's pages
(login). The unix socket is a uvicorn server of its own, without a connection cap, so
idle or slow TCP clients cannot starve it; the TCP ports share one, with the caps and
deadlines of web/http_limits.py and web/guards.py.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import Any

from backchannel.config import Paths
from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log
from backchannel.core.secretfile import write_secret

logger = get_logger("api")


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


class ApiServer:
    def __init__(self, daemon: Any):
        self.daemon = daemon
        self.paths: Paths = daemon.paths
        self.token = ensure_token(self.paths)
        self.owner: Any = None  # web.server.Served: the unix socket
        self.loopback: Any = None  # web.server.Served: the TCP ports
        self.tcp_port: int | None = None
        self.web_url: str | None = None

    @property
    def port_file(self) -> Path:
        return self.paths.state_dir / "api.port"

    async def start(self) -> None:
        from backchannel.web import http_limits as hl
        from backchannel.web.app import build_app
        from backchannel.web.bridge import DaemonOperations
        from backchannel.web.server import Served, base_url, bind, bind_unix, port_file

        s = self.daemon.settings
        app = build_app(
            DaemonOperations(self.daemon), s, self.paths, self.token, daemon=self.daemon, pages=s.web.enabled
        )
        # The limits are read now, not at import: a test may shorten them.
        self.owner = Served(
            app, [bind_unix(self.paths.api_socket)], hl.Limits(head_timeout_s=hl.HEAD_TIMEOUT_S), "api-unix"
        )
        tcp = []
        if s.delivery.channels or s.api.port:
            tcp.append(bind(s.api.host, s.api.port))
            self.tcp_port = tcp[-1].getsockname()[1]
        if s.web.enabled:  # the local web app, on this loop and this queue
            try:
                tcp.append(bind(s.web.host, s.web.port))
                self.web_url = base_url(tcp[-1])
            except OSError as exc:
                log(
                    logger,
                    40,
                    "the web app could not start; the daemon runs without it",
                    host=s.web.host,
                    port=s.web.port,
                    error=str(exc),
                )
        if tcp:
            self.loopback = Served(
                app, tcp, hl.Limits(head_timeout_s=hl.HEAD_TIMEOUT_S, max_connections=hl.MAX_TCP_CONNECTIONS), "api-tcp"
            )
        for served in (self.owner, self.loopback):
            if served is not None:
                await served.started()
        if self.tcp_port is not None:
            self.port_file.write_text(f"{self.tcp_port}\n")
        if self.web_url is not None:
            port_file(self.paths.state_dir).write_text(f"{tcp[-1].getsockname()[1]}\n")
            log(logger, 20, "web app listening", url=self.web_url)

    async def stop(self) -> None:
        from backchannel.web.server import port_file

        if self.web_url is not None:
            port_file(self.paths.state_dir).unlink(missing_ok=True)
        if self.tcp_port is not None:
            self.port_file.unlink(missing_ok=True)
        # Together: each waits up to its graceful timeout for requests in flight.
        await asyncio.gather(*(served.stop() for served in (self.loopback, self.owner) if served is not None))
        self.paths.api_socket.unlink(missing_ok=True)

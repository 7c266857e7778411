"""sd_notify without a C dependency: a datagram to $NOTIFY_SOCKET.

systemd's protocol is a few lines: newline-separated KEY=VALUE assignments sent
as one datagram to the unix socket named by NOTIFY_SOCKET (a leading '@' means
the abstract namespace). Without NOTIFY_SOCKET every call is a no-op.
"""

from __future__ import annotations

import os
import socket


class Notifier:
    def __init__(self, environ: dict[str, str] | None = None):
        env = os.environ if environ is None else environ
        addr = env.get("NOTIFY_SOCKET") or ""
        self.address: str | None = None
        if addr:
            self.address = "\0" + addr[1:] if addr.startswith("@") else addr
        usec = env.get("WATCHDOG_USEC")
        pid = env.get("WATCHDOG_PID")
        self.watchdog_s: float | None = None
        # WATCHDOG_PID, when set, must be ours; otherwise the pings are for another process.
        if usec and usec.isdigit() and (not pid or pid == str(os.getpid())):
            self.watchdog_s = int(usec) / 1_000_000

    @property
    def enabled(self) -> bool:
        return self.address is not None

    @property
    def watchdog_interval_s(self) -> float | None:
        """Half the watchdog timeout, as sd_watchdog_enabled(3) recommends."""
        return self.watchdog_s / 2 if self.watchdog_s else None

    def send(self, **state: str | int) -> bool:
        if not self.address:
            return False
        msg = "\n".join(f"{k.upper()}={v}" for k, v in state.items()).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
                # Never block the event loop: a full receive queue drops this message.
                s.setblocking(False)
                s.connect(self.address)
                s.send(msg)
            return True
        except OSError:
            # A slow or vanished service manager must never stall or take the daemon down.
            return False

    def ready(self, status: str = "") -> bool:
        return self.send(ready=1, status=status) if status else self.send(ready=1)

    def status(self, text: str) -> bool:
        return self.send(status=text)

    def watchdog(self) -> bool:
        return self.send(watchdog=1)

    def stopping(self) -> bool:
        return self.send(stopping=1)

    def reloading(self) -> bool:
        return self.send(reloading=1)

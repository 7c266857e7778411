"""Reading a real daemon's JSON log lines, for the tests that run `backchannel run`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any


class DaemonLog:
    """Mixin: `self.log_path` (the daemon's stderr) and `self.proc` (its Popen)."""

    log_path: Path
    proc: subprocess.Popen

    def lines(self) -> list[dict[str, Any]]:
        out = []
        for raw in self.log_path.read_text().splitlines():
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append({"msg": raw})
        return out

    def wait_log(self, pred, timeout: float = 20.0, poll: float = 0.05) -> dict[str, Any]:
        """The first log line matching `pred`; fails with the log's tail if the daemon
        exits or `timeout` passes first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines():
                if pred(line):
                    return line
            if self.proc.poll() is not None:
                break
            time.sleep(poll)
        raise AssertionError(f"log line not seen (exit {self.proc.poll()}):\n{self.log_path.read_text()[-4000:]}")

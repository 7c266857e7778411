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


def child_pids(pid: int) -> list[int]:
    """The direct children of process `pid`, from /proc: how a test sees the sandbox
    children of a daemon running in another process (the daemon itself asks its runner)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()  # after "(comm)": state, ppid, ...
        if len(fields) > 1 and fields[1] == str(pid):
            out.append(int(d.name))
    return sorted(out)

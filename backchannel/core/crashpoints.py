"""The crash test hook: `BACKCHANNEL_TEST_CRASH_AT=<point>` makes the process stop at
that named point as if killed, so a test can prove a crash there loses and doubles
nothing. Standard library only; a no-op unless the variable names the point.

One behaviour for every point (the daemon's runs, the outbox, mail sync):
- with `BACKCHANNEL_TEST_CRASH_FILE` set, the point's name is written there and the
  process waits to be killed: the test sends SIGKILL when it has seen the file, so it
  chooses the moment (e.g. after checking what the database holds);
- without it, the process dies at once, no cleanup, exit status 137 (as under kill -9).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

CRASH_ENV = "BACKCHANNEL_TEST_CRASH_AT"
CRASH_FILE_ENV = "BACKCHANNEL_TEST_CRASH_FILE"


def crash_point(name: str) -> None:
    """Stop here when the test hook names this point (see the module's doc)."""
    if os.environ.get(CRASH_ENV) != name:
        return
    marker = os.environ.get(CRASH_FILE_ENV)
    if not marker:
        os._exit(137)
    Path(marker).write_text(name)
    time.sleep(120)
    os._exit(70)  # never reached when the test kills us; a hung test still ends

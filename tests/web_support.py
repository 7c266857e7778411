"""The demo's story with its proposals made, for the web app and MCP tests (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from delivery_support import demo_home

# Low enough that the sweep's reconnect candidates become proposals too (something to dismiss).
GATE = "score_threshold = 0.05\nmax_per_day = 50\nmax_per_week = 100\n"


def story_home(home: Path, extra_toml: str = "", *, sweep: bool = True) -> list[str]:
    """demo_home, then the calendar and signal wakes (the introduction to Sophie through
    Marc, with a draft to marc@example.org) and, with `sweep`, a sweep's reconnect
    proposals; all run in-process, no daemon. Returns the proposal ids, oldest first."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.memory import Store
    from backchannel.ops import OpEnv, invoke

    demo_home(home, extra_toml, gate=GATE)
    env_vars = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env_vars).ensure()
    settings = load_settings(paths, environ=env_vars)
    with Store.open(paths.db_file) as st:
        env = OpEnv(store=st, settings=settings, paths=paths)
        for kind in ("calendar", "signals") + (("sweep",) if sweep else ()):
            invoke(env, "wake", {"kind": kind})
        rows = invoke(env, "proposals", {"limit": 100})
    return [r["id"] for r in reversed(rows)]


def subprocess_env(home: Path, **extra: str) -> dict[str, Any]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_") and k != "NOTIFY_SOCKET"}
    env.update(BACKCHANNEL_HOME=str(home), PYTHONUNBUFFERED="1", **extra)
    return env

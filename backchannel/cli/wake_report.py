"""What `backchannel wake` says: what a wake did once it ran, in words (proposals made,
candidates held back and why), and, while quiet hours hold, that they will hold
whatever the wake finds until they end."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from backchannel.core.timeutil import aware_now


def quiet_until(settings: Any, now: datetime | None = None) -> str | None:
    """'07:00' when quiet hours hold now (in the owner's time zone), else None."""
    from zoneinfo import ZoneInfo

    from backchannel.config.values import parse_quiet_hours
    from backchannel.engine.gate import in_quiet_hours

    spec = settings.gate.quiet_hours
    try:
        qh = parse_quiet_hours(spec)
    except ValueError:
        return None
    if qh is None:
        return None
    local = (now or aware_now()).astimezone(ZoneInfo(settings.owner.timezone))
    return f"{qh[1]:%H:%M}" if in_quiet_hours(local, spec) else None


def run_line(r: dict[str, Any], until: str | None = None) -> str:
    """'sweep        done     R...  proposals: P-3; 2 held back: quiet_hours (until 07:00)'."""
    line = f"{r['kind']:<12} {r['status']:<8} {r['run_id']}"
    if r.get("proposals"):
        line += "  proposals: " + ", ".join(r["proposals"])
    held = Counter(str(s.get("check") or "?") for s in r.get("suppressed") or [])
    if held:
        words = ", ".join(
            f"{n} by {check.replace('_', ' ')}" + (f" until {until}" if check == "quiet_hours" and until else "")
            for check, n in held.most_common()
        )
        line += f"  held back: {words}"
    elif not r.get("proposals") and r["status"] == "done":
        line += f"  nothing to propose ({r.get('candidates') or 0} candidate(s))"
    if r.get("reason"):
        line += f"  ({r['reason']})"
    return line


def wait_for_run(call: Callable[[str, dict], Any], key: str, wait_s: float) -> dict[str, Any] | None:
    """The finished run of wake `key` as `run_line` takes it, polling the daemon's
    status; None when it has not finished within `wait_s` seconds."""
    deadline = time.monotonic() + wait_s
    run = None
    while time.monotonic() < deadline:
        st = call("status", {})
        run = next((r for r in st.get("recent_wakes") or [] if r.get("wake_key") == key), None)
        if run is not None and run["status"] != "running":
            break
        time.sleep(0.3)
    else:
        return None
    t = call("trace", {"id": run["id"]})
    suppressed = [
        {"check": (c.get("outcome") or "").removeprefix("suppressed by ").split(":")[0]}
        for c in t.get("candidates") or []
        if str(c.get("outcome") or "").startswith("suppressed by ")
    ]
    return {
        "kind": run["wake_kind"],
        "status": run["status"],
        "run_id": run["id"],
        "reason": run.get("reason"),
        "proposals": [c["proposal"] for c in t.get("candidates") or [] if c.get("proposal")],
        "suppressed": suppressed,
        "candidates": len(t.get("candidates") or []),
    }

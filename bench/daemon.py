"""The daemon's costs. Prints JSON:

- idle RSS (MiB) and CPU (% of one core) of a real `backchannel run` over --idle-s seconds;
- wake overhead p50/p95 (ms) with no model (offline skills, no model latency) at
  --assertions synthetic assertions: a bookkeeping-only wake (calendar, no
  events), a scheduled sweep, and a signal wake that sweeps for introductions;
- `backchannel proposals` wall time (median ms) with and without a running daemon.

Usage: python bench/daemon.py [--idle-s 60] [--assertions 100000] [--wakes 10]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.synth: test data, not the package's


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))], 1)


def _proc_stats(pid: int) -> tuple[float, float]:
    """(RSS MiB, CPU seconds) of a process, from /proc."""
    rss_kb = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kb = int(line.split()[1])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return rss_kb / 1024, cpu


def seed(home: Path, n: int) -> dict:
    from backchannel.config import load_settings, resolve_paths
    from backchannel.memory.calendar import upsert_events
    from tests.support import synth
    from backchannel.memory import Store

    env = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env).ensure()
    paths.config_file.write_text('[schedule]\nsweep = []\n[gate]\nquiet_hours = "off"\nmin_gap_minutes = 0\n'
                                 'max_per_day = 1000\nmax_per_week = 1000\n')
    t = time.perf_counter()
    with Store.open(paths.db_file) as store:
        g = synth.generate(store, n)
        upsert_events(store, [{"uid": "bench-marc", "summary": "Coffee with Marc", "attendees": ["Marc Dupont"],
                               "starts_at": (datetime.now(timezone.utc) + timedelta(hours=30)).isoformat()}])
        count = store.scalar("SELECT count(*) FROM assertions")
    return {"paths": paths, "settings": load_settings(paths, environ=env), "assertions": int(count),
            "seed_s": round(time.perf_counter() - t, 2), "graph": g}


def wake_overhead(info: dict, wakes: int) -> dict:
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.memory import Store

    paths, settings = info["paths"], info["settings"]
    now = datetime.now(timezone.utc).isoformat()
    kinds = {
        "calendar_empty": lambda i: {"kind": "calendar", "key": f"b:cal:{i}", "payload": {"events": []}},
        "sweep": lambda i: {"kind": "sweep", "key": f"b:sweep:{i}", "payload": {"scheduled_for": now}},
        "signal": lambda i: {"kind": "signal", "key": f"b:sig:{i}", "payload": {
            "id": f"bench{i}", "source": "bench", "title": f"Acme publishes tender {i}", "published_at": now}},
    }
    out: dict[str, dict] = {}
    with Store.open(paths.db_file) as store:
        for name, make in kinds.items():
            times = []
            proposals = 0
            for i in range(wakes):
                t = time.perf_counter()
                o = run_wake_once(store, settings, paths, make(i))
                times.append((time.perf_counter() - t) * 1000)
                assert o.status == "done", o.to_dict()
                proposals += len(o.proposals)
            out[name] = {"p50_ms": _pct(times, 0.5), "p95_ms": _pct(times, 0.95), "n": wakes,
                         "proposals": proposals}
    return out


def cli_ms(home: Path, runs: int = 5) -> float:
    env = {**os.environ, "BACKCHANNEL_HOME": str(home)}
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "backchannel", "proposals", "--json"], env=env, check=True,
                       capture_output=True, timeout=120)
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 1)


def daemon_figures(home: Path, idle_s: float) -> dict:
    env = {**os.environ, "BACKCHANNEL_HOME": str(home)}
    log = (home / "bench-daemon.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "backchannel", "run"], env=env, stderr=log,
                            stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while "daemon ready" not in (home / "bench-daemon.log").read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((home / "bench-daemon.log").read_text()[-2000:])
            time.sleep(0.1)
        time.sleep(2)  # let start-up work (trigger first looks) settle
        rss0, cpu0 = _proc_stats(proc.pid)
        t0 = time.monotonic()
        time.sleep(idle_s)
        rss1, cpu1 = _proc_stats(proc.pid)
        idle = {"seconds": idle_s, "rss_mib": round(rss1, 1), "rss_start_mib": round(rss0, 1),
                "cpu_percent": round(100 * (cpu1 - cpu0) / (time.monotonic() - t0), 3)}
        with_daemon = cli_ms(home)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    return {"idle": idle, "proposals_cli_ms_with_daemon": with_daemon, "proposals_cli_ms_without_daemon": cli_ms(home)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle-s", type=float, default=60.0)
    ap.add_argument("--assertions", type=int, default=100_000)
    ap.add_argument("--wakes", type=int, default=10)
    a = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory(prefix="bc-bench-daemon-") as tmp:
        home = Path(tmp) / "home"
        info = seed(home, a.assertions)
        result = {"assertions": info["assertions"], "seed_s": info["seed_s"],
                  "wake_overhead_no_model": wake_overhead(info, a.wakes)}
        result.update(daemon_figures(home, a.idle_s))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

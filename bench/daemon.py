"""The daemon's costs. Prints JSON:

- idle RSS (MiB) and CPU (% of one core) of a real `backchannel run` over --idle-s seconds;
- wake overhead p50/p95 (ms) with no model (offline skills, no model latency) at
  --assertions synthetic assertions: a bookkeeping-only wake (calendar, no
  events), a scheduled sweep, and a signal wake that sweeps for introductions;
- `backchannel proposals` wall time (median ms) with and without a running daemon.

`sweep_wake` compares the scheduled sweep's p50 with its target
(under 500 ms at 1M assertions, no model) and, with `--baseline PATH` (another
checkout, e.g. /work/main), with that code's p50 measured in the same conditions:
each round, each code runs its wakes in its own process (PYTHONPATH = its checkout)
on its own copy of the same seeded store, one after the other, and the p50 is over
the wakes of every round. The machine may be shared: compare the two, not runs apart.

Usage: python bench/daemon.py [--idle-s 60] [--assertions 100000] [--wakes 10]
                              [--baseline /work/main] [--rounds 3] [--no-daemon]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.synth: test data, not the package's
HERE = Path(__file__).resolve()
SWEEP_TARGET_MS = 500.0  # the target: a sweep wake at 1M assertions, excluding model latency


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
    from backchannel.memory import Store
    from backchannel.memory.calendar import upsert_events
    from tests.support import synth

    env = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env).ensure()
    paths.config_file.write_text(
        '[schedule]\nsweep = []\n[gate]\nquiet_hours = "off"\nmin_gap_minutes = 0\n'
        "max_per_day = 1000\nmax_per_week = 1000\n"
    )
    t = time.perf_counter()
    with Store.open(paths.db_file) as store:
        g = synth.generate(store, n)
        upsert_events(
            store,
            [
                {
                    "uid": "bench-marc",
                    "summary": "Coffee with Marc",
                    "attendees": ["Marc Dupont"],
                    "starts_at": (datetime.now(UTC) + timedelta(hours=30)).isoformat(),
                }
            ],
        )
        count = store.scalar("SELECT count(*) FROM assertions")
    return {
        "paths": paths,
        "settings": load_settings(paths, environ=env),
        "assertions": int(count),
        "seed_s": round(time.perf_counter() - t, 2),
        "graph": g,
    }


def _cpu_s() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def wake_times(home: Path, wakes: int) -> dict:
    """Each kind of wake `wakes` times on the store in `home`, with the code on sys.path:
    {kind: {"ms": [...], "cpu_ms": [...], "proposals": n}}. CPU counts this process's threads
    (DuckDB's included) and the sandbox children the wake ran and reaped: on a shared
    machine it moves less with the load than the wall time does."""
    from backchannel.config import load_settings, resolve_paths

    try:
        from backchannel.engine.pipeline import run_wake_once
    except ImportError:  # a baseline from before the engine package
        from backchannel.daemon.pipeline import run_wake_once  # type: ignore[no-redef]
    from backchannel.memory import Store

    env = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env)
    settings = load_settings(paths, environ=env)
    now = datetime.now(UTC).isoformat()
    kinds = {
        "calendar_empty": lambda i: {"kind": "calendar", "key": f"b:cal:{i}", "payload": {"events": []}},
        "sweep": lambda i: {"kind": "sweep", "key": f"b:sweep:{i}", "payload": {"scheduled_for": now}},
        "signal": lambda i: {
            "kind": "signal",
            "key": f"b:sig:{i}",
            "payload": {
                "id": f"bench{i}",
                "source": "bench",
                "title": f"Acme publishes tender {i}",
                "published_at": now,
            },
        },
    }
    out: dict[str, dict] = {}
    with Store.open(paths.db_file) as store:
        for name, make in kinds.items():
            times, cpu = [], []
            proposals = 0
            for i in range(wakes):
                t, c = time.perf_counter(), _cpu_s()
                o = run_wake_once(store, settings, paths, make(i))
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((_cpu_s() - c) * 1000)
                assert o.status == "done", o.to_dict()
                proposals += len(o.proposals)
            out[name] = {"ms": times, "cpu_ms": cpu, "proposals": proposals}
    return out


def _measure(seed_home: Path, scratch: Path, code: Path, wakes: int) -> dict:
    """wake_times in a child process running `code`'s backchannel, on a fresh copy of the seed."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(seed_home, scratch)
    env = {**os.environ, "PYTHONPATH": str(code), "BACKCHANNEL_HOME": str(scratch)}
    got = subprocess.run(
        [sys.executable, str(HERE), "--wake-times", str(scratch), "--wakes", str(wakes)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if got.returncode:
        raise RuntimeError(f"the wakes with {code} failed:\n{got.stderr[-3000:]}")
    shutil.rmtree(scratch)
    return json.loads(got.stdout)


def wake_overhead(seed_home: Path, tmp: Path, codes: dict[str, Path], wakes: int, rounds: int) -> dict:
    """{label: {kind: p50/p95 over the wakes of all rounds}}, the codes taking turns each round."""
    pooled: dict[str, dict[str, dict]] = {label: {} for label in codes}
    for _ in range(rounds):
        for label, code in codes.items():
            for kind, r in _measure(seed_home, tmp / f"wakes-{label}", code, wakes).items():
                p = pooled[label].setdefault(kind, {"ms": [], "cpu_ms": [], "proposals": 0, "round_p50_ms": []})
                p["ms"] += r["ms"]
                p["cpu_ms"] += r["cpu_ms"]
                p["proposals"] += r["proposals"]
                p["round_p50_ms"].append(_pct(r["ms"], 0.5))
    return {
        label: {
            kind: {
                "p50_ms": _pct(p["ms"], 0.5),
                "p95_ms": _pct(p["ms"], 0.95),
                "cpu_p50_ms": _pct(p["cpu_ms"], 0.5),
                "n": len(p["ms"]),
                "proposals": p["proposals"],
                "round_p50_ms": p["round_p50_ms"],
            }
            for kind, p in kinds.items()
        }
        for label, kinds in pooled.items()
    }


def cli_ms(home: Path, runs: int = 5) -> float:
    env = {**os.environ, "BACKCHANNEL_HOME": str(home)}
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "backchannel", "proposals", "--json"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 1)


def daemon_figures(home: Path, idle_s: float) -> dict:
    env = {**os.environ, "BACKCHANNEL_HOME": str(home)}
    log = (home / "bench-daemon.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "run"], env=env, stderr=log, stdout=subprocess.DEVNULL
    )
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
        idle = {
            "seconds": idle_s,
            "rss_mib": round(rss1, 1),
            "rss_start_mib": round(rss0, 1),
            "cpu_percent": round(100 * (cpu1 - cpu0) / (time.monotonic() - t0), 3),
        }
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
    ap.add_argument("--baseline", type=Path, default=None, help="a checkout to compare with (e.g. /work/main)")
    ap.add_argument("--rounds", type=int, default=1, help="times each code runs its wakes, taking turns")
    ap.add_argument("--no-daemon", action="store_true", help="skip the idle daemon and CLI figures")
    ap.add_argument("--wake-times", type=Path, default=None, help=argparse.SUPPRESS)  # the child of _measure
    a = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if a.wake_times:
        print(json.dumps(wake_times(a.wake_times, a.wakes)))
        return
    codes = {"this": HERE.parent.parent}
    if a.baseline:
        codes["baseline"] = a.baseline.resolve()
    with tempfile.TemporaryDirectory(prefix="bc-bench-daemon-") as tmp:
        home = Path(tmp) / "home"
        info = seed(home, a.assertions)
        overhead = wake_overhead(home, Path(tmp), codes, a.wakes, a.rounds)
        sweep = overhead["this"]["sweep"]["p50_ms"]
        result = {
            "assertions": info["assertions"],
            "seed_s": info["seed_s"],
            "sweep_wake": {"p50_ms": sweep, "target_ms": SWEEP_TARGET_MS, "meets_target": sweep < SWEEP_TARGET_MS},
            "wake_overhead_no_model": overhead["this"],
        }
        if a.baseline:
            base = overhead["baseline"]["sweep"]["p50_ms"]
            result["sweep_wake"].update(
                {
                    "baseline": str(codes["baseline"]),
                    "baseline_p50_ms": base,
                    "cpu_p50_ms": overhead["this"]["sweep"]["cpu_p50_ms"],
                    "baseline_cpu_p50_ms": overhead["baseline"]["sweep"]["cpu_p50_ms"],
                    "change_pct": round(100 * (sweep - base) / base, 1) if base else None,
                }
            )
            result["baseline"] = {"code": str(codes["baseline"]), "wake_overhead_no_model": overhead["baseline"]}
        if not a.no_daemon:
            result.update(daemon_figures(home, a.idle_s))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

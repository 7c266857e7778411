"""Sandbox costs: child start-up and the RPC round trip, as JSON.

    python bench/sandbox_rpc.py [--runs 20] [--calls 5000]

startup_s: cold, spawn to "ready" (fresh interpreter, preloads, confinement);
run_s: a trivial program end to end, as the caller sees it, cold;
warm_start_s: with a child started ahead (`prestart`), from the call to the
  program starting in the child (parse, check, compile, hook: the "started" frame);
warm_run_s: a trivial program end to end with a child started ahead (each run
  waits for the spare to be ready first, as wakes minutes apart find it);
run_cpu_s: the CPU time the child reported for that run (user + system of the
  process that ran the program: preloads, lock-down, program; not the
  interpreter start before its fork into the PID namespace);
rpc_us: per call, small arguments and a small result, in a tight loop;
rpc_rows_us: per call returning 1000 small rows.
"""

from __future__ import annotations

import argparse
import json
import statistics

from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import prestart, run_program, stop_prestarting
from backchannel.sandbox.runner import spare


class BenchApi:
    def __init__(self) -> None:
        self.rows = [{"id": i, "name": f"person {i}", "score": i / 1000} for i in range(1000)]

    def rpc_methods(self):
        return {"echo": lambda x: x, "rows": lambda: self.rows}


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--calls", type=int, default=5000)
    args = ap.parse_args()
    api, limits = BenchApi(), SandboxSettings(max_api_calls=10**7, max_rows=10**9)
    startup, total, cpu = [], [], []
    for _ in range(args.runs):
        r = run_program("result = 1", api, limits)
        assert r.ok, r.error
        startup.append(r.stats["startup_s"])
        total.append(r.stats["wall_s"])
        cpu.append(r.stats["cpu_s"])
    warm_start, warm_total = [], []
    prestart(limits)
    for _ in range(args.runs):
        assert spare.ready(30), "no spare child became ready"
        r = run_program("result = 1", api, limits)
        assert r.ok and r.stats["prestarted"], r.error
        warm_start.append(r.stats["start_s"])
        warm_total.append(r.stats["wall_s"])
    stop_prestarting()
    per_call, per_rows_call = [], []
    for _ in range(5):
        r = run_program(f"for i in range({args.calls}):\n    api.echo(i)\nresult = 1", api, limits)
        assert r.ok, r.error
        per_call.append((r.stats["wall_s"] - r.stats["startup_s"]) / args.calls * 1e6)
        n = max(1, args.calls // 50)
        r = run_program(f"for i in range({n}):\n    api.rows()\nresult = 1", api, limits)
        assert r.ok, r.error
        per_rows_call.append((r.stats["wall_s"] - r.stats["startup_s"]) / n * 1e6)
    print(
        json.dumps(
            {
                "startup_s": {"p50": round(statistics.median(startup), 4), "p95": round(_pct(startup, 0.95), 4)},
                "run_s": {"p50": round(statistics.median(total), 4), "p95": round(_pct(total, 0.95), 4)},
                "warm_start_s": {
                    "p50": round(statistics.median(warm_start), 5),
                    "p95": round(_pct(warm_start, 0.95), 5),
                },
                "warm_run_s": {"p50": round(statistics.median(warm_total), 4), "p95": round(_pct(warm_total, 0.95), 4)},
                # CPU of the child (and, with a PID namespace, of the process it reaps): less
                # sensitive than wall time to other load on a shared machine.
                "run_cpu_s": {"p50": round(statistics.median(cpu), 4), "p95": round(_pct(cpu, 0.95), 4)},
                "rpc_us": {"p50": round(statistics.median(per_call), 1), "min": round(min(per_call), 1)},
                "rpc_rows_us": {"p50": round(statistics.median(per_rows_call), 1), "rows_per_call": 1000},
                "isolation": r.stats["isolation"],
            }
        )
    )


if __name__ == "__main__":
    main()

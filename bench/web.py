"""The web app's page latency on the demo's story. Prints JSON:

- per page (proposals list, one proposal, an entity, a search, a trace, activity):
  median and p95 ms over --n GETs, logged in, over real HTTP on loopback;
- for the app served by `backchannel web` alone (each page opens the database for its
  operations and closes it) and by the daemon (`[web] enabled`, operations on its queue);
- the MCP server: stdio start-up to the first answer, and a `search_memory` call (median ms).

Usage: PYTHONPATH=.:tests python bench/web.py [--n 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.delivery_support import DaemonProc  # noqa: E402
from tests.support.web_support import Browserless, WebProc, story_home, subprocess_env  # noqa: E402


def _pages(b: Browserless) -> dict[str, str]:
    _, memory = b.get("/memory")
    marc = re.search(r'href="/memory/(\d+)">Marc Dupont<', memory).group(1)
    return {
        "proposals": "/proposals",
        "proposal": "/proposals/P-2",
        "entity": f"/memory/{marc}",
        "search": "/memory?q=Sophie",
        "trace": "/trace/P-2",
        "activity": "/activity",
    }


def _time(b: Browserless, pages: dict[str, str], n: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, path in pages.items():
        times = []
        for _ in range(n):
            t = time.perf_counter()
            status, _ = b.get(path)
            times.append((time.perf_counter() - t) * 1000)
            assert status == 200, (path, status)
        times.sort()
        out[name] = {
            "median_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
        }
    return out


def _mcp(home: Path, n: int) -> dict[str, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run() -> dict[str, float]:
        t0 = time.perf_counter()
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "backchannel", "mcp"], env=subprocess_env(home)
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.list_tools()
                first = (time.perf_counter() - t0) * 1000
                times = []
                for _ in range(n):
                    t = time.perf_counter()
                    await s.call_tool("search_memory", {"query": "Sophie"})
                    times.append((time.perf_counter() - t) * 1000)
        return {"start_to_tools_ms": round(first, 1), "search_median_ms": round(statistics.median(times), 1)}

    return asyncio.run(run())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    args = ap.parse_args()
    result: dict[str, object] = {"n": args.n}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        story_home(home, "[web]\nenabled = true\n")
        web = WebProc(home)
        try:
            b = Browserless(web.base)
            b.get(web.link)
            result["backchannel_web_no_daemon"] = _time(b, _pages(b), args.n)
        finally:
            web.stop()
        d = DaemonProc(home)
        try:
            d.wait_log(lambda x: x.get("msg") == "web app listening")
            link = re.search(r"login link[^:]*: (http://\S+)", d.cli("web").stdout).group(1)
            b = Browserless(link.split("/login")[0])
            b.get(link)
            result["daemon_served"] = _time(b, _pages(b), args.n)
        finally:
            d.stop()
        result["mcp_stdio"] = _mcp(home, args.n)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""Traversal bench: the seed-shaped program through the sandbox over 100k and 1M
assertions, against a DuckDB recursive CTE and a networkx BFS on the same
question, with assertions touched versus excerpts sent, and the tokens a
hop-by-hop tool-calling loop would put into a model versus ours.

    python bench/traverse.py [--sizes 100000,1000000] [--runs 15] [--cte-cap-s 60] [--seed-only] [--tokens-only]

`--tokens-only`: only the token comparison (tool loop against ours), no timings.

`seed_vs_csr` (also alone with --seed-only): the seed program run in this process
straight against the graph API (the in-memory CSR index, no sandbox) against the
same program through the sandbox with a child started ahead (each run waits for
the spare, as wakes minutes apart find it) and cold; `ratio_warm` is sandbox p50
over in-process p50, both measured in the same run.

Prints one JSON object. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.synth: test data, not the package's

SOCIAL = ["knows", "worked_with", "introduced"]


PATHS_PROGRAM = """
me = api.me()["id"]
target = [t["id"] for t in api.resolve("CIO", org="Acme")]
result = [p["nodes"] for p in api.paths([me], target, max_hops=3, predicates=["knows", "worked_with", "introduced"],
                                         limit=100000)]
"""


def _tokenizer():
    spec = importlib.util.find_spec("litellm")  # litellm ships the cl100k file: no download
    if spec and spec.submodule_search_locations:
        cache = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    return lambda text: len(enc.encode(text, disallowed_special=()))


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))], 4)


def _timed_sandbox(code: str, api, settings, runs: int) -> dict:
    from backchannel.sandbox import run_program

    walls, last = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        last = run_program(code, api, settings.sandbox)
        walls.append(time.perf_counter() - t0)
        if not last.ok:
            return {"ok": False, "error": last.error}
    return {
        "ok": True,
        "p50_s": _pct(walls, 0.5),
        "p95_s": _pct(walls, 0.95),
        "runs": runs,
        "api_calls": last.stats.get("api_calls"),
        "assertions_touched": last.stats.get("assertions_touched"),
        "startup_s": last.stats.get("startup_s"),
        "results": len(last.result or []),
        "result": last.result,
    }


def _seed_vs_csr(code: str, api, settings, runs: int) -> dict:
    """The seed program in-process (the CSR index behind the API, no sandbox) and
    through the sandbox, warm (a child started ahead) and cold, interleaved."""
    from backchannel.sandbox import prestart, run_program, stop_prestarting
    from backchannel.sandbox.runner import spare

    def in_process():
        env = {"api": api}
        exec(code, env)  # noqa: S102 - our own seed program, the baseline without a sandbox
        return env["result"]

    want = in_process()
    direct, warm, warm_start, cold = [], [], [], []
    prestart(settings.sandbox)
    try:
        for _ in range(runs):
            t0 = time.perf_counter()
            in_process()
            direct.append(time.perf_counter() - t0)
            if not spare.ready(30):
                return {"ok": False, "error": "no spare child became ready"}
            t0 = time.perf_counter()
            r = run_program(code, api, settings.sandbox)
            warm.append(time.perf_counter() - t0)
            if not (r.ok and r.stats["prestarted"] and r.result == want):
                return {"ok": False, "error": r.error or "the sandbox's answer differs"}
            warm_start.append(r.stats["start_s"])
    finally:
        stop_prestarting()
    for _ in range(max(3, runs // 3)):
        t0 = time.perf_counter()
        r = run_program(code, api, settings.sandbox)
        cold.append(time.perf_counter() - t0)
    d50, w50 = _pct(direct, 0.5), _pct(warm, 0.5)
    return {
        "ok": True,
        "runs": runs,
        "results": len(want),
        "in_process_csr_s": {"p50": d50, "p95": _pct(direct, 0.95)},
        "sandbox_warm_s": {"p50": w50, "p95": _pct(warm, 0.95)},
        "sandbox_warm_start_s": {"p50": _pct(warm_start, 0.5), "p95": _pct(warm_start, 0.95)},
        "sandbox_cold_s": {"p50": _pct(cold, 0.5), "p95": _pct(cold, 0.95)},
        "api_calls": r.stats.get("api_calls"),
        "ratio_warm": round(w50 / d50, 2) if d50 else None,
    }


def _cte_paths(store, me: int, targets: list[int], cap_s: float) -> dict:
    """All simple paths <= 3 hops from me to the targets, as one recursive CTE."""
    preds = ", ".join(f"'{p}'" for p in SOCIAL)
    sql = f"""
        WITH RECURSIVE e AS (
            SELECT subject_id AS a, object_id AS b FROM assertions
             WHERE object_id IS NOT NULL AND superseded_at IS NULL AND predicate IN ({preds}) AND subject_id <> object_id
            UNION ALL
            SELECT object_id, subject_id FROM assertions
             WHERE object_id IS NOT NULL AND superseded_at IS NULL AND predicate IN ({preds}) AND subject_id <> object_id),
        walk(node, path) AS (
            SELECT {int(me)}, [{int(me)}]::BIGINT[]
            UNION ALL
            SELECT e.b, list_append(w.path, e.b) FROM walk w JOIN e ON e.a = w.node
             WHERE len(w.path) <= 3 AND NOT list_contains(w.path, e.b)
               AND NOT list_contains({[int(t) for t in targets]}::BIGINT[], w.node))
        SELECT DISTINCT path FROM walk WHERE list_contains({[int(t) for t in targets]}::BIGINT[], node)"""
    timer = threading.Timer(cap_s, store.con.interrupt)
    t0 = time.perf_counter()
    timer.start()
    try:
        rows = store.con.execute(sql).fetchall()
        return {"s": round(time.perf_counter() - t0, 3), "paths": len(rows), "timed_out": False}
    except Exception as exc:  # interrupted at the cap
        return {"s": round(time.perf_counter() - t0, 3), "paths": None, "timed_out": True, "error": str(exc)[:120]}
    finally:
        timer.cancel()


def _networkx(store, me: int, targets: list[int], runs: int) -> dict:
    import networkx as nx

    t0 = time.perf_counter()
    cols = store.con.execute(
        "SELECT subject_id, object_id FROM assertions WHERE object_id IS NOT NULL AND superseded_at IS NULL"
        " AND subject_id <> object_id AND list_contains(?, predicate)",
        [SOCIAL],
    ).fetchnumpy()
    g = nx.Graph()
    g.add_edges_from(zip(cols["subject_id"].tolist(), cols["object_id"].tolist()))
    build = time.perf_counter() - t0
    times, n = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        found = {tuple(p) for t in targets for p in nx.all_simple_paths(g, me, t, cutoff=3)}
        times.append(time.perf_counter() - t0)
        n = len(found)
    return {"build_s": round(build, 3), "p50_s": _pct(times, 0.5), "p95_s": _pct(times, 0.95), "paths": n}


def _tool_loop_tokens(api, count, me: int, targets: list[int]) -> dict:
    """What a hop-by-hop tool-calling loop puts into the model for the same question:
    each tool call's result serialised as a tool message, the context growing per turn."""
    outputs = []
    outputs.append(api.resolve("CIO", org="Acme"))
    outputs.append(api.network())
    first = api.links(targets, SOCIAL)  # hop 1 from the target
    outputs.append(first)
    frontier = sorted({l["to"] for l in first} - {me})
    outputs.append(api.links(frontier, SOCIAL))  # hop 2 from the target: who knows those people
    sizes = [count(json.dumps(o)) for o in outputs]
    cumulative = sum(sum(sizes[: i + 1]) for i in range(len(sizes)))  # each turn re-reads the history
    return {
        "tool_calls": len(outputs),
        "tool_output_tokens": sum(sizes),
        "per_call": sizes,
        "cumulative_prompt_tokens": cumulative,
    }


ASKED_PROGRAM = 'result = run_skill("introductions", target="CIO of Acme")\n'  # what the model writes, given the skill


def _our_tokens(api, settings, count) -> dict:
    """Tokens into a model on our path for the same question: the sweep prompt (only the
    relevant skill, as a callable, and the API it walks), the program the model writes
    (the skill's call), and the drafting prompts of what the gate lets through. The
    program runs through the sandbox as the sweeper runs it and must give the skill's answer."""
    from backchannel.agent import sweep_prompt
    from backchannel.agent.drafter import MAX_EXCERPTS, entity_names, fill_evidence
    from backchannel.agent.sweeper import build_messages, run_skill
    from backchannel.agent.work import agent_for, path_of
    from backchannel.graph.types import candidates_from_result
    from backchannel.sandbox import run_program
    from backchannel.skills import get_skill, relevant_skills

    q = "Who can introduce me to the CIO of Acme?"
    context = {"wake": "ask", "question": q}
    skills = relevant_skills(q)
    messages = build_messages(context, q, skills)
    sweep_prompt_tokens = sum(count(m["content"]) for m in messages)
    skill = get_skill("introductions")
    cands, res = run_skill(skill, api, settings, args={"target": "CIO of Acme"})
    code, _ = sweep_prompt.with_skills(ASKED_PROGRAM, skills, [s.context_for({}, context) for s in skills])
    called = run_program(code, api, settings.sandbox, context=context)
    same = called.ok and [c.to_dict() for c in candidates_from_result(called.result)] == [c.to_dict() for c in cands]
    cands = cands[:3]  # what the gate would let through
    fill_evidence(cands, api)
    excerpts = sum(min(len(c.evidence), MAX_EXCERPTS) for c in cands)
    names = entity_names(cands, api)
    draft_prompt = 0
    for c in cands:  # what the kind's agent sends to complete `draft`: its messages and the answer's schema
        spec = agent_for(c.kind).completed_methods()["draft"]
        draft_prompt += sum(count(m["content"]) for m in spec.messages({"path": path_of(c, names)}))
        draft_prompt += count(json.dumps(spec.schema()))
    program = count(ASKED_PROGRAM)
    return {
        "sweep_prompt_tokens": sweep_prompt_tokens,
        "program_tokens": program,
        "program_gives_the_skills_answer": same,
        "skill_source_tokens_not_sent": count(skill.source_code),
        "draft_prompt_tokens": draft_prompt,
        "total": sweep_prompt_tokens + program + draft_prompt,
        "assertions_touched": res.stats.get("assertions_touched"),
        "candidates": len(cands),
        "excerpts_sent": excerpts,
    }


def bench_size(n: int, runs: int, cte_cap_s: float, count, seed_only: bool = False, tokens_only: bool = False) -> dict:
    from backchannel.config import Settings
    from backchannel.graph.api import GraphAPI
    from backchannel.graph.index import IndexCache
    from backchannel.memory import Store
    from tests.support.synth import SEED_PROGRAM, generate

    out: dict = {"assertions": n}
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "bench.duckdb")
        t0 = time.perf_counter()
        g = generate(store, n, seed=42)
        out["generate_s"] = round(time.perf_counter() - t0, 2)
        out["people"], out["orgs"] = len(g.people), len(g.orgs)
        settings = Settings()
        api = GraphAPI(store, settings)
        IndexCache.drop(store)
        t0 = time.perf_counter()
        idx = api.refresh()
        out["index"] = {"build_s": round(time.perf_counter() - t0, 3), "mb": round(idx.nbytes() / 1e6, 1)}
        targets = [t["id"] for t in api.resolve("CIO", org="Acme")]
        if tokens_only:
            loop, ours = _tool_loop_tokens(api, count, g.owner, targets), _our_tokens(api, settings, count)
            out["tokens"] = {
                "hop_by_hop_tool_loop": loop,
                "ours": ours,
                "ratio": round(loop["cumulative_prompt_tokens"] / ours["total"], 1),
            }
            store.close()
            IndexCache.drop()
            return out
        out["seed_vs_csr"] = _seed_vs_csr(SEED_PROGRAM, api, settings, runs)
        if seed_only:
            store.close()
            IndexCache.drop()
            return out
        seed = _timed_sandbox(SEED_PROGRAM, api, settings, runs)
        seed.pop("result", None)
        out["seed_program_sandbox"] = seed
        paths = _timed_sandbox(PATHS_PROGRAM, api, settings, runs)
        ours = {tuple(p) for p in paths.pop("result", None) or []}
        out["paths_program_sandbox"] = paths
        out["duckdb_recursive_cte"] = _cte_paths(store, g.owner, targets, cte_cap_s)
        out["networkx_bfs"] = _networkx(store, g.owner, targets, max(3, runs // 5))
        out["paths_agree"] = {
            "ours": len(ours),
            "networkx": out["networkx_bfs"]["paths"],
            "cte": out["duckdb_recursive_cte"]["paths"],
        }
        loop, ours = _tool_loop_tokens(api, count, g.owner, targets), _our_tokens(api, settings, count)
        out["tokens"] = {
            "hop_by_hop_tool_loop": loop,
            "ours": ours,
            "ratio": round(loop["cumulative_prompt_tokens"] / ours["total"], 1),
        }
        store.close()
        IndexCache.drop()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cte-cap-s", type=float, default=60.0)
    ap.add_argument("--seed-only", action="store_true", help="only the seed program against the in-memory CSR")
    ap.add_argument("--tokens-only", action="store_true", help="only the tokens into a model, tool loop against ours")
    args = ap.parse_args(argv)
    count = None if args.seed_only else _tokenizer()
    t0 = time.perf_counter()
    results = [
        bench_size(int(s), args.runs, args.cte_cap_s, count, args.seed_only, args.tokens_only)
        for s in args.sizes.split(",")
    ]
    print(
        json.dumps(
            {
                "bench": "traverse",
                "python": sys.version.split()[0],
                "cpus": os.cpu_count(),
                "total_s": round(time.perf_counter() - t0, 1),
                "sizes": results,
                "p50_p95_note": "wall seconds in the parent, child start-up included",
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

"""Model extraction cost per meeting, on the QMSum meetings, with a scripted model.

Each meeting goes through the real ingest path (`ingest_file`: parse, model
extraction, entity resolution with its fuzzy / embedding / model layers, one
write transaction). For each: chunks, extraction calls and entity-resolution
calls (retries and repairs included), prompt and completion tokens, assertions
kept, quotes rejected, and the harness's own time (everything but the scripted
model's answer: chunking, prompts, litellm dispatch, validation, quote checks,
audit rows, resolution, storage). Next to it, what Graphiti would spend on the
same meeting as one episode: 3 + 2 x facts model calls (facts = the assertions
we kept), and 3 x turns + 2 x facts if each turn were an episode.

The scripted model answers like a real one would in size: a few assertions per
chunk quoting real utterances, plus one invented quote (which must be rejected).

Usage: python bench/extract.py [--limit N] [--chunk-tokens 3000]
Prints JSON. Needs ../shared/corpora/meetings/qmsum (skips with a message if absent).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support: the scripted model is test code, not the package's
CORPUS = Path(os.environ.get("BACKCHANNEL_CORPORA", ROOT.parent / "shared" / "corpora")) / "meetings" / "qmsum"
LINE = re.compile(r"^\[(\d+)\] ([^:]+): (.*)$", re.M)
PREDICATES = ["knows", "worked_with", "mentioned_with", "committed_to"]


class Responder:
    """A realistic-size answer for a chunk: one assertion per ~12 substantial utterances."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.n = 0

    def __call__(self, messages: list[dict]) -> dict:
        t0 = time.perf_counter()
        self.n += 1
        if "Name as mentioned" in messages[-1]["content"]:  # an entity-resolution question
            self.seconds += time.perf_counter() - t0
            return {"match_id": None, "confidence": 0.3, "reason": "not sure"}
        lines = [(int(i), s, text) for i, s, text in LINE.findall(messages[-1]["content"])]
        long_lines = [x for x in lines if len(x[2].split()) >= 10]
        items = []
        for k, (idx, speaker, text) in enumerate(long_lines[::12]):
            words = text.split()
            pred = PREDICATES[k % len(PREDICATES)]
            item = {
                "utterance": idx,
                "quote": " ".join(words[:12]),
                "subject": "I",
                "subject_kind": "person",
                "predicate": pred,
                "modality": "stated",
                "confidence": 0.6,
                "date_phrase": None,
            }
            if pred == "committed_to":
                item["object_literal"] = " ".join(words[2:8])
            else:
                item.update(object="the " + speaker.split()[0].lower() + " group", object_kind="organisation")
            items.append(item)
        if lines:  # one invented quote per chunk: the harness must reject it
            items.append(
                {
                    "utterance": lines[0][0],
                    "quote": "we signed the contract with Initech yesterday",
                    "subject": "I",
                    "predicate": "knows",
                    "object": "Initech",
                    "object_kind": "organisation",
                }
            )
        self.seconds += time.perf_counter() - t0
        return {"assertions": items}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N meetings")
    ap.add_argument("--chunk-tokens", type=int, default=3000)
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print(json.dumps({"skipped": f"no QMSum corpus at {CORPUS}"}))
        return 0
    home = tempfile.mkdtemp(prefix="bc-bench-extract-")
    os.environ["BACKCHANNEL_HOME"] = home
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

    from backchannel.agent.models import Gateway, load_litellm
    from backchannel.config import Settings, resolve_paths
    from backchannel.config.sections import BudgetSettings, ModelSettings
    from backchannel.extraction.formats.parse import parse_file
    from backchannel.extraction.ingest import ingest_file
    from backchannel.extraction.model import extract_with_model
    from backchannel.memory import Store
    from tests.support.scripted_models import register_scripted

    t0 = time.perf_counter()
    load_litellm()
    import_s = time.perf_counter() - t0
    responder = Responder()
    register_scripted([], name="bench", responder=responder)
    paths = resolve_paths().ensure()
    settings = Settings(
        models=ModelSettings(
            extract="scripted/bench",
            chunk_tokens=args.chunk_tokens,
            budget=BudgetSettings(
                per_run_tokens=None, per_run_cost_usd=None, per_day_tokens=None, per_day_cost_usd=None
            ),
        )
    )
    store = Store.open(paths.db_file)
    gw = Gateway(settings, store, paths)

    # One tiny extraction first: litellm loads its tokenizer and handlers on the first
    # call (seconds), a one-off cost per process that is not per-meeting overhead.
    from backchannel.extraction.formats.transcript import Transcript, Utterance

    t0 = time.perf_counter()
    warm = Transcript([Utterance(0, "A", "I worked with Sophie Martin at Acme for many years, she was great.")], "text")
    extract_with_model(warm, gateway=gw, run_id="bench-warmup", strict=False)
    warmup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    from backchannel import embedding

    embedding.embed(["Acme"])  # the resolution layer's model, loaded once per process
    embed_load_s = time.perf_counter() - t0

    files = sorted(p for p in CORPUS.glob("*.json") if p.name != "INDEX.json")
    if args.limit:
        files = files[: args.limit]
    meetings = []
    for f in files:
        t = parse_file(f)
        words = sum(len(u.text.split()) for u in t.utterances)
        before_s, before_n = responder.seconds, responder.n
        rid = f"bench-{f.stem}"
        t1 = time.perf_counter()
        outcome = ingest_file(store, settings, f, gateway=gw, run_id=rid)
        wall = time.perf_counter() - t1
        model_s = responder.seconds - before_s
        if outcome.status != "ingested":
            meetings.append({"meeting": f.stem, "status": outcome.status, "error": outcome.error})
            continue
        stats = store.events(kind="model_extraction")[-1]["data"]
        by_role = dict(
            store.con.execute("SELECT role, count(*) FROM model_calls WHERE run_id = ? GROUP BY role", [rid]).fetchall()
        )
        tokens = store.con.execute(
            "SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0) FROM model_calls"
            " WHERE run_id = ?",
            [rid],
        ).fetchone()
        facts = outcome.assertions
        calls = sum(by_role.values())
        meetings.append(
            {
                "meeting": f.stem,
                "turns": len(t.utterances),
                "words": words,
                "chunks": stats["chunks"],
                "model_calls": calls,
                "extract_calls": by_role.get("extract", 0),
                "resolve_calls": by_role.get("resolve", 0),
                "prompt_tokens": int(tokens[0]),
                "completion_tokens": int(tokens[1]),
                "assertions": facts,
                "rejected_quotes": stats["rejected_quotes"],
                "failed_chunks": stats["failed_chunks"],
                "harness_overhead_ms": round((wall - model_s) * 1000, 1),
                "harness_overhead_ms_per_call": round((wall - model_s) * 1000 / max(1, responder.n - before_n), 2),
                "graphiti_calls_one_episode": 3 + 2 * facts,
                "graphiti_calls_episode_per_turn": 3 * len(t.utterances) + 2 * facts,
            }
        )
    store.close()

    failed = [m for m in meetings if "status" in m]
    meetings = [m for m in meetings if "status" not in m]

    def med(key: str) -> float:
        return statistics.median(m[key] for m in meetings) if meetings else 0

    out = {
        "corpus": "QMSum",
        "meetings": len(meetings),
        "chunk_tokens": args.chunk_tokens,
        "litellm_import_s": round(import_s, 2),
        "first_call_warmup_s": round(warmup_s, 2),
        "embedding_model_load_s": round(embed_load_s, 2),
        "note": "whole ingest path; harness overhead includes litellm dispatch, the scripted provider's"
        " token counting, entity resolution (embeddings) and the write transaction",
        "totals": {
            k: sum(m[k] for m in meetings)
            for k in (
                "model_calls",
                "extract_calls",
                "resolve_calls",
                "prompt_tokens",
                "completion_tokens",
                "assertions",
                "rejected_quotes",
                "graphiti_calls_one_episode",
                "graphiti_calls_episode_per_turn",
            )
        },
        "median_per_meeting": {
            k: med(k)
            for k in (
                "words",
                "chunks",
                "model_calls",
                "extract_calls",
                "resolve_calls",
                "prompt_tokens",
                "completion_tokens",
                "assertions",
                "harness_overhead_ms",
                "harness_overhead_ms_per_call",
                "graphiti_calls_one_episode",
                "graphiti_calls_episode_per_turn",
            )
        },
        "not_ingested": failed,
        "per_meeting": meetings,
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Rejection-memory figures, as JSON.

    python bench/feedback.py               # check latency at 10k dismissals (one by one, and after a sweep's batch)
    python bench/feedback.py --calibrate   # the threshold sweep over bench/rejection_pairs.json
    python bench/feedback.py --dismissals 50000

The 10k dismissals get random unit vectors (latency does not depend on what the
vectors say) plus one structured suppression each; the candidates are real
texts embedded on CPU for every check, as the gate does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
CANDIDATES = [
    "Marc Dupont worked with the current CIO of Acme, and Acme published a tender this morning.",
    "You have not spoken to Sofia Rossi of Northwind for eleven months; she is hiring a data team.",
    "You promised Tom Becker the pricing sheet for the Initech pilot by Friday; it has not been sent.",
    "Meeting with Helga Schmidt tomorrow: she mentioned budget cuts and a new procurement policy.",
    "Priya Nair knows the head of engineering at Stark Industries, which opened a vendor consultation.",
]


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs), q))


def bench(n: int, checks: int) -> dict:
    from backchannel import embedding
    from backchannel.memory import Store, rejections
    from backchannel.memory.store import utcnow

    out: dict = {
        "dismissals": n,
        "cpu_threads": os.cpu_count(),
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None,
    }
    t = time.perf_counter()
    embedding.load_model()
    out["model_load_s"] = round(time.perf_counter() - t, 3)

    per = []
    for i in range(30):
        t = time.perf_counter()
        embedding.embed([CANDIDATES[i % len(CANDIDATES)] + f" ({i})"])
        per.append(time.perf_counter() - t)
    out["embed_one_candidate_ms"] = {"p50": round(_pct(per, 50) * 1e3, 2), "p95": round(_pct(per, 95) * 1e3, 2)}
    batch = [CANDIDATES[i % len(CANDIDATES)] + f" #{i}" for i in range(256)]
    t = time.perf_counter()
    embedding.embed(batch)
    out["embed_batch_256_per_text_ms"] = round((time.perf_counter() - t) / 256 * 1e3, 3)

    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.duckdb")
        rng = np.random.default_rng(7)
        vecs = rng.standard_normal((n, rejections.DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        now = utcnow()
        t = time.perf_counter()
        with store.transaction():
            rows = [
                (
                    f"P-{i}",
                    "introduction",
                    [i, i + 1],
                    f"dismissed proposal {i}",
                    vecs[i].tolist(),
                    "not a target account",
                    now - timedelta(minutes=i),
                    None,
                )
                for i in range(n)
            ]
            cols = ("proposal_id", "kind", "entity_ids", "text", "vector", "reason", "dismissed_at", "until")
            for k in range(0, n, 400):
                part = rows[k : k + 400]
                store.con.execute(
                    "INSERT INTO rejection_embeddings ("
                    + ", ".join(cols)
                    + ") VALUES "
                    + ", ".join("(?, ?, ?::BIGINT[], ?, ?::FLOAT[384], ?, ?, ?)" for _ in part),
                    [v for r in part for v in r],
                )
            store.insert_rows(
                "suppressions",
                ("scope", "proposal_id", "kind", "entity_ids", "reason", "created_at"),
                [("this", f"P-{i}", "introduction", [i, i + 1], "not a target account", now) for i in range(n)],
            )
        out["load_dismissals_s"] = round(time.perf_counter() - t, 3)

        t = time.perf_counter()
        rejections.check(store, CANDIDATES[0], "introduction", [10**9], now)
        out["first_check_ms_incl_matrix_load"] = round((time.perf_counter() - t) * 1e3, 2)

        lat, sem_only, hits = [], [], 0
        for i in range(checks):
            text = CANDIDATES[i % len(CANDIDATES)] + f" [{i}]"
            t = time.perf_counter()
            # Same kind as every dismissal: the cosine runs over all 10k (the worst case).
            hit = rejections.check(store, text, "introduction", [10**9 + i], now)
            lat.append(time.perf_counter() - t)
            hits += hit is not None
        # The gate's path: a sweep's candidates embedded in one batch (prefetch),
        # then each checked (a cache lookup + one matrix product).
        sweep_size, per_check, amortised = 20, [], []
        for r in range(max(1, checks // sweep_size)):
            texts = [CANDIDATES[i % len(CANDIDATES)] + f" <{r}:{i}>" for i in range(sweep_size)]
            t0 = time.perf_counter()
            rejections.prefetch(store, [("introduction", x) for x in texts], now)
            for i, x in enumerate(texts):
                t = time.perf_counter()
                rejections.check(store, x, "introduction", [10**9 + i], now)
                per_check.append(time.perf_counter() - t)
            amortised.append((time.perf_counter() - t0) / sweep_size)
        again = []
        for i in range(checks):  # the same candidate at the next sweep: its vector is cached
            t = time.perf_counter()
            rejections.check(store, CANDIDATES[i % len(CANDIDATES)] + " <0:0>", "introduction", [10**9], now)
            again.append(time.perf_counter() - t)
        out["check_after_sweep_prefetch_ms"] = {
            "p50": round(_pct(per_check, 50) * 1e3, 2),
            "p95": round(_pct(per_check, 95) * 1e3, 2),
            "n": len(per_check),
            "what": f"one check after its sweep's {sweep_size} candidates were embedded in one batch",
        }
        out["per_candidate_incl_batch_embedding_ms_p50"] = round(_pct(amortised, 50) * 1e3, 2)
        out["check_repeat_candidate_ms_p50"] = round(_pct(again, 50) * 1e3, 2)
        t_struct = []
        for i in range(checks):
            t = time.perf_counter()
            rejections.check_structured(store, "introduction", [i, i + 1], now)
            t_struct.append(time.perf_counter() - t)
        vec = embedding.embed([CANDIDATES[0]])[0]
        t_matrix = []
        for _ in range(checks):
            t = time.perf_counter()
            m = rejections._matrix(store)  # cached: two small queries to see whether the table changed
            t_matrix.append(time.perf_counter() - t)
        for _ in range(checks):
            t = time.perf_counter()
            s = m.vectors @ vec
            int(np.argmax(s))
            sem_only.append(time.perf_counter() - t)
        store.close()
    out["check_ms"] = {
        "p50": round(_pct(lat, 50) * 1e3, 2),
        "p95": round(_pct(lat, 95) * 1e3, 2),
        "mean": round(statistics.mean(lat) * 1e3, 2),
        "n": checks,
        "what": "structured query + embed the candidate + cosine against every active dismissal",
    }
    out["structured_only_ms_p50"] = round(_pct(t_struct, 50) * 1e3, 3)
    out["cosine_topk_only_ms_p50"] = round(_pct(sem_only, 50) * 1e3, 3)
    out["matrix_cache_check_ms_p50"] = round(_pct(t_matrix, 50) * 1e3, 3)
    out["check_without_embedding_ms_p50"] = round(
        out["structured_only_ms_p50"] + out["matrix_cache_check_ms_p50"] + out["cosine_topk_only_ms_p50"], 3
    )
    out["false_hits_on_random_vectors"] = hits
    return out


def calibrate() -> dict:
    from backchannel.memory import rejections

    data = json.loads((HERE / "rejection_pairs.json").read_text())
    dis = rejections.embed([d["text"] for d in data["dismissed"]])
    cand = rejections.embed([c["text"] for c in data["candidates"]])
    raw = cand @ dis.T
    # What `check` computes: similarity to dismissals of the same kind only (others count as -1).
    same = np.array(
        [[rejections.same_kind(c["kind"], d["kind"]) for d in data["dismissed"]] for c in data["candidates"]]
    )
    sims = np.where(same, raw, -1.0)
    ids = [d["id"] for d in data["dismissed"]]
    pos = np.array([sims[i, ids.index(c["same_as"])] for i, c in enumerate(data["candidates"]) if c["same_as"]])
    neg = np.array([sims[i].max() for i, c in enumerate(data["candidates"]) if not c["same_as"]])
    neg_any_kind = np.array([raw[i].max() for i, c in enumerate(data["candidates"]) if not c["same_as"]])
    argmax_right = sum(
        int(np.argmax(sims[i])) == ids.index(c["same_as"]) for i, c in enumerate(data["candidates"]) if c["same_as"]
    )
    sweep = [
        {
            "threshold": round(float(t), 3),
            "recall": round(float((pos >= t).mean()), 3),
            "false_positive_rate": round(float((neg >= t).mean()), 3),
        }
        for t in np.arange(0.60, 0.90, 0.025)
    ]
    return {
        "dismissed": len(ids),
        "positives": len(pos),
        "negatives": len(neg),
        "positive_similarity": {
            "min": round(float(pos.min()), 3),
            "p10": round(float(np.percentile(pos, 10)), 3),
            "median": round(float(np.median(pos)), 3),
            "max": round(float(pos.max()), 3),
        },
        "negative_max_similarity": {
            "max": round(float(neg.max()), 3),
            "p90": round(float(np.percentile(neg, 90)), 3),
            "median": round(float(np.median(neg)), 3),
        },
        "positives_nearest_is_right": f"{argmax_right}/{len(pos)}",
        "negative_max_similarity_any_kind": {
            "max": round(float(neg_any_kind.max()), 3),
            "above_threshold": int((neg_any_kind >= rejections.DEFAULT_THRESHOLD).sum()),
        },
        "chosen_threshold": rejections.DEFAULT_THRESHOLD,
        "at_chosen": {
            "recall": round(float((pos >= rejections.DEFAULT_THRESHOLD).mean()), 3),
            "false_positive_rate": round(float((neg >= rejections.DEFAULT_THRESHOLD).mean()), 3),
        },
        "sweep": sweep,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dismissals", type=int, default=10_000)
    ap.add_argument("--checks", type=int, default=50)
    ap.add_argument("--calibrate", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    result = calibrate() if a.calibrate else bench(a.dismissals, a.checks)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""What the embedding model costs a process, in process and in a worker, per engine.

Prints JSON. In process (a fresh child per run): RSS after numpy + the store, after importing
the engine's libraries (numpy engine, the default: safetensors, tokenizers and
backchannel.embedding_numpy; torch engine, BACKCHANNEL_EMBEDDER_ENGINE=torch: torch and
sentence-transformers), after loading the model, after embedding N sentences, after dropping
the model (del + gc + malloc_trim), and the import and load times, cold (the model's files,
and torch's libraries for the torch engine, evicted from the page cache with posix_fadvise
first: best effort, a page another process maps stays) and warm. Worker mode (this process as
the parent, the daemon's mode): the parent's RSS before, during and after, the worker's peak
RSS, the first batch's latency (spawn + import + load) and a warm batch's, and whether the
parent imported torch (it must not). Medians over --runs, with the load average, since the
machine is shared.

Why the daemon keeps the model in a worker even with the numpy engine: a released worker gives
back every byte of the model and its buffers, where an in-process model dropped with
del + gc + malloc_trim leaves the allocator's high-water mark behind (and, with torch,
libtorch stays mapped: ~460 MB), and the daemon must idle under 250 MB.

Usage: python bench/embedder_rss.py [--runs 3] [--sentences 500] [--engine numpy|torch]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import ctypes, gc, json, sys, time
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) // 1024
n = int(sys.argv[1])
out = {}
import numpy, backchannel.memory
out['rss_base_mb'] = rss()
t = time.perf_counter()
if sys.argv[2] == 'torch':
    import torch, sentence_transformers
else:
    import safetensors.numpy, tokenizers, backchannel.embedding_numpy
out['import_s'] = round(time.perf_counter() - t, 2)
out['rss_after_import_mb'] = rss()
from backchannel import embedding
embedding.set_mode('in_process')
t = time.perf_counter()
embedding.load_model()
out['load_s'] = round(time.perf_counter() - t, 2)
out['rss_after_load_mb'] = rss()
texts = [f'Sentence {i}: Marc said he worked with Sophie at Acme for a few years.' for i in range(n)]
t = time.perf_counter()
embedding.embed(texts)
out['embed_s'] = round(time.perf_counter() - t, 2)
out['rss_after_embed_mb'] = rss()
embedding._model = None
gc.collect()
ctypes.CDLL('libc.so.6').malloc_trim(0)
out['rss_after_drop_mb'] = rss()
print(json.dumps(out))
"""


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def evict_from_page_cache(engine: str) -> int:
    """posix_fadvise(DONTNEED) on the model's files (and torch's libraries, for that engine)."""
    import importlib.util

    roots = []
    from backchannel.embedding import model_path

    roots.append(Path(model_path()))
    spec = importlib.util.find_spec("torch") if engine == "torch" else None
    if spec and spec.origin:
        roots.append(Path(spec.origin).parent / "lib")
    n = 0
    for root in roots:
        for f in root.rglob("*"):
            if f.is_file():
                try:
                    fd = os.open(f, os.O_RDONLY)
                    try:
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                        n += 1
                    finally:
                        os.close(fd)
                except OSError:
                    pass
    return n


def in_process_run(sentences: int, cold: bool, engine: str) -> dict:
    if cold:
        evict_from_page_cache(engine)
    env = dict(os.environ, BACKCHANNEL_EMBEDDER_ENGINE=engine)
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(sentences), engine], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


def worker_run(sentences: int) -> dict:
    from backchannel import embedding

    embedding.set_mode("worker")
    texts = [f"Sentence {i}: Sophie said she reports to Marc at Globex since 2019." for i in range(sentences)]
    out = {"parent_rss_before_mb": rss_mb()}
    t = time.perf_counter()
    embedding.embed(texts[:1])
    out["first_batch_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    embedding.embed(texts)
    out["warm_batch_s"] = round(time.perf_counter() - t, 2)
    pid = embedding.stats()["worker_pid"]
    out["worker_peak_rss_mb"] = rss_mb(pid, "VmHWM")
    out["parent_rss_during_mb"] = rss_mb()
    t = time.perf_counter()
    embedding.release()
    out["release_s"] = round(time.perf_counter() - t, 2)
    out["parent_rss_after_release_mb"] = rss_mb()
    out["parent_imported_torch"] = "torch" in sys.modules
    return out


def medians(rows: list[dict]) -> dict:
    keys = [k for k in rows[0] if isinstance(rows[0][k], int | float) and not isinstance(rows[0][k], bool)]
    return {k: round(statistics.median(r[k] for r in rows if r.get(k) is not None), 2) for k in keys}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--engine", choices=("numpy", "torch"), default="numpy")
    args = ap.parse_args()
    os.environ["BACKCHANNEL_EMBEDDER_ENGINE"] = args.engine  # the worker reads it too
    load_before = os.getloadavg()
    cold = [in_process_run(args.sentences, True, args.engine) for _ in range(args.runs)]
    warm = [in_process_run(args.sentences, False, args.engine) for _ in range(args.runs)]
    workers = [worker_run(args.sentences) for _ in range(args.runs)]
    print(
        json.dumps(
            {
                "bench": "embedder_rss",
                "engine": args.engine,
                "sentences": args.sentences,
                "runs": args.runs,
                "in_process_cold_cache": medians(cold),
                "in_process_warm_cache": medians(warm),
                "worker": medians(workers),
                "worker_parent_imported_torch": any(w["parent_imported_torch"] for w in workers),
                "loadavg_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

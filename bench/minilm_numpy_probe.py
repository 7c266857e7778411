"""The embedder's two engines, side by side in one run: the numpy forward pass (the default,
backchannel/embedding_numpy.py) with 1 and 2 BLAS threads, and sentence-transformers on torch
(BACKCHANNEL_EMBEDDER_ENGINE=torch). Each runs in a fresh child process, so its import+load
seconds and RSS are its own; the children take turns (never two at once on this 2-core
machine) and write their vectors, which the parent compares with the torch engine's.

Prints JSON: per engine, import+load seconds, seconds for N sentences (500 by default, in
`embed()`'s batches of 64), RSS after load and after the sentences, and the max abs
difference from torch. The load average is printed with each, because this machine is shared
and a loaded minute changes the seconds, not the RSS.

Usage: python bench/minilm_numpy_probe.py [--sentences 500] [--engines numpy,numpy2,torch]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {  # name -> environment of the child
    "numpy": {"BACKCHANNEL_EMBEDDER_ENGINE": "numpy", "BACKCHANNEL_EMBEDDER_BLAS_THREADS": "1"},
    "numpy2": {"BACKCHANNEL_EMBEDDER_ENGINE": "numpy", "BACKCHANNEL_EMBEDDER_BLAS_THREADS": "2"},
    "torch": {"BACKCHANNEL_EMBEDDER_ENGINE": "torch"},
}

CHILD = r"""
import json, os, sys, time
import numpy as np

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return -1

n, out_path = int(sys.argv[1]), sys.argv[2]
rss0 = rss_mb()
t0 = time.perf_counter()
from backchannel import embedding
embedding.set_mode("in_process")
embedding.load_model()
load_s = time.perf_counter() - t0
rss_load = rss_mb()
subjects = ["Marc", "Sophie from Globex", "Priya, uh, and me", "The CIO of Initech", "Dana"]
tails = ["said he worked with her at Acme for a few years.", "will send the pricing over by Friday.",
         "reports to the head of sales, who joined in 2019 after the merger with Hooli.",
         "asked whether anyone could see the screen.", "wants an intro to someone at Stripe on payments risk, "
         "ideally before the offsite, because the contract renewal is due at the end of the quarter."]
texts = [f"{subjects[i % 5]} {tails[(i // 5) % 5]} (item {i})" for i in range(n)]
t1 = time.perf_counter()
vecs = embedding.embed(texts)
embed_s = time.perf_counter() - t1
np.save(out_path, vecs)
print(json.dumps({"import_load_s": round(load_s, 2), "embed_s": round(embed_s, 2), "sentences": n,
                  "rss_start_mb": rss0, "rss_after_load_mb": rss_load, "rss_after_embed_mb": rss_mb(),
                  "loadavg_1m": round(os.getloadavg()[0], 2)}))
sys.stdout.flush()
os._exit(0)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--engines", default="numpy,numpy2,torch", help=f"comma-separated, of {', '.join(VARIANTS)}")
    args = ap.parse_args()
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        sys.exit(f"unknown engine(s) {unknown}: choose from {', '.join(VARIANTS)}")
    import numpy as np

    out: dict = {"bench": "minilm_engines", "engines": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **VARIANTS[name])
            env.pop("BACKCHANNEL_EMBEDDER", None)
            t = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.sentences), f"{tmp}/{name}.npy"],
                env=env,
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            if run.returncode != 0:
                sys.exit(f"{name} failed:\n{run.stderr[-2000:]}")
            row = json.loads(run.stdout.strip().splitlines()[-1])
            row["process_s"] = round(time.perf_counter() - t, 2)  # interpreter start to exit, as a CLI sees it
            out["engines"][name] = row
        if "torch" in names:
            ref = np.load(f"{tmp}/torch.npy")
            for name in names:
                if name != "torch":
                    diff = float(np.abs(np.load(f"{tmp}/{name}.npy") - ref).max())
                    out["engines"][name]["max_abs_diff_vs_torch"] = diff
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

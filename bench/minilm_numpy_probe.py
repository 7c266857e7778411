"""Probe: all-MiniLM-L6-v2 as a numpy forward pass (no torch), against the real embedder.

Reads the packaged model.safetensors and tokenizer.json (safetensors and tokenizers are
already installed with sentence-transformers), runs BERT's six layers in numpy with mean
pooling, and prints JSON: import + load seconds, RSS after load and after 500 sentences,
the time for them, and with --compare the largest difference from `embedding.embed` (which
loads torch in this process, so the RSS figures are taken before it). One BLAS thread:
OpenBLAS's threads spun on this loaded 2-core machine (500 sentences: 257 s with 2 threads in a first
probe that also copied the weights per call; 19 s with 1 thread and no copies).

Usage: OPENBLAS_NUM_THREADS=1 python bench/minilm_numpy_probe.py [--compare]
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

SENTENCES = ["Marc and I worked together at Acme for years.", "I'll send the pricing over by Friday.",
             "Sophie reports to the CIO of Globex.", "Can everyone see my screen?",
             "So, uh, Priya and me, we did a stint at Initech back in the day."]


def rss_mb() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return -1


class NumpyMiniLM:
    def __init__(self, path: str):
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.np = np
        raw = load_file(os.path.join(path, "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
        with open(os.path.join(path, "config.json")) as f:
            self.cfg = json.load(f)
        self.tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.tok.enable_truncation(256)  # sentence_bert_config.json: max_seq_length 256
        self.tok.enable_padding()

    def _ln(self, x, name):
        np = self.np
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.cfg.get("layer_norm_eps", 1e-12)) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def encode(self, texts: list[str]):
        from scipy.special import erf

        np, w = self.np, self.w
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        types = np.array([e.type_ids for e in enc])
        b, t = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = self._ln(x, "embeddings.LayerNorm")
        heads = self.cfg["num_attention_heads"]
        d = x.shape[-1] // heads
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def split(y):
                return y.reshape(b, t, heads, d).transpose(0, 2, 1, 3)

            q, k, v = (split(self._lin(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, heads * d)
            x = self._ln(self._lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self._lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))  # exact GELU, as BERT's "gelu"
            x = self._ln(self._lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", action="store_true", help="also load the real embedder (torch) and diff")
    ap.add_argument("--sentences", type=int, default=500)
    args = ap.parse_args()
    t0 = time.perf_counter()
    from backchannel.embedding import model_path

    model = NumpyMiniLM(model_path())
    out: dict = {"bench": "minilm_numpy_probe", "import_load_s": round(time.perf_counter() - t0, 2),
                 "rss_after_load_mb": rss_mb(), "loadavg_1m": round(os.getloadavg()[0], 2)}
    texts = [f"Sentence {i}: Marc said he worked with Sophie at Acme for a few years." for i in range(args.sentences)]
    t = time.perf_counter()
    for i in range(0, len(texts), 64):
        model.encode(texts[i:i + 64])
    out["embed_s"] = round(time.perf_counter() - t, 2)
    out["sentences"] = args.sentences
    out["rss_after_embed_mb"] = rss_mb()
    if args.compare:
        from backchannel import embedding

        embedding.set_mode("in_process")
        ours, real = model.encode(SENTENCES), embedding.embed(SENTENCES)
        out["max_abs_diff_vs_embedder"] = float(abs(ours - real).max())
        out["min_cosine_vs_embedder"] = float((ours * real).sum(1).min())
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

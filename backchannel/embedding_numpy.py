"""all-MiniLM-L6-v2 as a numpy forward pass: the embedder's engine, without torch.

Reads the packaged model.safetensors, tokenizer.json, config.json and
sentence_bert_config.json (the `safetensors` and `tokenizers` packages), and
runs BERT's six layers in float32 numpy, then the attention-masked mean pooling
and the L2 normalisation of sentence-transformers' three modules. Why not torch:
importing torch + sentence-transformers costs ~10 s and ~450 MB on this machine;
this loads in under a second and ~150 MB, with the same vectors (within 1e-5,
tests/test_embedding_numpy.py compares it with sentence-transformers).

`embedding.py` owns the mode, the worker and the engine switch; this module
only computes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

# Bytes of attention scores a batch may hold (batch x heads x tokens x tokens x 4): a batch
# of long sentences is split further, so 64 sentences of 256 tokens do not take 200 MB.
ATTENTION_BUDGET_BYTES = 48 << 20

# erf as a rational function of x² on [-4, 4] (the float32 approximation Eigen and XLA
# use): max abs error 4e-7 against math.erf, without importing scipy (0.5 s here).
_ERF_P = [-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
          -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02]
_ERF_Q = [-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
          -1.42647390514189e-02]


def _erf(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, -4.0, 4.0)
    x2 = x * x
    p = np.full_like(x, _ERF_P[0])
    for c in _ERF_P[1:]:
        p = p * x2 + np.float32(c)
    q = np.full_like(x, _ERF_Q[0])
    for c in _ERF_Q[1:]:
        q = q * x2 + np.float32(c)
    return np.asarray(x * p / q, dtype=np.float32)


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's "gelu" is the exact one, not the tanh approximation.
    return np.asarray(0.5 * x * (1.0 + _erf(x * np.float32(1.0 / np.sqrt(2.0)))), dtype=np.float32)


def blas_threads() -> int:
    """BLAS threads while embedding: BACKCHANNEL_EMBEDDER_BLAS_THREADS, 1 by default."""
    try:
        return max(1, int(os.environ.get("BACKCHANNEL_EMBEDDER_BLAS_THREADS", "1")))
    except ValueError:
        return 1


@contextmanager
def limited_blas_threads() -> Iterator[None]:
    """BLAS on `blas_threads()` threads while embedding, where threadpoolctl is installed
    (it comes with scikit-learn, which sentence-transformers requires); elsewhere BLAS keeps
    its own setting. Why one: OpenBLAS's threads spin on this shared 2-core machine
    (bench/minilm_numpy_probe.py measures 1 against 2)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=blas_threads(), user_api="blas"):
        yield


class MiniLM:
    """The model, loaded from a sentence-transformers folder (the package's)."""

    def __init__(self, path: str) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        with open(os.path.join(path, "sentence_bert_config.json"), encoding="utf-8") as f:
            self.max_seq_length = int(json.load(f)["max_seq_length"])
        if cfg.get("hidden_act", "gelu") != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{path}: not a BERT this forward pass implements ({cfg.get('hidden_act')}, "
                             f"{cfg.get('position_embedding_type')})")
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = np.float32(cfg.get("layer_norm_eps", 1e-12))
        raw = load_file(os.path.join(path, "model.safetensors"))
        w = {k.removeprefix("bert."): np.ascontiguousarray(v, dtype=np.float32) for k, v in raw.items()}
        # Linear weights transposed once, so each layer is x @ W (no copy per call).
        self.w = {k: (np.ascontiguousarray(v.T) if v.ndim == 2 and k.startswith("encoder.") else v)
                  for k, v in w.items()}
        self.dim = int(self.w["embeddings.word_embeddings.weight"].shape[1])
        self.tok: Any = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        # The file's own settings pad and cut at 128; sentence-transformers cuts at max_seq_length
        # (special tokens included) and pads per batch, which we do ourselves after sorting.
        self.tok.enable_truncation(self.max_seq_length)
        self.tok.no_padding()

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        m = x.mean(-1, keepdims=True)
        c = x - m
        v = (c * c).mean(-1, keepdims=True)
        return np.asarray(c / np.sqrt(v + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"],
                          dtype=np.float32)

    def _lin(self, x: np.ndarray, name: str) -> np.ndarray:
        return np.asarray(x @ self.w[name + ".weight"] + self.w[name + ".bias"], dtype=np.float32)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(b, t) token ids and 0/1 mask -> (b, dim) mean-pooled, not normalised."""
        w, heads = self.w, self.heads
        b, t = ids.shape
        d = self.dim // heads
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0])  # one segment: type ids are all 0
        x = self._ln(x, "embeddings.LayerNorm")
        # As transformers' BERT: (1 - mask) * the float32 minimum added to the scores.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(d))
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._lin(x, p + "attention.self." + n).reshape(b, t, heads, d).transpose(0, 2, 1, 3)
                       for n in ("query", "key", "value"))
            a = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, heads * d)
            x = self._ln(self._lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = _gelu(self._lin(x, p + "intermediate.dense"))
            x = self._ln(self._lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        # sentence-transformers' mean pooling: masked sum over tokens / count (clamped at 1e-9).
        m = mask[..., None]
        return np.asarray((x * m).sum(1) / np.clip(m.sum(1), 1e-9, None), dtype=np.float32)

    def _batches(self, order: list[int], lengths: list[int], batch_size: int) -> Iterator[list[int]]:
        per_sentence_cap = max(1, batch_size)
        start = 0
        while start < len(order):
            t = lengths[order[start]]  # the longest of this batch: order is longest first
            cap = max(1, min(per_sentence_cap, ATTENTION_BUDGET_BYTES // (self.heads * t * t * 4)))
            yield order[start:start + cap]
            start += cap

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        enc = self.tok.encode_batch(texts)
        lengths = [len(e.ids) for e in enc]
        # Longest first, so each batch pads to its own longest (as sentence-transformers sorts).
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        with limited_blas_threads():
            for batch in self._batches(order, lengths, batch_size):
                t = lengths[batch[0]]
                ids = np.zeros((len(batch), t), dtype=np.int64)
                mask = np.zeros((len(batch), t), dtype=np.float32)
                for row, i in enumerate(batch):
                    ids[row, :lengths[i]] = enc[i].ids
                    mask[row, :lengths[i]] = 1.0
                out[batch] = self._forward(ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.clip(norms, 1e-12, None), dtype=np.float32)

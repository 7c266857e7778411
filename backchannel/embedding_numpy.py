"""all-MiniLM-L6-v2 as a numpy forward pass: the embedder's engine, without torch.

Reads the packaged model.safetensors, tokenizer.json, config.json and
sentence_bert_config.json (the `safetensors` and `tokenizers` packages), and
runs BERT's six layers in float32 numpy, then the attention-masked mean pooling
and the L2 normalisation of sentence-transformers' three modules. Why not torch:
importing torch + sentence-transformers costs ~10 s and ~450 MB on this machine;
this loads in under a second and ~150 MB, with the same vectors (within 1e-5,
tests/embedding/test_embedding_numpy.py compares it with sentence-transformers).

How it spends its time: the six layers are ~21 MFLOP of matrix products per token,
so the pass computes only real tokens. The tokens of all the sentences of a pass are
packed into one (tokens, 384) matrix: the linear maps, layer norms and GELU see no
padding, and each product is one large BLAS call (numpy runs a (b, t, d) @ (d, n)
product as b small ones). Only attention looks at sentences, in groups of similar
lengths padded to the group's longest and masked as transformers' BERT masks. Query,
key and value are one (384, 1152) product; the feed-forward block runs a slab of rows at
a time, its 1536-wide activation kept in cache for GELU's elementwise passes, in place.

`embedding.py` owns the mode, the worker and the engine switch; this module
only computes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

# Bytes of attention scores a group of sentences may hold (sentences x heads x tokens x tokens x 4):
# a group of long sentences is split further, so 64 sentences of 256 tokens do not take 200 MB.
ATTENTION_BUDGET_BYTES = 48 << 20
# Tokens packed into one pass: what the per-token layers (the linear maps, layer norms, GELU)
# compute on, with no padding. 4096 tokens hold ~60 MB of activations.
TOKENS_PER_PASS = 4096
# Rows of the feed-forward block computed at once: its 1536-wide activation stays in the
# core's cache while GELU's ~25 elementwise passes run over it (measured: 128-256 rows best).
FFN_ROWS = 256
# A sentence starts a new attention group when it is shorter than this share of the group's
# longest: attention pads to the longest, and its cost grows with the square of the length.
GROUP_MIN_SHARE = 0.75

# erf as a rational function of x² on [-4, 4] (the float32 approximation Eigen and XLA
# use): max abs error 4e-7 against math.erf, without importing scipy (0.5 s here).
_ERF_P = [
    np.float32(c)
    for c in (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
]
_ERF_Q = [
    np.float32(c)
    for c in (
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    )
]
_INV_SQRT2 = np.float32(1.0 / np.sqrt(2.0))


def _gelu_(h: np.ndarray, u: np.ndarray, x2: np.ndarray, pq: np.ndarray) -> None:
    """BERT's exact GELU, 0.5·x·(1 + erf(x/√2)), in place on `h`; `u`, `x2`, `pq` are scratch
    arrays of h's shape (no allocation: the same three serve every block)."""
    np.multiply(h, _INV_SQRT2, out=u)
    np.clip(u, -4.0, 4.0, out=u)
    np.multiply(u, u, out=x2)
    np.multiply(x2, _ERF_P[0], out=pq)
    pq += _ERF_P[1]
    for c in _ERF_P[2:]:
        pq *= x2
        pq += c
    u *= pq
    np.multiply(x2, _ERF_Q[0], out=pq)
    pq += _ERF_Q[1]
    for c in _ERF_Q[2:]:
        pq *= x2
        pq += c
    u /= pq  # erf(x/√2)
    u += np.float32(1.0)
    h *= np.float32(0.5)
    h *= u


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
            raise ValueError(
                f"{path}: not a BERT this forward pass implements ({cfg.get('hidden_act')}, "
                f"{cfg.get('position_embedding_type')})"
            )
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = np.float32(cfg.get("layer_norm_eps", 1e-12))
        raw = load_file(os.path.join(path, "model.safetensors"))
        w = {k.removeprefix("bert."): np.ascontiguousarray(v, dtype=np.float32) for k, v in raw.items()}
        # Linear weights transposed once, so each layer is x @ W (no copy per call).
        self.w = {
            k: (np.ascontiguousarray(v.T) if v.ndim == 2 and k.startswith("encoder.") else v) for k, v in w.items()
        }
        self.dim = int(self.w["embeddings.word_embeddings.weight"].shape[1])
        self._weights = [self._layer_weights(i) for i in range(self.layers)]
        for i in range(self.layers):  # now held fused in _weights
            for n in ("query", "key", "value"):
                for part in ("weight", "bias"):
                    del self.w[f"encoder.layer.{i}.attention.self.{n}.{part}"]
        self.tok: Any = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        # The file's own settings pad and cut at 128; sentence-transformers cuts at max_seq_length
        # (special tokens included) and pads per batch, which we do ourselves after sorting.
        self.tok.enable_truncation(self.max_seq_length)
        self.tok.no_padding()

    def _layer_weights(self, i: int) -> tuple[np.ndarray, ...]:
        """Layer i's weights; query, key and value as one (dim, 3·dim) map: one product, not three."""
        w, p = self.w, f"encoder.layer.{i}."
        qkv = [p + "attention.self." + n for n in ("query", "key", "value")]
        return (
            np.ascontiguousarray(np.concatenate([w[n + ".weight"] for n in qkv], axis=1)),
            np.concatenate([w[n + ".bias"] for n in qkv]),
            *(
                w[p + n]
                for n in (
                    "attention.output.dense.weight",
                    "attention.output.dense.bias",
                    "attention.output.LayerNorm.weight",
                    "attention.output.LayerNorm.bias",
                    "intermediate.dense.weight",
                    "intermediate.dense.bias",
                    "output.dense.weight",
                    "output.dense.bias",
                    "output.LayerNorm.weight",
                    "output.LayerNorm.bias",
                )
            ),
        )

    def _ln_(self, x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """Layer norm over the last axis, in place on `x` (which it returns)."""
        m = x.mean(-1, keepdims=True)
        x -= m
        v = np.einsum("ij,ij->i", x, x)[:, None]
        v /= np.float32(x.shape[-1])
        v += self.eps
        np.sqrt(v, out=v)
        x /= v
        x *= weight
        x += bias
        return x

    def _attention(self, qkv: np.ndarray, groups: list[tuple[int, int, list[int]]]) -> np.ndarray:
        """(tokens, 3·dim) packed queries, keys and values -> (tokens, dim) attended values.
        Each group is (first row, its sentences' lengths): sentences of one group are padded to the
        longest of them and masked as transformers' BERT does ((1 - mask) · the float32 minimum
        added to the scores); tokens of different sentences never see each other."""
        heads, dim = self.heads, self.dim
        d = dim // heads
        scale = np.float32(1.0 / np.sqrt(d))
        out = np.empty((qkv.shape[0], dim), dtype=np.float32)
        for row, t, lengths in groups:
            g = len(lengths)
            padded = any(n != t for n in lengths)
            if padded:  # gather each sentence's rows into a (g, t) grid; padding reads row 0, masked
                idx = np.zeros((g, t), dtype=np.int64)
                valid = np.zeros((g, t), dtype=bool)
                r = row
                for j, n in enumerate(lengths):
                    idx[j, :n] = np.arange(r, r + n)
                    valid[j, :n] = True
                    r += n
                grid = qkv[idx]
            else:
                grid = qkv[row : row + g * t].reshape(g, t, 3 * dim)
            grid = grid.reshape(g, t, 3, heads, d).transpose(2, 0, 3, 1, 4)  # (3, g, heads, t, d)
            q, k, v = grid[0], grid[1], grid[2]
            a = q @ k.transpose(0, 1, 3, 2)
            a *= scale
            if padded:
                a += np.where(valid, np.float32(0.0), np.finfo(np.float32).min)[:, None, None, :]
            a -= a.max(-1, keepdims=True)
            np.exp(a, out=a)
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(g, t, dim)
            if padded:
                out[idx[valid]] = ctx[valid]
            else:
                out[row : row + g * t] = ctx.reshape(g * t, dim)
        return out

    def _forward(self, ids: list[list[int]], batch_size: int) -> np.ndarray:
        """Token ids of sentences sorted longest first -> (sentences, dim) mean-pooled, not
        normalised."""
        x = self._states(ids, batch_size)
        # sentence-transformers' mean pooling: the sum over a sentence's tokens / their count.
        lengths = [len(t) for t in ids]
        starts = np.cumsum([0, *lengths[:-1]])
        sums = np.add.reduceat(x, starts, axis=0)
        return np.asarray(sums / np.asarray(lengths, dtype=np.float32)[:, None], dtype=np.float32)

    def _states(self, ids: list[list[int]], batch_size: int) -> np.ndarray:
        """Token ids of sentences sorted longest first -> (tokens, dim): the last layer's state of
        every token, sentence after sentence. The tokens of all sentences are packed into one
        matrix, so the per-token layers compute no padding; only attention looks at sentences."""
        w = self.w
        lengths = [len(x) for x in ids]
        flat = np.fromiter((i for x in ids for i in x), dtype=np.int64, count=sum(lengths))
        positions = np.fromiter((p for n in lengths for p in range(n)), dtype=np.int64, count=len(flat))
        x = (
            w["embeddings.word_embeddings.weight"][flat]
            + w["embeddings.position_embeddings.weight"][positions]
            + w["embeddings.token_type_embeddings.weight"][0]
        )  # one segment: type ids are all 0
        x = self._ln_(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        groups = self._groups(lengths, batch_size)
        rows = min(FFN_ROWS, len(flat))
        scratch = [
            np.empty((rows, w["encoder.layer.0.intermediate.dense.weight"].shape[1]), dtype=np.float32)
            for _ in range(4)
        ]
        for i in range(self.layers):
            wqkv, bqkv, wo, bo, ln1w, ln1b, wi, bi, wf, bf, ln2w, ln2b = self._weights[i]
            qkv = x @ wqkv
            qkv += bqkv
            attended = self._attention(qkv, groups) @ wo
            attended += bo
            attended += x
            x = self._ln_(attended, ln1w, ln1b)
            for r0 in range(0, len(flat), rows):  # the feed-forward block, a cache-sized slab at a time
                block = x[r0 : r0 + rows]
                h = np.matmul(block, wi, out=scratch[0][: len(block)])
                h += bi
                _gelu_(h, *(s[: len(block)] for s in scratch[1:]))
                y = h @ wf
                y += bf
                y += block
                block[...] = self._ln_(y, ln2w, ln2b)
        return x

    def _groups(self, lengths: list[int], batch_size: int) -> list[tuple[int, int, list[int]]]:
        """Attention groups over sentences sorted longest first: (first row, longest, lengths);
        at most `batch_size` sentences, ATTENTION_BUDGET_BYTES of scores, and none shorter than
        GROUP_MIN_SHARE of the group's longest."""
        out: list[tuple[int, int, list[int]]] = []
        row = 0
        for n in lengths:
            if out:
                first, t, group = out[-1]
                if (
                    len(group) < batch_size
                    and n >= GROUP_MIN_SHARE * t
                    and (len(group) + 1) * self.heads * t * t * 4 <= ATTENTION_BUDGET_BYTES
                ):
                    group.append(n)
                    row += n
                    continue
            out.append((row, n, [n]))
            row += n
        return out

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        enc = self.tok.encode_batch(texts)
        with limited_blas_threads():
            for part in _passes([len(e.ids) for e in enc]):
                out[part] = self._forward([enc[i].ids for i in part], batch_size)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.clip(norms, 1e-12, None), dtype=np.float32)

    def span_vectors(self, texts: list[str], spans: list[list[tuple[int, int]]]) -> np.ndarray:
        """(total spans, dim) float32: for each text's character spans, in order, the mean of the
        last-layer states of the word pieces inside the span (the special tokens never), a zero
        row where no piece lies inside (a span past the 256-token cut). Not normalised: the
        typer (extraction/meaning/typer.py) was trained on these means as they are."""
        total = sum(len(s) for s in spans)
        out = np.zeros((total, self.dim), dtype=np.float32)
        if not total:
            return out
        enc = self.tok.encode_batch(texts)
        first_row = np.cumsum([0, *(len(s) for s in spans[:-1])])
        with limited_blas_threads():
            for part in _passes([len(e.ids) for e in enc]):
                x = self._states([enc[i].ids for i in part], 64)
                row = 0
                for i in part:
                    for j, (a, b) in enumerate(spans[i]):
                        inside = pieces_inside(enc[i].offsets, a, b)
                        if inside:
                            out[first_row[i] + j] = x[row + np.asarray(inside)].mean(0)
                    row += len(enc[i].ids)
        return out


def _passes(lengths: list[int]) -> Iterator[list[int]]:
    """The texts' indices, longest first (so each attention group pads to its own longest, as
    sentence-transformers sorts), cut into passes of at most TOKENS_PER_PASS tokens (a longer text alone)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    start = 0
    while start < len(order):
        end, tokens = start, 0
        while end < len(order) and (end == start or tokens + lengths[order[end]] <= TOKENS_PER_PASS):
            tokens += lengths[order[end]]
            end += 1
        yield order[start:end]
        start = end


def pieces_inside(offsets: Sequence[tuple[int, int]], start: int, end: int) -> list[int]:
    """The tokens whose characters lie inside text[start:end]; special tokens ([CLS], [SEP]) have empty
    offsets and never do."""
    return [k for k, (s0, s1) in enumerate(offsets) if s1 > s0 and s0 >= start and s1 <= end]

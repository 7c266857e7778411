"""Whether what is said after a promise lets it go, read by meaning: "Ah no, no need at all, I've it
already", "Actually, sorry, I take that back", "Never mind, I'll do it myself".

A logistic regression over the turn's sentence embedding, its product with the promise's (is it about
this promise?) and whether the promise's maker said it (release_train.py: trained on
bench/meaning_bank/releases/bank.txt, checked on releases/check.txt, written apart; figures in
release.json). A turn that relaxes a promise ("no rush", "Thursday's fine too") or doubts it ("I'll
believe it when I see it") keeps it; the check set's hard cases are of that kind.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BAR = 0.8


def features(after: np.ndarray, promise: np.ndarray, by_maker: np.ndarray, *, with_promise: bool) -> np.ndarray:
    """Rows of: after's embedding, [its product with the promise's,] 1 when the maker said it."""
    parts = [after, *([after * promise] if with_promise else []), by_maker.astype(np.float32)[:, None]]
    return np.concatenate(parts, axis=1).astype(np.float32)


@functools.lru_cache(maxsize=1)
def _weights() -> tuple[np.ndarray, float, bool]:
    with np.load(HERE / "release.npz") as z:
        return np.asarray(z["w"], dtype=np.float32), float(z["b"]), bool(z["with_promise"])


def p_release(after: np.ndarray, promise: np.ndarray, by_maker: np.ndarray) -> np.ndarray:
    """p(release) per row: `after` and `promise` are unit-length sentence embeddings."""
    w, b, with_promise = _weights()
    x = features(after, promise, by_maker, with_promise=with_promise)
    return 1.0 / (1.0 + np.exp(-(x @ w + b)))

"""Small classification heads over sentence embeddings, in numpy: trained here, shipped as arrays.

Three kinds, compared by cross-validation in train.py: `prototype` (the nearest class
centroid by cosine), `linear` (multinomial logistic regression) and `mlp` (one hidden
ReLU layer). Each is a dict of float32 arrays plus its kind, so one `.npz` holds them and
`predict_proba` needs nothing but numpy. Training is full-batch Adam from a seeded start:
the same data and seed give the same weights.

A head may be a bag of `members` heads of one kind, fitted from consecutive seeds on the same
data, whose probabilities are averaged: one MLP's reading of a borderline sentence moves by
0.1-0.3 with its seed, which made every bank change cross a bar somewhere; the mean of several
moves far less. A bag's arrays carry a leading member axis.
"""

from __future__ import annotations

import numpy as np

KINDS = ("prototype", "linear", "mlp")


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _balanced_weights(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-example weights by the inverse square root of the class's size (mean 1): a rare class
    (joke, knows_of) counts more than its share, but not so much that the common one (asserted)
    loses its precision: wrongly reading "I know X" as knowing *of* X costs a true fact."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    w = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1)), 0.0)[y]
    return w / w.mean()


def fit(
    kind: str,
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    seed: int,
    hidden: int = 64,
    steps: int = 300,
    lr: float = 0.01,
    l2: float = 1e-4,
) -> dict[str, np.ndarray]:
    """A head of `kind` fitted to rows `x` (unit-length embeddings) and labels `y` (0..n_classes-1)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if kind == "prototype":
        c = np.zeros((n_classes, x.shape[1]))
        for label in range(n_classes):
            if (y == label).any():
                c[label] = x[y == label].mean(axis=0)
        c /= np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-9)
        return {"centroids": c.astype(np.float32)}
    rng = np.random.default_rng(seed)
    sw = _balanced_weights(y, n_classes)[:, None] / len(y)
    onehot = np.eye(n_classes)[y]
    if kind == "linear":
        params = {"W": rng.normal(0, 0.01, (x.shape[1], n_classes)), "b": np.zeros(n_classes)}
    elif kind == "mlp":
        params = {
            "W1": rng.normal(0, np.sqrt(2.0 / x.shape[1]), (x.shape[1], hidden)),
            "b1": np.zeros(hidden),
            "W2": rng.normal(0, np.sqrt(1.0 / hidden), (hidden, n_classes)),
            "b2": np.zeros(n_classes),
        }
    else:
        raise ValueError(f"unknown head kind {kind!r} (one of {KINDS})")
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    # a linear head reads raw cosine-scale features, so it needs a larger step than the MLP
    step = lr * (10.0 if kind == "linear" else 1.0)
    for t in range(1, steps + 1):
        grads = _grads(kind, params, x, onehot, sw)
        for k in params:
            g = grads[k] + (l2 * params[k] if k.startswith("W") else 0.0)
            m[k] = b1 * m[k] + (1 - b1) * g
            v2[k] = b2 * v2[k] + (1 - b2) * g * g
            mh, vh = m[k] / (1 - b1**t), v2[k] / (1 - b2**t)
            params[k] = params[k] - step * mh / (np.sqrt(vh) + eps)
    return {k: v.astype(np.float32) for k, v in params.items()}


def fit_bag(
    kind: str, x: np.ndarray, y: np.ndarray, n_classes: int, *, seed: int, members: int = 1
) -> dict[str, np.ndarray]:
    """`members` heads of `kind` from seeds seed, seed+1, ...; their arrays stacked on a new first
    axis. One member is the plain head (no extra axis), so a bag of one is what fit() gives."""
    if members <= 1 or kind == "prototype":  # a centroid has no seed to vary
        return fit(kind, x, y, n_classes, seed=seed)
    fitted = [fit(kind, x, y, n_classes, seed=seed + i) for i in range(members)]
    return {k: np.stack([f[k] for f in fitted]) for k in fitted[0]}


def _grads(
    kind: str, p: dict[str, np.ndarray], x: np.ndarray, onehot: np.ndarray, sw: np.ndarray
) -> dict[str, np.ndarray]:
    if kind == "linear":
        d = (_softmax(x @ p["W"] + p["b"]) - onehot) * sw
        return {"W": x.T @ d, "b": d.sum(axis=0)}
    h_pre = x @ p["W1"] + p["b1"]
    h = np.maximum(h_pre, 0.0)
    d2 = (_softmax(h @ p["W2"] + p["b2"]) - onehot) * sw
    dh = (d2 @ p["W2"].T) * (h_pre > 0)
    return {"W2": h.T @ d2, "b2": d2.sum(axis=0), "W1": x.T @ dh, "b1": dh.sum(axis=0)}


def members(kind: str, params: dict[str, np.ndarray]) -> int:
    """How many heads `params` holds: 1 for a plain head, the leading axis for a bag."""
    first = params["centroids" if kind == "prototype" else "W" if kind == "linear" else "W1"]
    return int(first.shape[0]) if first.ndim == 3 else 1


def predict_proba(kind: str, params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """(rows, classes) probabilities; for a prototype head, a softmax over scaled cosines; for a
    bag, the mean of its members'."""
    n = members(kind, params)
    if n > 1:
        return np.mean([_one_proba(kind, {k: v[i] for k, v in params.items()}, x) for i in range(n)], axis=0)
    return _one_proba(kind, params, x)


def _one_proba(kind: str, params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    if kind == "prototype":
        return _softmax(20.0 * (x @ params["centroids"].T))
    if kind == "linear":
        return _softmax(x @ params["W"] + params["b"])
    if kind == "mlp":
        return _softmax(np.maximum(x @ params["W1"] + params["b1"], 0.0) @ params["W2"] + params["b2"])
    raise ValueError(f"unknown head kind {kind!r} (one of {KINDS})")

"""adapter.merged: LoRA adapters folded into the numpy engine's fused query/key/value matrices.
A zero adapter gives the packaged model's vectors; a non-zero one changes only the query and value
columns of the layers it names, and never the process's own model."""

from __future__ import annotations

import numpy as np

from backchannel import embedding
from backchannel.embedding_numpy import MiniLM
from backchannel.extraction.meaning.adapter import merged

TEXTS = ["Marc and I worked together at Acme for years.", "I'll send the pricing over by Friday.", "ok"]


def _adapter(rng: np.random.Generator, dim: int, rank: int, zero_b: bool) -> dict[str, np.ndarray]:
    out = {}
    for layer in (4, 5):
        for name in ("query", "value"):
            out[f"lora.{layer}.{name}.A"] = rng.normal(0, 0.05, (rank, dim)).astype(np.float32)
            b = np.zeros((dim, rank)) if zero_b else rng.normal(0, 0.05, (dim, rank))
            out[f"lora.{layer}.{name}.B"] = b.astype(np.float32)
    return out


def test_zero_adapter_gives_the_packaged_vectors() -> None:
    base = MiniLM(embedding.model_path())
    m = merged(base, _adapter(np.random.default_rng(0), base.dim, 4, zero_b=True), 2.0)
    assert np.array_equal(m.encode(TEXTS), base.encode(TEXTS))


def test_adapter_moves_only_query_and_value_of_its_layers() -> None:
    base = MiniLM(embedding.model_path())
    before = [w[0].copy() for w in base._weights]
    arrays = _adapter(np.random.default_rng(1), base.dim, 4, zero_b=False)
    m = merged(base, arrays, 2.0)
    d = base.dim
    for i in range(base.layers):
        assert np.array_equal(base._weights[i][0], before[i])  # the base model is untouched
        if i < 4:
            assert m._weights[i][0] is base._weights[i][0]
            continue
        q = before[i][:, :d] + 2.0 * arrays[f"lora.{i}.query.A"].T @ arrays[f"lora.{i}.query.B"].T
        v = before[i][:, 2 * d :] + 2.0 * arrays[f"lora.{i}.value.A"].T @ arrays[f"lora.{i}.value.B"].T
        assert np.allclose(m._weights[i][0][:, :d], q, atol=1e-6)
        assert np.array_equal(m._weights[i][0][:, d : 2 * d], before[i][:, d : 2 * d])
        assert np.allclose(m._weights[i][0][:, 2 * d :], v, atol=1e-6)
    assert not np.allclose(m.encode(TEXTS), base.encode(TEXTS), atol=1e-4)

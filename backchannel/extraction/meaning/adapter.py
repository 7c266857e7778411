"""A fine-tuned encoder for the meaning heads, where `adapter.npz` is present beside this file.

bench/meaning_bank/finetune.py trains rank-r LoRA adapters on the attention query and value of
all-MiniLM-L6-v2's top layers, jointly with the heads, on the labelled bank, and writes
`adapter.npz` (the adapters and the heads refitted on the adapted embeddings) and
`adapter.json` (provenance). Without that file nothing here runs: classifier.py reads the
packaged model's embeddings and head.npz, as before.

The adapters are merged into the numpy engine's fused query/key/value matrices once
(W' = W + scale · (B A)ᵀ), so a pass costs what the packaged model's does. Only the adapted
layers' fused matrices are new arrays: in process, with the numpy engine, the model is a shallow
copy of the process's one model (a few MB more); elsewhere (the worker mode, the torch engine)
it loads its own numpy model (~0.7 s, ~150 MB).
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
WEIGHTS = HERE / "adapter.npz"
_lock = threading.Lock()
_state: dict[str, Any] | None = None


def present() -> bool:
    return WEIGHTS.exists()


def provenance() -> dict:
    return json.loads((HERE / "adapter.json").read_text(encoding="utf-8"))


def merged(model: Any, arrays: dict[str, np.ndarray], scale: float) -> Any:
    """A shallow copy of an embedding_numpy.MiniLM with each adapted layer's fused qkv matrix
    replaced by its sum with the adapters (the base model is left as it was)."""
    out = copy.copy(model)
    out._weights = list(model._weights)
    dim = model.dim
    for i in sorted({int(k.split(".")[1]) for k in arrays if k.startswith("lora.")}):
        wqkv = out._weights[i][0].copy()
        for j, name in enumerate(("query", "key", "value")):
            if f"lora.{i}.{name}.A" in arrays:
                a, b = arrays[f"lora.{i}.{name}.A"], arrays[f"lora.{i}.{name}.B"]
                # the engine computes x @ W with W (in, out): the transpose of torch's (out, in) B @ A
                wqkv[:, j * dim : (j + 1) * dim] += np.float32(scale) * (a.T @ b.T)
        out._weights[i] = (np.ascontiguousarray(wqkv), *out._weights[i][1:])
    return out


def _load() -> dict[str, Any]:
    global _state
    with _lock:
        if _state is None:
            from backchannel import embedding
            from backchannel.embedding_numpy import MiniLM

            meta = provenance()
            with np.load(WEIGHTS) as z:
                arrays = {k: z[k] for k in z.files}
            if embedding.mode() == "in_process" and embedding.engine() == "numpy":
                base = embedding.load_model()
            else:
                base = MiniLM(embedding.model_path())
            heads = {}
            for task, info in meta["tasks"].items():
                params = {k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith(task + ".")}
                heads[task] = (info["kind"], params, tuple(info["classes"]))
            _state = {"model": merged(base, arrays, float(meta["scale"])), "heads": heads}
    return _state


def embed(texts: list[str]) -> np.ndarray:
    """(len(texts), dim) unit-length rows from the adapted model."""
    return np.asarray(_load()["model"].encode(list(texts)), dtype=np.float32)


def heads() -> dict:
    """task -> (kind, params, classes) of the heads fitted on the adapted embeddings."""
    return dict(_load()["heads"])

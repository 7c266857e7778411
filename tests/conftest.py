"""Shared fixtures: a temp home for every test that wants one, and the corpora."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPORA = Path(os.environ.get("BACKCHANNEL_CORPORA", ROOT.parent / "shared" / "corpora"))

# No test may reach the internet or a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty BACKCHANNEL_HOME; config, secrets and data all live under it."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("BACKCHANNEL_HOME", str(h))
    monkeypatch.delenv("BACKCHANNEL_CONFIG", raising=False)
    monkeypatch.delenv("CREDENTIALS_DIRECTORY", raising=False)
    for k in list(os.environ):
        if k.startswith("BACKCHANNEL_") and k not in ("BACKCHANNEL_HOME", "BACKCHANNEL_CORPORA"):
            monkeypatch.delenv(k)
    return h


@pytest.fixture
def corpora() -> Path:
    if not CORPORA.is_dir():
        pytest.skip(f"third-party corpora not found at {CORPORA} (they live in ../shared/corpora)")
    return CORPORA


@pytest.fixture
def store(home: Path):
    from backchannel.config import resolve_paths
    from backchannel.memory import Store

    s = Store.open(resolve_paths().ensure().db_file)
    yield s
    s.close()

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

# The files whose tests run longest (`--durations`, two workers), longest first: browsers,
# daemons killed and restarted, the CLI in subprocesses, whole-corpus ingests. xdist's loadgroup
# hands ungrouped tests out in collection order, two or three ahead; at the end of the alphabet
# (tests/web/) they left one worker busy for a minute or more after the other had run dry.
# Run first, they overlap the grouped fixtures and the short tests fill the end. Order only:
# every test still runs, on a fresh worker state as before (no test may rely on order).
LONG_FIRST = (
    "tests/web/test_web_graph_browser.py",
    "tests/memory/test_privacy_rights.py",
    "tests/daemon/test_daemon_service.py",
    "tests/web/test_web_browser.py",
    "tests/memory/test_privacy_withdrawal_sources.py",
    "tests/cli/test_cli_ingest.py",
    "tests/delivery/test_delivery_e2e.py",
    "tests/sandbox/test_sandbox_modes.py",
    "tests/extraction/test_offline_extractor.py",
    "tests/extraction/test_offline_labels_and_organisations.py",
    "tests/extraction/test_offline_real_speech.py",
    "tests/cli/test_trust_display.py",
    "tests/agent/test_ask.py",
    "tests/daemon/test_mail_daemon.py",
    "tests/memory/test_privacy.py",
    "tests/web/test_web_app.py",
    "tests/extraction/test_model_extract.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The LONG_FIRST files' tests at the front, the rest in their collected order (a stable sort)."""
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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

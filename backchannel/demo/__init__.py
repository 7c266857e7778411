"""The sample corpus and scenario behind `backchannel demo`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

OWNER = "Alex Moreau"


def corpus_files() -> list[Path]:
    folder = resources.files("backchannel.demo") / "corpus"
    return sorted(Path(str(p)) for p in folder.iterdir() if not p.name.startswith("."))

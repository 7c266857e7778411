"""Every Python file a comment, docstring or doc page of the package names exists: modules that
moved took their old names along in the prose around them (`offline_rules.py`, `daemon/runs.py`)
long after the imports followed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# 'dates/en.py', 'claims.py': a file name, optionally with the folders above it
FILE_NAMED = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[A-Za-z_]\w*\.py)\b")


def _prose_files() -> list[Path]:
    return [*sorted((ROOT / "backchannel").rglob("*.py")), *sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def _python_files() -> set[str]:
    found = {"setup.py"}
    for top in ("backchannel", "bench", "tests", ".ci"):
        found |= {p.relative_to(ROOT).as_posix() for p in (ROOT / top).rglob("*.py")}
    return found


def missing_files(text: str, files: set[str]) -> list[str]:
    """The file names `text` mentions that are none of `files` (matched by their tail: 'en.py'
    and 'dates/en.py' both name backchannel/extraction/dates/en.py), the standard library's modules
    and placeholders in capitals ('FILE.py') apart."""
    out = []
    for m in FILE_NAMED.finditer(text):
        name = m.group(1)
        stem = name.rsplit("/", 1)[-1][:-3]
        if stem.isupper() or "/" not in name and stem in sys.stdlib_module_names:
            continue
        if not any(f == name or f.endswith("/" + name) for f in files):
            out.append(name)
    return out


def test_every_python_file_the_prose_names_exists() -> None:
    files = _python_files()
    stale = {
        p.relative_to(ROOT).as_posix(): names
        for p in _prose_files()
        if (names := missing_files(p.read_text(encoding="utf-8"), files))
    }
    assert stale == {}


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("the rules of offline_rules.py and dates/en.py", ["offline_rules.py"]),
        ("see daemon/runs.py, then engine/runs.py", ["daemon/runs.py"]),
        ("run FILE.py as in dataclasses.py; tests/extraction/test_dates.py", []),
    ],
)
def test_the_check_tells_a_moved_file(text: str, missing: list[str]) -> None:
    assert (
        missing_files(
            text, {"backchannel/extraction/dates/en.py", "backchannel/engine/runs.py", "tests/extraction/test_dates.py"}
        )
        == missing
    )

"""The project's modules as files: what the AST tests of the house (private names, the engine's
imports) read."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def module_name(path: Path) -> str:
    """`backchannel/engine/run.py` -> `backchannel.engine.run` (a package's `__init__` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    """Whether the dotted `name` is a module or package of this tree (not a name inside one)."""
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()

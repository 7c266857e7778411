"""No module of the package uses another module's private name (`_name`): not through
`from X import _name`, not as `X._name` on an imported module. A private name is one a
module may change without telling anyone; once another module uses it, it is an API in
all but name. Same-module use and dunder names are fine; a private submodule (`_http.py`)
may be imported within its own package. Tests may use privates: the rule is for the
package. Only our own modules count (`os._exit` is the standard library's business)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.modules import ROOT, is_module, module_name

PACKAGE = ROOT / "backchannel"
SKIP = {PACKAGE / "demo" / "corpus"}  # data, not code


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _source_of(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module a `from ... import` reads from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def uses_of_private_names(path: Path, source_text: str | None = None) -> list[str]:
    """Where the module at `path` (its text, or `source_text` read as that module) uses
    another module's private name, as 'file:line: what'."""
    module = module_name(path)
    text = path.read_text(encoding="utf-8") if source_text is None else source_text
    tree = ast.parse(text, str(path))
    where = path.relative_to(ROOT)
    found: list[str] = []
    modules: dict[str, str] = {}  # a local name bound to one of our modules -> that module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "backchannel":
                    local = alias.asname or alias.name.split(".")[0]
                    modules[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            source = _source_of(module, node, path.name == "__init__.py")
            if source.split(".")[0] != "backchannel":
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if is_module(full):
                    modules[alias.asname or alias.name] = full
                    inside = module == source or module.startswith(source + ".")
                    if _private(alias.name) and not inside:
                        found.append(f"{where}:{node.lineno}: imports the private module {full}")
                elif _private(alias.name) and source != module:
                    found.append(f"{where}:{node.lineno}: from {source} import {alias.name}")
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain: list[str] = []
        value = node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in modules:
            target = ".".join([modules[value.id], *reversed(chain)])
            if is_module(target) and target != module:
                found.append(f"{where}:{node.lineno}: {target}.{node.attr}")
    return found


def _package_files() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if not any(p.is_relative_to(s) for s in SKIP)]


def test_no_module_uses_another_modules_private_name() -> None:
    found = [use for path in _package_files() for use in uses_of_private_names(path)]
    assert found == [], "use a public name (rename it where it is defined):\n" + "\n".join(found)


def test_the_check_sees_both_forms() -> None:
    """The rule catches what it is for, and leaves alone what it allows."""
    code = (
        "from backchannel.engine import pipeline\n"
        "from backchannel.engine.runs import _private_helper\n"
        "import backchannel.engine.gate as gate_mod\n"
        "from . import _local_name\n"
        "x = pipeline._hidden\n"
        "y = gate_mod.__name__\n"
        "z = pipeline.run_wake_once\n"
        "def _mine():\n"
        "    return _mine\n"
    )
    found = uses_of_private_names(PACKAGE / "engine" / "run.py", code)  # read as engine/run.py
    assert any("from backchannel.engine.runs import _private_helper" in f for f in found)
    assert any("backchannel.engine.pipeline._hidden" in f for f in found)
    assert any("from backchannel.engine import _local_name" in f for f in found)
    assert len(found) == 3, found  # not __name__, not a public name, not the module's own

"""The engine reads downwards: no module of `backchannel.engine` imports, directly or
through others, a module that imports it back (lazy imports inside functions count too:
a circle hidden in a function is still a circle to the reader)."""

from __future__ import annotations

import ast

from tests.support.modules import ROOT, is_module, module_name

ENGINE = ROOT / "backchannel" / "engine"


def engine_imports() -> dict[str, set[str]]:
    """Each engine module -> the engine modules it imports."""
    graph: dict[str, set[str]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        me = module_name(path)
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if is_module(full) else node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[me] = {d for d in deps if d.startswith("backchannel.engine.") and d != me}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(node)

    for start in sorted(graph):
        if start not in done:
            visit(start, [start])
    return found


def test_the_engine_has_no_import_circle() -> None:
    graph = engine_imports()
    assert "backchannel.engine.run" in graph["backchannel.engine.reevaluate"]  # the graph is read
    assert circles(graph) == []


def test_a_circle_is_seen() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []

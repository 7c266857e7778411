"""The AST pre-check of a sandboxed program, and the import allowlist.

Runs in the parent before a child is spawned, and again in the child before the
program is compiled. It is one layer of several: the process boundary (empty
environment, chroot or audit hook, rlimits, no network) is the wall, this check
only turns the common escape idioms into a clear error the model can act on.

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import ast
import string

# Modules a program may import; their submodules are preloaded by the child.
ALLOWED_MODULES: frozenset[str] = frozenset(
    {
        "math",
        "statistics",
        "itertools",
        "functools",
        "collections",
        "datetime",
        "json",
        "re",
        "heapq",
        "bisect",
        "dataclasses",
        "typing",
        "operator",
        "string",
        "textwrap",
        "random",
        "decimal",
        "fractions",
    }
)

# Builtins a program may not name at all: they read files, run new code, or turn
# a computed string into an attribute access.
FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "vars",
        "globals",
        "locals",
        "dir",
        "open",
        "exec",
        "eval",
        "compile",
        "input",
        "breakpoint",
        "help",
        "memoryview",
        "exit",
        "quit",
        "copyright",
        "credits",
        "license",
    }
)

# Attribute names that reach frames, code objects or a generic attribute getter.
# They do not start with an underscore, so the dunder rule alone would miss them.
FORBIDDEN_ATTRS: frozenset[str] = frozenset(
    {
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "cr_origin",
        "ag_frame",
        "ag_code",
        "ag_await",
        "tb_frame",
        "tb_next",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "co_code",
        "co_consts",
        "co_names",
        "func_globals",
        "format_map",
        "vformat",
        "get_field",
        "attrgetter",
        "methodcaller",
        "Formatter",
        "mro",
    }
)

# Dunder methods a program may define on its own classes (defining them grants nothing).
DEFINABLE_DUNDERS: frozenset[str] = frozenset(
    {
        "__init__",
        "__post_init__",
        "__repr__",
        "__str__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__len__",
        "__iter__",
        "__next__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__bool__",
        "__add__",
        "__sub__",
        "__mul__",
        "__radd__",
    }
)


class PolicyViolation(Exception):
    """The program uses a construct the sandbox refuses; the message says where."""


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _format_fields(template: str) -> list[str]:
    try:
        return [f for _, f, _, _ in string.Formatter().parse(template) if f]
    except ValueError:
        return ["<malformed>"]


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.problems: list[str] = []

    def _bad(self, node: ast.AST, what: str) -> None:
        self.problems.append(f"line {getattr(node, 'lineno', '?')}: {what}")

    def _check_attr(self, node: ast.AST, attr: str, receiver: ast.AST | None = None) -> None:
        if attr.startswith("_"):
            # super().__init__(...) is the one underscore attribute ordinary code needs.
            if (
                attr in ("__init__", "__post_init__")
                and isinstance(receiver, ast.Call)
                and isinstance(receiver.func, ast.Name)
                and receiver.func.id == "super"
            ):
                return
            self._bad(node, f"attribute '{attr}' is not allowed (no underscore attributes)")
        elif attr in FORBIDDEN_ATTRS:
            self._bad(node, f"attribute '{attr}' is not allowed")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check_attr(node, node.attr, node.value)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if _is_dunder(node.id):
            self._bad(node, f"name '{node.id}' is not allowed")
        elif node.id in FORBIDDEN_NAMES:
            self._bad(node, f"'{node.id}' is not available in the sandbox")
        elif node.id in FORBIDDEN_ATTRS:
            self._bad(node, f"name '{node.id}' is not allowed")
        self.generic_visit(node)

    def _check_import(self, node: ast.AST, module: str) -> None:
        top = module.split(".")[0]
        if top not in ALLOWED_MODULES:
            allowed = ", ".join(sorted(ALLOWED_MODULES))
            self._bad(node, f"import of '{module}' is not allowed (allowed: {allowed})")
        elif any(part.startswith("_") for part in module.split(".")):
            self._bad(node, f"import of private module '{module}' is not allowed")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_import(node, alias.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._bad(node, "relative imports are not allowed")
        else:
            self._check_import(node, node.module or "")
        for alias in node.names:
            if alias.name == "*":
                self._bad(node, "'import *' is not allowed")
            else:
                self._check_attr(node, alias.name)
        self.generic_visit(node)

    def _check_def(self, node: ast.AST, name: str) -> None:
        if _is_dunder(name) and name not in DEFINABLE_DUNDERS:
            self._bad(node, f"defining '{name}' is not allowed")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._check_def(node, node.name)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._check_def(node, node.name)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._check_def(node, node.name)
        for kw in node.keywords:  # metaclass=... reaches type machinery
            self._bad(node, f"class keyword '{kw.arg}' is not allowed")
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        if _is_dunder(node.arg):
            self._bad(node, f"parameter name '{node.arg}' is not allowed")
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg and _is_dunder(node.arg):
            self._bad(node, f"keyword '{node.arg}' is not allowed")
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # case C(gi_frame=x) reads attributes by name.
        for attr in node.kwd_attrs:
            self._check_attr(node, attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            recv = func.value
            if not (isinstance(recv, ast.Constant) and isinstance(recv.value, str)):
                self._bad(node, "str.format is allowed only on a literal template (use an f-string)")
            else:
                for field in _format_fields(recv.value):
                    if "." in field or "__" in field:
                        self._bad(node, f"format field '{{{field}}}' is not allowed")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            if _is_dunder(name):
                self._bad(node, f"name '{name}' is not allowed")
        self.generic_visit(node)

    visit_Nonlocal = visit_Global  # type: ignore[assignment]


def check_tree(tree: ast.AST) -> list[str]:
    """Return the policy problems of a parsed program (empty when it may run)."""
    checker = _Checker()
    checker.visit(tree)
    return checker.problems


def check_source(source: str, filename: str = "<program>") -> ast.Module:
    """Parse and check `source`. Raises SyntaxError or PolicyViolation."""
    tree = ast.parse(source, filename=filename, mode="exec")
    problems = check_tree(tree)
    if problems:
        shown = problems[:10]
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise PolicyViolation("; ".join(shown) + more)
    return tree

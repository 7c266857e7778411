"""What a program gets when it imports an allowlisted module: a view, not the
module itself.

Several allowlisted modules keep other modules as public attributes
(`dataclasses.builtins`, `dataclasses.sys`, `typing.sys`, `datetime.sys`,
`dataclasses.inspect`...), so `import dataclasses` would hand a program the real
`builtins` (with `open`, `exec`, `__import__`) and `sys` (with `modules`, and
through it `os`). A view is a fresh module object holding the module's public
attributes minus every module that is not itself allowlisted (allowlisted ones
are replaced by their own views) and minus every object of the dangerous
modules (`os`/`posix`, `sys`, `builtins`' file and code functions, `io`...).

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

# Modules whose functions never belong in a view, whatever re-exports them.
DANGEROUS_MODULES: frozenset[str] = frozenset(
    {
        "os",
        "posix",
        "nt",
        "sys",
        "builtins",
        "io",
        "_io",
        "importlib",
        "_imp",
        "gc",
        "marshal",
        "pickle",
        "ctypes",
        "_ctypes",
        "subprocess",
        "_posixsubprocess",
        "socket",
        "_socket",
        "signal",
        "_signal",
        "_thread",
        "threading",
        "inspect",
        "code",
        "codeop",
        "pty",
        "shutil",
        "tempfile",
        "resource",
        "fcntl",
        "mmap",
        "select",
        "atexit",
        "faulthandler",
        "tracemalloc",
        "types",
    }
)
# builtins that read files, run code or reach attributes by a computed name.
DANGEROUS_BUILTINS: frozenset[str] = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "getattr",
        "setattr",
        "delattr",
        "vars",
        "globals",
        "locals",
        "dir",
        "input",
        "breakpoint",
        "help",
        "memoryview",
        "exit",
        "quit",
    }
)


def _owner(value: Any) -> str | None:
    """The module a builtin function or method belongs to, when it says."""
    owner = getattr(value, "__self__", None) if isinstance(value, types.BuiltinFunctionType) else None
    if isinstance(owner, types.ModuleType):
        return owner.__name__
    module = getattr(value, "__module__", None) if callable(value) else None
    return module if isinstance(module, str) else None


_DANGEROUS_IDS = frozenset(id(getattr(builtins, name)) for name in DANGEROUS_BUILTINS if hasattr(builtins, name))
_INTERNAL_TYPE_IDS = frozenset(id(v) for v in vars(types).values() if isinstance(v, type))


def is_dangerous(value: Any) -> bool:
    """True for a module outside the allowlist's reach or an object of a dangerous module."""
    if isinstance(value, types.ModuleType):
        return True  # the caller keeps allowlisted modules by replacing them with views
    if id(value) in _DANGEROUS_IDS:
        return True
    if isinstance(value, type) and value.__module__ == "builtins":
        # Plain builtin classes (typing.Text is str) are harmless; the interpreter's
        # internal ones (function, code, frame types, re-exported via `types`) are not.
        return id(value) in _INTERNAL_TYPE_IDS
    owner = _owner(value)
    return owner is not None and owner.split(".")[0] in DANGEROUS_MODULES


def make_views(allowed: dict[str, types.ModuleType]) -> dict[str, types.ModuleType]:
    """A view for each allowlisted module (name -> module); submodules that are
    attributes of a view are views too, so `collections.abc` and
    `from collections import abc` give the same filtered object."""
    views = {name: types.ModuleType(name, getattr(mod, "__doc__", None)) for name, mod in allowed.items()}
    by_id = {id(mod): views[name] for name, mod in allowed.items()}
    for name, mod in allowed.items():
        view = views[name]
        for attr, value in list(vars(mod).items()):
            if attr.startswith("_"):
                continue
            if isinstance(value, types.ModuleType):
                if id(value) in by_id:
                    setattr(view, attr, by_id[id(value)])
                continue
            if is_dangerous(value):
                continue
            setattr(view, attr, value)
    return views

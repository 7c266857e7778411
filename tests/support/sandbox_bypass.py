"""Test-only: run a program with full Python inside the sandbox's OS layers.

The language layer (AST check, restricted builtins, import views, audit hook)
makes errors readable; it is not the boundary (docs/sandbox.md). To test the
boundary on its own, tests run programs with that layer off: every builtin, every
module the child has loaded, `import os`, `sys._getframe`, `gc`... while the
namespaces, chroot, privilege drop, landlock, seccomp and rlimits still apply.

Nothing in the package can do this: no setting, argument, environment variable or
API field turns the language layer off. Only this subclass of the runner's
private session class does, and tests/sandbox/test_sandbox_bypass.py proves that no
module of the package names it, the session class, or the `language` init field.
"""

from __future__ import annotations

from typing import Any

from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import runner


class OsLayersOnlySession(runner._Session):  # noqa: SLF001 - the one test-only door
    language_layer = False


def run_os_layers_only(
    code: str, api: Any = None, limits: SandboxSettings | None = None, *, context: dict[str, Any] | None = None
) -> runner.SandboxResult:
    """`run_program` with the language layer off: the OS layers stand alone."""
    return runner._execute(code, api, limits, context, OsLayersOnlySession)  # noqa: SLF001


def run_with(
    code: str, api: Any, limits: SandboxSettings | None, language: bool, *, context: dict[str, Any] | None = None
) -> runner.SandboxResult:
    """Either the production path (language layer on) or the OS layers alone."""
    if language:
        return runner.run_program(code, api, limits, context=context)
    return run_os_layers_only(code, api, limits, context=context)


LANGUAGE_LAYERS = frozenset({"ast", "builtins", "audit"})


def execute_layers(
    code: str,
    api: Any,
    limits: SandboxSettings | None,
    layers: frozenset[str],
    *,
    context: dict[str, Any] | None = None,
) -> runner.SandboxResult:
    """The older tests' layer sets: all of the language layer (the production path)
    or none of it (the OS layers alone). The OS layers cannot be switched off."""
    layers = frozenset(layers)
    if layers >= LANGUAGE_LAYERS:
        return runner.run_program(code, api, limits, context=context)
    if layers & LANGUAGE_LAYERS or "os" not in layers:
        raise ValueError(
            f"layer set {sorted(layers)}: the language layer is all or nothing, and the OS layers are always on"
        )
    return run_os_layers_only(code, api, limits, context=context)

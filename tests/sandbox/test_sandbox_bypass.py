"""The test-only way to run a program with the language layer off
(tests/support/sandbox_bypass.py) works, keeps every OS layer, and cannot be reached from
production: no module of the package names it, no setting, argument, context or
API field turns the language layer off, and the CLI has no flag for it."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import execute, run_program, runner
from tests.support.sandbox_bypass import run_os_layers_only

PACKAGE = Path(runner.__file__).resolve().parents[1]
LANGUAGE = {"audit_hook", "ast", "builtins"}
OS_LAYERS = {"mountns", "netns", "pidns", "chroot", "no_new_privs", "seccomp", "rlimit_as", "rlimit_nproc"}
ESCAPE = "import os, sys\nresult = [sorted(os.listdir('/')), 'gc' in sys.modules or True]"


def _names_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
        elif isinstance(node, (ast.ImportFrom, ast.Import)):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return names


def _imported_modules(path: Path) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
    return mods


def test_the_bypass_turns_off_the_language_layer_and_keeps_every_os_layer():
    r = run_os_layers_only(ESCAPE)
    assert r.ok, r.error
    iso = set(r.stats["isolation"])
    assert not iso & LANGUAGE, iso
    if r.stats["isolation_mode"] in ("root", "userns"):
        assert OS_LAYERS <= iso, iso
        assert r.result[0] == []  # the chroot: nothing but the run's own empty tmpfs
    # The same program through the production path: refused by the language layer.
    r = run_program(ESCAPE)
    assert not r.ok and r.stats["error_kind"] == "policy", r.error


def test_no_module_of_the_package_reaches_the_bypass():
    door = {
        "_Session",
        "_execute",
        "language_layer",
        "OsLayersOnlySession",
        "run_os_layers_only",
        "sandbox_bypass",
        "tests.support.sandbox_bypass",
    }
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(runner.__file__).resolve():
            continue  # where the session class is defined
        found = _names_in(path) & door
        if path.name == "child.py":
            found -= {"language_layer"}  # not used there; the child reads the init frame
        if any(m == "tests" or m.startswith("tests.") for m in _imported_modules(path)):
            found.add("imports tests")
        if found:
            offenders[str(path.relative_to(PACKAGE))] = sorted(found)
    assert offenders == {}
    # Only the runner builds init frames and only the child reads the "language" field
    # (rpc.py documents the frame).
    readers = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if '"language"' in p.read_text()]
    assert sorted(readers) == ["sandbox/child.py", "sandbox/rpc.py", "sandbox/runner.py"]


def test_no_argument_setting_or_context_turns_the_language_layer_off():
    params = list(inspect.signature(run_program).parameters)
    assert params == ["code", "api", "limits", "context"]
    assert execute is run_program
    assert runner._Session.language_layer is True  # noqa: SLF001
    fields = set(SandboxSettings.model_fields)
    assert not {f for f in fields if any(w in f for w in ("layer", "language", "bypass", "audit", "policy"))}
    with pytest.raises(ValueError):
        SandboxSettings(language=False)  # type: ignore[call-arg]
    r = run_program(ESCAPE, None, SandboxSettings(), context={"language": False, "layers": []})
    assert not r.ok and r.stats["error_kind"] == "policy"


class _ApiWithLanguage:
    def rpc_methods(self):
        return {"language": lambda: False, "layers": lambda: []}


def test_the_api_and_a_prestarted_child_keep_the_language_layer():
    limits = SandboxSettings()
    runner.prestart(limits)
    try:
        assert runner.spare.ready(10)
        r = run_program("import sys\nresult = 1", _ApiWithLanguage(), limits)
        assert not r.ok and r.stats["error_kind"] == "policy"
        assert runner.spare.ready(10)
        r = run_program("result = [api.language(), api.layers()]", _ApiWithLanguage(), limits)
        assert r.ok and r.stats["prestarted"] and LANGUAGE <= set(r.stats["isolation"]), r.stats
    finally:
        runner.stop_prestarting()


def test_the_cli_has_no_flag_for_it():
    help_text = subprocess.run(
        [sys.executable, "-m", "backchannel.sandbox", "run", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    assert "--api" in help_text
    assert not any(w in help_text.lower() for w in ("layer", "language", "bypass", "unsafe"))

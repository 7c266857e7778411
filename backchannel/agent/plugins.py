"""Model providers from outside the package, through pluggy hooks, the way Simon
Willison's `llm` takes its model plugins. The gateway knows no provider by name: before
it calls a chain of models it asks every plugin to make them ready.

Plugins come from:
- the `backchannel` entry-point group (an installed package);
- `BACKCHANNEL_PLUGINS`: comma-separated module names or paths to .py files, loaded in
  this process (how the tests give a CLI or daemon child process their scripted models,
  tests/support/scripted_models.py);
- `register(plugin)`, in-process.

Loaded once per process, the first time a model is called (never on a CLI path that
calls no model).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pluggy

PROJECT = "backchannel"
ENV_VAR = "BACKCHANNEL_PLUGINS"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class ModelHooks:
    @hookspec
    def prepare_models(self, models: list[str]) -> None:
        """Called before the gateway calls any of `models` (litellm model strings, litellm
        already imported). A plugin serving one of them makes it ready (for instance by
        adding a litellm custom provider). A ValueError is a configuration error: its
        message reaches the user as the model's failure."""


_manager: pluggy.PluginManager | None = None


def _load(ref: str) -> Any:
    if ref.endswith(".py") or os.sep in ref:
        path = Path(ref)
        spec = importlib.util.spec_from_file_location(f"backchannel_plugin_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"{ENV_VAR}: cannot load {ref}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # as an import would: dataclasses look their module up there
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(spec.name, None)
            raise
        return module
    return importlib.import_module(ref)


def manager() -> pluggy.PluginManager:
    """The process's plugin manager, with every plugin loaded."""
    global _manager
    if _manager is None:
        pm = pluggy.PluginManager(PROJECT)
        pm.add_hookspecs(ModelHooks)
        pm.load_setuptools_entrypoints(PROJECT)
        for ref in filter(None, (r.strip() for r in os.environ.get(ENV_VAR, "").split(","))):
            try:
                plugin = _load(ref)
            except (ImportError, OSError) as exc:
                raise ValueError(f"{ENV_VAR}: cannot load {ref}: {exc}") from None
            if not pm.is_registered(plugin):
                pm.register(plugin, name=ref)
        _manager = pm
    return _manager


def register(plugin: Any) -> None:
    """Add a plugin in this process (once)."""
    pm = manager()
    if not pm.is_registered(plugin):
        pm.register(plugin)


def prepare_models(models: list[str]) -> None:
    manager().hook.prepare_models(models=list(models))

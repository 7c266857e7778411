"""A scripted model for tests and benches, registered through litellm's
`custom_provider_map`: model string ``scripted/<name>`` answers from the script
registered under `name`, with realistic token counts, and records every call.

A script is a list of entries (or a JSON file holding one), each a dict:
- ``content``: the answer (a dict or list is sent as JSON text);
- ``match``: optional regex searched in the prompt (all message contents joined);
  an entry with a match answers only prompts it matches;
- ``error``: optional HTTP status (429, 500, 400...) to fail with instead;
- ``repeat``: optional; a repeating entry is not used up.
Entries answer in order: the first unused one that applies. When none applies,
the script's `responder(messages) -> str | dict` answers if given, else the
call fails with a 500 ("script exhausted").

This module is a plugin of the gateway (backchannel/agent/plugins.py, pluggy): the
package itself knows no scripted model. In the test process, `register_scripted`
registers it. Other processes (the CLI, the daemon) load it with
``BACKCHANNEL_PLUGINS=<path of this file>`` and their scripts from the file named by
``BACKCHANNEL_SCRIPTED_MODELS``: a JSON object mapping each name to its entries (a
list, or ``{"entries": [...]}``). The plugin reads it the first time a ``scripted/``
model is called, so `[models] extract = "scripted/x"` in config.toml drives a real
`backchannel ingest` or daemon with no key and no network. A name already registered
in the process keeps its in-process script.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backchannel.agent import plugins
from backchannel.agent.models import load_litellm

PROVIDER = "scripted"
ENV_VAR = "BACKCHANNEL_SCRIPTED_MODELS"
Responder = Callable[[list[dict[str, Any]]], "str | dict | list"]


@dataclass
class ScriptedCall:
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    content: str | None  # None when the entry failed the call
    error: int | None = None

    @property
    def prompt(self) -> str:
        return "\n".join(str(m.get("content") or "") for m in self.messages)


@dataclass
class Script:
    entries: list[dict[str, Any]]
    responder: Responder | None = None
    calls: list[ScriptedCall] = field(default_factory=list)
    used: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next_entry(self, prompt: str) -> dict[str, Any] | None:
        with self.lock:
            for i, e in enumerate(self.entries):
                if i in self.used:
                    continue
                if e.get("match") and not re.search(e["match"], prompt, re.S):
                    continue
                if not e.get("repeat"):
                    self.used.add(i)
                return e
        return None

    @property
    def remaining(self) -> int:
        return sum(1 for i, e in enumerate(self.entries) if i not in self.used and not e.get("repeat"))


_SCRIPTS: dict[str, Script] = {}
_handler: Any = None


def _as_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _count_tokens(lt: Any, messages: list[dict[str, Any]] | None, text: str | None = None) -> int:
    try:  # litellm bundles the cl100k tokenizer: realistic counts without a download
        if messages is not None:
            return int(lt.token_counter(model="gpt-4o", messages=messages))
        return int(lt.token_counter(model="gpt-4o", text=text or ""))
    except Exception:  # any tokenizer trouble: the usual 4 characters a token
        chars = sum(len(str(m.get("content") or "")) for m in messages) if messages is not None else len(text or "")
        return max(1, chars // 4)


def _make_handler() -> Any:
    lt = load_litellm()
    from litellm import CustomLLM
    from litellm.llms.custom_llm import CustomLLMError
    from litellm.types.utils import Usage

    class ScriptedLLM(CustomLLM):
        """Answers `scripted/<name>` from the script registered under `name`."""

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            model_response = kwargs["model_response"]
            params = dict(kwargs.get("optional_params") or {})
            script = _SCRIPTS.get(model)
            if script is None:
                raise CustomLLMError(status_code=404, message=f"no script registered as {model!r}")
            call = ScriptedCall(model, [dict(m) for m in messages], params, None)
            script.calls.append(call)
            entry = script.next_entry(call.prompt)
            if entry is None and script.responder is None:
                call.error = 500
                raise CustomLLMError(status_code=500, message=f"script {model!r} exhausted")
            if entry is not None and entry.get("error"):
                call.error = int(entry["error"])
                raise CustomLLMError(status_code=call.error, message=f"scripted failure {call.error}")
            content = _as_text(entry["content"] if entry is not None else script.responder(messages))
            call.content = content
            model_response.choices[0].message.content = content
            model_response.model = f"{PROVIDER}/{model}"
            pt = _count_tokens(lt, messages)
            ct = _count_tokens(lt, None, content)
            model_response.usage = Usage(prompt_tokens=pt, completion_tokens=ct, total_tokens=pt + ct)
            return model_response

    return ScriptedLLM()


def register_scripted(
    script: list[dict[str, Any]] | str | Path | None = None,
    *,
    name: str = "default",
    responder: Responder | None = None,
) -> Script:
    """Register a script as model ``scripted/<name>`` and return it (its `.calls` record every call)."""
    global _handler
    plugins.register(sys.modules[__name__])
    lt = load_litellm()
    if isinstance(script, (str, Path)):
        data = json.loads(Path(script).read_text(encoding="utf-8"))
        script = data["entries"] if isinstance(data, dict) else data
    s = Script(list(script or []), responder)
    _SCRIPTS[name] = s
    if _handler is None:
        _handler = _make_handler()
    if not any(item.get("provider") == PROVIDER for item in lt.custom_provider_map):
        lt.custom_provider_map = [*lt.custom_provider_map, {"provider": PROVIDER, "custom_handler": _handler}]
    return s


def unregister_scripted(name: str = "default") -> None:
    _SCRIPTS.pop(name, None)


_loaded_files: set[str] = set()


def register_from_env(environ: Any = None) -> list[str]:
    """Register the scripts of the file named by BACKCHANNEL_SCRIPTED_MODELS (once
    per process and file); returns the names registered now. Without the variable,
    nothing happens. A bad file is a ValueError naming the file."""
    import os

    path = (os.environ if environ is None else environ).get(ENV_VAR)
    if not path or path in _loaded_files:
        return []
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{ENV_VAR}={path}: cannot load scripts: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f'{ENV_VAR}={path}: expected a JSON object {{"name": [entries...]}}')
    _loaded_files.add(path)
    added = []
    for name, entries in data.items():
        if name in _SCRIPTS:
            continue
        if isinstance(entries, dict):
            entries = entries.get("entries", [])
        if not isinstance(entries, list):
            raise ValueError(f"{ENV_VAR}={path}: script {name!r} must be a list of entries")
        register_scripted(entries, name=name)
        added.append(name)
    return added


@plugins.hookimpl
def prepare_models(models: list[str]) -> None:
    """The gateway is about to call `models`: scripts from BACKCHANNEL_SCRIPTED_MODELS
    when one of them is a scripted model (a bad file is a ValueError naming it)."""
    if any(m.startswith(f"{PROVIDER}/") for m in models):
        register_from_env()


PLUGIN_FILE = str(Path(__file__).resolve())  # what a child process's BACKCHANNEL_PLUGINS names

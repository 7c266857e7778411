"""Secrets come from files: `$CREDENTIALS_DIRECTORY` (systemd LoadCredential) first,
then `<config>/secrets/`. Environment variables are a last resort for API keys that
litellm reads itself. Nothing here is ever logged or handed to the sandbox."""

from __future__ import annotations

import os
from pathlib import Path

from backchannel.config.paths import Paths


def read_secret(paths: Paths, name: str, env_var: str | None = None) -> str | None:
    if "/" in name or name.startswith("."):
        raise ValueError(f"secret name must be a plain file name, got {name!r}")
    for d in paths.secrets_dirs:
        f = Path(d) / name
        if f.is_file():
            return f.read_text(encoding="utf-8").strip()
    if env_var:
        return os.environ.get(env_var) or None
    return None

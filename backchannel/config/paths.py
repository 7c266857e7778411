"""Where backchannel keeps its files.

`BACKCHANNEL_HOME=DIR` puts config, secrets and data under one folder (tests and
demos use it); otherwise XDG locations apply.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paths:
    config_file: Path
    config_dir: Path
    data_dir: Path
    state_dir: Path
    secrets_dirs: tuple[Path, ...]

    @property
    def db_file(self) -> Path:
        return self.data_dir / "backchannel.duckdb"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "daemon.lock"

    @property
    def api_token_file(self) -> Path:
        return self.state_dir / "api.token"

    @property
    def api_socket(self) -> Path:
        return self.state_dir / "api.sock"

    @property
    def user_skills_dir(self) -> Path:
        return self.config_dir / "skills"

    def ensure(self) -> Paths:
        """Create the folders. Data and state hold transcripts, the database and the API
        token: only the owner may enter them, whatever the umask."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        for d in (self.data_dir, self.state_dir):
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
            if d.stat().st_mode & 0o077:
                d.chmod(0o700)
        return self


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def resolve_paths(environ: dict[str, str] | None = None) -> Paths:
    env = os.environ if environ is None else environ
    home = env.get("BACKCHANNEL_HOME")
    creds = env.get("CREDENTIALS_DIRECTORY")
    if home:
        base = Path(home).expanduser().resolve()
        config_dir, data_dir, state_dir = base, base / "data", base / "state"
    else:
        config_dir = _xdg("XDG_CONFIG_HOME", ".config") / "backchannel"
        data_dir = _xdg("XDG_DATA_HOME", ".local/share") / "backchannel"
        state_dir = _xdg("XDG_STATE_HOME", ".local/state") / "backchannel"
    config_file = (
        Path(env["BACKCHANNEL_CONFIG"]).expanduser() if env.get("BACKCHANNEL_CONFIG") else config_dir / "config.toml"
    )
    secrets = [Path(creds)] if creds else []
    secrets.append(config_dir / "secrets")
    return Paths(config_file, config_dir, data_dir, state_dir, tuple(secrets))

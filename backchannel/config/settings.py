"""Settings: config.toml, then `BACKCHANNEL_*` environment (`__` for nesting).

Secrets never live in the TOML file; see `secrets.py`.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from backchannel.config.paths import Paths, resolve_paths
from backchannel.config.sections import (
    ApiSettings,
    CalendarSettings,
    DeliverySettings,
    GateSettings,
    InboxSettings,
    LoggingSettings,
    MailSettings,
    ModelSettings,
    OwnerSettings,
    SandboxSettings,
    ScheduleSettings,
    SignalSettings,
)
from backchannel.config.sections import McpSettings, WebSettings


class ConfigError(Exception):
    """A bad config file or value; the message names the key and the file."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="BACKCHANNEL_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_assignment=True,
    )

    owner: OwnerSettings = Field(default_factory=OwnerSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    inbox: InboxSettings = Field(default_factory=InboxSettings)
    schedule: ScheduleSettings = Field(default_factory=ScheduleSettings)
    calendar: CalendarSettings = Field(default_factory=CalendarSettings)
    signals: SignalSettings = Field(default_factory=SignalSettings)
    gate: GateSettings = Field(default_factory=GateSettings)
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    mail: MailSettings = Field(default_factory=MailSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The file is passed in as init kwargs; environment wins over it.
        return env_settings, init_settings


# Environment variables that configure where things live, not settings fields.
_LOCATION_VARS = {"BACKCHANNEL_HOME", "BACKCHANNEL_CONFIG"}


def _check_env_tables(environ: Any) -> None:
    """`BACKCHANNEL_TABLE__KEY` must name a known table: a typo in the table name would
    otherwise be ignored silently (pydantic-settings only reads the fields it knows)."""
    tables = set(Settings.model_fields)
    for name in environ:
        if name.startswith("BACKCHANNEL_") and "__" in name:
            table = name.removeprefix("BACKCHANNEL_").split("__", 1)[0].lower()
            if table not in tables:
                raise ConfigError(f"unknown table '{table}' in environment variable {name} "
                                  f"(known: {', '.join(sorted(tables))})")


def _suggest(loc: tuple[Any, ...]) -> str:
    """' (did you mean 'quiet_period_s'?)' for a misspelt key, from the table's real fields."""
    import difflib

    model: Any = Settings
    for part in loc[:-1]:
        field = getattr(model, "model_fields", {}).get(part)
        model = getattr(field, "annotation", None) if field is not None else None
        if model is None or not hasattr(model, "model_fields"):
            return ""
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _describe(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


MAX_CONFIG_BYTES = 1_000_000


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML at `path`; only a plain file is read (a FIFO would block every command)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise ConfigError(f"{path}: not a regular file; the config must be a TOML file")
            if st.st_size > MAX_CONFIG_BYTES:
                raise ConfigError(f"{path}: {st.st_size} bytes is too large for a config file")
            return tomllib.loads(fh.read(MAX_CONFIG_BYTES).decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None


def load_settings(paths: Paths | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Load settings for `paths` (default: from the environment).

    Raises ConfigError naming the key and the file for unknown keys and bad values.
    """
    paths = paths or resolve_paths(environ)
    data = _read_toml(paths.config_file) if paths.config_file.exists() else {}
    saved = None
    if environ is not None:
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(environ)
    try:
        _check_env_tables(os.environ)
        return Settings(**data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = _describe(err["loc"])
            env_name = "BACKCHANNEL_" + key.replace(".", "__").upper()
            where = f"environment variable {env_name}" if env_name in os.environ else f"{paths.config_file}"
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown key '{key}' in {where}{_suggest(err['loc'])}")
            else:
                problems.append(f"bad value for '{key}' in {where}: {err['msg']}")
        raise ConfigError("; ".join(problems)) from None
    finally:
        if saved is not None:
            os.environ.clear()
            os.environ.update(saved)

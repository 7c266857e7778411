"""Settings: config.toml, then `BACKCHANNEL_*` environment (`__` for nesting).

Secrets never live in the TOML file; see `secrets.py`.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from backchannel.config.edges import EdgeSettings
from backchannel.config.paths import Paths, resolve_paths
from backchannel.config.privacy import ConsentSettings, RetentionSettings, ScopeSettings
from backchannel.config.sections import (
    ApiSettings,
    CalendarSettings,
    DeliverySettings,
    GateSettings,
    InboxSettings,
    LoggingSettings,
    MailSettings,
    McpSettings,
    ModelSettings,
    OwnerSettings,
    SandboxSettings,
    ScheduleSettings,
    SignalSettings,
    WebSettings,
)


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
    consent: ConsentSettings = Field(default_factory=ConsentSettings)
    scope: ScopeSettings = Field(default_factory=ScopeSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    edges: EdgeSettings = Field(default_factory=EdgeSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Only what is passed in: load_settings merges the file and the environment it was
        # given (never os.environ behind its back), so Settings(...) and model_validate()
        # in code and tests mean exactly their arguments.
        return (init_settings,)


# Environment variables that configure where things live, not settings fields.
_LOCATION_VARS = {"BACKCHANNEL_HOME", "BACKCHANNEL_CONFIG"}


class _EnvironSource(EnvSettingsSource):
    """`BACKCHANNEL_*` variables read from the mapping given, not from os.environ:
    load_settings(environ=...) then never touches the process's environment."""

    def __init__(self, environ: Mapping[str, str]):
        self._environ = dict(environ)
        super().__init__(Settings)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # pydantic-settings' own hook (it reads os.environ there); names are not case-sensitive.
        return {k.lower(): v for k, v in self._environ.items()}


def _check_env_tables(environ: Mapping[str, str]) -> None:
    """`BACKCHANNEL_TABLE__KEY` must name a known table: a typo in the table name would
    otherwise be ignored silently (pydantic-settings only reads the fields it knows)."""
    tables = set(Settings.model_fields)
    for name in environ:
        if name.startswith("BACKCHANNEL_") and "__" in name:
            table = name.removeprefix("BACKCHANNEL_").split("__", 1)[0].lower()
            if table not in tables:
                raise ConfigError(
                    f"config error in environment variable {name}: unknown table '{table}' "
                    f"(known: {', '.join(sorted(tables))})"
                )


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
    """('delivery', 'channels', 1) -> 'delivery.channels[1]'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problem(err: Any) -> str:
    """One validation error in the user's words, its key first."""
    key = _describe(err["loc"])
    if err["type"] == "extra_forbidden":
        return f"unknown key '{key}'{_suggest(err['loc'])}"
    if err["type"] == "literal_error":
        choices = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))
        return f"{key}: {err['input']!r} is not one of {', '.join(choices)}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] != "value_error" and not isinstance(err.get("input"), (dict, list)):
        msg += f", got {err['input']!r}"
    return f"{key}: {msg}"


def _origin(loc: tuple[Any, ...], from_env: dict[str, Any]) -> str | None:
    """The environment variable that gave the value at `loc`, or None (it came from the file)."""
    node: Any = from_env
    names = []
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            break
        names.append(str(part))
        node = node[part]
        if not isinstance(node, dict):
            return "BACKCHANNEL_" + "__".join(names).upper()
    return None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`, tables merged key by key (the environment wins over the file)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


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


def load_settings(paths: Paths | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Load settings for `paths` (default: from the environment): the TOML file, then the
    `BACKCHANNEL_*` variables of `environ` (default: os.environ, read, never changed) over it.

    Raises ConfigError naming the file (or the variable) and each bad key:
    "config error in /x/config.toml: delivery.channels[1]: 'emial' is not one of email, ...".
    """
    environ = dict(os.environ if environ is None else environ)
    paths = paths or resolve_paths(environ)
    data = _read_toml(paths.config_file) if paths.config_file.exists() else {}
    _check_env_tables(environ)
    try:
        from_env = _EnvironSource(environ)()
    except SettingsError as exc:  # e.g. a list variable that is not JSON
        raise ConfigError(f"config error in the environment: {exc}") from None
    try:
        return Settings.model_validate(_merge(data, from_env))
    except ValidationError as exc:
        by_origin: dict[str, list[str]] = {}
        for err in exc.errors():
            env_name = _origin(err["loc"], from_env)
            where = f"environment variable {env_name}" if env_name else str(paths.config_file)
            by_origin.setdefault(where, []).append(_problem(err))
        raise ConfigError(
            "; ".join(f"config error in {where}: {'; '.join(problems)}" for where, problems in by_origin.items())
        ) from None

"""What every command shares: settings, paths, opening the store, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import click

from backchannel.config import ConfigError, Paths, Settings, load_settings, resolve_paths


class UserError(Exception):
    """An error the user can fix; printed without a traceback."""

    exit_code = 1


@dataclass
class Context:
    paths: Paths
    settings: Settings


def load_context() -> Context:
    paths = resolve_paths()
    try:
        settings = load_settings(paths)
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    try:
        return Context(paths.ensure(), settings)
    except OSError as exc:  # e.g. BACKCHANNEL_HOME names a file, or a folder we may not write
        where = f" {exc.filename}" if exc.filename else ""
        raise UserError(
            f"cannot create the data folders:{where}: {exc.strerror or exc} "
            "(check BACKCHANNEL_HOME, or XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_STATE_HOME)"
        ) from None


@contextmanager
def open_store(ctx: Context, read_only: bool = False) -> Iterator[Any]:
    from backchannel.memory import Store, StoreError, entities

    try:
        store = Store.open(ctx.paths.db_file, read_only=read_only)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    try:
        if not read_only:
            entities.ensure_owner(store, ctx.settings.owner.name, ctx.settings.owner.aliases)
        yield store
    finally:
        store.close()


def json_default(o: Any) -> Any:
    if isinstance(o, (datetime, date)):
        return o.isoformat()
    return str(o)


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, default=json_default, ensure_ascii=False, indent=None))


def is_tty() -> bool:
    return sys.stdout.isatty()


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 assertion', '3 assertions' (`many` for irregular plurals: 'entity'/'entities')."""
    return f"{n} {word if n == 1 else (many or word + 's')}"

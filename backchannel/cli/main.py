"""The `backchannel` command. Subcommands load lazily so `backchannel --help` and
fast commands never pay for litellm, torch or the daemon."""

from __future__ import annotations

import importlib
import sys

import click

# name -> "module:attribute"; each module keeps its own imports.
COMMANDS: dict[str, str] = {
    "init": "backchannel.cli.setup_cmds:init",
    "demo": "backchannel.cli.demo_cmd:demo",
    "doctor": "backchannel.cli.doctor_cmd:doctor",
    "export": "backchannel.cli.privacy_cmds:export",
    "forget": "backchannel.cli.privacy_cmds:forget",
    "ingest": "backchannel.cli.ingest_cmd:ingest",
    "sources": "backchannel.cli.memory_cmds:sources",
    "show": "backchannel.cli.daemon_cmds:show",  # proposals (P-7); other refs go to memory_cmds.show
    "assertions": "backchannel.cli.memory_cmds:assertions",
    "entities": "backchannel.cli.model_cmds:entities",
    "usage": "backchannel.cli.model_cmds:usage",
    "run": "backchannel.cli.daemon_cmds:run",
    "status": "backchannel.cli.daemon_cmds:status",
    "proposals": "backchannel.cli.daemon_cmds:proposals",
    "trace": "backchannel.cli.daemon_cmds:trace",
    "wake": "backchannel.cli.daemon_cmds:wake",
    "service": "backchannel.cli.daemon_cmds:service",
    "dismiss": "backchannel.cli.feedback_cmds:dismiss",
    "accept": "backchannel.cli.feedback_cmds:accept",
    "snooze": "backchannel.cli.feedback_cmds:snooze",
    "approve": "backchannel.cli.feedback_cmds:approve",
    "stats": "backchannel.cli.feedback_cmds:stats",
    "ask": "backchannel.cli.ask_cmds:ask",
    "skills": "backchannel.cli.ask_cmds:skills",
    "import": "backchannel.cli.ask_cmds:import_group",
    "web": "backchannel.cli.web_cmds:web",  # issue 13
    "mcp": "backchannel.cli.web_cmds:mcp",  # issue 13
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            close = difflib.get_close_matches(name, COMMANDS, n=1)
            if close:  # `backchannel sourcs` -> "Did you mean 'sources'?"
                ctx.fail(f"No such command {name!r}. Did you mean {close[0]!r}?")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="backchannel")
def cli() -> None:
    """backchannel turns meeting transcripts into a memory of dated, attributed
    assertions and proposes actions on its own.

    Data lives under XDG paths, or under $BACKCHANNEL_HOME when set.
    """


def _warnings_with_their_fields() -> None:
    """Library warnings in a command ("calendar problem" during `wake calendar`) keep their
    fields (the error itself); Python's last-resort handler would print the bare message.
    `backchannel run` replaces this with the daemon's own logging."""
    import logging

    from backchannel.core.logging import LOGGER_NAME, HumanFormatter

    logger = logging.getLogger(LOGGER_NAME)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(HumanFormatter())
        logger.addHandler(handler)


def main() -> None:
    from backchannel.cli.common import UserError

    _warnings_with_their_fields()
    try:
        cli(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)

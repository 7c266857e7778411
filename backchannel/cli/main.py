"""The `backchannel` command. Subcommands load lazily so `backchannel --help` and
fast commands never pay for litellm, torch or the daemon."""

from __future__ import annotations

import sys
from types import ModuleType

import click

# name -> (module in backchannel.cli, attribute); each module keeps its own imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("setup_cmds", "init"),
    "demo": ("demo_cmd", "demo"),
    "doctor": ("doctor_cmd", "doctor"),
    "export": ("privacy_cmds", "export"),
    "forget": ("privacy_cmds", "forget"),
    "consent": ("consent_cmds", "consent"),
    "retention": ("consent_cmds", "retention"),
    "correct": ("rectify_cmds", "correct"),
    "retract": ("rectify_cmds", "retract"),
    "audit": ("rectify_cmds", "audit"),
    "ingest": ("ingest_cmd", "ingest"),
    "sources": ("memory_cmds", "sources"),
    "show": ("daemon_cmds", "show"),  # proposals (P-7); other refs go to memory_cmds.show
    "assertions": ("memory_cmds", "assertions"),
    "entities": ("model_cmds", "entities"),
    "usage": ("model_cmds", "usage"),
    "run": ("daemon_cmds", "run"),
    "status": ("daemon_cmds", "status"),
    "proposals": ("daemon_cmds", "proposals"),
    "trace": ("daemon_cmds", "trace"),
    "replay": ("replay_cmd", "replay"),
    "wake": ("daemon_cmds", "wake"),
    "service": ("daemon_cmds", "service"),
    "dismiss": ("feedback_cmds", "dismiss"),
    "accept": ("feedback_cmds", "accept"),
    "snooze": ("feedback_cmds", "snooze"),
    "approve": ("feedback_cmds", "approve"),
    "stats": ("feedback_cmds", "stats"),
    "ask": ("ask_cmds", "ask"),
    "skills": ("ask_cmds", "skills"),
    "import": ("ask_cmds", "import_group"),
    "web": ("web_cmds", "web"),  # the local web app
    "mcp": ("web_cmds", "mcp"),  # the MCP server
}


def _command_module(name: str) -> ModuleType:
    """Plain imports, so readers and lint-imports see them; each runs on first use only."""
    module: ModuleType
    if name == "ask_cmds":
        from backchannel.cli import ask_cmds as module
    elif name == "consent_cmds":
        from backchannel.cli import consent_cmds as module
    elif name == "daemon_cmds":
        from backchannel.cli import daemon_cmds as module
    elif name == "demo_cmd":
        from backchannel.cli import demo_cmd as module
    elif name == "doctor_cmd":
        from backchannel.cli import doctor_cmd as module
    elif name == "feedback_cmds":
        from backchannel.cli import feedback_cmds as module
    elif name == "ingest_cmd":
        from backchannel.cli import ingest_cmd as module
    elif name == "memory_cmds":
        from backchannel.cli import memory_cmds as module
    elif name == "model_cmds":
        from backchannel.cli import model_cmds as module
    elif name == "privacy_cmds":
        from backchannel.cli import privacy_cmds as module
    elif name == "replay_cmd":
        from backchannel.cli import replay_cmd as module
    elif name == "rectify_cmds":
        from backchannel.cli import rectify_cmds as module
    elif name == "setup_cmds":
        from backchannel.cli import setup_cmds as module
    elif name == "web_cmds":
        from backchannel.cli import web_cmds as module
    else:
        raise KeyError(name)
    return module


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target
        command: click.Command = getattr(_command_module(module), attr)
        return command

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

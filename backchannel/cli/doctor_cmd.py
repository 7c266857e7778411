"""`backchannel doctor`."""

from __future__ import annotations

import sys

import click

from backchannel.cli.common import echo_json

_MARK = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


@click.command()
@click.option("--deep", is_flag=True, help="Also load the embedding model (a few seconds).")
@click.option("--json", "json_output", is_flag=True, help="Print the checks as JSON.")
def doctor(deep: bool, json_output: bool) -> None:
    """Check config, secrets' permissions, the daemon and its API, the database, models,
    the sandbox's isolation, the inbox and delivery. Contacts nothing outside this machine.
    Exits 1 when a check fails."""
    from backchannel.cli.api_client import connect
    from backchannel.config import resolve_paths
    from backchannel.doctor import environment_notes, run_checks

    progress = None
    if deep and not json_output:  # --deep takes seconds: say what it is doing, on stderr

        def progress(words: str) -> None:
            click.echo(f"checking {words}...", err=True)

    checks = run_checks(resolve_paths().ensure(), connect_api=connect, deep=deep, progress=progress)
    failed = any(c.status == "fail" for c in checks)
    if json_output:
        echo_json({"ok": not failed, "checks": [c.to_dict() for c in checks], "notes": environment_notes()})
    else:
        for c in checks:
            click.echo(f"{_MARK[c.status]}  {c.name:<11} {c.detail}")
        for n in environment_notes():
            click.echo(f"note  {n}")
    if failed:
        sys.exit(1)

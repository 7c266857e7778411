"""`backchannel demo`: the whole story on a sample corpus, offline, in a scratch home."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import click

from backchannel.cli.common import echo_json


@click.command()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Scratch folder to use (default: a new temporary folder).",
)
@click.option("--json", "json_output", is_flag=True, help="Print the report as JSON.")
def demo(home: Path | None, json_output: bool) -> None:
    """Run the whole loop offline on a sample corpus in a scratch home.

    Ingests four meetings, then a calendar wake (you see Marc on Thursday) and a
    signal wake (Acme publishes a tender), and prints the proposal that results,
    with its evidence. Nothing leaves the machine.
    """
    from backchannel.demo.scenario import run_demo

    started = time.monotonic()
    home = Path(home or tempfile.mkdtemp(prefix="backchannel-demo-")).resolve()
    home.mkdir(parents=True, exist_ok=True)
    report = run_demo(home)
    seconds = round(time.monotonic() - started, 1)
    if json_output:
        echo_json(dict(report.to_dict(), seconds=seconds))
        return
    from backchannel.cli.daemon_cmds import render_proposal

    click.echo(f"scratch home: {home}\n")
    click.echo("1. ingest")
    for o in report.ingested:
        extra = f" ({o['error']})" if o.get("error") else ""
        click.echo(f"   {o['status']:<9}{Path(o['path']).name}: {o.get('assertions', 0)} assertions{extra}")
    from backchannel.cli.memory_cmds import render_assertion_line

    click.echo(f"   learned {report.assertions} dated, attributed assertions:")
    for a in report.learned:
        click.echo(f"     {render_assertion_line(a)}")
    click.echo("")
    click.echo("2. wakes")
    for r in report.runs:
        made = f" -> {', '.join(r['proposals'])}" if r["proposals"] else ""
        why = f" ({r['reason']})" if r.get("reason") and not r["proposals"] else ""
        click.echo(f"   {r['wake']:<13} run {r['run_id']}: {r['status']}{made}{why}")
    click.echo("")
    if not report.proposals:
        click.echo("3. no proposal: nothing crossed the gate (see `backchannel trace`)")
    for p in report.proposals:
        click.echo("3. proposal\n")
        render_proposal(p)
        click.echo("")
    # Commands that can be pasted as they are (the old "a | b | c" read like a shell pipeline).
    click.echo(
        f"done in {seconds} s. Explore it:\n  export BACKCHANNEL_HOME={home}\n"
        "  backchannel proposals; backchannel show P-1; backchannel trace P-1"
    )

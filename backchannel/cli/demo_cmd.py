"""`backchannel demo`: the whole story on a sample corpus, offline, in a scratch home."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import click

from backchannel.cli.common import echo_json

_CONFIG = """\
[owner]
name = "{owner}"
aliases = ["Alex"]
email = "alex@example.org"

[models]
extract = "offline"
sweep = "offline"
draft = "offline"

[gate]
quiet_hours = ""
"""


@click.command()
@click.option("--home", type=click.Path(file_okay=False, path_type=Path),
              help="Scratch folder to use (default: a new temporary folder).")
@click.option("--json", "json_output", is_flag=True, help="Print what was learned as JSON.")
def demo(home: Path | None, json_output: bool) -> None:
    """Run the sample story offline in a scratch home: ingest four meetings and show
    what was learned (who said what about whom, and when)."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.demo import OWNER, corpus_files
    from backchannel.extractors.ingest import ingest_file
    from backchannel.memory import Store
    from backchannel.memory import entities as entity_repo
    from backchannel.ops import OpEnv
    from backchannel.ops.memory_ops import assertions

    started = time.monotonic()
    home = Path(home or tempfile.mkdtemp(prefix="backchannel-demo-")).resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["BACKCHANNEL_HOME"] = str(home)
    paths = resolve_paths().ensure()
    if not paths.config_file.exists():
        paths.config_file.write_text(_CONFIG.format(owner=OWNER), encoding="utf-8")
    settings = load_settings(paths)
    store = Store.open(paths.db_file)
    try:
        entity_repo.ensure_owner(store, settings.owner.name, settings.owner.aliases)
        outcomes = [ingest_file(store, settings, f) for f in corpus_files()]
        env = OpEnv(store=store, settings=settings, paths=paths)
        learned = assertions(env, include_superseded=True)
    finally:
        store.close()
    report = {
        "home": str(home),
        "ingested": [o.to_dict() for o in outcomes],
        "assertions": learned,
        "seconds": round(time.monotonic() - started, 2),
    }
    if json_output:
        echo_json(report)
        return
    from backchannel.cli.memory_cmds import render_assertion

    click.echo(f"scratch home: {home}")
    for o in outcomes:
        click.echo(f"  {o.status:<9}{Path(o.path).name}: {o.assertions} assertions" + (f" ({o.error})" if o.error else ""))
    click.echo(f"\nwhat was learned ({len(learned)} assertions):")
    for a in learned:
        click.echo(render_assertion(a))
    click.echo(f"\ndone in {report['seconds']} s. Explore it: BACKCHANNEL_HOME={home} backchannel assertions --about 'Sophie Martin'")

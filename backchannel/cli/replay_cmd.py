"""`backchannel replay RUN_ID`: a past wake again, on memory as it was, and what differs."""

from __future__ import annotations

from typing import Any

import click

from backchannel.cli.common import echo_json, load_context


def _value(v: Any) -> str:
    text = " ".join(str(v).split())  # a draft's lines on one line
    return text if len(text) <= 120 else text[:117] + "..."


def _render(r: dict[str, Any]) -> None:
    rec, rep = r["recorded"], r["replayed"]
    click.echo(f"replay of run {r['run_id']} ({r['wake_kind']}), memory as of {r['as_of']}, offline")
    click.echo(
        f"recorded: {len(rec['candidates'])} candidate(s), "
        f"{sum(1 for c in rec['candidates'] if c.get('proposal'))} proposed; "
        f"replayed: {len(rep['candidates'])} candidate(s), "
        f"{sum(1 for c in rep['candidates'] if c['decision'] == 'proposed')} proposed"
    )
    changed = r.get("settings_changed")
    if changed:
        click.echo(
            "settings changed since the run: "
            + ", ".join(f"{k} {v['then']!r} -> {v['today']!r}" for k, v in changed.items())
        )
    if r["same"]:
        click.echo("no difference: today's code and settings decide as the run did")
    for d in r["differences"]:
        if "run" in d:
            click.echo(f"run status: {d['run']['recorded']} -> {d['run']['replayed']}")
        elif "only" in d:
            click.echo(f"{d['dedupe_key']}: only {d['only']} ({d['decision']}, score {d['score']})")
        else:
            click.echo(f"{d['dedupe_key']}:")
            for field, v in d["fields"].items():
                click.echo(f"  {field}: {_value(v['recorded'])} -> {_value(v['replayed'])}")
    for limit in r.get("limits") or []:
        click.echo(f"note: {limit}")


@click.command()
@click.argument("run_id")
@click.option("--json", "json_output", is_flag=True, help="Print the recorded and replayed outcomes as JSON.")
def replay(run_id: str, json_output: bool) -> None:
    """Run a past wake (RUN_ID, from `backchannel status`) again against memory as it was
    known when the run started, with today's code and settings, offline, writing nothing
    to the store; show what would differ: candidates, scores, vetoes, gate decisions, drafts."""
    from backchannel.cli.client import call

    r = call(load_context(), "replay", {"run_id": run_id})
    if json_output:
        echo_json(r)
        return
    _render(r)

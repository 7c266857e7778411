"""`backchannel correct`, `retract` and `audit`: rectification and the access record."""

from __future__ import annotations

import click

from backchannel.cli.common import echo_json, load_context, plural


@click.command()
@click.argument("assertion_id", type=int)
@click.option("--object", "obj", metavar="NAME", help="The right object (a person or organisation).")
@click.option("--literal", metavar="TEXT", help="The right literal (a title, a promise).")
@click.option("--qualifier", metavar="TEXT", help="The right qualifier (a title for works_at); '' clears it.")
@click.option("--predicate", metavar="NAME", help="The right predicate.")
@click.option("--subject", metavar="NAME", help="The right subject.")
@click.option("--valid-from", metavar="DATE", help="When it started being true (YYYY-MM-DD; '' clears it).")
@click.option("--valid-to", metavar="DATE", help="When it stopped being true (YYYY-MM-DD; '' clears it).")
@click.option("--reason", help="Why: kept in the assertion's history.")
@click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")
def correct(
    assertion_id: int,
    obj: str | None,
    literal: str | None,
    qualifier: str | None,
    predicate: str | None,
    subject: str | None,
    valid_from: str | None,
    valid_to: str | None,
    reason: str | None,
    json_output: bool,
) -> None:
    """Correct ASSERTION_ID: a new assertion with the corrected fields and you as its
    source supersedes it (the old one stays in the history); the judge, `ask` and the
    skills use the correction from now on. Example:
    backchannel correct 12 --qualifier CTO --reason "she is CTO, not CIO"."""
    from backchannel.cli.client import call

    out = call(
        load_context(),
        "correct_assertion",
        {
            "assertion_id": assertion_id,
            "object": obj,
            "literal": literal,
            "qualifier": qualifier,
            "predicate": predicate,
            "subject": subject,
            "valid_from": valid_from,
            "valid_to": valid_to,
            "reason": reason,
            "via": "cli",
        },
    )
    if json_output:
        echo_json(out)
    else:
        click.echo(f"#{out['corrected']} superseded by #{out['new_id']} ({', '.join(out['fields'])})")


@click.command()
@click.argument("assertion_id", type=int)
@click.option("--reason", required=True, help="Why it is wrong: kept in the assertion's history.")
@click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")
def retract(assertion_id: int, reason: str, json_output: bool) -> None:
    """Retract ASSERTION_ID: it stops being a current fact (superseded with no successor);
    the row and the reason stay in its history."""
    from backchannel.cli.client import call

    out = call(load_context(), "retract_assertion", {"assertion_id": assertion_id, "reason": reason, "via": "cli"})
    if json_output:
        echo_json(out)
    else:
        click.echo(f"#{out['retracted']} retracted: {out['reason']}")


@click.command()
@click.argument("name")
@click.option("--json", "json_output", is_flag=True, help="Print the record as JSON.")
def audit(name: str, json_output: bool) -> None:
    """Every run, program, model call, MCP request and export that touched facts about
    NAME, and what of it crossed to a model or a channel."""
    from backchannel.cli.client import call

    out = call(load_context(), "audit", {"ref": name})
    if json_output:
        echo_json(out)
        return
    e = out["entity"]
    click.echo(
        f"{e['name']} ({e['kind']} {e['id']}): {plural(out['assertions'], 'assertion')}, "
        f"{plural(len(out['runs']), 'run')}, {plural(out['model_calls'], 'model call')}, "
        f"{plural(out['excerpts_to_models'], 'excerpt')} about them sent to models"
    )
    for r in out["runs"]:
        click.echo(
            f"  run {r['run_id']} {r.get('wake_kind', '?')} {str(r.get('started_at') or '')[:19]}  "
            f"programs: {', '.join(r['programs']) or '-'}  proposals: "
            f"{', '.join(p['id'] for p in r['proposals']) or '-'}"
        )
        for c in r["model_calls"]:
            click.echo(
                f"    model call #{c['id']} {c['role']} {c['model']} {c['outcome']}: "
                f"{plural(c['excerpts_about_them'], 'excerpt')} about them"
            )
    for c in out["channels"]:
        click.echo(f"  channel {c['channel']} {c['status']} proposal {c['proposal_id']}")
    for a in out["access"]:
        click.echo(f"  {a['kind']} {str(a['accessed_at'])[:19]} {a['detail'] or ''}")

"""Commands for model spend (`usage`) and entity merges (`entities merge|split`).

`entities` with no subcommand lists entities (the listing lives in memory_cmds).
"""

from __future__ import annotations

import json

import click

from backchannel.cli.common import echo_json, load_context
from backchannel.core.vocabulary import ENTITY_KINDS


@click.command()
@click.option("--days", default=7, show_default=True, help="How many days back, today included (UTC days).")
@click.option("--json", "json_output", is_flag=True, help="Print the figures as JSON.")
def usage(days: int, json_output: bool) -> None:
    """Model spend by day and role: calls, tokens, cost, failures and budget stops."""
    from backchannel.cli.client import call

    data = call(load_context(), "usage", {"days": days})
    if json_output:
        echo_json(data)
        return
    rows = data["rows"]
    if not rows:
        click.echo(f"no model calls since {data['since']}")
    else:
        click.echo(
            f"{'day':<10}  {'role':<8} {'calls':>6} {'failed':>6} {'stops':>5} {'prompt':>9}"
            f" {'completion':>10} {'cost':>9}  models"
        )
        for r in rows:
            cost = "unknown" if r["cost_usd"] is None else f"${r['cost_usd']:.4f}"
            click.echo(
                f"{str(r['day']):<10}  {r['role']:<8} {r['calls']:>6} {r['failures']:>6}"
                f" {r['budget_stops']:>5} {r['prompt_tokens']:>9} {r['completion_tokens']:>10}"
                f" {cost:>9}  {', '.join(r['models'] or [])}"
            )
        t = data["totals"]
        total_cost = "unknown" if t["cost_usd"] is None else f"${t['cost_usd']:.4f}"
        click.echo(
            f"{'total':<10}  {'':<8} {t['calls']:>6} {'':>6} {'':>5} {t['prompt_tokens']:>9}"
            f" {t['completion_tokens']:>10} {total_cost:>9}"
        )
    d = data["today"]
    limit_t = d["per_day_tokens"] if d["per_day_tokens"] is not None else "no limit"
    limit_c = f"${d['per_day_cost_usd']:.2f}" if d["per_day_cost_usd"] is not None else "no limit"
    click.echo(f"today: {d['tokens']} tokens of {limit_t}, ${d['cost_usd']:.4f} of {limit_c}")


@click.group(invoke_without_command=True)
@click.option("--kind", type=click.Choice(ENTITY_KINDS), help="Only this kind.")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list (see docs/cli-json.md).")
@click.pass_context
def entities(ctx: click.Context, kind: str | None, json_output: bool) -> None:
    """List people and organisations with their aliases; merge or split them.

    \b
    backchannel entities                 list
    backchannel entities merge A B       merge B into A (ids or names)
    backchannel entities split ID        undo: the merged entity's id, or M<merge id>
    backchannel entities duplicates      pairs that may be one (acronym, titles, spelling)
    """
    ctx.ensure_object(dict)
    ctx.obj["json"] = json_output
    if ctx.invoked_subcommand is None:
        from backchannel.cli.memory_cmds import list_entities

        list_entities(json_output, kind)
        if not json_output:
            from backchannel.cli.client import call

            pairs = call(load_context(), "entity_duplicates", {"limit": 10})
            if pairs:
                click.echo("")
                click.echo("possible duplicates (never merged without you; `backchannel entities duplicates`):")
                for p in pairs:
                    click.echo(_pair_line(p))


def _pair_line(p: dict) -> str:
    return (
        f"  {p['keep']['id']} {p['keep']['name']}  ~  {p['other']['id']} {p['other']['name']}"
        f"  ({p['why']}: {p['detail']})\n      merge: backchannel entities merge {p['keep']['id']} "
        f"{p['other']['id']}"
    )


@entities.command()
@click.option("--json", "json_output", is_flag=True, help="Print the pairs as JSON.")
@click.pass_context
def duplicates(ctx: click.Context, json_output: bool) -> None:
    """People and organisations that may be one: an acronym and its full name, one name with
    and without titles ("Ms. Elizabeth May", "Elizabeth May"), or a few letters apart.
    Each pair comes with the merge that would join them; nothing is merged without you."""
    from backchannel.cli.client import call

    pairs = call(load_context(), "entity_duplicates", {})
    if json_output or (ctx.obj or {}).get("json"):
        echo_json(pairs)
        return
    for p in pairs:
        click.echo(_pair_line(p))
    if not pairs:
        click.echo("no possible duplicates")


@entities.command()
@click.argument("keep")
@click.argument("other")
@click.option("--reason", help="Why they are the same (kept in the merge log).")
@click.option("--json", "json_output", is_flag=True, help="Print the merge as JSON.")
@click.pass_context
def merge(ctx: click.Context, keep: str, other: str, reason: str | None, json_output: bool) -> None:
    """Merge entity OTHER into KEEP; aliases, assertions and utterances move to KEEP."""
    from backchannel.cli.client import call

    data = call(load_context(), "entities_merge", {"keep": keep, "merge": other, "reason": reason})
    if json_output or (ctx.obj or {}).get("json"):
        echo_json(data)
        return
    moved = json.loads(data["moved"]) if isinstance(data["moved"], str) else data["moved"]
    n = len(moved["subject"]) + len(moved["object"]) + len(moved["speaker"])
    click.echo(
        f"merged {data['merged_id']} into {data['kept_id']} as {data['merge_id']}: "
        f"{len(moved['aliases'])} aliases, {n} assertion references, {len(moved['utterances'])} utterances "
        f"moved (undo: backchannel entities split {data['merge_id']})"
    )


@entities.command()
@click.argument("ref")
@click.option("--json", "json_output", is_flag=True, help="Print the split as JSON.")
@click.pass_context
def split(ctx: click.Context, ref: str, json_output: bool) -> None:
    """Undo a merge: REF is the merged entity's id, or the merge id (M3)."""
    from backchannel.cli.client import call

    data = call(load_context(), "entities_split", {"ref": ref})
    if json_output or (ctx.obj or {}).get("json"):
        echo_json(data)
        return
    click.echo(f"split {data['merge_id']}: entity {data['restored_id']} is separate from {data['kept_id']} again")

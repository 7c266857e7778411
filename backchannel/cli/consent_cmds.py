"""`backchannel consent withdraw|list` and `backchannel retention sweep`."""

from __future__ import annotations

import click

from backchannel.cli.common import UserError, echo_json, load_context, plural


@click.group()
def consent() -> None:
    """Who may not be captured: withdraw a person's consent, list withdrawals."""


@consent.command("withdraw")
@click.argument("name")
@click.option("--alias", "aliases", multiple=True, help="Another name or address of theirs (repeatable).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "json_output", is_flag=True, help="Print the report as JSON.")
def withdraw(name: str, aliases: tuple[str, ...], yes: bool, json_output: bool) -> None:
    """From now on nothing NAME says is stored and no assertion is made about them from
    any source; what memory holds about them is erased as `forget` does, and the database
    file rewritten. Only hashes of their names are kept (to recognise them). The daemon
    must be stopped first."""
    from backchannel.cli.common import open_store
    from backchannel.daemon.lockfile import lock_held
    from backchannel.memory import erasure
    from backchannel.ops import OpEnv, OpError
    from backchannel.ops.privacy_ops import withdraw_consent

    ctx = load_context()
    if lock_held(ctx.paths.lock_file):
        raise UserError(
            "the daemon is running: stop it first (a withdrawal erases and rewrites the database "
            "file), then run `backchannel consent withdraw` again"
        )
    if not yes and not click.confirm(f"Withdraw {name} and erase everything held about them?", default=False):
        raise click.exceptions.Abort()
    with open_store(ctx) as store:
        try:
            report = withdraw_consent(OpEnv(store=store, settings=ctx.settings, paths=ctx.paths), name, list(aliases))
        except OpError as exc:
            raise UserError(str(exc)) from None
    erasure.rewrite(ctx.paths.db_file)
    if json_output:
        echo_json(report)
        return
    c = report["counts"]
    click.echo(
        f"consent withdrawn ({report['label']}); erased {plural(c.get('assertions', 0), 'assertion')}, "
        f"{plural(c.get('utterances', 0), 'utterance')}; database file rewritten"
    )


@consent.command("list")
@click.option("--json", "json_output", is_flag=True, help="Print the list as JSON.")
def list_withdrawals(json_output: bool) -> None:
    """Withdrawals (initials only: the names are kept as hashes), the names listed in
    [consent] withdrawn, and the sources whose capture was limited."""
    from backchannel.cli.client import call

    data = call(load_context(), "consent_list", {})
    if json_output:
        echo_json(data)
        return
    for w in data["withdrawn"]:
        click.echo(
            f"{w['person']}  {w['label']}  {plural(w['names'], 'name')} (hashed)  since "
            f"{str(w['withdrawn_at'])[:10]} via {w['via']}"
        )
    for n in data["configured"]:
        click.echo(f"config     {n}")
    if not data["withdrawn"] and not data["configured"]:
        click.echo("nobody has withdrawn consent")
    for s in data["sources"]:
        click.echo(f"  source {s['id']}  {s['consent']}  {s['title']}")


@click.group()
def retention() -> None:
    """The retention periods of [retention]: what is erased when."""


@retention.command("sweep")
@click.option("--json", "json_output", is_flag=True, help="Print the run as JSON.")
def retention_sweep(json_output: bool) -> None:
    """Erase what the [retention] periods say is due (raw utterances, old assertions,
    proposals, runs), as a durable run, then rewrite the database file so no erased byte
    remains in it or its WAL. Through the running daemon if there is one."""
    from backchannel.cli.client import call
    from backchannel.daemon.lockfile import lock_held
    from backchannel.memory import erasure

    ctx = load_context()
    out = call(ctx, "retention_sweep", {})
    if out.get("ran_in_process") and not lock_held(ctx.paths.lock_file):
        out["rewritten"] = erasure.complete_pending_rewrite(ctx.paths.db_file)
    if json_output:
        echo_json(out)
        return
    if not out.get("ran_in_process"):
        click.echo(f"retention sweep queued in the daemon ({out.get('key')}); it rewrites the file when done")
        return
    if out.get("status") != "done":
        raise UserError(f"retention sweep {out.get('status')}: {out.get('reason')}")
    counts = (out.get("detail") or {}).get("retention", {}).get("counts", {})
    words = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()) or "nothing configured to expire"
    click.echo(
        f"retention sweep {out['run_id']}{' (resumed)' if out.get('resumed_run') else ''}: {words}; "
        f"database file {'rewritten' if out.get('rewritten') else 'unchanged'}"
    )

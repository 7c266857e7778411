"""`backchannel export NAME` and `backchannel forget NAME`."""

from __future__ import annotations

from pathlib import Path

import click

from backchannel.cli.common import UserError, echo_json, load_context


@click.command()
@click.argument("name", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write the JSON here instead of standard output (with --all: the folder to write).",
)
@click.option("--compact", is_flag=True, help="One JSON line instead of indented JSON.")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="The whole memory: memory.jsonl (the import format) and Parquet per table, in the -o folder.",
)
def export(name: str | None, output: Path | None, compact: bool, everything: bool) -> None:
    """Everything held about a person or organisation (by name, alias or id), as JSON:
    aliases, assertions with their evidence, what they said, proposals about them.
    Indented, to be read; --compact writes one line. With --all, the whole memory in open
    formats (`backchannel import all` reads it back)."""
    import json

    if everything:
        _export_all(output)
        return
    if not name:
        raise UserError("name a person or organisation, or use --all -o FOLDER")

    from backchannel.cli.client import call
    from backchannel.cli.common import json_default
    from backchannel.core.secretfile import write_secret

    data = call(load_context(), "export_entity", {"ref": name})
    if output is None:
        if compact:
            echo_json(data)
        else:
            click.echo(json.dumps(data, default=json_default, ensure_ascii=False, indent=2))
        return
    text = json.dumps(data, default=json_default, ensure_ascii=False, indent=None if compact else 2) + "\n"
    try:
        # 0600 from the first byte: this is everything held about a person.
        write_secret(output, text)
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
    click.echo(f"wrote {output}: {len(data['assertions'])} assertions, {len(data['utterances'])} utterances")


@click.command()
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option("--json", "json_output", is_flag=True, help="Print the report as JSON.")
def forget(name: str, yes: bool, dry_run: bool, json_output: bool) -> None:
    """Erase a person or organisation (by name, alias or id): their assertions, what they
    said, proposals about them, and their name wherever it was written down; then rewrite
    the database file so no deleted byte remains. The daemon must be stopped first
    (not for --dry-run, which changes nothing)."""
    from backchannel.cli.common import open_store
    from backchannel.daemon.lockfile import lock_held
    from backchannel.memory import erasure
    from backchannel.ops import OpEnv, OpError
    from backchannel.ops.privacy_ops import forget_plan

    ctx = load_context()
    if dry_run:
        from backchannel.cli.client import call

        _show_plan(call(ctx, "forget_plan", {"ref": name}), json_output, dry_run=True)
        return
    if lock_held(ctx.paths.lock_file):
        raise UserError(
            "the daemon is running: stop it first (forgetting rewrites the database file), "
            "e.g. `systemctl --user stop backchannel`, then run `backchannel forget` again"
        )
    with open_store(ctx) as store:
        try:
            preview = forget_plan(OpEnv(store=store, settings=ctx.settings, paths=ctx.paths), name)
        except OpError as exc:
            raise UserError(str(exc)) from None
        _show_plan(preview, json_output, dry_run=False)
        if not yes and not click.confirm("Erase all of it? This cannot be undone", default=False):
            raise click.exceptions.Abort()
        report = erasure.forget(store, preview["entity"]["id"])
    erasure.rewrite(ctx.paths.db_file)
    if json_output:
        echo_json({"forgotten": preview["entity"]["name"], **report.to_dict()})
    else:
        click.echo(
            f"forgotten; names redacted in {report.counts.get('utterances_redacted', 0)} other utterances; "
            "database file rewritten"
        )


def _show_plan(preview: dict, json_output: bool, *, dry_run: bool) -> None:
    """The counts line (text), or with --dry-run --json the whole plan."""
    if json_output:
        if dry_run:
            echo_json({"dry_run": True, **preview})
        return
    e, c = preview["entity"], preview["counts"]
    click.echo(
        f"{e['name']} ({e['kind']} {e['id']}): {c['assertions']} assertions, "
        f"{c['utterances']} utterances they spoke, {c['proposals']} proposals"
    )


def _export_all(output: Path | None) -> None:
    from backchannel.cli.client import call

    if output is None or (output.exists() and not output.is_dir()):
        raise UserError("--all writes a folder: give it with -o FOLDER")
    out = call(load_context(), "export_all", {"directory": str(output.resolve())})
    lines = ", ".join(f"{n} {k}" for k, n in out["lines"].items())
    click.echo(f"wrote {out['jsonl']} ({lines}) and {len(out['parquet'])} Parquet tables in {output}/parquet")

"""`backchannel init`."""

from __future__ import annotations

import click

from backchannel.cli.common import echo_json, load_context, open_store

_STARTER = """\
# backchannel configuration. Every key is documented in config/backchannel.example.toml
# of the source tree; unknown keys are errors. Secrets never go here: put them in
# files under {secrets} (or systemd's $CREDENTIALS_DIRECTORY).

[owner]
name = {name!r}
aliases = {aliases!r}
{email_line}
[models]
extract = "offline"
sweep = "offline"
draft = "offline"
"""


@click.command()
@click.option("--name", help="Your name, as people say it in meetings.")
@click.option("--alias", "aliases", multiple=True, help="Other names you go by (repeatable).")
@click.option("--email", help="Where proposals are sent.")
@click.option("--json", "json_output", is_flag=True, help="Print what was set up as JSON.")
def init(name: str | None, aliases: tuple[str, ...], email: str | None, json_output: bool) -> None:
    """Create the config file, data folders and database (safe to run again)."""
    ctx = load_context()
    created_config = False
    if not ctx.paths.config_file.exists():
        ctx.paths.config_file.parent.mkdir(parents=True, exist_ok=True)
        text = _STARTER.format(
            secrets=ctx.paths.secrets_dirs[-1], name=name or ctx.settings.owner.name, aliases=list(aliases),
            email_line=f"email = {email!r}\n" if email else "",
        ).replace("'", '"')
        ctx.paths.config_file.write_text(text, encoding="utf-8")
        created_config = True
        ctx = load_context()
    inbox = ctx.settings.inbox.path or ctx.paths.data_dir / "inbox"
    for d in (inbox, inbox.parent / "processed", inbox.parent / "failed", ctx.paths.secrets_dirs[-1]):
        d.mkdir(parents=True, exist_ok=True)
    ctx.paths.secrets_dirs[-1].chmod(0o700)
    with open_store(ctx) as store:
        migrations = store.applied_migrations()
    info = {
        "config": str(ctx.paths.config_file), "config_created": created_config,
        "database": str(ctx.paths.db_file), "migrations": migrations, "inbox": str(inbox),
        "owner": ctx.settings.owner.name,
    }
    if json_output:
        echo_json(info)
        return
    click.echo(f"config:   {info['config']}" + ("  (created)" if created_config else ""))
    click.echo(f"database: {info['database']}  ({len(migrations)} migrations)")
    click.echo(f"inbox:    {info['inbox']}")
    click.echo(f"owner:    {info['owner']}")

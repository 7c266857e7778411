"""`backchannel init`."""

from __future__ import annotations

import json

import click

from backchannel.cli.common import echo_json, load_context, open_store

_STARTER = """\
# backchannel configuration. Every key is documented in config/backchannel.example.toml
# of the source tree; unknown keys are errors. Secrets never go here: put them in
# files under {secrets} (or systemd's $CREDENTIALS_DIRECTORY).

[owner]
name = {name}
aliases = {aliases}
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
        # JSON strings are valid TOML basic strings: quotes, backslashes and accents in a name survive.
        text = _STARTER.format(
            secrets=ctx.paths.secrets_dirs[-1],
            name=json.dumps(name or ctx.settings.owner.name, ensure_ascii=False),
            aliases=json.dumps(list(aliases), ensure_ascii=False),
            email_line=f"email = {json.dumps(email, ensure_ascii=False)}\n" if email else "",
        )
        ctx.paths.config_file.write_text(text, encoding="utf-8")
        created_config = True
        ctx = load_context()
    else:
        # Re-running init never rewrites the user's config; say so rather than drop the options silently.
        owner = ctx.settings.owner
        ignored = [
            f"--{k} {v!r}"
            for k, v, now in (("name", name, owner.name), ("email", email, owner.email))
            if v and v != now
        ] + [f"--alias {a!r}" for a in aliases if a not in owner.aliases]
        if ignored:
            click.echo(
                f"note: {ctx.paths.config_file} already exists and was left as it is: "
                f"{', '.join(ignored)} not applied; edit [owner] there.",
                err=True,
            )
    inbox = ctx.settings.inbox.path or ctx.paths.data_dir / "inbox"
    for d in (inbox, inbox.parent / "processed", inbox.parent / "failed", ctx.paths.secrets_dirs[-1]):
        d.mkdir(parents=True, exist_ok=True)
    ctx.paths.secrets_dirs[-1].chmod(0o700)
    with open_store(ctx) as store:
        migrations = store.applied_migrations()
    info = {
        "config": str(ctx.paths.config_file),
        "config_created": created_config,
        "database": str(ctx.paths.db_file),
        "migrations": migrations,
        "inbox": str(inbox),
        "owner": ctx.settings.owner.name,
    }
    if json_output:
        echo_json(info)
        return
    click.echo(f"config:   {info['config']}" + ("  (created)" if created_config else ""))
    click.echo(f"database: {info['database']}  ({len(migrations)} migrations)")
    click.echo(f"inbox:    {info['inbox']}")
    click.echo(f"owner:    {info['owner']}")
    if info["owner"] == "Me" and not ctx.settings.owner.aliases:
        click.echo(
            f"note: set your name (as people say it in meetings) under [owner] in {info['config']}, "
            "so that what you say is attributed to you.",
            err=True,
        )

"""`backchannel web` (the local web app) and `backchannel mcp` (the MCP server)."""

from __future__ import annotations

import click

from backchannel.cli.common import UserError, load_context


@click.command()
@click.option("--open", "open_browser", is_flag=True, help="Open the browser on a one-time login link.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Port to serve on (default: [web] port; 0 picks a free one).",
)
def web(open_browser: bool, port: int | None) -> None:
    """The local web app: review and answer proposals (accept, dismiss, snooze, approve
    the exact draft), browse memory (people, organisations, what was said, merges), and
    see why a proposal exists or a wake stayed silent.

    When the daemon serves the app ([web] enabled), this prints a one-time login link to
    it; otherwise it serves the app itself on loopback until interrupted (through the
    daemon's API when a daemon runs, else on the database directly). Every login link
    works once and expires after [web] login_link_minutes."""
    from backchannel.cli.client import web_operations
    from backchannel.daemon.api import ensure_token
    from backchannel.web.app import build_app
    from backchannel.web.auth import login_link
    from backchannel.web.server import base_url, bind, daemon_web_url, serve_here

    ctx = load_context()

    def announce(base: str) -> None:
        link = login_link(base, ctx.paths.state_dir)
        click.echo(f"backchannel web app at {base}")
        click.echo(f"one-time login link (valid {ctx.settings.web.login_link_minutes:g} min): {link}")
        if open_browser:
            import webbrowser

            if not webbrowser.open(link):
                click.echo("(no browser could be opened; open the link yourself)", err=True)

    served = daemon_web_url(ctx.paths.state_dir) if port is None else None
    if served is not None:
        announce(served)
        return
    port = ctx.settings.web.port if port is None else port
    try:
        click.echo("serving until interrupted (Ctrl-C to stop)", err=True)
        sock = bind(ctx.settings.web.host, port)
        app = build_app(web_operations(ctx), ctx.settings, ctx.paths, ensure_token(ctx.paths))
        announce(base_url(sock))
        serve_here(app, sock)
    except OSError as exc:
        raise UserError(
            f"cannot serve on {ctx.settings.web.host}:{port}: {exc.strerror or exc} (choose another with --port)"
        ) from None


@click.command()
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on loopback instead of stdio.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="With --http: the port (default: [mcp] port; 0 picks a free one).",
)
def mcp(http: bool, port: int | None) -> None:
    """An MCP server for the assistant you already use: tools to search memory, read
    everything about a person or organisation with its evidence, ask a question, list
    proposals (and give feedback when [mcp] allow_feedback = true); resources for
    proposals and entities. Nothing it exposes can send a message.

    Speaks MCP over stdio (for a client that starts it), or with --http over streamable
    HTTP on loopback, where each request must carry the API token as a bearer token."""
    from backchannel.cli.client import web_operations
    from backchannel.web.mcp_server import serve_http, serve_stdio

    ctx = load_context()
    if port is not None and not http:
        raise UserError("--port is for --http; over stdio the client starts `backchannel mcp` itself")
    if not http:
        serve_stdio(ctx, web_operations(ctx))
        return
    try:
        from backchannel.daemon.api import ensure_token

        serve_http(
            ctx,
            web_operations(ctx),
            ctx.settings.mcp.host,
            ctx.settings.mcp.port if port is None else port,
            ensure_token(ctx.paths),
        )
    except OSError as exc:
        raise UserError(f"cannot serve MCP on {ctx.settings.mcp.host}: {exc.strerror or exc}") from None

"""Run an operation: through the running daemon's local API when there is one,
else in-process on the store (DuckDB allows one writer, so never both)."""

from __future__ import annotations

from typing import Any

from backchannel.cli.common import Context, UserError, open_store


def call(ctx: Context, name: str, args: dict[str, Any] | None = None, *, write: bool = True) -> Any:
    from backchannel.ops import OpEnv, OpError, invoke

    remote = _daemon_client(ctx)
    if remote is not None:
        return remote.call(name, args or {})
    with open_store(ctx, read_only=False) as store:
        try:
            return invoke(OpEnv(store=store, settings=ctx.settings, paths=ctx.paths), name, args)
        except OpError as exc:
            raise UserError(str(exc)) from None


def _daemon_client(ctx: Context) -> Any:
    """A client for the running daemon's local API, or None when no daemon runs."""
    from backchannel.cli.api_client import connect

    return connect(ctx.paths)


def web_operations(ctx: Context) -> Any:
    """`call` for the web app and the MCP server served from this process
    (`backchannel web`, `backchannel mcp`): a refusal becomes the page's or tool's message."""
    from backchannel.web.bridge import OpFailed, ThreadedOperations

    def run(name: str, args: dict[str, Any]) -> Any:
        try:
            return call(ctx, name, args)
        except UserError as exc:
            raise OpFailed(str(exc)) from None

    return ThreadedOperations(run)

"""Operations on the governed edges: the MCP server's record of each call it served
(the server may run in another process than the writer's). `trace` shows the rows."""

from __future__ import annotations

from typing import Any

from backchannel.config.edges import MCP_OPERATIONS
from backchannel.memory import edges
from backchannel.ops import OpEnv, OpError, op

OUTCOMES = ("ok", "failed", "stopped")


@op(read=False)
def record_mcp_edge(
    env: OpEnv,
    operation: str,
    outcome: str,
    reason: str | None = None,
    excerpts: int = 0,
    bytes: int = 0,
    run_id: str | None = None,
) -> dict[str, Any]:  # noqa: A002 - the column's name
    """One MCP call across the MCP edge (web/mcp_edge.py writes it); only the operations
    the MCP server calls, only the mcp edge."""
    if operation not in MCP_OPERATIONS:
        raise OpError(f"{operation!r} is not an operation the MCP server calls")
    if outcome not in OUTCOMES:
        raise OpError(f"outcome must be one of {', '.join(OUTCOMES)}")
    if run_id is not None and not env.store.scalar("SELECT 1 FROM runs WHERE id = ?", [run_id]):
        run_id = None
    lim = env.settings.edges.mcp.may_reach
    c = edges.Crossing(
        "mcp",
        "mcp client",
        operation,
        list(lim) if lim is not None else list(MCP_OPERATIONS),
        [] if outcome == "stopped" else [operation],
        run_id=run_id,
        excerpts=max(0, int(excerpts)),
        bytes=max(0, int(bytes)),
        evidence={"runs": [run_id]} if run_id else {},
        outcome=outcome,
        reason=reason,
    )
    return {"id": edges.record(env.store.con, c)}

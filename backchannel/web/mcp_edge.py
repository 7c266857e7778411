"""The MCP -> operations edge: what an MCP client may reach and carry away, checked by
the server around every operation its tools and resources call (`[edges.mcp]`:
may_reach before the call, max_excerpts and max_bytes on the answer before it goes
back). A stop is a tool error naming the limit; every call, answered, failed or
stopped, is one `edges` row (operation `record_mcp_edge`, so the row is written by
the one writer wherever the server runs)."""

from __future__ import annotations

from typing import Any

from backchannel.memory import edges
from backchannel.web.bridge import OpFailed


async def _record(
    ops: Any, operation: str, outcome: str, reason: str | None, excerpts: int, size: int, run_id: str | None
) -> None:
    await ops.call(
        "record_mcp_edge",
        {
            "operation": operation,
            "outcome": outcome,
            "reason": reason,
            "excerpts": excerpts,
            "bytes": size,
            "run_id": run_id,
        },
    )


async def cross(ops: Any, settings: Any, operation: str, args: dict[str, Any]) -> Any:
    """Run `operation` for the MCP client across the edge; raises OpFailed when refused."""
    lim = settings.edges.mcp
    reason = edges.outside("mcp", [operation], lim.may_reach)
    if reason:
        await _record(ops, operation, "stopped", reason, 0, 0, None)
        raise OpFailed(f"edge mcp: {reason}")
    try:
        result = await ops.call(operation, args)
    except OpFailed as exc:
        await _record(ops, operation, "failed", str(exc), 0, 0, None)
        raise
    excerpts, size = edges.count_quotes(result), edges.json_bytes(result)
    reason = edges.over("mcp", "max_excerpts", excerpts, lim.max_excerpts, "evidence quotes") or edges.over(
        "mcp", "max_bytes", size, lim.max_bytes, "answer bytes"
    )
    run_id = result.get("run_id") if isinstance(result, dict) and isinstance(result.get("run_id"), str) else None
    await _record(ops, operation, "stopped" if reason else "ok", reason, excerpts, size, run_id)
    if reason:
        raise OpFailed(f"edge mcp: {reason}")
    return result

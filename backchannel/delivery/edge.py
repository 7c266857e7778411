"""The agent -> channel edge: what the outbox may send where, checked after the message
is rendered and before it goes out (`[edges.delivery]`: may_reach, max_excerpts,
max_bytes). A stop blocks the delivery (outbox status `blocked`, the reason as its
`last_error`, shown by `status` and `trace`); nothing is sent. Every attempt, sent,
failed or stopped, is one `edges` row per proposal it carried, under the proposal's run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from backchannel.memory import edges
from backchannel.memory.edges import Crossing

if TYPE_CHECKING:
    from backchannel.config import Settings
    from backchannel.memory.store import Store

ACTION = "action"


def _excerpts(channel: str, proposals: list[dict[str, Any]]) -> int:
    """Quotes the message carries: a notification cites its proposals' evidence; an approved
    action carries only the message the owner approved."""
    if channel == ACTION:
        return 0
    return sum(1 for p in proposals for e in (p.get("evidence") or []) if isinstance(e, dict) and e.get("quote"))


def _may_reach(settings: Settings) -> list[str]:
    lim = settings.edges.delivery.may_reach
    return list(lim) if lim is not None else [*settings.delivery.channels, ACTION]


class Stopped(Exception):
    """The edge refused the delivery; the outbox blocks it with this reason."""


def cross(
    store: Store,
    settings: Settings,
    channel: str,
    group: list[dict[str, Any]],
    proposals: list[dict[str, Any]],
    payload_bytes: int,
    send: Callable[[], str],
) -> str:
    """Check the limits, then `send()`; record the crossing whatever happens. Raises
    Stopped (the limit's reason) before sending, or what `send` raised."""
    lim = settings.edges.delivery
    excerpts = _excerpts(channel, proposals)
    reason = (
        edges.outside("delivery", [channel], lim.may_reach)
        or edges.over("delivery", "max_excerpts", excerpts, lim.max_excerpts, "evidence quotes")
        or edges.over("delivery", "max_bytes", payload_bytes, lim.max_bytes, "message bytes")
    )

    def write(outcome: str, why: str | None) -> None:
        for p in proposals:
            c = Crossing(
                "delivery",
                "outbox",
                channel,
                _may_reach(settings),
                [] if outcome == "stopped" else [channel],
                run_id=p.get("run_id"),
                excerpts=excerpts,
                bytes=payload_bytes,
                spent={"attempts": max(int(r.get("attempts") or 0) for r in group)},
                evidence={
                    "outbox": [int(r["id"]) for r in group],
                    "assertions": [
                        int(e["assertion_id"])
                        for e in (p.get("evidence") or [])
                        if isinstance(e, dict) and e.get("assertion_id") is not None
                    ],
                },
                dedupe_key=p.get("dedupe_key"),
                proposal_id=p.get("id"),
                outcome=outcome,
                reason=why,
            )
            edges.record(store.con, c)

    if reason:
        write("stopped", reason)
        raise Stopped(f"edge delivery: {reason}")
    try:
        detail = send()
    except Exception as exc:
        write("failed", f"{type(exc).__name__}: {exc}"[:500])
        raise
    write("ok", None)
    return detail

"""The agent -> model edge, governed inside the gateway (agent/models.py calls it).

Before a call: the configured chain is cut to `[edges.ROLE] may_reach` (the primary model
outside it stops the call), and the excerpts and prompt bytes about to cross are checked
against `max_excerpts` and `max_bytes`. Before every attempt (retries and the repair
included): the role's tokens in this run, from `model_calls`, plus the estimate of the
attempt, against `max_tokens`. After: one `edges` row for the whole `complete()`, with
the `model_calls` ids it made as its evidence. A stop is recorded (the edge row, and a
`budget_stopped` model_calls row for a token stop) and raised as `EdgeStopped`: not a
GatewayError, so no caller's fallback (a template draft, the prepared skills) turns a
limit into a quieter path; the run ends with the reason.
"""

from __future__ import annotations

from typing import Any

from backchannel.memory import edges
from backchannel.memory.edges import Crossing, EdgeStopped

ACTORS = {"sweep": "sweeper", "draft": "drafter", "judge": "judge", "extract": "extractor", "resolve": "resolver"}


def _prompt_bytes(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content") or "").encode()) for m in messages)


class ModelEdgeCall:
    """One `Gateway.complete()` seen as an edge crossing."""

    def __init__(
        self,
        gateway: Any,
        role: str,
        messages: list[dict[str, Any]],
        run_id: str | None,
        evidence_ids: list[int] | None,
        chain: list[str],
    ):
        self.gateway = gateway
        self.role = role
        self.run_id = run_id
        self.limits = gateway.settings.edges.model(role)
        self.first_call = gateway.last_call_id()
        self.evidence_ids = [int(i) for i in (evidence_ids or [])]
        self.crossing = Crossing(
            role,
            ACTORS.get(role, role),
            chain[0],
            edges.reachable(chain, self.limits.may_reach),
            [],
            run_id=run_id,
            excerpts=len(self.evidence_ids),
            bytes=_prompt_bytes(messages),
            evidence={"assertions": self.evidence_ids} if self.evidence_ids else {},
        )
        self.chain = self.crossing.may_reach

    def admit(self) -> list[str]:
        """The models this call may try, in order; raises EdgeStopped (recorded) when none or too much."""
        lim, role = self.limits, self.role
        reason = (
            edges.outside(role, [self.crossing.target], lim.may_reach)
            or edges.over(role, "max_excerpts", self.crossing.excerpts, lim.max_excerpts, "evidence excerpts")
            or edges.over(role, "max_bytes", self.crossing.bytes, lim.max_bytes, "prompt bytes")
        )
        if reason:
            self._stop(reason)
        return self.chain

    def check_tokens(self, next_tokens: int) -> None:
        """Before an attempt: the role's tokens in this run so far plus `next_tokens`."""
        limit = self.limits.max_tokens
        if limit is None:
            return
        with self.gateway._audit() as con:
            if self.run_id is not None:
                used = con.execute(
                    "SELECT coalesce(sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)), 0)"
                    " FROM model_calls WHERE run_id = ? AND role = ? AND outcome <> 'budget_stopped'",
                    [self.run_id, self.role],
                ).fetchone()[0]
            else:  # no run: this call's own attempts
                used = con.execute(
                    "SELECT coalesce(sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)), 0)"
                    " FROM model_calls WHERE id > ? AND role = ? AND outcome <> 'budget_stopped'",
                    [self.first_call, self.role],
                ).fetchone()[0]
        reason = edges.over(
            self.role,
            "max_tokens",
            int(used) + int(next_tokens),
            limit,
            f"tokens ({int(used)} used + ~{int(next_tokens)} next)",
        )
        if reason:
            self.gateway._record(
                run_id=self.run_id,
                role=self.role,
                model=self.crossing.target,
                attempt=1,
                repair=False,
                outcome="budget_stopped",
                phash="edge",
                error=reason,
            )
            self._stop(reason)

    def _stop(self, reason: str) -> None:
        self.finish(None, "stopped", reason)
        raise EdgeStopped(self.role, reason)

    def finish(self, model: str | None, outcome: str = "ok", reason: str | None = None) -> None:
        """Write the edge row: the model_calls this call made are its evidence and its spend."""
        c = self.crossing
        with self.gateway._audit() as con:
            rows = con.execute(
                "SELECT id, model, coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0), cost_usd, latency_ms"
                " FROM model_calls WHERE id > ? AND role = ? AND run_id IS NOT DISTINCT FROM ? ORDER BY id",
                [self.first_call, self.role, self.run_id],
            ).fetchall()
            c.target = model or c.target
            c.reached = list(dict.fromkeys(str(r[1]) for r in rows if r[4] is not None))
            c.tokens = sum(int(r[2]) for r in rows)
            costs = [float(r[3]) for r in rows if r[3] is not None]
            c.spent = {
                "calls": sum(1 for r in rows if r[4] is not None),
                "cost_usd": round(sum(costs), 6) if costs else None,
                "latency_ms": sum(int(r[4] or 0) for r in rows),
            }
            if rows:
                c.evidence["model_calls"] = [int(r[0]) for r in rows]
            c.outcome, c.reason = outcome, reason
            edges.record(con, c)

"""Budgets: what model calls have spent (from the `model_calls` table) against
the per-run and per-day limits in `[models.budget]`.

The gateway asks `check()` before every call. A limit of None is no limit.
Days are UTC days. Unknown costs (NULL) count as zero for the cost limits: a
provider without a price (a local model) is limited by tokens only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from backchannel.config.sections import BudgetSettings
from backchannel.memory.store import Store, utcnow


@dataclass(frozen=True)
class Spend:
    calls: int
    tokens: int
    cost_usd: float


def spent(store: Store, *, run_id: str | None = None, since: datetime | None = None, con: Any = None) -> Spend:
    """Calls, tokens and cost recorded for one run, or since a time (naive UTC).
    `con`: the connection to read with (default: the store's)."""
    where: list[str] = ["outcome <> 'budget_stopped'"]
    params: list[Any] = []
    if run_id is not None:
        where.append("run_id = ?")
        params.append(run_id)
    if since is not None:
        where.append("created_at >= ?")
        params.append(since)
    row = (
        (con or store.con)
        .execute(
            "SELECT count(*), coalesce(sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)), 0),"
            " coalesce(sum(cost_usd), 0.0) FROM model_calls WHERE " + " AND ".join(where),
            params,
        )
        .fetchone()
    ) or (0, 0, 0.0)
    return Spend(int(row[0]), int(row[1]), float(row[2]))


def day_start(now: datetime | None = None) -> datetime:
    now = now or utcnow()
    return datetime.combine(now.date(), time.min)


def check(
    store: Store,
    budget: BudgetSettings,
    run_id: str | None,
    *,
    next_tokens: int = 0,
    now: datetime | None = None,
    con: Any = None,
) -> str | None:
    """The reason the next call may not be made, or None when it may.

    `next_tokens` is the estimated prompt size of the call about to be made: a
    call that would cross a token limit is refused before it is sent.
    """
    checks: list[tuple[str, Spend, int | None, float | None]] = []
    if run_id is not None:
        checks.append(("run", spent(store, run_id=run_id, con=con), budget.per_run_tokens, budget.per_run_cost_usd))
    checks.append(("day", spent(store, since=day_start(now), con=con), budget.per_day_tokens, budget.per_day_cost_usd))
    for scope, s, max_tokens, max_cost in checks:
        if max_tokens is not None and s.tokens + next_tokens > max_tokens:
            return f"per-{scope} token budget spent: {s.tokens} used + ~{next_tokens} needed > {max_tokens}"
        if max_cost is not None and s.cost_usd >= max_cost:
            return f"per-{scope} cost budget spent: ${s.cost_usd:.4f} of ${max_cost:.2f}"
    return None


def next_reset(now: datetime | None = None) -> datetime:
    """When the per-day budget comes back (next UTC midnight)."""
    return day_start(now) + timedelta(days=1)

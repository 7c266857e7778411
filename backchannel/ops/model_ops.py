"""Operations for model accountability and entity merges: `usage`,
`entities_merge`, `entities_split` (see backchannel.ops for how they run)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from backchannel.ops import OpEnv, OpError, op


@op(read=True)
def usage(env: OpEnv, days: int = 7) -> dict[str, Any]:
    """Model spend by UTC day and role over the last `days` days, with today's
    spend against the per-day budget."""
    from backchannel.agent import budget
    from backchannel.memory.store import utcnow

    if days < 1:
        raise OpError("--days must be at least 1")
    since = budget.day_start(utcnow()) - timedelta(days=days - 1)
    rows = env.store.query(
        """SELECT CAST(created_at AS DATE) AS day, role,
                  count(*) FILTER (WHERE outcome <> 'budget_stopped') AS calls,
                  count(*) FILTER (WHERE outcome NOT IN ('ok', 'budget_stopped')) AS failures,
                  count(*) FILTER (WHERE outcome = 'budget_stopped') AS budget_stops,
                  coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
                  coalesce(sum(completion_tokens), 0) AS completion_tokens,
                  sum(cost_usd) AS cost_usd,
                  count(*) FILTER (WHERE cost_usd IS NULL AND outcome = 'ok') AS unpriced_calls,
                  list(DISTINCT model ORDER BY model) AS models
           FROM model_calls WHERE created_at >= ? GROUP BY ALL ORDER BY day, role""",
        [since],
    )
    today = budget.spent(env.store, since=budget.day_start())
    b = env.settings.models.budget
    return {
        "since": since.date(),
        "rows": rows,
        "totals": {
            "calls": sum(r["calls"] for r in rows),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
            "completion_tokens": sum(r["completion_tokens"] for r in rows),
            # None when no call had a known price: unknown is not free
            "cost_usd": (
                sum(r["cost_usd"] for r in rows if r["cost_usd"] is not None)
                if any(r["cost_usd"] is not None for r in rows)
                else None
            ),
        },
        "today": {
            "calls": today.calls,
            "tokens": today.tokens,
            "cost_usd": today.cost_usd,
            "per_day_tokens": b.per_day_tokens,
            "per_day_cost_usd": b.per_day_cost_usd,
        },
    }


@op(read=False)
def entities_merge(env: OpEnv, keep: str, merge: str, reason: str | None = None) -> dict[str, Any]:
    """Merge entity `merge` into `keep` (ids or unambiguous names); reversible by split."""
    from backchannel.memory import merges

    try:
        keep_id = merges.resolve_ref(env.store, str(keep))
        merge_id = merges.resolve_ref(env.store, str(merge))
        mid = merges.merge(env.store, keep_id, merge_id, method="user", reason=reason)
    except merges.MergeError as exc:
        raise OpError(str(exc)) from None
    row = env.store.query("SELECT moved FROM entity_merges WHERE id = ?", [mid])[0]
    return {
        "merge_id": f"M{mid}",
        "kept_id": keep_id,
        "merged_id": merge_id,
        "moved": row["moved"],
        "kept_name": _name(env, keep_id),
        "merged_name": _name(env, merge_id),
    }


def _name(env: OpEnv, entity_id: int) -> str | None:
    return env.store.scalar("SELECT name FROM entities WHERE id = ?", [entity_id])


@op(read=False)
def entities_split(env: OpEnv, ref: str) -> dict[str, Any]:
    """Undo a merge: `ref` is the merged entity's id, or a merge id like M3."""
    from backchannel.memory import merges

    try:
        m = merges.find_merge(env.store, ref)
        restored = merges.split(env.store, f"M{m['id']}")
    except merges.MergeError as exc:
        raise OpError(str(exc)) from None
    return {
        "merge_id": f"M{m['id']}",
        "restored_id": restored,
        "kept_id": m["kept_id"],
        "restored_name": _name(env, restored),
    }

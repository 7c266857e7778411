"""The gate: silence is the default. A candidate becomes a proposal only if it
passes, in this order:

1. dedupe: no proposal of the same kind on the same entities within
   `gate.dedupe_window_days` (whatever that proposal's status);
2. the rejection memory (`backchannel.memory.rejections.check`), when present;
3. the rate limit: quiet hours, `max_per_day` and `max_per_week` (days in
   `owner.timezone`), `min_gap_minutes` since the last proposal;
4. the score threshold (`gate.score_threshold`) on the judge's score.

Checks 1-3 run before the judge (they need no score, and a judge with a model
costs money), 4 after. Every suppression is appended to the event log
(`gate.suppressed`) with its reason, and every pass (`gate.passed`), so
`trace` can show each decision.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from backchannel.config import Settings
from backchannel.config.values import parse_quiet_hours
from backchannel.core.timeutil import as_aware_utc, as_naive_utc
from backchannel.engine.runs import EventLog
from backchannel.memory import proposals
from backchannel.memory.store import Store


@dataclass(frozen=True)
class Decision:
    passed: bool
    check: str  # dedupe, rejection, threshold, rate_day, rate_week, min_gap, quiet_hours, the judge's vetoes, ok
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "check": self.check, "reason": self.reason}


PASS = Decision(True, "ok", "passed")


def dedupe_key(kind: str, entity_ids: Iterable[int]) -> str:
    """kind + sorted distinct entity ids: 'introduction:3,7,12'."""
    return f"{kind}:" + ",".join(str(i) for i in sorted({int(e) for e in entity_ids}))


class WakeReads:
    """The gate's reads of the proposals table for one wake's candidates, once per wake
    instead of once per candidate (each ~2-3 ms at 1M assertions): the newest proposal of
    each dedupe key within the window, and the rate-limit decision. During a wake only the
    wake itself writes proposals (one writer); `proposal_made()` forgets both, and the next
    check reads them again."""

    def __init__(self, store: Store, settings: Settings, now: datetime, keys: Iterable[str]) -> None:
        self.store, self.settings, self.now = store, settings, now
        self.window_days = settings.gate.dedupe_window_days
        self.keys = set(keys)
        self._newest: dict[str, tuple[Any, ...]] | None = None
        self._rate: Decision | None = None

    def newest(self, key: str) -> tuple[Any, ...] | None:
        """(id, status, created_at) of the newest proposal with `key` within the window."""
        if key not in self.keys:  # not one of the wake's candidates: read alone
            return _newest(self.store, [key], self.now, self.window_days).get(key)
        if self._newest is None:
            self._newest = _newest(self.store, sorted(self.keys), self.now, self.window_days)
        return self._newest.get(key)

    def rate(self) -> Decision:
        if self._rate is None:
            self._rate = check_rate(self.store, self.settings, self.now)
        return self._rate

    def proposal_made(self) -> None:
        self._newest, self._rate = None, None


def _newest(store: Store, keys: list[str], now: datetime, window_days: int) -> dict[str, tuple[Any, ...]]:
    return proposals.newest_with_keys(store, keys, as_naive_utc(now) - timedelta(days=window_days))


def check_dedupe(
    store: Store, kind: str, entity_ids: list[int], now: datetime, window_days: int, reads: WakeReads | None = None
) -> Decision:
    key = dedupe_key(kind, entity_ids)
    if reads is not None and reads.window_days == window_days:
        row = reads.newest(key)
    else:
        row = _newest(store, [key], now, window_days).get(key)
    if row:
        return Decision(
            False,
            "dedupe",
            f"same {kind} on the same entities as {row[0]} ({row[1]}, {row[2]:%Y-%m-%d}) within {window_days} days",
        )
    return PASS


def check_rejection(
    store: Store, text: str, kind: str, entity_ids: list[int], now: datetime, threshold: float | None = None
) -> Decision:
    """The rejection-memory hook (`gate.similarity_threshold` for the semantic match)."""
    from backchannel.memory import rejections  # numpy and the embedder: only when a candidate is gated

    hit = rejections.check(store, text, kind, list(entity_ids), as_naive_utc(now), threshold=threshold)
    if hit is None:
        return PASS
    reason = getattr(hit, "reason", None) or str(hit)
    return Decision(False, "rejection", f"matches a past dismissal: {reason}")


def prefetch_rejections(store: Store, items: list[tuple[str, str]], now: datetime) -> None:
    """Embed a sweep's candidate texts in one batch before their rejection checks (only those
    an active dismissal of the same kind could match); a failure here is left to `check`."""
    try:
        from backchannel.memory import rejections

        rejections.prefetch(store, items, as_naive_utc(now))
    except Exception:  # noqa: BLE001 - the per-candidate check embeds again and decides (silence on error)
        pass


def check_threshold(score: float, threshold: float) -> Decision:
    if score < threshold:
        return Decision(False, "threshold", f"score {score:.2f} below threshold {threshold:.2f}")
    return PASS


def in_quiet_hours(local: datetime, spec: str | None) -> bool:
    qh = parse_quiet_hours(spec)
    if qh is None:
        return False
    start, end = qh
    t = local.time()
    if start <= end:
        return start <= t < end
    return t >= start or t < end  # wraps midnight


def check_rate(store: Store, settings: Settings, now: datetime) -> Decision:
    g = settings.gate
    tz = ZoneInfo(settings.owner.timezone)
    aware = as_aware_utc(now)
    local = aware.astimezone(tz)
    if in_quiet_hours(local, g.quiet_hours):
        return Decision(
            False, "quiet_hours", f"{local:%H:%M} {settings.owner.timezone} is within quiet hours {g.quiet_hours}"
        )
    day_start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    day_start_utc = as_naive_utc(day_start)
    week_start_utc = as_naive_utc(aware) - timedelta(days=7)
    today = proposals.count_since(store, day_start_utc) or 0
    if today >= g.max_per_day:
        return Decision(False, "rate_day", f"{today} proposals today already (max_per_day {g.max_per_day})")
    week = proposals.count_since(store, week_start_utc) or 0
    if week >= g.max_per_week:
        return Decision(
            False, "rate_week", f"{week} proposals in the last 7 days already (max_per_week {g.max_per_week})"
        )
    if g.min_gap_minutes > 0:
        last = proposals.last_created(store)
        if last is not None:
            gap = as_naive_utc(aware) - last
            if gap < timedelta(minutes=g.min_gap_minutes):
                mins = max(0, int(gap.total_seconds() // 60))  # a clock set back: never "-1 min ago"
                return Decision(False, "min_gap", f"last proposal {mins} min ago (min_gap_minutes {g.min_gap_minutes})")
    return PASS


def before_judge(
    store: Store,
    settings: Settings,
    kind: str,
    entity_ids: list[int],
    text: str,
    now: datetime,
    reads: WakeReads | None = None,
) -> Decision:
    """Checks 1-3; `reads` (a WakeReads for this wake, at this `now`) saves their queries."""
    if reads is not None and reads.now != now:
        reads = None
    d = check_dedupe(store, kind, entity_ids, now, settings.gate.dedupe_window_days, reads)
    if not d.passed:
        return d
    g = settings.gate
    # Only a threshold the user set overrides the rejection memory's own tuned default.
    threshold = g.similarity_threshold if "similarity_threshold" in g.model_fields_set else None
    d = check_rejection(store, text, kind, entity_ids, now, threshold)
    if not d.passed:
        return d
    return reads.rate() if reads is not None else check_rate(store, settings, now)


def after_judge(settings: Settings, score: float, veto: dict[str, str] | None = None) -> Decision:
    """The judge's veto (check `ambiguous_link`, `low_trust`, `meeting_soon`), else the threshold."""
    if veto:
        return Decision(False, veto["check"], veto["reason"])
    return check_threshold(score, settings.gate.score_threshold)


def record(
    store: EventLog, run_id: str, key: str, decision: Decision, stage: str, extra: dict[str, Any] | None = None
) -> None:
    """Append the decision to the event log (idempotent per run, candidate and stage)."""
    data = {"stage": stage, "dedupe_key": key, **decision.as_dict(), **(extra or {})}
    kind = "gate.passed" if decision.passed else "gate.suppressed"
    store.append_event(kind, data, run_id=run_id, key=f"{run_id}:gate:{stage}:{key}")

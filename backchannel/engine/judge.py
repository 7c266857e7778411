"""The judge: is this candidate worth an interruption now?

The offline judge reads three signals from the store (see docs/judging.md):

    s_meeting  = 1 if a meeting with one of the candidate's entities starts within
                 72 h, decaying linearly to 0 at the calendar horizon; 0 if none
    s_signal   = 1 if a signal about one of the candidate's organisations is at most
                 2 days old, decaying linearly to 0 at 14 days; 0 if none
    s_evidence = max over the evidence of confidence * 0.5 ** (age_days / 365)

    score = 1 - (1 - 0.4 s_meeting) (1 - 0.4 s_signal) (1 - 0.3 s_evidence)

(s_evidence reads each row's trust, COALESCE(trust, confidence)). For the kinds with
documented priors (brief, commitment, reconnect, introduction) `judge_kinds` turns these
and the kind's own features into a per-kind logistic score, with weights calibrated from
feedback (`calibrate`) and vetoes that keep a candidate silent whatever its score. Any
other kind keeps the noisy-OR above: one assertion alone scores at most 0.30; a meeting,
a signal and even a 14-month-old assertion about 0.67.

Then the kind's agent (agent/work.py) decides (`decide`): with a model configured for
drafting, its completed judge method sees only the candidate's Path (names, at most
MAX_EXCERPTS evidence excerpts, the reasons above) and may lower the score (never raise
it above the offline score) or veto; its failure means silence. Offline, that method's
registered implementation is the offline judgement itself, returned unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from backchannel.core.timeutil import as_aware_utc
from backchannel.engine import judge_kinds
from backchannel.engine.judge_facts import SIGNAL_WINDOW_D, WakeFacts
from backchannel.memory.store import Store

W_MEETING, W_SIGNAL, W_EVIDENCE = 0.4, 0.4, 0.3
MEETING_FULL_H = 72.0
SIGNAL_FULL_D, SIGNAL_ZERO_D = 2.0, SIGNAL_WINDOW_D  # 14 days: the window judge_facts reads
EVIDENCE_HALF_LIFE_D = 365.0
MAX_EXCERPTS = 6  # excerpts a judge model sees (agent/work.py)


class JudgeError(Exception):
    """The judge could not decide; the pipeline stays silent and logs this."""


@dataclass
class Judgement:
    score: float
    signals: dict[str, float]
    reasons: list[str] = field(default_factory=list)
    meeting: dict[str, Any] | None = None
    signal: dict[str, Any] | None = None
    model: str = "offline"
    kind: str | None = None
    veto: dict[str, str] | None = None  # {"check", "reason"}: silent whatever the score

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 4),
            "signals": {k: round(v, 4) for k, v in self.signals.items()},
            "reasons": self.reasons,
            "meeting": self.meeting,
            "signal": self.signal,
            "model": self.model,
            "kind": self.kind,
            "veto": self.veto,
        }


def combine(s_meeting: float, s_signal: float, s_evidence: float) -> float:
    """The documented noisy-OR of the three signals, each in [0, 1]."""
    return 1 - (1 - W_MEETING * s_meeting) * (1 - W_SIGNAL * s_signal) * (1 - W_EVIDENCE * s_evidence)


def meeting_strength(hours_until: float, horizon_days: float) -> float:
    if hours_until < 0:
        return 0.0
    if hours_until <= MEETING_FULL_H:
        return 1.0
    span = max(horizon_days * 24 - MEETING_FULL_H, 1.0)
    return max(0.0, 1 - (hours_until - MEETING_FULL_H) / span)


def signal_strength(days_old: float) -> float:
    if days_old <= SIGNAL_FULL_D:
        return 1.0
    return max(0.0, 1 - (days_old - SIGNAL_FULL_D) / (SIGNAL_ZERO_D - SIGNAL_FULL_D))


def evidence_strength(confidence: float, age_days: float) -> float:
    return max(0.0, min(1.0, float(confidence))) * 0.5 ** (max(age_days, 0.0) / EVIDENCE_HALF_LIFE_D)


def related_orgs(store: Store, entity_ids: list[int], evidence_ids: list[int]) -> list[int]:
    """Organisations the candidate is about: its own organisation entities, where its
    people work (current assertions), and the organisations its evidence names."""
    if not entity_ids and not evidence_ids:
        return []
    ids = list(entity_ids) or [-1]
    ev = list(evidence_ids) or [-1]
    rows = store.con.execute(
        """
        WITH a AS (  -- one scan of the assertions for both uses below
            SELECT id, object_id, qualifier, superseded_at FROM assertions
            WHERE subject_id = ANY(?::BIGINT[]) OR id = ANY(?::BIGINT[]))
        SELECT id FROM entities WHERE kind = 'organisation' AND id = ANY(?::BIGINT[])
        UNION
        SELECT a.object_id FROM a JOIN entities o ON o.id = a.object_id
        WHERE o.kind = 'organisation' AND a.superseded_at IS NULL
        UNION
        SELECT o.id FROM a JOIN aliases al ON al.norm = lower(a.qualifier)
        JOIN entities o ON o.id = al.entity_id
        WHERE o.kind = 'organisation' AND a.id = ANY(?::BIGINT[])
        """,
        [ids, ev, ids, ev],
    ).fetchall()
    return sorted({int(r[0]) for r in rows if r[0] is not None})


def _recent_signal(
    facts: WakeFacts, orgs: list[int], person: str | None = None
) -> tuple[float, dict[str, Any] | None, str | None]:
    """The freshest signal about `orgs` (or naming `person`) within SIGNAL_ZERO_D days:
    (strength, {"id", "title", "at"}, reason)."""
    if not orgs and not person:
        return 0.0, None, None
    row = facts.latest_signal(orgs, person)
    now = facts.now
    if not row:
        return 0.0, None, None
    days = max((now - row[2]).total_seconds() / 86400, 0.0)
    return (
        signal_strength(days),
        {"id": row[0], "title": row[1], "at": row[2].isoformat()},
        f"signal '{row[1]}' {days:.1f} days old",
    )


def facts_for(
    store: Store,
    now: datetime,
    candidates: list[tuple[str, list[int], list[dict[str, Any]]]],
    scopes: list[str] | None = None,
) -> WakeFacts:
    """What `offline` reads, for a wake's (kind, sorted entity ids, evidence) candidates:
    read once for all of them (judge_facts.py), not once per candidate; `scopes` (`[scope]
    sweep`) limits the assertions and turns those reads count."""
    facts = WakeFacts(store, now, scopes)
    for kind, ids, evidence in candidates:
        facts.expect(kind, ids, evidence)
    return facts


def offline(
    store: Store,
    *,
    entity_ids: list[int],
    evidence: list[dict[str, Any]],
    now: datetime,
    horizon_days: float = 14.0,
    context: dict[str, Any] | None = None,
    kind: str | None = None,
    weights: Any = None,
    facts: WakeFacts | None = None,
    path: list[int] | None = None,
) -> Judgement:
    """Score a candidate from the store alone. `now` is naive UTC. With a `kind` that
    has priors (judge_kinds.PRIORS), that kind's features and model decide, and a
    veto (ambiguous link, low trust, meeting near) says why it must stay silent;
    without one, the converging-signals formula above. `facts` (`facts_for`) are the
    wake's shared reads; without them (or for another moment) they are read here. `path`
    is the candidate's (owner first, an introduction's target last)."""
    if facts is None or facts.store is not store or facts.now != now:
        facts = WakeFacts(store, now, facts.scopes if facts is not None else None)
    reasons: list[str] = []
    ids = [int(e) for e in entity_ids]
    # An upcoming meeting with one of the candidate's entities (the intermediary).
    meeting = None
    s_meeting = 0.0
    row = facts.meeting(ids, horizon_days)
    if row:
        hours = (row[1] - now).total_seconds() / 3600
        s_meeting = meeting_strength(hours, horizon_days)
        met = [i for i in ids if i in set(row[3])]
        who = sorted(facts.names(met).values())
        meeting = {"uid": row[0], "starts_at": row[1].isoformat(), "summary": row[2], "with": who}
        reasons.append(f"meeting '{row[2]}' in {hours:.0f} h")
    # A recent signal about one of the candidate's organisations.
    evidence_ids = [int(e["assertion_id"]) for e in evidence if e.get("assertion_id") is not None]
    s_signal, signal, why = 0.0, None, None
    if kind not in ("brief", "commitment", "reconnect"):  # those read their own triggers, or none
        s_signal, signal, why = _recent_signal(facts, related_orgs(store, ids, evidence_ids))
    if why:
        reasons.append(why)
    # The evidence itself: trust (confidence when no trust was recorded) discounted by age.
    s_evidence = 0.0
    for e in evidence:
        said = e.get("said_at")
        if isinstance(said, str):
            said = datetime.fromisoformat(said)
        age = (now - said).total_seconds() / 86400 if said else EVIDENCE_HALF_LIFE_D * 2
        s_evidence = max(s_evidence, evidence_strength(judge_kinds.trust_of(e), age))
    reasons.append(f"best evidence strength {s_evidence:.2f}")
    base = {"meeting": s_meeting, "signal": s_signal, "evidence": s_evidence}
    if kind not in judge_kinds.PRIORS:
        return Judgement(combine(s_meeting, s_signal, s_evidence), base, reasons, meeting, signal, kind=kind)
    if kind == "introduction":
        target = int(path[-1]) if path and len(path) >= 2 else None
        view = judge_kinds.introduction(evidence, base, facts, target)
    elif kind == "brief":
        view = judge_kinds.brief(facts, ids, evidence, base)
    elif kind == "commitment":
        view = judge_kinds.commitment(facts, evidence, horizon_days, meeting_strength)
        meeting = None  # the meeting that matters is the recipient's (in the reasons), not any entity's
    else:

        def signal_of(person: int) -> tuple[float, str | None]:
            name = facts.names([person]).get(int(person))
            got = _recent_signal(
                facts, judge_kinds.organisations_of(store, person), name if name and " " in name else None
            )
            nonlocal signal
            signal = got[1] or signal
            return got[0], got[2]

        view = judge_kinds.reconnect(facts, ids, evidence, signal_of)
        meeting = None
    if kind in ("commitment", "reconnect"):
        reasons = [r for r in reasons if not r.startswith("meeting '")]
    score = 0.0 if view.veto else judge_kinds.score(kind, view.features, weights)
    return Judgement(
        score,
        view.features,
        reasons + view.reasons,
        meeting,
        signal,
        kind=kind,
        veto=({"check": view.veto[0], "reason": view.veto[1]} if view.veto else None),
    )


def _ago(days: float) -> str:
    if days < 1:
        return "today"
    if days < 45:
        return f"{days:.0f} days ago"
    months = round(days / 30.44)
    return f"{months} months ago" if months < 24 else f"{days / 365.25:.0f} years ago"


def why_now(j: Judgement, evidence: list[dict[str, Any]], now: datetime, tz: str = "UTC") -> list[str]:
    """The converging signals in words, for the proposal the user reads; the
    meeting's time in `tz` (the owner's time zone). `now` is naive UTC."""
    from zoneinfo import ZoneInfo

    lines = []
    if j.meeting:
        starts = datetime.fromisoformat(j.meeting["starts_at"])  # naive UTC, as stored
        local = as_aware_utc(starts).astimezone(ZoneInfo(tz))
        who = " and ".join(j.meeting.get("with") or []) or "them"
        lines.append(f"You meet {who} on {local:%A %d %B at %H:%M} {tz} ({j.meeting.get('summary') or 'a meeting'}).")
    if j.signal:
        at = datetime.fromisoformat(j.signal["at"])
        lines.append(f"News, {_ago((now - at).total_seconds() / 86400)}: {j.signal['title']}.")
    dated = [e for e in evidence if e.get("said_at")]
    if dated:
        oldest = min(dated, key=lambda e: str(e["said_at"]))
        said = oldest["said_at"]
        said = datetime.fromisoformat(said) if isinstance(said, str) else said
        # A date that is only the transcript file's mtime is said to be one, never passed off as the meeting's.
        guess = ", the transcript file's date: the meeting's is unknown" if oldest.get("date_origin") == "mtime" else ""
        lines.append(
            f"{oldest.get('speaker') or 'Someone'} said it {_ago((now - said).total_seconds() / 86400)} "
            f"({said:%Y-%m-%d}{guess})."
        )
    return lines


def _path(
    judgement: Judgement, evidence: list[dict[str, Any]], kind: str, candidate: Any, names: dict[int, str] | None
) -> Any:
    from backchannel.agent.work import path_of
    from backchannel.graph.types import Candidate, Evidence

    ev = [Evidence.from_dict(e) for e in evidence if e.get("assertion_id", e.get("id")) is not None]
    c = (
        candidate
        if candidate is not None
        else Candidate(kind=kind, entities=[], path=[], evidence_ids=[], score=judgement.score, why="")
    )
    return path_of(c, names or {}, judgement.reasons, judgement, evidence=ev)


def _reviewed(judgement: Judgement, verdict: Any, by: str) -> Judgement:
    """The model may lower the score or veto, never raise it above the offline score."""
    new = min(judgement.score, max(0.0, float(verdict.score))) if verdict.worth_it else 0.0
    return Judgement(
        new,
        judgement.signals,
        judgement.reasons + [f"model: {verdict.reason}"],
        judgement.meeting,
        judgement.signal,
        by,
        judgement.kind,
        judgement.veto,
    )


def decide(
    judgement: Judgement,
    *,
    gateway: Any,
    evidence: list[dict[str, Any]],
    kind: str,
    run_id: str | None,
    candidate: Any = None,
    names: dict[int, str] | None = None,
) -> Judgement:
    """The kind's agent judges (agent/work.py): with its model when `gateway` serves the
    judge role, seeing only the path (excerpts, names, the reasons above); offline, its
    registered implementation is this offline judgement, returned as it is. A vetoed
    judgement is never sent. A model's failure raises JudgeError: silence."""
    from backchannel.agent.base import CompletionFailed
    from backchannel.agent.work import agent_for

    if judgement.veto is not None:
        return judgement
    agent = agent_for(kind)(gateway=gateway, run_id=run_id)
    path = _path(judgement, evidence, kind, candidate, names)
    try:
        verdict = agent.judge(path)
    except CompletionFailed as exc:
        raise JudgeError(f"model judge failed: {exc.reason}") from None
    by = agent.calls[-1].by if agent.calls else "offline"
    return judgement if by == "offline" else _reviewed(judgement, verdict, by)


def with_model(
    judgement: Judgement,
    *,
    gateway: Any,
    evidence: list[dict[str, Any]],
    kind: str,
    run_id: str | None,
    candidate: Any = None,
    names: dict[int, str] | None = None,
) -> Judgement:
    """Let the configured model review the offline judgement (the kind agent's judge,
    completed by the model whatever the configuration says), seeing only the evidence
    excerpts and the signal summaries. It may lower the score or veto, never raise it."""
    from backchannel.agent.base import CompletionFailed
    from backchannel.agent.work import agent_for

    agent = agent_for(kind)(gateway=gateway, run_id=run_id)
    try:
        verdict = agent.ask_model(agent.judged_by or "worth_it", _path(judgement, evidence, kind, candidate, names))
    except CompletionFailed as exc:
        raise JudgeError(f"model judge failed: {exc.reason}") from None
    return _reviewed(judgement, verdict, getattr(agent, "last_model", "model"))

"""One run of one wake, as the wake's handler sees it: the store, the settings, the
clock, the model gateway, the outcome being built, the ports to the process around it,
and `sweep_and_propose()`, what every wake that looks for something to say does:

    sweep -> candidates -> gate (dedupe, rejection memory, rate limit, quiet
    hours) -> judge -> gate (score threshold) -> draft -> proposal (pending) -> outbox

Each step is appended to the event log with an idempotency key (runs.py), so a run
resumed after a crash skips what it already did: the sweep's candidates are read back
from its event, a proposal is created once per dedupe key (and the gate's dedupe check
sees it). The lifecycle around a run (start, dispatch, finish or fail) is pipeline.py.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.crashpoints import crash_point
from backchannel.core.logging import get as get_logger
from backchannel.core.logging import log
from backchannel.core.ports import InboxFiles
from backchannel.engine import calibrate, gate, judge, proposal, runs, sweeping
from backchannel.engine.runs import Interrupted, WakeRecord
from backchannel.memory import edges, proposals
from backchannel.memory.assertions import load_evidence_many
from backchannel.memory.edges import EdgeStopped
from backchannel.memory.store import Store

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway
    from backchannel.graph.types import Candidate

__all__ = ["Interrupted", "Run", "RunOutcome", "rollback_quietly"]

logger = get_logger("pipeline")

Ranked = list[tuple["Candidate", list[dict[str, Any]]]]  # candidates best first, with their evidence


@dataclass
class RunOutcome:
    run_id: str
    kind: str
    status: str  # done, failed, closed, skipped, interrupted
    reason: str | None = None
    proposals: list[str] = field(default_factory=list)
    suppressed: list[dict[str, Any]] = field(default_factory=list)
    candidates: int = 0
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "status": self.status,
            "reason": self.reason,
            "proposals": self.proposals,
            "suppressed": self.suppressed,
            "candidates": self.candidates,
            "detail": self.detail,
        }


def rollback_quietly(store: Store) -> None:
    """Roll back the transaction a failure may have left open; none open is fine."""
    try:
        store.con.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - no transaction was open: nothing to roll back
        pass


@dataclass
class Run:
    store: Store
    settings: Settings
    paths: Paths
    run_id: str
    wake: WakeRecord
    now: datetime  # naive UTC
    gateway: Gateway | None
    cancel: threading.Event | None
    inbox: InboxFiles  # where a handled inbox file goes
    outcome: RunOutcome
    abandon: threading.Event | None = None  # a forced exit is under way: record nothing more

    def checkpoint(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Interrupted()

    def sweep_and_propose(self, context: dict[str, Any], tag: str | None = None) -> None:
        """Sweep with `context` and take each candidate through the gate, the judge and
        the draft to a proposal. `tag` names a second sweep of the same run (re-evaluation)."""
        self.checkpoint()
        candidates = sweeping.run_sweep(
            self.store,
            self.settings,
            self.paths,
            run_id=self.run_id,
            gateway=self.gateway,
            context=context,
            tag=tag,
            abandon=self.abandon,
        )
        self.outcome.candidates += len(candidates)
        ordered = sorted(candidates, key=lambda c: -float(c.score))
        ranked = list(zip(ordered, load_evidence_many(self.store, ordered)))
        texts = [" ".join([c.why or ""] + [str(e.get("quote") or "") for e in ev]) for c, ev in ranked]
        gate.prefetch_rejections(self.store, [(c.kind, t) for (c, _), t in zip(ranked, texts)], self.now)
        held = runs.HeldEvents(self.store)  # the gate's and judge's records: one commit, not one per candidate
        try:
            excerpts_sent = self._gate_judge_propose(ranked, texts, context, held)
            held.flush()
        except BaseException:
            if self.abandon is None or not self.abandon.is_set():  # a forced exit records nothing more
                try:
                    held.flush()  # what was decided before the failure still shows in `trace`
                except Exception:  # noqa: BLE001 - the original failure is the one to report
                    logger.warning("could not write the held gate records", extra={"fields": {"run_id": self.run_id}})
            raise
        if excerpts_sent:
            runs.add_counts(self.store, self.run_id, excerpts=excerpts_sent)

    def _gate_judge_propose(
        self, ranked: Ranked, texts: list[str], context: dict[str, Any], held: runs.HeldEvents
    ) -> int:
        """Each candidate through gate, judge, gate, draft and proposal; returns the
        evidence excerpts that reached a model. Gate and judge records go to `held`."""
        # Nothing below writes assertions or entities: the judge's reads of the in-memory graph
        # index need not re-check its signature each time. Nor dismissals or suppressions: the
        # rejection memory's caches are checked once, not at each candidate's check.
        from backchannel.graph.index import IndexCache
        from backchannel.memory import rejections

        with IndexCache.unchanged_during(self.store), rejections.unchanged_during(self.store):
            return self._each_candidate(ranked, texts, context, held)

    def _each_candidate(self, ranked: Ranked, texts: list[str], context: dict[str, Any], held: runs.HeldEvents) -> int:
        excerpts_sent = 0
        made = runs.kinds_made(self.store, self.run_id, "proposal.created")  # before a crash
        # feedback does not change during a wake: fitted once per kind
        weights_by_kind: dict[str, tuple[float, dict[str, float]] | None] = {}
        # What the gate and the judge read from the store, read once for the whole wake.
        facts = judge.facts_for(
            self.store,
            self.now,
            [(c.kind, sorted({int(e) for e in c.entities}), ev) for c, ev in ranked],
            self.settings.scope.sweep,
        )
        reads = gate.WakeReads(
            self.store, self.settings, self.now, [gate.dedupe_key(c.kind, c.entities) for c, _ in ranked]
        )

        def weights_of(kind: str) -> tuple[float, dict[str, float]] | None:
            if kind not in weights_by_kind:
                weights_by_kind[kind] = calibrate.weights(self.store, kind)
            return weights_by_kind[kind]

        for (cand, evidence), text in zip(ranked, texts):
            self.checkpoint()
            ids = sorted({int(e) for e in cand.entities})
            dkey = gate.dedupe_key(cand.kind, ids)
            if f"proposal:{self.run_id}:{dkey}" in made:
                pid = proposals.id_for(self.store, self.run_id, dkey)
                if pid:
                    self.outcome.proposals.append(pid)
                continue  # created before a crash; resumed runs do not make it twice
            d = gate.before_judge(self.store, self.settings, cand.kind, ids, text, self.now, reads)
            gate.record(held, self.run_id, dkey, d, "before_judge")
            if not d.passed:
                self._suppressed(dkey, d)
                continue
            # The judge's and the drafter's model edges are written after this row (offline: none).
            mark = edges.last_id(self.store) if self.gateway is not None else None
            try:
                j = judge.offline(
                    self.store,
                    entity_ids=ids,
                    evidence=evidence,
                    now=self.now,
                    horizon_days=self.settings.calendar.horizon_days,
                    context=context,
                    kind=cand.kind,
                    weights=weights_of(cand.kind),
                    facts=facts,
                    path=list(cand.path or []),
                )
                if j.veto is None:  # the kind's agent decides: its model, else the offline judgement above
                    by_model = self.gateway is not None and self.gateway.available("judge")
                    if by_model:
                        excerpts_sent += min(len(evidence), judge.MAX_EXCERPTS)
                    j = judge.decide(
                        j,
                        gateway=self.gateway if by_model else None,
                        evidence=evidence,
                        kind=cand.kind,
                        run_id=self.run_id,
                        candidate=cand,
                        names=facts.names(ids) if by_model else None,
                    )
            except Exception as exc:  # noqa: BLE001 - when the judge fails, the default is silence
                reason = str(exc) if isinstance(exc, judge.JudgeError) else f"judge error: {type(exc).__name__}: {exc}"
                self._silent(held, dkey, "judge", reason, key=f"{self.run_id}:judge:{dkey}")
                log(logger, 30, "judge failed; staying silent", run_id=self.run_id, dedupe_key=dkey, reason=reason)
                self._stop_at_edge(mark, dkey)
                continue
            if mark is not None:  # the judge's model edge, if it crossed one, is this candidate's
                edges.tag(self.store, self.run_id, mark, dedupe_key=dkey)
            d = gate.after_judge(self.settings, j.score, j.veto)
            runs.step(
                held,
                self.run_id,
                "judge.scored",
                {"dedupe_key": dkey, **j.as_dict()},
                key=f"{self.run_id}:judge:{dkey}",
            )
            gate.record(held, self.run_id, dkey, d, "after_judge", {"score": round(j.score, 4)})
            if not d.passed:
                self._suppressed(dkey, d)
                continue
            self.checkpoint()
            held.flush()  # before the draft (a model call, maybe long): the log keeps its order
            try:
                drafted, sent = proposal.draft(
                    self.store,
                    self.settings,
                    run_id=self.run_id,
                    gateway=self.gateway,
                    candidate=cand,
                    evidence=evidence,
                    context=context,
                )
            except Exception as exc:  # noqa: BLE001 - a failed draft is silence too
                reason = f"draft failed: {type(exc).__name__}: {exc}"
                self._silent(held, dkey, "draft", reason, key=f"{self.run_id}:draft:{dkey}")
                log(logger, 30, "draft failed; staying silent", run_id=self.run_id, dedupe_key=dkey, reason=reason)
                self._stop_at_edge(mark, dkey)
                continue
            excerpts_sent += sent
            reasons = judge.why_now(j, evidence, self.now, self.settings.owner.timezone)
            if reasons:
                drafted["body"] = f"{drafted['body']}\n\nWhy now:\n" + "\n".join(f"- {r}" for r in reasons)
            crash_point("proposal.before_commit")
            pid = proposal.create(
                self.store,
                self.settings,
                run_id=self.run_id,
                candidate=cand,
                dkey=dkey,
                evidence=evidence,
                drafted=drafted,
                score=j.score,
            )
            reads.proposal_made()  # the next candidate's dedupe and rate limit count this one
            if mark is not None:
                edges.tag(self.store, self.run_id, mark, dedupe_key=dkey, proposal_id=pid)
            if pid:
                self.outcome.proposals.append(pid)
                log(
                    logger,
                    20,
                    "proposal created",
                    run_id=self.run_id,
                    proposal_id=pid,
                    dedupe_key=dkey,
                    score=round(j.score, 3),
                )
        return excerpts_sent

    def _suppressed(self, dkey: str, d: gate.Decision) -> None:
        self.outcome.suppressed.append({"dedupe_key": dkey, **d.as_dict()})
        log(logger, 20, "candidate suppressed", run_id=self.run_id, dedupe_key=dkey, check=d.check, reason=d.reason)

    def _silent(self, held: runs.HeldEvents, dkey: str, check: str, reason: str, *, key: str) -> None:
        """The judge or the drafter failed on this candidate: it stays silent, recorded."""
        runs.step(held, self.run_id, f"{check}.failed", {"dedupe_key": dkey, "reason": reason}, key=key)
        self.outcome.suppressed.append({"dedupe_key": dkey, "passed": False, "check": check, "reason": reason})

    def _stop_at_edge(self, mark: int | None, dkey: str) -> None:
        """After a candidate went silent: its model edges (rows after `mark`) are marked as its
        own, and when one of them was stopped by a limit the run stops there, with that reason
        (a judge or drafter that swallowed the stop does not turn it into a quieter path)."""
        if mark is None:
            return
        edges.tag(self.store, self.run_id, mark, dedupe_key=dkey)
        row = edges.stopped(self.store, self.run_id, after=mark)
        if row:
            raise EdgeStopped(str(row["edge"]), str(row["reason"]))

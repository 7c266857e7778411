"""The proactive agent: a sweeper and a drafter, each a sub-agent with its own model,
its own context and its own budget.

    class Proactive(Agent):
        sweeper: Sweeper   # [models] sweep: sees the wake (or question), the API stubs, the skills
        drafter: Drafter   # [models] draft: sees one candidate's Path (names, excerpts, reasons)

The sweeper's context never reaches the drafter's model and the drafter's excerpts never
reach the sweeper's: each prompt is built from the sub-agent's own arguments only
(tests/agent/test_agents.py runs both on two scripted models and checks what each received).
`ops.ask` and the wake pipeline use the same two agents through `sweeper.sweep` and
`drafter.draft`.
"""

from __future__ import annotations

from typing import Any

from backchannel.agent.base import Agent
from backchannel.agent.drafter import Drafter, DraftResult, entity_names, fill_evidence
from backchannel.agent.sweeper import Sweeper, SweepResult
from backchannel.agent.work import MAX_EXCERPTS


class Proactive(Agent):
    """Finds what deserves the owner's attention and drafts it."""

    role = "sweep"
    api: Any = None  # the graph API, to fill in the evidence between the two
    sweeper: Sweeper
    drafter: Drafter

    @classmethod
    def for_run(
        cls,
        *,
        api: Any,
        settings: Any,
        paths: Any,
        gateway: Any = None,
        run_id: str | None = None,
        sweep_budget: int | None = None,
        draft_budget: int | None = None,
    ) -> Proactive:
        """The agent for one run: the sweeper holds the graph API and the skills, the
        drafter only the settings (its owner's name); each its own token budget."""
        use_draft = gateway if gateway is not None and settings.models.draft != "offline" else None
        return cls(
            gateway=gateway,
            run_id=run_id,
            settings=settings,
            sweeper=Sweeper(
                gateway=gateway,
                run_id=run_id,
                settings=settings,
                api=api,
                skill_paths=paths,
                budget_tokens=sweep_budget,
            ),
            drafter=Drafter(gateway=use_draft, run_id=run_id, settings=settings, budget_tokens=draft_budget),
            api=api,
        )

    def answer(self, context: dict[str, Any], question: str | None = None) -> tuple[SweepResult, DraftResult]:
        """Sweep (the sweeper's model writes a program, or the prepared skills run), fill
        in the evidence, then one draft per candidate, best first."""
        swept = self.sweeper.sweep(context, question)
        candidates = list(swept.candidates)
        api = self.api
        fill_evidence(candidates, api)
        names = entity_names(candidates, api)
        drafts, errors = [], []
        for c in candidates:
            d = self.drafter.draft_one(c, names)
            errors.extend(d.errors)
            drafts.append(d)
        return swept, DraftResult(drafts, sum(min(len(c.evidence), MAX_EXCERPTS) for c in candidates), errors)

"""The prepared work as agents: introductions, briefs, commitments, reconnects, and `ask`.

Each kind is one agent. Finding candidates is deterministic (a prepared skill run in
the sandbox: `paths`, `briefs`, `open_promises`, `gone_quiet`); judging whether one is
worth an interruption and drafting what the user reads are completed methods (`...`,
agent/base.py), whose docstrings below are their prompts. Offline, each completed
method has its registered deterministic implementation: the judgement the engine's
judge already made (engine/judge.py, carried by the path, never shown to a model) and
the drafter's template (agent/drafter.py `template_draft`).

What a judge or a drafter of one candidate may see is a `Path`: the kind, why it was
found, the people's names, the evidence excerpts (at most MAX_EXCERPTS, each quote cut
to MAX_QUOTE_CHARS) and the offline judge's reasons. Nothing of the graph the sweep
walked crosses.
"""

# mypy: disable-error-code="empty-body"
# (a completed method's body is `...` on purpose: agent/base.py completes it)
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from backchannel.agent.base import Agent, uses_role
from backchannel.graph.types import Candidate, Evidence

MAX_EXCERPTS = 6  # evidence excerpts per candidate that reach a model
MAX_QUOTE_CHARS = 400


class Excerpt(BaseModel):
    """One piece of evidence as a model reads it."""

    quote: str | None = None
    speaker: str = "someone"
    when: str = "undated"
    source: str | None = None


class Path(BaseModel):
    """One candidate as its judge and its drafter see it."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    why: str = "-"
    people: list[str] = Field(default_factory=list)
    evidence: list[Excerpt] = Field(default_factory=list)
    signals: list[str] = Field(default_factory=list)  # what the offline judge read: meetings, news, strength
    _candidate: Any = PrivateAttr(default=None)  # what offline code reads; never serialised
    _names: dict[int, str] = PrivateAttr(default_factory=dict)
    _judged: Any = PrivateAttr(default=None)  # the engine's offline judgement (score, veto, reasons)
    _evidence_ids: list[int] = PrivateAttr(default_factory=list)  # the excerpts' assertions, for the edge's limits


class Judgement(BaseModel):
    """Whether a candidate deserves to interrupt its user now."""

    worth_it: bool
    score: float = Field(description="0 to 1: how much it deserves the interruption")
    reason: str = ""


class Message(BaseModel):
    """What the user reads, and the message they could send."""

    title: str = Field(min_length=3, max_length=200, description="one line for the user")
    body: str = Field(
        min_length=3,
        max_length=2000,
        description="two to four sentences telling the user what to do and why, citing the evidence",
    )
    message: str | None = Field(
        default=None, max_length=2000, description="the message the user could send, or null when none fits"
    )


def when_of(e: Evidence) -> str:
    when = (e.said_at or e.source_date or "")[:10] or "undated"
    if e.date_origin == "mtime":
        return f"{when} (file date, not the meeting's)" if when != "undated" else "date unknown"
    return when


def excerpts_of(evidence: list[Evidence]) -> list[Excerpt]:
    return [
        Excerpt(
            quote=(e.quote or "").strip()[:MAX_QUOTE_CHARS] or None,
            speaker=e.speaker or "someone",
            when=when_of(e),
            source=e.source_title or None,
        )
        for e in evidence[:MAX_EXCERPTS]
    ]


def path_of(
    c: Candidate,
    names: dict[int, str],
    signals: list[str] | None = None,
    judged: Any = None,
    evidence: list[Evidence] | None = None,
) -> Path:
    """The Path of candidate `c` (its `evidence` filled in, or `evidence` given), with the
    entities' `names`; `judged`: the engine's offline judgement, for the offline judge."""
    p = Path(
        kind=c.kind,
        why=c.why or "-",
        people=[names.get(i, f"#{i}") for i in c.entities],
        evidence=excerpts_of(c.evidence if evidence is None else evidence),
        signals=list(signals or []),
    )
    p._candidate, p._names, p._judged = c, dict(names), judged
    p._evidence_ids = [e.assertion_id for e in (c.evidence if evidence is None else evidence)[:MAX_EXCERPTS]]
    return p


class KindAgent(Agent):
    """One kind of proposal: a prepared skill finds candidates; a judge and a drafter
    (completed methods of the subclass) decide and write."""

    role = "draft"
    kind = "other"
    skill: str | None = None  # the prepared skill that finds this kind
    judged_by: str | None = None  # the completed method that judges this kind
    api: Any = None  # the graph API its skill reads (state: never sent to a model)
    skill_paths: Any = None  # where the user's skills are

    def find(self, **args: Any) -> list[Candidate]:
        """Run the kind's prepared skill in the sandbox with `args`; its candidates, best first."""
        from backchannel.agent.sweeper import run_skill
        from backchannel.skills import get_skill

        if self.skill is None:
            return []
        found, _ = run_skill(get_skill(self.skill, self.skill_paths), self.api, self.settings, args=args)
        return sorted(found, key=lambda c: -c.score)

    def draft(self, path: Path) -> Message:
        """What the user reads about `path` (each kind completes its own)."""
        raise NotImplementedError

    def judge(self, path: Path) -> Judgement:
        """The kind's judge on `path`: its model when one is configured, else the offline judgement."""
        if self.judged_by is None:
            return _offline_judgement(self, path)
        return getattr(self, self.judged_by)(path)


class Introductions(KindAgent):
    kind, skill, judged_by = "introduction", "introductions", "worth_an_introduction"

    def paths(self, target: str) -> list[Candidate]:
        """Who could introduce the owner to `target` (a person, an organisation or a role)."""
        return self.find(target=target)

    @uses_role("judge")
    def worth_an_introduction(self, path: Path) -> Judgement:
        """You decide whether a proactive suggestion deserves to interrupt its user now.
        The suggestion: ask the first person named in `people` to introduce the user to the
        last. You see only the evidence excerpts and the signals the program read (an
        upcoming meeting, news, how strong the evidence is). Say it is not worth it when the
        link is weak, stale or only hearsay; never invent facts the excerpts do not hold."""
        ...

    def draft(self, path: Path) -> Message:
        """You draft a short introduction request for a busy professional from evidence found
        in their own meeting notes. `people` starts with the introducer and ends with the
        person to be introduced to. You see only the excerpts: do not invent facts, names,
        dates or titles they do not contain. The message goes to the introducer, in the
        user's voice; keep everything under 120 words."""
        ...


class Briefs(KindAgent):
    kind, skill, judged_by = "brief", "pre_meeting_brief", "worth_a_brief"

    def briefs(self, attendees: list[str]) -> list[Candidate]:
        """What memory holds about each of `attendees` (names, roles or organisations)."""
        return self.find(attendees=list(attendees))

    @uses_role("judge")
    def worth_a_brief(self, path: Path) -> Judgement:
        """You decide whether a brief on the people in `people` deserves to interrupt the user
        now, before the meeting the signals name. It is worth it when the excerpts tell the
        user something useful about them; not when memory knows almost nothing."""
        ...

    def draft(self, path: Path) -> Message:
        """You write a short brief for a busy professional about to meet the people in
        `people`, from evidence found in their own meeting notes: who they are, what was said
        with them, what is open between them. Use only the excerpts; no message to send
        (null). Under 120 words."""
        ...


class Commitments(KindAgent):
    kind, skill, judged_by = "commitment", "open_commitments", "worth_a_reminder"

    def open_promises(self, people: list[str]) -> list[Candidate]:
        """The open commitments of `people` ("me" is the owner)."""
        return self.find(people=list(people))

    @uses_role("judge")
    def worth_a_reminder(self, path: Path) -> Judgement:
        """You decide whether a reminder of the commitment in the excerpts deserves to
        interrupt the user now: it is due soon or just past, or the recipient is met soon.
        Not when the excerpts show it was kept or withdrawn."""
        ...

    def draft(self, path: Path) -> Message:
        """You write a short reminder for a busy professional of a commitment made in one of
        their meetings: who promised what to whom, and by when, citing the excerpt. Use only
        the excerpts; no message to send (null). Under 80 words."""
        ...


class Reconnects(KindAgent):
    kind, skill, judged_by = "reconnect", "stale_relationships", "worth_a_reconnect"

    def gone_quiet(self, weeks: int = 8) -> list[Candidate]:
        """Contacts the owner has not spoken with for at least `weeks` weeks."""
        return self.find(weeks=weeks)

    @uses_role("judge")
    def worth_a_reconnect(self, path: Path) -> Judgement:
        """You decide whether suggesting the user get back in touch with the person in
        `people` deserves to interrupt them now: a long silence, a close tie, and a reason
        (news about them or their organisation) in the signals."""
        ...

    def draft(self, path: Path) -> Message:
        """You draft a short, warm catch-up note from a busy professional to the person in
        `people`, whom they have not spoken with for a while, and one line telling the user
        why now. Use only the excerpts; invent nothing. Under 80 words."""
        ...


class Answers(KindAgent):
    """`ask`: the question's candidates are found by the sweeper (routing offline,
    generated code with a sweep model); each answer is drafted here."""

    kind, judged_by = "answer", "worth_it"

    @uses_role("judge")
    def worth_it(self, path: Path) -> Judgement:
        """You decide whether a proactive suggestion deserves to interrupt its user now. You
        see only the evidence excerpts and the signals the program read. Say it is not worth
        it when the evidence is weak, stale or hearsay; never invent facts."""
        ...

    def draft(self, path: Path) -> Message:
        """You write one answer, for a busy professional, to the question they asked of their
        own meeting notes, from the candidate in `path` (its kind, why it was found, the
        people, the evidence excerpts). Use only the excerpts: do not invent facts, names,
        dates or titles. A message to send only where one fits (an introduction request:
        to the introducer), else null. Under 120 words."""
        ...


KIND_AGENTS: dict[str, type[KindAgent]] = {a.kind: a for a in (Introductions, Briefs, Commitments, Reconnects)}


# -- the offline implementations -----------------------------------------------
def _offline_judgement(agent: Agent, path: Path) -> Judgement:
    """The engine's offline judge already decided (engine/judge.py `offline`): its score and
    veto, as a Judgement. A path nobody judged is not worth an interruption."""
    judged = path._judged
    if judged is None:
        return Judgement(worth_it=False, score=0.0, reason="not judged")
    return Judgement(
        worth_it=getattr(judged, "veto", None) is None,
        score=float(judged.score),
        reason="; ".join(getattr(judged, "reasons", []) or []),
    )


def _template(agent: Agent, path: Path) -> Message:
    """The offline drafter (drafter.template_draft). The template is trusted as it always
    was: not held to the length limits a model's answer is validated against."""
    from backchannel.agent.drafter import template_draft

    owner = agent.settings.owner.name if agent.settings is not None else "me"
    d = template_draft(path._candidate, path._names, owner)
    return Message.model_construct(title=d.title, body=d.body, message=d.message)


for _agent, _judge in (
    (Introductions, "worth_an_introduction"),
    (Briefs, "worth_a_brief"),
    (Commitments, "worth_a_reminder"),
    (Reconnects, "worth_a_reconnect"),
):
    _agent.offline(_judge)(_offline_judgement)
    _agent.offline("draft")(_template)
Answers.offline("draft")(_template)
Answers.offline("worth_it")(_offline_judgement)


def agent_for(kind: str) -> type[KindAgent]:
    """The agent of a candidate kind (`Answers` for kinds no agent owns: link, title...)."""
    return KIND_AGENTS.get(kind, Answers)


__all__ = [
    "Answers",
    "Briefs",
    "Commitments",
    "Excerpt",
    "Introductions",
    "Judgement",
    "KIND_AGENTS",
    "KindAgent",
    "Message",
    "Path",
    "Reconnects",
    "agent_for",
    "path_of",
]

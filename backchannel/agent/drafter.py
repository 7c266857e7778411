"""The drafter role: turn candidates into what the user reads.

Evidence ids are filled in with their quotes, speakers and dates from memory.
Offline, a template writes the title, body and (for introductions and
reconnections) a message to send. With a draft model, only the evidence
excerpts, the people's names and the candidate's `why` reach the model; the
graph the sweeper walked never does. The number of excerpts sent is counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from backchannel.agent.base import Agent, CompletionFailed
from backchannel.agent.work import (
    MAX_EXCERPTS,
    MAX_QUOTE_CHARS,
    Answers,
    Briefs,
    Commitments,
    Introductions,
    KindAgent,
    Message,
    Reconnects,
    path_of,
    when_of,
)
from backchannel.graph.types import Candidate, Evidence

if TYPE_CHECKING:
    from backchannel.memory.store import Store

DraftAnswer = Message  # the older name of what a draft model answers


@dataclass
class Draft:
    candidate: Candidate
    title: str
    body: str
    message: str | None = None
    names: dict[int, str] = field(default_factory=dict)
    drafted_by: str = "template"
    action: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = self.candidate.to_dict()
        d.update(
            title=self.title,
            body=self.body,
            message=self.message,
            drafted_by=self.drafted_by,
            names={str(k): v for k, v in self.names.items()},
            action=self.action,
        )
        return d


@dataclass
class DraftResult:
    drafts: list[Draft]
    excerpts_sent: int
    errors: list[str] = field(default_factory=list)


def fill_evidence(candidates: list[Candidate], api: Any) -> None:
    """Replace evidence ids by full evidence (quote, speaker, date, source), in place."""
    wanted = sorted(
        {i for c in candidates for i in c.evidence_ids[:MAX_EXCERPTS]}
        - {e.assertion_id for c in candidates for e in c.evidence}
    )
    by_id = {r["assertion_id"]: Evidence.from_dict(r) for r in api.evidence(wanted)} if wanted else {}
    for c in candidates:
        have = {e.assertion_id for e in c.evidence}
        c.evidence.extend(by_id[i] for i in c.evidence_ids[:MAX_EXCERPTS] if i in by_id and i not in have)


def entity_names(candidates: list[Candidate], api: Any) -> dict[int, str]:
    ids = sorted({i for c in candidates for i in (*c.entities, *c.path)})
    return {e["id"]: e["name"] for e in api.entity(ids)} if ids else {}


def _first_name(name: str) -> str:
    return name.split()[0] if name else "there"


def _excerpt_lines(c: Candidate) -> list[str]:
    lines = []
    for e in c.evidence[:MAX_EXCERPTS]:
        when = when_of(e)
        who = e.speaker or "someone"
        where = f", {e.source_title}" if e.source_title else ""
        quote = (e.quote or "").strip()[:MAX_QUOTE_CHARS]
        # Without a quote (a CRM line imported without evidence) there is no speaker or date to cite either.
        lines.append(
            f'"{quote}" ({who}, {when}{where})' if quote else f"assertion {e.assertion_id} (no quote recorded)"
        )
    return lines


def template_draft(c: Candidate, names: dict[int, str], owner: str) -> Draft:
    """The offline drafter: a title, a body citing the evidence, and a message where one fits."""
    ent = [names.get(i, f"#{i}") for i in c.entities]
    excerpts = _excerpt_lines(c)
    cited = ("\nEvidence:\n" + "\n".join(f"- {x}" for x in excerpts)) if excerpts else ""
    message = None
    if c.kind == "introduction" and len(ent) >= 2:
        title = f"Ask {ent[0]} for an introduction to {ent[1]}"
        message = (
            f"Hi {_first_name(ent[0])},\n\nI hope you are well. I understand you know {ent[1]}; "
            f"would you be open to introducing me? Happy to send a short note you can forward.\n\n"
            f"Thanks,\n{owner}"
        )
    elif c.kind == "brief" and (c.extra or {}).get("about") == "organisation":
        title = f"Brief on {ent[0] if ent else 'the organisation'}"
    elif c.kind == "brief" and (c.extra or {}).get("meeting"):
        title = f"Before you meet {ent[0] if ent else 'them'}"
    elif c.kind == "brief":  # asked about someone, no meeting planned
        title = f"Brief on {ent[0] if ent else 'them'}"
    elif c.kind == "reconnect":
        title = f"Reconnect with {ent[0] if ent else 'a contact'}"
        message = (
            f"Hi {_first_name(ent[0]) if ent else 'there'},\n\nIt has been a while: how are things? "
            f"Would you have time for a quick catch-up in the coming weeks?\n\n{owner}"
        )
    elif c.kind == "commitment":
        title = f"Open commitment: {ent[0] if ent else 'someone'}"
    else:
        title = c.why.split(".")[0][:120] or c.kind
    body = (c.why or title) + cited
    return Draft(c, title, body, message, names)


class Drafter(Agent):
    """The drafter role: one sub-agent per kind, each completing its `draft` with the
    draft model, or its template offline. It sees only what a `work.Path` holds."""

    role = "draft"
    introductions: Introductions
    briefs: Briefs
    commitments: Commitments
    reconnects: Reconnects
    answers: Answers

    def agent_for(self, kind: str) -> KindAgent:
        for sub in self.subagents():
            agent = getattr(self, sub)
            if agent.kind == kind:
                return agent
        return self.answers

    budget_spent = False  # a budget refused a draft: templates for the rest of this drafter's run

    def draft_one(self, c: Candidate, names: dict[int, str], signals: list[str] | None = None) -> Draft:
        """The draft of one candidate: its kind's agent, by model or template. A model's
        failure falls back to the template (noted in `errors`); a spent budget stops the
        model for the rest of this drafter's run."""
        agent = self.agent_for(c.kind)
        path = path_of(c, names, signals)
        errors: list[str] = []
        offline = agent.offline_impl("draft")
        if self.budget_spent and offline is not None:
            msg = offline(agent, path)  # a budget refused an earlier draft: no model for the rest
        else:
            try:
                msg = agent.draft(path)  # the draft model, or offline the registered template
            except CompletionFailed as exc:
                if offline is None:
                    raise
                if exc.budget:
                    self.budget_spent = True
                    errors.append(exc.reason)
                else:
                    errors.append(f"draft model: {exc.reason}")
                msg = offline(agent, path)
        by = agent.calls[-1].by if agent.calls and agent.calls[-1].outcome == "ok" else "offline"
        d = Draft(c, msg.title, msg.body, msg.message, names, drafted_by="template" if by == "offline" else by)
        d.errors = errors
        if d.message and c.kind == "introduction" and c.entities:  # what `approve` would send, once approved
            d.action = {"channel": "email", "to": names.get(c.entities[0]), "subject": d.title, "body": d.message}
        return d


def _draft_each(
    candidates: list[Candidate], names: dict[int, str], settings: Any, gateway: Any, run_id: str | None
) -> DraftResult:
    use_model = gateway is not None and settings is not None and settings.models.draft != "offline"
    drafter = Drafter(gateway=gateway if use_model else None, run_id=run_id, settings=settings)
    drafts, errors, sent = [], [], 0
    for c in candidates:
        sent += min(len(c.evidence), MAX_EXCERPTS)
        d = drafter.draft_one(c, names)
        errors.extend(d.errors)
        d.errors = []
        drafts.append(d)
    return DraftResult(drafts, sent, errors)


def draft(
    candidates: Any,
    *,
    api: Any = None,
    settings: Any = None,
    gateway: Any = None,
    run_id: str | None = None,
    evidence: list[dict[str, Any]] | None = None,
    context: dict[str, Any] | None = None,
    store: Store | None = None,
) -> Any:
    """Drafts for `candidates` (a list, best first), reading evidence and names through
    `api`; returns a DraftResult. Given one Candidate with its `evidence` dicts and a
    `store` (the daemon's pipeline), returns that one Draft. A model failure falls
    back to the template; a spent budget stops model drafting for the rest of the run."""
    if isinstance(candidates, Candidate):
        c = candidates
        if evidence is not None:
            c.evidence = [Evidence.from_dict(e) for e in evidence][:MAX_EXCERPTS]
        elif api is not None:
            fill_evidence([c], api)
        ids = sorted({*c.entities, *c.path})
        if store is not None and ids:
            names = {
                int(r[0]): r[1]
                for r in store.con.execute("SELECT id, name FROM entities WHERE list_contains(?, id)", [ids]).fetchall()
            }
        else:
            names = entity_names([c], api) if api is not None else {}
        result = _draft_each([c], names, settings, gateway, run_id)
        out = result.drafts[0]
        if out.action and store is not None and c.entities:
            # Only an address the owner's side gave (a calendar invitation, an import), never
            # one a transcript attached (source_id set): what someone says in a meeting
            # must not choose where an approved message goes.
            email = store.scalar(
                "SELECT alias FROM aliases WHERE entity_id = ? AND alias LIKE '%_@_%' AND source_id IS NULL "
                "ORDER BY created_at DESC LIMIT 1",
                [int(c.entities[0])],
            )
            if email:
                out.action["to"] = email
        out.errors = result.errors
        return out
    candidates = list(candidates)
    fill_evidence(candidates, api)
    return _draft_each(candidates, entity_names(candidates, api), settings, gateway, run_id)


def render_text(drafts: list[Draft]) -> str:
    """Plain text for the terminal: ranked candidates with their evidence."""
    out = []
    for n, d in enumerate(drafts, 1):
        out.append(f"{n}. [{d.candidate.kind} {d.candidate.score:.2f}] {d.title}")
        for line in d.body.splitlines():
            out.append(f"   {line}")
        if d.message:
            out.append("   Draft message:")
            out.extend(f"     {line}" for line in d.message.splitlines())
        out.append("")
    return "\n".join(out).rstrip() + "\n" if out else "Nothing found.\n"


__all__ = ["Draft", "DraftAnswer", "Drafter", "DraftResult", "draft", "fill_evidence", "render_text", "template_draft"]

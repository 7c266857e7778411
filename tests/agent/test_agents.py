"""Agents as Python objects (agent/base.py): completed methods, their offline
implementations, sub-agents with their own model, context and budget, on two scripted
models (litellm's custom provider map), a real store and the real sandbox."""

from __future__ import annotations

import json

import pytest

from backchannel.agent.base import Agent, CompletionFailed, completed_body, describe
from backchannel.agent.loop import Proactive
from backchannel.agent.models import Gateway
from backchannel.agent.work import Introductions, Judgement, Path
from backchannel.config import Settings, resolve_paths
from backchannel.graph.api import GraphAPI
from tests.support.synth import SEED_NOW, seed_story

QUESTION = "Who can introduce me to the CIO of Acme?"
PROGRAM = """```python
me = api.me()["id"]
target = api.resolve("CIO", org="Acme")
result = []
for p in api.paths([me], [t["id"] for t in target], max_hops=3, predicates=["knows", "worked_with"]):
    result.append(Candidate(kind="introduction", entities=[p["nodes"][1], p["nodes"][-1]], path=p["nodes"],
                            evidence=[e[0] for e in p["edges"]], score=0.8, why="a path"))
```"""
DRAFT = {
    "title": "Ask Marc about Sophie",
    "body": "Marc worked with Sophie at Globex.",
    "message": "Hi Marc, could you introduce me to Sophie?",
}
QUOTE = "I worked with Sophie Martin at Globex from 2016 to 2021"


@pytest.fixture
def scripted():
    from tests.support.scripted_models import register_scripted, unregister_scripted

    made = []

    def make(entries, name):
        made.append(name)
        return register_scripted(entries, name=name)

    yield make
    for n in made:
        unregister_scripted(n)


def _two_models(store, scripted, **budgets):
    sweep_script = scripted([{"content": PROGRAM}], "agents-sweep")
    draft_script = scripted([{"content": DRAFT, "repeat": True}], "agents-draft")
    settings = Settings(models={"sweep": "scripted/agents-sweep", "draft": "scripted/agents-draft", "retries": 0})
    paths = resolve_paths()
    agent = Proactive.for_run(
        api=GraphAPI(store, now=SEED_NOW),
        settings=settings,
        paths=paths,
        gateway=Gateway(settings, store, paths),
        run_id="Ragents",
        **budgets,
    )
    return agent, sweep_script, draft_script


def test_sweeper_and_drafter_each_call_their_own_model_and_see_only_their_own_context(store, scripted):
    seed_story(store)
    agent, sweep_script, draft_script = _two_models(store, scripted)
    assert isinstance(agent.sweeper, Agent) and isinstance(agent.drafter, Agent)
    swept, drafted = agent.answer({"wake": "ask"}, QUESTION)
    assert swept.skill == "generated" and len(swept.candidates) == 1
    [d] = drafted.drafts
    assert (d.title, d.drafted_by) == ("Ask Marc about Sophie", "scripted/agents-draft")
    assert d.action == {"channel": "email", "to": "Marc Dupont", "subject": d.title, "body": DRAFT["message"]}
    # Each call went to its own model, as the gateway recorded it.
    rows = store.con.execute("SELECT role, model FROM model_calls WHERE run_id = 'Ragents' ORDER BY id").fetchall()
    assert rows == [("sweep", "scripted/agents-sweep"), ("draft", "scripted/agents-draft")]
    assert [c.by for c in agent.sweeper.calls] == ["scripted/agents-sweep"]
    assert [c.by for c in agent.drafter.introductions.calls] == ["scripted/agents-draft"]
    [sweep_call], [draft_call] = sweep_script.calls, draft_script.calls
    # The sweeper's model saw the question and the graph API, never the evidence it led to.
    assert QUESTION in sweep_call.prompt and "def paths(" in sweep_call.prompt
    assert QUOTE not in sweep_call.prompt and "Hi Marc" not in sweep_call.prompt
    # The drafter's model saw the excerpts, never the question, the API or the program.
    assert QUOTE in draft_call.prompt
    for sweeper_only in (QUESTION, "def paths(", "api.resolve", "max_hops"):
        assert sweeper_only not in draft_call.prompt
    # ... and exactly the completed method's prompt: docstring, name, typed parameters.
    system, user = draft_call.messages[0], draft_call.messages[-1]
    assert system["content"] == Introductions.completed_methods()["draft"].doc
    call = json.loads(user["content"])
    assert call["method"] == "draft" and [p["name"] for p in call["parameters"]] == ["path"]
    assert call["parameters"][0]["value"]["people"] == ["Marc Dupont", "Sophie Martin"]


def test_each_sub_agent_spends_its_own_budget(store, scripted):
    """The drafter's own budget is too small for one draft: it falls back to its template,
    says why, and the sweeper (its own budget) is untouched."""
    seed_story(store)
    agent, sweep_script, draft_script = _two_models(store, scripted, draft_budget=20)
    swept, drafted = agent.answer({"wake": "ask"}, QUESTION)
    assert len(sweep_script.calls) == 1 and swept.candidates
    assert draft_script.calls == []
    [d] = drafted.drafts
    assert d.drafted_by == "template" and d.title == "Ask Marc Dupont for an introduction to Sophie Martin"
    assert any("own token budget" in e for e in drafted.errors)
    assert agent.drafter.introductions.calls[-1].outcome == "budget_stopped"
    assert agent.sweeper.spent_tokens() > 0


def test_offline_each_completed_method_runs_its_registered_implementation(store):
    """No model: the judge's offline judgement and the drafter's template, unchanged."""
    seed_story(store)
    agent = Proactive.for_run(api=GraphAPI(store, now=SEED_NOW), settings=Settings(), paths=resolve_paths())
    swept, drafted = agent.answer({"wake": "ask"}, QUESTION)
    assert swept.skill == "introductions"
    [d] = drafted.drafts
    assert d.drafted_by == "template" and d.title == "Ask Marc Dupont for an introduction to Sophie Martin"
    assert [c.by for c in agent.drafter.introductions.calls] == ["offline"]

    class Judged:
        score, veto, reasons = 0.7, None, ["meeting soon"]

    p = Path(kind="introduction")
    p._judged = Judged()
    assert Introductions().worth_an_introduction(p) == Judgement(worth_it=True, score=0.7, reason="meeting soon")
    rows = {r["method"]: r for r in describe(Introductions, Settings())}
    assert rows["paths"]["runs"] == "python"
    assert rows["worth_an_introduction"]["runs"] == "offline" and rows["draft"]["runs"] == "offline"
    assert rows["draft"]["offline"] == "backchannel.agent.work._template"
    rows = {r["method"]: r for r in describe(Introductions, Settings(models={"draft": "openai/gpt-4.1-mini"}))}
    assert rows["draft"] == {**rows["draft"], "runs": "model", "model": "openai/gpt-4.1-mini"}
    assert rows["worth_an_introduction"]["role"] == "judge" and rows["worth_an_introduction"]["runs"] == "model"


class Tagger(Agent):
    """A toy agent: one ordinary method, one completed one."""

    role = "draft"

    def normalise(self, text: str) -> str:
        return " ".join(text.split()).lower()

    def tags(self, text: str, limit: int = 3) -> list[str]:
        """Up to `limit` short topic tags for `text`, lower case."""
        ...


def test_a_completed_method_is_validated_and_its_failure_is_recorded_silence(store, scripted):
    script = scripted(
        [{"content": {"value": ["hiring", "acme"]}}, {"content": {"value": "not a list"}}, {"content": {"value": 3}}],
        "agents-tags",
    )
    settings = Settings(models={"draft": "scripted/agents-tags", "retries": 0})
    agent = Tagger(gateway=Gateway(settings, store, resolve_paths()), run_id="Rtags")
    assert agent.normalise("  Acme  IS Hiring ") == "acme is hiring"  # a body: ordinary Python, no model
    assert script.calls == []
    assert agent.tags("Acme is hiring a CIO") == ["hiring", "acme"]
    call = json.loads(script.calls[0].messages[-1]["content"])
    assert call == {
        "method": "tags",
        "parameters": [
            {"name": "text", "type": "str", "value": "Acme is hiring a CIO"},
            {"name": "limit", "type": "int", "value": 3},
        ],
    }
    with pytest.raises(CompletionFailed) as failed:  # an answer that does not validate, twice (one repair)
        agent.tags("again")
    assert "valid array" in failed.value.reason
    outcomes = [
        r[0] for r in store.con.execute("SELECT outcome FROM model_calls WHERE run_id = 'Rtags' ORDER BY id").fetchall()
    ]
    assert outcomes == ["ok", "invalid_output", "invalid_output"]
    assert [c.outcome for c in agent.calls] == ["ok", "failed"]
    with pytest.raises(CompletionFailed, match="no offline implementation"):
        Tagger().tags("no model, no offline implementation")


def test_what_counts_as_a_completed_method():
    assert completed_body('def f(self, x: int) -> int:\n    """doc"""\n    ...\n')
    assert completed_body("def f(self) -> int: ...\n")
    assert not completed_body('def f(self) -> int:\n    """doc"""\n    return 1\n')
    assert not completed_body("def f(self) -> int:\n    ...\n    return 1\n")
    with pytest.raises(TypeError, match="docstring"):

        class NoDoc(Agent):
            def f(self, x: int) -> int: ...

        NoDoc.completed_methods()

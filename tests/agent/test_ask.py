"""`ask` end to end offline (op and CLI), and the sweeper's model path with the
scripted model: a failing first program, its traceback sent back, a fixed second
one; the budget stopping a run cleanly; the drafter seeing only excerpts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from backchannel.agent.drafter import draft
from backchannel.agent.sweeper import build_messages, extract_code, sweep
from backchannel.config import Settings, resolve_paths
from backchannel.graph.api import GraphAPI
from backchannel.memory import Store, utcnow
from backchannel.ops import OpEnv, invoke
from backchannel.skills import relevant_skills
from tests.support.synth import SEED_NOW, seed_story

QUESTION = "Who can introduce me to the CIO of Acme?"


def _env(store, settings=None):
    return OpEnv(store=store, settings=settings or Settings(), paths=resolve_paths())


def test_ask_offline_records_a_run(store):
    ids = seed_story(store, now=utcnow())
    out = invoke(_env(store), "ask", {"question": QUESTION, "show_code": True})
    assert out["skill"] == "introductions" and out["status"] == "done" and not out["errors"]
    [c] = out["candidates"]
    assert c["entities"] == [ids["Marc Dupont"], ids["Sophie Martin"]]
    assert c["title"] == "Ask Marc Dupont for an introduction to Sophie Martin"
    quotes = [e["quote"] for e in c["evidence"]]
    assert "I worked with Sophie Martin at Globex from 2016 to 2021" in quotes
    assert all(e["speaker"] and e["said_at"] for e in c["evidence"])
    assert c["action"]["to"] == "Marc Dupont" and "Sophie Martin" in c["message"]
    assert "api.paths(" in out["code"]
    run = store.query("SELECT * FROM runs WHERE id = ?", [out["run_id"]])[0]
    assert run["wake_kind"] == "ask" and run["status"] == "done"
    assert run["excerpts_sent"] == 3 and run["assertions_touched"] > run["excerpts_sent"]
    kinds = [e["kind"] for e in store.events(run_id=out["run_id"])]
    assert kinds[0] == "run.started" and "sweep.offline" in kinds and "sweep.done" in kinds
    assert kinds[-1] == "run.finished"


def test_ask_cli_offline(home):
    paths = resolve_paths().ensure()
    with Store.open(paths.db_file) as s:
        seed_story(s, now=utcnow())
    from backchannel.cli.main import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["ask", QUESTION])
    assert res.exit_code == 0, res.output
    assert "1. [introduction 0.90] Ask Marc Dupont for an introduction to Sophie Martin" in res.output
    assert "“Sophie is the CIO of Acme” — Marc Dupont" in res.output
    res = runner.invoke(cli, ["ask", "what commitments are still open?", "--json"])
    data = json.loads(res.stdout)
    assert {c["kind"] for c in data["candidates"]} == {"commitment"} and len(data["candidates"]) == 3
    res = runner.invoke(cli, ["ask", QUESTION, "--show-code"])
    assert "api.resolve(" in res.output
    res = runner.invoke(cli, ["skills"])
    assert res.exit_code == 0 and "stale_relationships" in res.output
    res = runner.invoke(cli, ["skills", "run", "stale_relationships", "--arg", "weeks=1", "--json"])
    out = json.loads(res.stdout)
    assert out["ok"] and out["candidates"] and out["candidates"][0]["evidence"][0]["quote"]
    res = runner.invoke(cli, ["skills", "run", "introductions", "--arg", "nope=1"])
    assert res.exit_code != 0


def test_extract_code():
    assert extract_code("Here:\n```python\nresult = []\n```\nbye") == "result = []\n"
    assert extract_code("result = [1]") == "result = [1]\n"
    assert extract_code("```Python\nresult = 2\n```") == "result = 2\n"
    assert extract_code("``` python3\r\nresult = 3\n```") == "result = 3\n"


BROKEN = "```python\ntarget = api.resolve('CIO', org='Acme')\nresult = [t['nope'] for t in target]\n```"
FIXED = """```python
me = api.me()["id"]
target = api.resolve("CIO", org="Acme")
result = []
for p in api.paths([me], [t["id"] for t in target], max_hops=3, predicates=["knows", "worked_with"]):
    result.append(Candidate(kind="introduction", entities=[p["nodes"][1], p["nodes"][-1]], path=p["nodes"],
                            evidence=[e[0] for e in p["edges"]], score=0.8, why="a path"))
```"""


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


def test_model_sweep_retries_with_the_traceback(store, scripted):
    ids = seed_story(store)
    script = scripted([{"content": BROKEN}, {"content": FIXED}], "sweep-retry")
    settings = Settings(models={"sweep": "scripted/sweep-retry", "retries": 0})
    from backchannel.agent.models import Gateway

    api = GraphAPI(store, now=SEED_NOW)
    res = sweep(
        {"wake": "ask"},
        api=api,
        settings=settings,
        paths=resolve_paths(),
        gateway=Gateway(settings, store, resolve_paths()),
        run_id="Rtest1",
        question=QUESTION,
    )
    assert res.skill == "generated" and res.attempts == 2
    assert [c.entities for c in res.candidates] == [[ids["Marc Dupont"], ids["Sophie Martin"]]]
    assert res.errors and "KeyError" in res.errors[0] and "nope" in res.errors[0]
    first, second = script.calls
    assert "def paths(" in first.prompt and "run_skill('introductions'" in first.prompt  # stubs + the skill
    assert "KeyError" in second.messages[-1]["content"] and second.messages[-2]["content"] == BROKEN
    attempts = [e["data"] for e in store.events(run_id="Rtest1", kind="sweep.attempt")]
    assert [a["ok"] for a in attempts] == [False, True]


def test_model_sweep_stops_on_budget(store, scripted):
    seed_story(store)
    scripted([{"content": BROKEN, "repeat": True}], "sweep-budget")
    from backchannel.agent.models import Gateway, estimate_tokens

    first = estimate_tokens(build_messages({"wake": "ask", "question": QUESTION}, QUESTION, relevant_skills(QUESTION)))
    settings = Settings(
        models={
            "sweep": "scripted/sweep-budget",
            "retries": 0,
            "sweep_attempts": 5,
            "budget": {"per_run_tokens": int(first * 1.5)},
        }
    )
    api = GraphAPI(store, now=SEED_NOW)
    res = sweep(
        {"wake": "ask"},
        api=api,
        settings=settings,
        paths=resolve_paths(),
        gateway=Gateway(settings, store, resolve_paths()),
        run_id="Rbudget",
        question=QUESTION,
    )
    assert res.budget_stopped and res.candidates == [] and res.attempts == 1
    assert res.errors[-1].startswith("budget:")


def test_model_failure_falls_back_to_skills(store, scripted):
    ids = seed_story(store)
    scripted([{"error": 400, "repeat": True}], "sweep-down")
    settings = Settings(models={"sweep": "scripted/sweep-down", "retries": 0})
    from backchannel.agent.models import Gateway

    res = sweep(
        {"wake": "ask"},
        api=GraphAPI(store, now=SEED_NOW),
        settings=settings,
        paths=resolve_paths(),
        gateway=Gateway(settings, store, resolve_paths()),
        run_id="Rdown",
        question=QUESTION,
    )
    assert res.skill == "introductions" and res.candidates[0].entities[0] == ids["Marc Dupont"]
    assert any(e.startswith("model:") for e in res.errors)


def test_model_drafter_sees_only_the_excerpts(store, scripted):
    seed_story(store)
    script = scripted(
        [
            {
                "content": {
                    "title": "Ask Marc about Sophie",
                    "body": "Marc worked with her at Globex.",
                    "message": "Hi Marc, could you introduce me to Sophie?",
                }
            }
        ],
        "draft-one",
    )
    settings = Settings(models={"draft": "scripted/draft-one", "retries": 0})
    from backchannel.agent.models import Gateway

    api = GraphAPI(store, now=SEED_NOW)
    swept = sweep({"wake": "ask"}, api=api, settings=settings, paths=resolve_paths(), question=QUESTION)
    out = draft(
        swept.candidates, api=api, settings=settings, gateway=Gateway(settings, store, resolve_paths()), run_id="Rdraft"
    )
    [d] = out.drafts
    assert d.title == "Ask Marc about Sophie" and d.drafted_by == "scripted/draft-one"
    assert d.action["body"] == "Hi Marc, could you introduce me to Sophie?"
    assert out.excerpts_sent == 3
    prompt = script.calls[0].prompt
    assert "I worked with Sophie Martin at Globex from 2016 to 2021" in prompt
    for unrelated in ("Robert Petit", "Julie Bernard", "review the contract", "Nina"):
        assert unrelated not in prompt


def test_drafter_single_candidate_for_the_pipeline(store):
    """The daemon drafts one candidate at a time with the evidence it loaded itself."""
    ids = seed_story(store)
    api = GraphAPI(store, now=SEED_NOW)
    swept = sweep({"wake": "ask"}, api=api, settings=Settings(), paths=resolve_paths(), question=QUESTION)
    cand = swept.candidates[0]
    evidence = api.evidence(cand.evidence_ids)
    d = draft(
        cand,
        evidence=evidence,
        context={"trigger": "signal"},
        store=store,
        settings=Settings(),
        gateway=None,
        run_id=None,
    ).to_dict()
    assert d["title"] == "Ask Marc Dupont for an introduction to Sophie Martin"
    assert d["action"]["to"] == "Marc Dupont" and d["entities"] == [ids["Marc Dupont"], ids["Sophie Martin"]]
    assert "Sophie is the CIO of Acme" in d["body"]


def test_sweep_prompt_carries_only_the_wakes_skills_and_the_api_they_walk(store, scripted):
    """What the sweep model reads: the question and context; the skills relevant to this
    question or wake, each as a callable (its doc and parameters, not its source); the full
    stubs generated from the real GraphAPI of the methods those skills call and the core
    ones; every other served method as one signature line, without its docstring."""
    import inspect

    from backchannel.agent.models import Gateway
    from backchannel.agent.sweep_prompt import CORE_METHODS, methods_called
    from backchannel.graph.api import API_METHODS
    from backchannel.skills import get_skill, list_skills

    seed_story(store)
    script = scripted([{"content": FIXED, "repeat": True}], "sweep-prompt")
    settings = Settings(models={"sweep": "scripted/sweep-prompt", "retries": 0})
    gw = Gateway(settings, store, resolve_paths())
    api = GraphAPI(store, now=SEED_NOW)
    sweep({"wake": "ask"}, api=api, settings=settings, paths=resolve_paths(), gateway=gw, question=QUESTION)
    sweep({"wake": "sweep"}, api=api, settings=settings, paths=resolve_paths(), gateway=gw)
    asked, periodic = script.calls[0].prompt, script.calls[1].prompt
    for prompt, names in ((asked, ["introductions"]), (periodic, ["stale_relationships", "open_commitments"])):
        skills = [get_skill(n) for n in names]
        walked = set(CORE_METHODS).union(*(methods_called(s.source_code) for s in skills))
        for name in API_METHODS:
            fn = getattr(GraphAPI, name)
            params = [p for p in inspect.signature(fn).parameters if p != "self"]
            assert f"{name}(" in prompt and all(p in prompt for p in params), name
            assert (inspect.getdoc(fn).splitlines()[0] in prompt) == (name in walked), name
        shown = {s.name for s in list_skills() if f"run_skill({s.name!r}" in prompt}
        assert shown == set(names)
        for s in skills:
            assert s.doc in prompt and all(k in prompt for k in s.params)
            assert s.source_code.strip().splitlines()[0] not in prompt  # the source stays out
    assert QUESTION in asked and '"wake":"ask"' in asked
    assert len(periodic) < 9000 and len(asked) < 9000  # was ~19k characters with every stub and source


def test_a_generated_program_may_call_the_prepared_skill(store, scripted):
    """`run_skill(NAME, ...)` in a generated program runs the skill's own program in the
    sandbox, with the wake's context under the call's arguments: the same candidates as
    the skill run alone; a wrong parameter is an error at the model's own line number."""
    from backchannel.agent.models import Gateway
    from backchannel.agent.sweeper import run_skill
    from backchannel.skills import get_skill

    ids = seed_story(store)
    wrong = "```python\nme = api.me()\n\nresult = run_skill('introductions', tagret='CIO of Acme')\n```"
    right = "```python\nresult = run_skill('introductions', target='CIO of Acme')\n```"
    script = scripted([{"content": wrong}, {"content": right}], "sweep-call")
    settings = Settings(models={"sweep": "scripted/sweep-call", "retries": 0})
    api = GraphAPI(store, now=SEED_NOW)
    res = sweep(
        {"wake": "ask"},
        api=api,
        settings=settings,
        paths=resolve_paths(),
        gateway=Gateway(settings, store, resolve_paths()),
        run_id="Rcall",
        question=QUESTION,
    )
    alone, _ = run_skill(get_skill("introductions"), api, settings, args={"target": "CIO of Acme"})
    assert res.skill == "generated" and res.attempts == 2
    assert [c.to_dict() for c in res.candidates] == [c.to_dict() for c in alone]
    assert [c.entities for c in res.candidates] == [[ids["Marc Dupont"], ids["Sophie Martin"]]]
    assert "tagret" in res.errors[0] and "line 3," in res.errors[0], res.errors[0]
    assert "line 3," in script.calls[1].messages[-1]["content"]
    assert res.code.strip() == "result = run_skill('introductions', target='CIO of Acme')"


def test_the_sweeper_never_runs_model_code_in_the_daemon(store, scripted):
    """A generated program that mutates modules it imports changes only the
    sandbox child's copies; every attempt ran in a fresh, confined process."""
    import math
    import os as _os
    import textwrap as _textwrap

    from backchannel.agent.models import Gateway

    seed_story(store)
    program = (
        "```python\nimport math, textwrap\nmath.pi = 3\ntextwrap.PWNED = 'yes'\n"
        "result = [Candidate(kind='other', entities=[api.me()['id']], why='pi is ' + str(math.pi))]\n```"
    )
    scripted([{"content": program}], "sweep-mutate")
    settings = Settings(models={"sweep": "scripted/sweep-mutate", "retries": 0})
    res = sweep(
        {"wake": "ask"},
        api=GraphAPI(store, now=SEED_NOW),
        settings=settings,
        paths=resolve_paths(),
        gateway=Gateway(settings, store, resolve_paths()),
        run_id="Rmut",
        question="anything odd?",
    )
    assert res.skill == "generated" and res.candidates[0].why == "pi is 3"  # it ran...
    assert math.pi != 3 and not hasattr(_textwrap, "PWNED")  # ...but not here
    [attempt] = [e["data"] for e in store.events(run_id="Rmut", kind="sweep.attempt")]
    stats = attempt["stats"]
    assert stats["pid"] != _os.getpid() and "fresh_process" in stats["isolation"]
    assert "empty_env" in stats["isolation"] and "audit_hook" in stats["isolation"]


def test_ask_says_why_nothing_was_found(home):
    paths = resolve_paths().ensure()
    with Store.open(paths.db_file) as s:
        seed_story(s, now=utcnow())
    from backchannel.cli.main import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["ask", "brief me on Nobody Known"])
    assert (
        res.exit_code == 0 and "Nothing found: no one and no organisation named 'Nobody Known' in memory." in res.stdout
    ), res.output
    data = json.loads(runner.invoke(cli, ["ask", "who can introduce me to someone at Hooli?", "--json"]).stdout)
    assert data["candidates"] == [] and "'Hooli'" in data["why_nothing"]
    data = json.loads(runner.invoke(cli, ["ask", "brief me on Acme", "--json"]).stdout)
    assert data["why_nothing"] is None and [c["title"] for c in data["candidates"]] == ["Brief on Acme"]


def test_ask_natural_questions_on_qmsum(corpora, store):
    env = _env(store)
    files = sorted(str(f) for f in (corpora / "meetings" / "qmsum").glob("*.json") if f.name != "INDEX.json")
    assert invoke(env, "ingest", {"paths": files})["ingested"] == len(files)
    out = invoke(env, "ask", {"question": "who is the chief executive of Colegau Cymru?"})
    [c] = out["candidates"]
    assert c["title"] == "Brief on ColegauCymru" and "nobody is recorded as chief executive there" in c["why"]
    assert "Dafydd Evans (chair)" in c["why"]
    out = invoke(env, "ask", {"question": "who works at Samaritans?"})
    assert "Sarah Stone (executive director for Wales)" in out["candidates"][0]["why"]
    out = invoke(env, "ask", {"question": "who knows Kay Martin?"})
    assert out["candidates"] == [] and out["why_nothing"].startswith("no path from you to Kay Martin")
    out = invoke(env, "ask", {"question": "what did Lynne Neagle promise?"})
    assert out["candidates"] and all(c["kind"] == "commitment" for c in out["candidates"])

"""Users' own agents (agent/user_agents.py): a class in the user skills folder, read
from its AST on demand and never executed in the daemon; completed methods through the
gateway with the same prompt rules as the package's agents, bodies in the real sandbox."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from backchannel.agent.base import CompletionFailed
from backchannel.agent.models import Gateway
from backchannel.agent.user_agents import UserAgentError, load_agent, parse_agent
from backchannel.config import Settings, resolve_paths
from backchannel.graph.api import GraphAPI
from backchannel.ops import OpEnv, invoke

AGENT = '''"""Who is hiring, and what for."""

open({marker!r}, "w").write("executed")  # never runs: a user agent is parsed, not imported


class Opening:
    """A job opening a headline announces."""
    org: str
    title: str
    senior: bool = False


class Hiring(Agent):
    """Reads hiring news."""
    role = "draft"

    def shout(self, words: list[str], times: int = 2) -> str:
        return " ".join(w.upper() for w in words) * times

    def read_opening(self, headline: str) -> Opening | None:
        """Read the job opening the news `headline` announces; null when it announces none."""
        ...
'''


@pytest.fixture
def agent_file(home, tmp_path):
    paths = resolve_paths().ensure()
    paths.user_skills_dir.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "executed.txt"
    f = paths.user_skills_dir / "hiring.py"
    f.write_text(AGENT.format(marker=str(marker)), encoding="utf-8")
    return paths, marker


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


def test_a_user_agent_is_listed_per_method_and_never_executed(agent_file, store):
    paths, marker = agent_file
    env = OpEnv(store=store, settings=Settings(), paths=paths)
    skills = invoke(env, "skills", {})
    assert not [s for s in skills if s.get("error")]  # an agent file is not a broken skill
    rows = {(r["agent"], r["method"]): r for r in invoke(env, "agents", {})}
    assert rows[("Hiring", "shout")]["runs"] == "sandbox"
    assert rows[("Hiring", "read_opening")]["runs"] == "offline" and rows[("Hiring", "read_opening")]["offline"] is None
    assert rows[("Introductions", "paths")]["runs"] == "python"
    assert rows[("Introductions", "draft")]["runs"] == "offline"
    env = OpEnv(store=store, settings=Settings(models={"draft": "openai/gpt-4.1-mini"}), paths=paths)
    rows = {(r["agent"], r["method"]): r for r in invoke(env, "agents", {})}
    assert rows[("Hiring", "read_opening")]["model"] == "openai/gpt-4.1-mini"
    assert not marker.exists()
    from backchannel.cli.main import cli

    out = CliRunner().invoke(cli, ["skills"])
    assert out.exit_code == 0, out.output
    assert "Hiring  (" in out.output and "read_opening: offline (none: it needs a model)" in out.output
    assert "worth_an_introduction: offline (backchannel.agent.work._offline_judgement)" in out.output
    assert not marker.exists()


def test_a_user_agents_methods_run_by_the_model_and_in_the_sandbox(agent_file, store, scripted):
    paths, marker = agent_file
    script = scripted(
        [
            {"content": {"value": {"org": "Acme", "title": "CIO", "senior": True}}},
            {"content": {"value": {"org": "Acme"}}},
            {"content": {"value": {"title": 3}}},
        ],
        "user-agent",
    )
    settings = Settings(models={"draft": "scripted/user-agent", "retries": 0})
    agent = load_agent(
        "Hiring", paths, gateway=Gateway(settings, store, paths), run_id="Ruser", settings=settings, api=GraphAPI(store)
    )
    opening = agent.call("read_opening", "Acme hires a new CIO")
    assert opening.model_dump() == {"org": "Acme", "title": "CIO", "senior": True}
    system, user = script.calls[0].messages[0], script.calls[0].messages[-1]
    assert system["content"] == "Read the job opening the news `headline` announces; null when it announces none."
    assert json.loads(user["content"]) == {
        "method": "read_opening",
        "parameters": [{"name": "headline", "type": "str", "value": "Acme hires a new CIO"}],
    }
    with pytest.raises(CompletionFailed, match="title"):  # validated against the file's own Opening
        agent.call("read_opening", "Acme again")
    assert agent.call("shout", ["a", "b"]) == "A BA B"  # ran in the sandbox child, not here
    assert not marker.exists()
    with pytest.raises(UserAgentError, match="no method"):
        agent.call("nope")
    offline = load_agent("hiring", paths, settings=Settings())
    with pytest.raises(CompletionFailed, match="no offline implementation"):
        offline.call("read_opening", "x")


def test_a_user_agent_file_that_cannot_be_used_says_why():
    with pytest.raises(UserAgentError, match="annotation 'set"):
        parse_agent('class A(Agent):\n    def f(self, x: set[int]) -> str:\n        """d"""\n        ...\n', "a.py")
    with pytest.raises(UserAgentError, match="docstring"):
        parse_agent("class A(Agent):\n    def f(self, x: int) -> str: ...\n", "a.py")
    with pytest.raises(UserAgentError, match="refused by the sandbox"):
        parse_agent("class A(Agent):\n    def f(self) -> str:\n        import os\n        return os.name\n", "a.py")

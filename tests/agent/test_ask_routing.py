"""ask and skills run on the CLI: ambiguity shown, the program
that ran always shown, empty answers explained, bad --arg values refused in words."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from click.testing import CliRunner

from backchannel.agent.routing import mask_names, route
from backchannel.cli.common import UserError
from backchannel.cli.main import cli

MEETING = (
    "Alex Moreau: Welcome, both of you.\n"
    "Nick Brazil: I work at Gower College Swansea.\n"
    "Nick Williams: I work at Swansea Council.\n"
    "Kirsty Williams: I'll send you the report by Friday.\n"
)


@pytest.fixture
def runner(home, tmp_path):
    r = CliRunner()
    assert r.invoke(cli, ["init", "--name", "Alex Moreau"]).exit_code == 0
    # dated two days ago, so that Friday's promise is open whatever day the test runs
    f = tmp_path / f"{(date.today() - timedelta(days=2)).isoformat()} colleges.txt"
    f.write_text(MEETING, encoding="utf-8")
    res = r.invoke(cli, ["ingest", str(f)])
    assert res.exit_code == 0, res.output
    return r


def test_a_first_name_for_two_people_is_answered_for_both_and_said(runner):
    res = runner.invoke(cli, ["ask", "where does Nick work?"])
    assert res.exit_code == 0, res.output
    assert "Nick: 2 people (Nick Brazil, Nick Williams); answering for both." in res.stdout
    assert "Gower College Swansea" in res.stdout and "Swansea Council" in res.stdout
    data = json.loads(runner.invoke(cli, ["ask", "where does Nick work?", "--json"]).stdout)
    assert data["notes"] == ["Nick: 2 people (Nick Brazil, Nick Williams); answering for both"]
    assert data["route"]["method"] == "rule" and data["route"]["intent"] == "person"
    # a full name is not ambiguous
    data = json.loads(runner.invoke(cli, ["ask", "where does Nick Williams work?", "--json"]).stdout)
    assert data["notes"] == [] and [c["title"] for c in data["candidates"]] == ["Brief on Nick Williams"]


def test_show_code_always_shows_what_ran(runner):
    res = runner.invoke(cli, ["ask", "where does Nick Brazil work?", "--show-code"])
    assert "# program (pre_meeting_brief):\n# skill: pre_meeting_brief\n" in res.stdout
    assert '# arguments: {"attendees": ["Nick Brazil"]}' in res.stdout and "api.resolve(" in res.stdout
    res = runner.invoke(cli, ["ask", "zzzz qqqq", "--show-code"])
    assert res.exit_code == 0
    assert "# program (none):\n# no program ran: no prepared skill matches this question" in res.stdout


def test_skills_run_explains_empty_answers_and_refuses_bad_values(runner):
    res = runner.invoke(cli, ["skills", "run", "open_commitments", "--arg", "people=Nobody Known"])
    assert res.exit_code == 0 and "Nothing found: no one named 'Nobody Known' in memory." in res.stdout
    out = json.loads(
        runner.invoke(cli, ["skills", "run", "pre_meeting_brief", "--arg", "attendees=Zed Q", "--json"]).stdout
    )
    assert out["candidates"] == [] and "'Zed Q'" in out["why_nothing"]
    for arg, words in (
        ("weeks=abc", "--arg weeks='abc' is not valid: a number, 0 or more, is expected"),
        ("weeks=-2", "a number, 0 or more"),
        ("weeks=[1, 2]", "one value is expected, not a list"),
    ):
        res = runner.invoke(cli, ["skills", "run", "stale_relationships", "--arg", arg])
        assert isinstance(res.exception, UserError) and words in str(res.exception), (arg, res.exception)
    res = runner.invoke(cli, ["skills", "run", "pre_meeting_brief", "--arg", 'attendee_ids=["x"]'])
    assert isinstance(res.exception, UserError) and "entity ids are whole numbers" in str(res.exception)
    res = runner.invoke(cli, ["skills", "run", "open_commitments", "--arg", "everyone=maybe"])
    assert isinstance(res.exception, UserError) and "true or false is expected" in str(res.exception)
    res = runner.invoke(cli, ["skills", "run", "open_commitments", "--arg", "everyone=true", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["candidates"]


def test_commitments_question_covers_everyone(runner):
    data = json.loads(runner.invoke(cli, ["ask", "what commitments are open?", "--json"]).stdout)
    assert data["skill"] == "open_commitments"
    assert any("Kirsty Williams" in c["why"] for c in data["candidates"]), data


def test_names_are_masked_for_the_embedding():
    assert mask_names("where does Nick Williams work?") == "where does X work?"
    assert mask_names("What is Kirsty Williams' role?") == "What is X role?"
    assert route("who is the Minister for Education?").to_dict()["args"] == {"attendees": ["Minister for Education"]}
    assert route("what is Kirsty Williams' role?").args == {"attendees": ["Kirsty Williams"]}
    assert route("what commitments are open?").args.get("everyone") is True

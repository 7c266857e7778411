"""`ask` answers the question asked: titles and chairs ("who chairs X", organisation
names kept whole, a chair read from who the body's meetings address as "Chair"),
incoming links over the whole memory ("who knows X"), commitments of the person, seat
or title named, and an empty answer that says what was searched. Meetings written
here, not from any suite the rules were tuned on."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from backchannel.agent.questions import question_args
from backchannel.agent.routing import route
from backchannel.config import Settings, resolve_paths
from backchannel.graph.api import GraphAPI
from backchannel.ops import OpEnv, invoke
from backchannel.skills import get_skill

COMMITTEE = """\
Rhian Price: Good afternoon and welcome to this meeting of the Finance and Audit Committee. We have apologies from Tom Reed. Officials of the Brightwater Trust join us later.
Gareth Owen: Thank you, Chair. I'd like to start with the reserves policy.
Rhian Price: Please go ahead, Gareth.
Gareth Owen: I met with Carys Lloyd last week about the audit timetable, and she was clear about the risks.
Rhian Price: Thank you. Huw, you had a question.
Huw Jones: Thanks, Chair. Just one, on the capital programme.
Rhian Price: Finally, I will write to the Business Committee about the timetable.
"""

PROJECT = """\
Dana Fox: Hello all, I'm Dana Fox, the project manager for the kiosk redesign.
Omar Haddad: Great. I'll draft the interface mock-ups by Thursday.
Dana Fox: And I will send everyone the meeting minutes by Friday.
"""


@pytest.fixture
def asked(home, store, tmp_path):
    env = OpEnv(store=store, settings=Settings(owner={"name": "Alex Moreau"}), paths=resolve_paths().ensure())
    day = (date.today() - timedelta(days=2)).isoformat()
    for name, text in (("finance committee.txt", COMMITTEE), ("kiosk kickoff.txt", PROJECT)):
        f = tmp_path / f"{day} {name}"
        f.write_text(text, encoding="utf-8")
        assert invoke(env, "ingest", {"paths": [str(f)]})["ingested"] == 1
    return lambda q: invoke(env, "ask", {"question": q, "show_code": True})


def _said(out):
    return " ".join(f"{c['title']} {c.get('why') or ''}" for c in out["candidates"]) + " " + (out["why_nothing"] or "")


@pytest.mark.parametrize(
    "question,skill,args",
    [
        (
            "who chairs the Finance and Audit Committee?",
            "pre_meeting_brief",
            {"attendees": ["chair of Finance and Audit Committee"]},
        ),
        (
            "Who headed the Children, Young People and Education Committee?",
            "pre_meeting_brief",
            {"attendees": ["head of Children, Young People and Education Committee"]},
        ),
        (
            "who is the chair of the planning committee",
            "pre_meeting_brief",
            {"attendees": ["chair of the planning committee"]},
        ),
        ("who knows Carys Lloyd?", "introductions", {"target": "Carys Lloyd", "incoming": True}),
        ("who has worked with Omar?", "introductions", {"target": "Omar", "incoming": True}),
        ("who met Carys Lloyd", "introductions", {"target": "Carys Lloyd", "incoming": True}),
        ("who does Gareth Owen know?", "introductions", {"target": "Gareth Owen", "incoming": True}),
        (
            "who led the Finance and Audit Committee meeting?",
            "pre_meeting_brief",
            {"attendees": ["chair of Finance and Audit Committee"]},
        ),
        ("who works at Hooli?", "pre_meeting_brief", {"attendees": ["Hooli"]}),
    ],
)
def test_routing_of_titles_and_incoming_links(question, skill, args):
    r = route(question)
    assert r.skill is not None and r.skill.name == skill and r.args == args, r.to_dict()


@pytest.mark.parametrize(
    "question,people",
    [
        ("what did the project manager promise?", ["project manager"]),
        ("what has the Minister of Finance committed to?", ["Minister of Finance"]),
        ("what does Priya Shah owe me?", ["Priya Shah"]),
        ("what did I promise?", ["me"]),
        ("list the promises of the chair", ["chair"]),
        ("who promised to send something?", None),
    ],
)
def test_whose_commitments_a_question_names(question, people):
    assert question_args(get_skill("open_commitments"), question).get("people") == people


def test_a_chair_no_assertion_records_is_read_from_how_the_meetings_address_them(asked):
    out = asked("who chairs the Finance and Audit Committee?")
    assert [c["title"] for c in out["candidates"]] == ["Brief on Rhian Price"]
    why = out["candidates"][0]["why"]
    assert 'addressed as "chair" 2 time(s) in 1 meeting(s) of the Finance and Audit Committee' in why
    assert "welcome to this meeting of the Finance and Audit Committee" in why
    # The body's words in one sentence of the opening, in any order: "the audit committee".
    out = asked("who chaired the audit committee meeting?")
    assert [c["title"] for c in out["candidates"]] == ["Brief on Rhian Price"]
    # Named only late in the meeting ("I will write to the Business Committee"): not its meeting.
    out = asked("who is the chair of the Business Committee?")
    assert out["candidates"] == [] and "Business Committee" in out["why_nothing"]
    assert "Rhian Price" not in _said(out)
    # Named in the opening, but not a body that meets: the meeting's chair is not its chair.
    out = asked("who is the chair of the Brightwater Trust?")
    assert "Rhian Price" not in _said(out) and out["why_nothing"]


def test_addressed_as_reads_turns_that_open_with_the_title(store, asked):
    api = GraphAPI(store, Settings())
    [chair] = api.addressed_as("chair", naming="finance and audit committee")
    assert chair["name"] == "Rhian Price" and chair["times"] == 2 and chair["named_speaker"] == "Rhian Price"
    assert api.addressed_as("chair", naming="Business Committee") == []
    assert api.addressed_as("treasurer") == []


def test_who_knows_someone_reads_the_whole_memory(asked):
    out = asked("who knows Carys Lloyd?")
    assert out["skill"] == "introductions" and out["candidates"], out["why_nothing"]
    c = out["candidates"][0]
    assert c["kind"] == "link" and c["title"] == "Gareth Owen knows Carys Lloyd"
    assert c["evidence"] and "I met with Carys Lloyd" in c["evidence"][0]["quote"]
    out = asked("who does Gareth Owen know?")
    assert [c["title"] for c in out["candidates"]] == ["Gareth Owen knows Carys Lloyd"]
    out = asked("who knows Boris Johnson?")
    assert out["candidates"] == [] and "'Boris Johnson'" in out["why_nothing"]


def test_commitments_of_a_title_and_none_recorded(asked):
    out = asked("what did the project manager promise?")
    said = _said(out)
    assert "minutes" in said and "mock-ups" not in said
    out = asked("what did Huw Jones promise?")
    assert out["candidates"] == [] and out["why_nothing"] == "no commitments recorded by Huw Jones"
    out = asked("what did the treasurer promise?")
    assert out["candidates"] == [] and out["why_nothing"] == "no one named 'treasurer' in memory"

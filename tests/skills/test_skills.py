"""Skills: loading (never executing) skill files, choosing them, and running each
through the real sandbox on the hand-built seed story."""

from __future__ import annotations

import pytest

from backchannel.agent.sweeper import question_args, run_skill, sweep
from backchannel.config import Settings, resolve_paths
from backchannel.graph.api import GraphAPI
from backchannel.sandbox import run_program
from backchannel.skills import SkillError, get_skill, list_skills, parse_skill, relevant_skills
from tests.support.synth import SEED_NOW, SEED_PROGRAM, generate, seed_story

BUILTIN = {"introductions", "pre_meeting_brief", "stale_relationships", "open_commitments"}


@pytest.fixture
def seeded(store):
    ids = seed_story(store)
    return ids, GraphAPI(store, now=SEED_NOW), Settings()


def _run(name, api, settings, **args):
    found, res = run_skill(get_skill(name), api, settings, args=args)
    assert res.ok, res.error
    assert res.stats["api_calls"] > 0 and res.stats["assertions_touched"] >= 0
    return found


def test_builtin_skills_are_listed_with_docs():
    skills = {s.name: s for s in list_skills()}
    assert set(skills) == BUILTIN
    for s in skills.values():
        assert s.doc and s.origin == "builtin" and "result" in s.source_code
        assert s.name in s.prompt_doc()
    assert skills["introductions"].params["max_hops"]["default"] == 3


def test_user_skills_are_parsed_not_executed(home):
    paths = resolve_paths().ensure()
    paths.user_skills_dir.mkdir(parents=True)
    marker = home / "executed"
    (paths.user_skills_dir / "who_knows.py").write_text(
        f'"""Who knows a person."""\nopen({str(marker)!r}, "w").write("x")\n'
        'NAME = "who_knows"\nKEYWORDS = ("who knows",)\nPARAMS = {"name": {"default": None, "doc": "a name"}}\n'
        'PROGRAM = "result = []"\n'
    )
    (paths.user_skills_dir / "broken.py").write_text('NAME = "broken"\nPROGRAM = compute()\n')
    (paths.user_skills_dir / "introductions.py").write_text(
        '"""My own introductions."""\nNAME = "introductions"\nPROGRAM = "result = []"\n'
    )
    skills = {s.name: s for s in list_skills(paths)}
    assert not marker.exists()
    assert set(skills) == BUILTIN | {"who_knows"}
    assert skills["who_knows"].origin.endswith("who_knows.py")
    assert skills["introductions"].doc == "My own introductions."
    assert [s.name for s in relevant_skills("who knows Sophie?", paths)][0] == "who_knows"
    with pytest.raises(SkillError):
        get_skill("nope", paths)
    with pytest.raises(SkillError):
        parse_skill('NAME = "x"\nPROGRAM = "result = ("\n', "x.py")
    with pytest.raises(SkillError):
        skills["who_knows"].context_for({"bogus": 1})


def test_relevant_skills_by_wake_and_question():
    assert [s.name for s in relevant_skills("meeting_soon")] == ["pre_meeting_brief", "introductions"]
    assert [s.name for s in relevant_skills("signal")] == ["introductions"]
    assert {s.name for s in relevant_skills("sweep")} == {"stale_relationships", "open_commitments"}
    assert relevant_skills("who can introduce me to the CIO of Acme?")[0].name == "introductions"
    assert relevant_skills("what did I promise?")[0].name == "open_commitments"
    assert relevant_skills("who have I lost touch with?")[0].name == "stale_relationships"
    assert relevant_skills("brief me before my meeting with Marc")[0].name == "pre_meeting_brief"
    assert relevant_skills("what is the weather") == []
    intro = get_skill("introductions")
    assert question_args(intro, "Who can introduce me to the CIO of Acme?") == {"target": "CIO of Acme"}
    assert question_args(get_skill("stale_relationships"), "silent for 12 weeks") == {"weeks": 12}
    # One phrase: the program splits it only when memory has no such name ("Cardiff and Vale College").
    assert question_args(get_skill("pre_meeting_brief"), "Brief me on Marc and Sophie Martin") == {
        "attendees": ["Marc and Sophie Martin"]
    }
    assert question_args(get_skill("pre_meeting_brief"), "brief me before my meeting with Marc") == {
        "attendees": ["Marc"]
    }


def test_introductions_to_a_role(seeded):
    ids, api, settings = seeded
    found = _run("introductions", api, settings, target="CIO of Acme")
    assert len(found) == 1  # Marc; not Tom (no contact of mine), not Robert (left), not Julie (Initech)
    c = found[0]
    assert c.kind == "introduction" and c.entities == [ids["Marc Dupont"], ids["Sophie Martin"]]
    assert c.path == [ids["Me"], ids["Marc Dupont"], ids["Sophie Martin"]]
    assert len(c.evidence_ids) == 3 and 0 < c.score <= 1
    assert "Marc Dupont worked with Sophie Martin at Globex" in c.why and "CIO at Acme" in c.why
    quotes = {e["quote"] for e in api.evidence(c.evidence_ids)}
    assert "Sophie is the CIO of Acme" in quotes


def test_introductions_to_an_org_and_from_a_signal(seeded):
    ids, api, settings = seeded
    by_org = _run("introductions", api, settings, target="Acme")
    assert [c.entities for c in by_org] == [[ids["Marc Dupont"], ids["Sophie Martin"]]]  # Paul: I know him
    from_signal = _run("introductions", api, settings)  # no target: the Acme tender signal
    assert [c.entities for c in from_signal] == [[ids["Marc Dupont"], ids["Sophie Martin"]]]
    via_meeting = _run("introductions", api, settings, target="Sophie Martin", via_ids=[ids["Marc Dupont"]])
    assert via_meeting[0].path == [ids["Me"], ids["Marc Dupont"], ids["Sophie Martin"]]
    # Asked by name, the why says what the target does now, and never ends on a bare name.
    assert via_meeting[0].why == ("Marc Dupont worked with Sophie Martin at Globex; Sophie Martin is CIO at Acme."), (
        via_meeting[0].why
    )
    assert _run("introductions", api, settings, target="Nobody Known") == []
    # Sophie is at the meeting herself: nobody needs to introduce her.
    both = [ids["Marc Dupont"], ids["Sophie Martin"]]
    assert _run("introductions", api, settings, target="Sophie Martin", via_ids=both) == []


def test_pre_meeting_brief(seeded):
    ids, api, settings = seeded
    found = _run("pre_meeting_brief", api, settings)  # the next calendar event: lunch with Marc
    assert [c.entities for c in found] == [[ids["Marc Dupont"]]]
    why = found[0].why
    assert "worked with Sophie Martin (CIO at Acme) at Globex (2016-2021)" in why
    assert "send you the pricing" in why and found[0].kind == "brief"
    named = _run("pre_meeting_brief", api, settings, attendees=["Paul"])
    assert named[0].entities == [ids["Paul Durand"]] and "CFO at Acme" in named[0].why
    # One value for a list parameter (`--arg attendees=Paul`, `--arg attendee_ids=7`) is a list of one,
    # not a string walked letter by letter.
    one = _run("pre_meeting_brief", api, settings, attendees="Paul")
    assert [c.entities for c in one] == [[ids["Paul Durand"]]]
    by_id = _run("pre_meeting_brief", api, settings, attendee_ids=ids["Paul Durand"])
    assert [c.entities for c in by_id] == [[ids["Paul Durand"]]]
    # A name that resolves to nobody gives no brief, not the brief of the next calendar meeting.
    assert _run("pre_meeting_brief", api, settings, attendees=["Nobody Known"]) == []


def test_stale_relationships(seeded):
    ids, api, settings = seeded
    found = _run("stale_relationships", api, settings, weeks=8)
    assert [c.entities for c in found] == [[ids["Nina Roux"]]]
    assert found[0].kind == "reconnect" and "39 weeks" in found[0].why
    assert {c.entities[0] for c in _run("stale_relationships", api, settings, weeks=0)} == {
        ids["Nina Roux"],
        ids["Marc Dupont"],
        ids["Paul Durand"],
    }


def test_open_commitments(seeded):
    ids, api, settings = seeded
    found = _run("open_commitments", api, settings)
    got = {(c.entities[0], c.why.split('"')[1]) for c in found}
    assert got == {
        (ids["Marc Dupont"], "send you the pricing"),
        (ids["Me"], "share the deck"),
        (ids["Paul Durand"], "review the contract"),
    }
    paul = [c for c in found if c.entities == [ids["Paul Durand"]]][0]
    assert paul.evidence_ids == [api.assertions_about([ids["Paul Durand"]], ["committed_to"])[0]["id"]]  # latest
    assert all(c.kind == "commitment" for c in found)


def test_offline_sweep_by_wake(seeded, home):
    ids, api, settings = seeded
    paths = resolve_paths()
    res = sweep(
        {"wake": "meeting_soon", "event": {"uid": "lunch-marc", "attendee_ids": [ids["Marc Dupont"]]}},
        api=api,
        settings=settings,
        paths=paths,
    )
    assert res.skill == "pre_meeting_brief+introductions" and res.attempts == 0 and not res.errors
    kinds = [c.kind for c in res.candidates]
    assert "brief" in kinds and "introduction" in kinds  # Marc can introduce me to Sophie (Acme tender)
    sig = sweep(
        {"trigger": "signal", "signal": {"id": "G", "org_ids": [ids["Acme"]]}}, api=api, settings=settings, paths=paths
    )
    assert sig.skill == "introductions" and sig.candidates[0].entities[1] == ids["Sophie Martin"]
    periodic = sweep({"wake": "sweep"}, api=api, settings=settings, paths=paths)
    assert {c.kind for c in periodic.candidates} == {"reconnect", "commitment"}
    # The periodic sweep's two skills ran in ONE sandbox child (skill_batch), each with its own candidates.
    assert periodic.sandbox_stats["runs"] == 1 and periodic.sandbox_stats["assertions_touched"] > 0


def test_seed_shaped_program_through_the_sandbox_matches_in_process(store):
    generate(store, 20_000, seed=3)
    api = GraphAPI(store)
    res = run_program(SEED_PROGRAM, api, Settings().sandbox)
    assert res.ok, res.error
    mine = {c["id"] for c in api.network()}
    want = set()
    for m in api.mentions_of([t["id"] for t in api.resolve("CIO", org="Acme")]):
        want.update(l["id"] for l in api.links([m["speaker"]]) if l["to"] in mine)
    assert res.result == sorted(want) and want
    assert res.stats["assertions_touched"] > len(want)


def test_broken_user_skills_fail_clearly(home):
    """A user skill with bad code is never silently ignored when asked for: the
    listing marks it BROKEN with the reason, and running it names the file."""
    from click.testing import CliRunner

    from backchannel.cli.main import cli
    from backchannel.skills import broken_skills

    paths = resolve_paths().ensure()
    paths.user_skills_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "syntaxbad": 'NAME = "syntaxbad"\nPROGRAM = "result = ("\n',
        "evil": '"""Reads the env."""\nNAME = "evil"\nPROGRAM = "import os\\nresult = dict(os.environ)"\n',
        "badwakes": 'NAME = "badwakes"\nWAKES = "signal"\nPROGRAM = "result = []"\n',
        "notlit": 'NAME = "notlit"\nPROGRAM = open("x").read()\n',
        "crash": '"""Raises."""\nNAME = "crash"\nPROGRAM = "me = api.me()\\nresult = me[\'nope\']"\n',
    }
    for name, text in files.items():
        (paths.user_skills_dir / f"{name}.py").write_text(text)
    assert {s.name for s in list_skills(paths)} == BUILTIN | {"crash"}
    broken = {b["name"]: b for b in broken_skills(paths)}
    assert set(broken) == {"syntaxbad", "evil", "badwakes", "notlit"}
    assert "not valid Python" in broken["syntaxbad"]["error"]
    assert "refused by the sandbox" in broken["evil"]["error"] and "import of 'os'" in broken["evil"]["error"]
    assert "WAKES must be a tuple of strings" in broken["badwakes"]["error"]
    assert "must be a literal" in broken["notlit"]["error"]
    for name in ("syntaxbad", "evil"):
        with pytest.raises(SkillError, match=f"{name}.py"):
            get_skill(name, paths)
    runner = CliRunner()
    res = runner.invoke(cli, ["skills"])
    assert res.exit_code == 0 and "BROKEN, not used:" in res.output and "evil.py" in res.output
    rows = {r["name"]: r for r in __import__("json").loads(runner.invoke(cli, ["skills", "--json"]).stdout)}
    assert rows["introductions"]["error"] is None and "refused by the sandbox" in rows["evil"]["error"]
    res = runner.invoke(cli, ["skills", "run", "evil"])
    said = res.output + str(res.exception or "")  # UserError: main() prints it as "error: ..."
    assert res.exit_code != 0 and "cannot be used" in said and "import of 'os'" in said
    res = runner.invoke(cli, ["skills", "run", "crash"])
    said = res.output + str(res.exception or "")
    assert res.exit_code != 0 and "crash.py" in said
    assert "line 2" in said and "KeyError: 'nope'" in said
    assert "Traceback (most recent call last)" not in said


def test_stale_question_wordings():
    for q in ("who have I not talked to in 6 weeks?", "which contacts have gone quiet?"):
        assert relevant_skills(q)[0].name == "stale_relationships", q


def test_natural_questions_pick_the_right_skill_and_target():
    route = {
        "who works at Initech?": "pre_meeting_brief",
        "tell me about Sophie Martin": "pre_meeting_brief",
        "who is the CIO of Acme?": "pre_meeting_brief",
        "what do we know about Acme?": "pre_meeting_brief",
        "brief me on Acme": "pre_meeting_brief",
        "who knows Sophie Martin?": "introductions",
        "who can introduce me to someone at Hooli?": "introductions",
        "what did Marc promise me?": "open_commitments",
    }
    for q, name in route.items():
        assert relevant_skills(q)[0].name == name, q
    intro, brief = get_skill("introductions"), get_skill("pre_meeting_brief")
    assert question_args(intro, "who can introduce me to someone at Hooli?") == {"target": "Hooli"}
    assert question_args(intro, "Can anyone get me in touch with people at Acme?") == {"target": "Acme"}
    assert question_args(intro, "who knows Sophie Martin?") == {"target": "Sophie Martin"}
    assert question_args(brief, "who works at Initech?") == {"attendees": ["Initech"]}
    assert question_args(brief, "what do we know about ColegauCymru?") == {"attendees": ["ColegauCymru"]}
    assert question_args(brief, "who is the chief executive of Colegau Cymru?") == {
        "attendees": ["chief executive of Colegau Cymru"]
    }
    promises = get_skill("open_commitments")
    assert question_args(promises, "what did I promise?") == {
        "people": ["me"],
        "overdue_days": 3650,
        "max_age_days": 3650,
    }
    assert question_args(promises, "what did Marc promise me?")["people"] == ["Marc"]
    assert question_args(promises, "what commitments are still open?") == {}
    assert question_args(get_skill("stale_relationships"), "not spoken in 3 months") == {"weeks": 12}


def test_brief_on_an_organisation(seeded):
    ids, api, settings = seeded
    [acme] = _run("pre_meeting_brief", api, settings, attendees=["Acme"])
    assert acme.entities == [ids["Acme"]] and acme.kind == "brief" and acme.extra == {"about": "organisation"}
    # Its current people (Robert left: not among them) and what was said about it.
    assert "people: Sophie Martin (CIO), Paul Durand (CFO); Robert Petit left" in acme.why, acme.why
    quotes = {e["quote"] for e in api.evidence(acme.evidence_ids)}
    assert "Sophie is the CIO of Acme" in quotes
    # A role nobody holds there: the organisation's brief, saying so; a held role: the holder's brief.
    [ceo] = _run("pre_meeting_brief", api, settings, attendees=["chief executive of Acme"])
    assert ceo.entities == [ids["Acme"]] and "nobody is recorded as chief executive there" in ceo.why
    [cio] = _run("pre_meeting_brief", api, settings, attendees=["CIO of Acme"])
    assert cio.entities == [ids["Sophie Martin"]]
    two = _run("pre_meeting_brief", api, settings, attendees=["Marc and Sophie Martin"])
    assert {c.entities[0] for c in two} == {ids["Marc Dupont"], ids["Sophie Martin"]}
    from backchannel.agent.drafter import template_draft

    assert template_draft(acme, {ids["Acme"]: "Acme"}, "Me").title == "Brief on Acme"


def test_nothing_found_says_why(seeded, home):
    ids, api, settings = seeded
    paths = resolve_paths()
    why = {
        "brief me on Nobody Known": "no one and no organisation named 'Nobody Known' in memory",
        "who can introduce me to someone at Hooli?": "no one, no organisation and no role holder matching 'Hooli' in memory",
        "how do I get to Paul Durand?": "you already know or have met Paul Durand; no introduction needed",
        "who can introduce me to Julie Bernard?": "no path from you to Julie Bernard within 3 links (knows, worked with, introduced, "
        "or through people you met)",
        "what did Nina promise?": "no commitments recorded by Nina Roux",
        "what did Nobody Known promise?": "no one named 'Nobody Known' in memory",
        "who have I not talked to in 1000 weeks?": "none of your 3 contacts has been silent for 1000 weeks or more",
    }
    for q, reason in why.items():
        res = sweep({"wake": "ask"}, api=api, settings=settings, paths=paths, question=q)
        assert res.candidates == [] and res.nothing_found == [reason], (q, res.nothing_found, res.errors)
    found = sweep({"wake": "ask"}, api=api, settings=settings, paths=paths, question="what did Marc promise me?")
    assert [c.entities for c in found.candidates] == [[ids["Marc Dupont"]]] and found.nothing_found == []

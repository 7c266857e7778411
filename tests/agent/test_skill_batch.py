"""A sweep's skills in one sandbox child (agent/skill_batch.py): same candidates as
one child each, per-skill errors kept apart, and a fallback when the combined run
fails as a whole. Real sandbox, real store (the `store` fixture)."""

from __future__ import annotations

from backchannel.agent.skill_batch import combined_program, run_batch, split_output
from backchannel.agent.sweeper import run_skill, sweep
from backchannel.config import Settings, resolve_paths
from backchannel.graph.api import GraphAPI
from backchannel.skills import get_skill, parse_skill
from tests.support.synth import SEED_NOW, seed_story

RAISES = '''"""Raises after printing."""
NAME = "raises"
KIND = "reconnect"
PROGRAM = """
print("nothing found: about to fail")
x = {}["missing"]
"""
'''


def _key(c):
    return (c.kind, tuple(c.entities), tuple(c.evidence_ids), round(c.score, 6), c.why)


def test_two_skills_in_one_child_give_what_two_children_give(store):
    seed_story(store)
    api, settings = GraphAPI(store, now=SEED_NOW), Settings()
    skills = [get_skill("stale_relationships"), get_skill("open_commitments")]
    apart = []
    for s in skills:
        found, res = run_skill(s, api, settings)
        assert res.ok, res.error
        apart.append(sorted(map(_key, found)))
    outcomes, outputs, res = run_batch(skills, [s.context_for() for s in skills], api, settings)
    assert res.ok and res.stats["api_calls"] > 0
    from backchannel.graph.types import candidates_from_result

    together = [sorted(map(_key, candidates_from_result(o["result"]))) for o in outcomes]
    assert together == apart and all(together)
    assert len(outputs) == 2


def test_one_skill_failing_leaves_the_other_its_candidates(store, home):
    seed_story(store)
    paths = resolve_paths()
    paths.user_skills_dir.mkdir(parents=True, exist_ok=True)
    (paths.user_skills_dir / "raises.py").write_text(RAISES)
    api, settings = GraphAPI(store, now=SEED_NOW), Settings()
    raises, stale = parse_skill(RAISES, "test"), get_skill("stale_relationships")
    outcomes, outputs, res = run_batch([raises, stale], [{}, stale.context_for()], api, settings)
    assert outcomes[0]["ok"] is False and "KeyError" in outcomes[0]["error"] and "missing" in outcomes[0]["error"]
    assert outcomes[1]["ok"] is True and outcomes[1]["result"]
    assert "about to fail" in outputs[0] and "about to fail" not in outputs[1]


def test_sweep_reports_the_failing_skill_by_name(store, home):
    ids = seed_story(store)
    paths = resolve_paths()
    api, settings = GraphAPI(store, now=SEED_NOW), Settings()
    paths.user_skills_dir.mkdir(parents=True, exist_ok=True)
    # A user skill replacing open_commitments that raises: the periodic sweep still
    # returns stale_relationships' reconnects, and names the skill that failed.
    (paths.user_skills_dir / "open_commitments.py").write_text(RAISES.replace('"raises"', '"open_commitments"'))
    res = sweep({"wake": "sweep"}, api=api, settings=settings, paths=paths)
    assert res.skill == "stale_relationships+open_commitments" and res.sandbox_stats["runs"] == 1
    assert {c.kind for c in res.candidates} == {"reconnect"}
    assert len(res.errors) == 1 and res.errors[0].startswith("open_commitments: ") and "KeyError" in res.errors[0]
    assert ids


def test_a_result_that_fails_the_whole_run_falls_back_to_one_child_each(store, home):
    seed_story(store)
    paths = resolve_paths()
    api, settings = GraphAPI(store, now=SEED_NOW), Settings()
    paths.user_skills_dir.mkdir(parents=True, exist_ok=True)
    # A result that is not JSON fails the combined run as a whole (the child cannot send it).
    bad = RAISES.replace('"raises"', '"open_commitments"').replace('x = {}["missing"]', "result = [object()]")
    (paths.user_skills_dir / "open_commitments.py").write_text(bad)
    skills = [get_skill("stale_relationships", paths), get_skill("open_commitments", paths)]
    assert run_batch(skills, [s.context_for() for s in skills], api, settings) is None
    res = sweep({"wake": "sweep"}, api=api, settings=settings, paths=paths)
    assert res.sandbox_stats["runs"] == 2  # the fallback: one child each
    assert {c.kind for c in res.candidates} == {"reconnect"}
    assert len(res.errors) == 1 and res.errors[0].startswith("open_commitments: ")


def test_combined_program_keeps_multiline_strings_and_a_trailing_expression():
    src = '"""Doc."""\nNAME = "t"\nPROGRAM = """\ntext = \'\'\'a\n  b\'\'\'\nlen(text)\n"""\n'
    program = combined_program([parse_skill(src, "test")])
    assert "'a\\n  b'" in program or "'''a\n  b'''" in program
    assert "result = len(text)" in program


def test_split_output_by_marks():
    out = "# skill output: 0\nnothing found: a\n# skill output: 1\nx\nnothing found: b\n"
    assert split_output(out, 2) == ["nothing found: a\n", "x\nnothing found: b\n"]


def test_index_is_trusted_inside_an_unchanged_block_and_checked_after_it(store):
    from backchannel.graph.index import IndexCache
    from backchannel.memory import entities

    seed_story(store)
    before = IndexCache.get(store)
    with IndexCache.unchanged_during(store):
        assert IndexCache.get(store) is before
        with IndexCache.unchanged_during(store):  # nested: still trusted
            assert IndexCache.get(store) is before
        assert IndexCache.get(store) is before
    entities.create(store, "Someone New", "person")  # a change the signature sees
    after = IndexCache.get(store)
    assert after is not before and after.sig.entities > before.sig.entities
    with IndexCache.unchanged_during(store):  # the block checks once on entry
        entities.create(store, "Another One", "person")
        assert IndexCache.get(store) is after  # trusted: the caller promised no change
    assert IndexCache.get(store) is not after  # outside, the change is seen

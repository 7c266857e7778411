"""Knowing *of* someone, and a tie that soured, end to end: a real transcript through the offline
extractor and the writer into a real store, then every reader of ties. A knows_of fact is stored
as what it is and is never a tie (no introduction through it, no tie edge, "knows of" in the brief,
`ask`, the MCP tools and the ties page); an ended tie takes every tie between the two people out
of the paths. None of these sentences is in a suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from backchannel.config import load_settings, resolve_paths
from backchannel.core.ties import TIE_PREDICATES, link_words
from backchannel.engine.judge_facts import WakeFacts
from backchannel.extraction.ingest import ingest_file
from backchannel.graph.api import GraphAPI
from backchannel.memory import utcnow
from backchannel.ops import OpEnv, invoke

EARLIER = """\
Alex Moreau: Owen, how do you know Hugo Lyle?
Owen Hartley: I worked with Hugo Lyle at Savills, he was on my desk.
"""
MEETING = """\
Alex Moreau: Tunde, do you know Rafaela Costa? She runs IT at Pellston Bank.
Tunde Okafor: Rafaela Costa? I only know her by name.
Marc Dupont: I worked with Rafaela Costa at Globex for six years.
Alex Moreau: Good to hear. And Hugo Lyle, is he still the CFO of Arden Foods?
Owen Hartley: Hugo Lyle and I shared an office at Savills for years. We fell out over the bonus pool and have not spoken since.
Alex Moreau: Understood. I know of Priya Raman, but only from her podcast.
"""


@pytest.fixture
def memory(home: Path, store):
    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\n')
    settings = load_settings(paths)
    for name, text in (("2025-11-04 desk.txt", EARLIER), ("2026-03-12 intros.txt", MEETING)):
        f = home / name
        f.write_text(text, encoding="utf-8")
        assert ingest_file(store, settings, f).status == "ingested"
    ids = {r["name"]: int(r["id"]) for r in store.query("SELECT id, name FROM entities WHERE merged_into IS NULL")}
    return OpEnv(store=store, settings=settings, paths=paths), ids


def _rows(store, subject: int, obj: int) -> list[dict]:
    return store.query(
        "SELECT id, predicate, CAST(stance AS VARCHAR) AS stance, trust_reasons FROM assertions"
        " WHERE subject_id = ? AND object_id = ? AND superseded_at IS NULL ORDER BY id",
        [subject, obj],
    )


def _ask(env: OpEnv, question: str) -> list[dict]:
    out = invoke(env, "ask", {"question": question})
    assert out["status"] == "done" and not out["errors"], out
    return out["candidates"]


def test_knowing_of_someone_is_stored_with_its_stance(memory):
    env, ids = memory
    [row] = _rows(env.store, ids["Tunde Okafor"], ids["Rafaela Costa"])
    assert (row["predicate"], row["stance"]) == ("knows", "knows_of")
    [mine] = _rows(env.store, ids["Alex Moreau"], ids["Priya Raman"])
    assert mine["stance"] == "knows_of"
    # the soured tie is stored for the judge, trusted less; the earlier plain one stays as it was said
    ended = _rows(env.store, ids["Owen Hartley"], ids["Hugo Lyle"])
    assert [(r["predicate"], r["stance"]) for r in ended] == [("worked_with", "asserted"), ("worked_with", "ended")]
    assert "ended_tie" in ended[1]["trust_reasons"]


def test_no_introduction_through_someone_who_only_knows_of_the_target(memory):
    env, ids = memory
    found = _ask(env, "Who can introduce me to Rafaela Costa?")
    intros = [c for c in found if c["kind"] == "introduction"]
    assert [c["entities"] for c in intros] == [[ids["Marc Dupont"], ids["Rafaela Costa"]]]
    assert all(ids["Tunde Okafor"] not in c["entities"] for c in found)
    # "who knows X?" lists X's ties over the whole memory: knowing the name is none of them
    linked = _ask(env, "Who knows Rafaela Costa?")
    assert linked and all(ids["Tunde Okafor"] not in c["entities"] for c in linked)


def test_a_soured_tie_is_never_the_path_of_an_introduction(memory):
    env, ids = memory
    found = _ask(env, "Who can introduce me to Hugo Lyle?")
    assert all(ids["Owen Hartley"] not in c["entities"] for c in found), found
    # the graph itself: neither Owen's earlier tie nor the ended one is a live link any more
    api = GraphAPI(env.store, now=utcnow())
    assert not [l for l in api.links([ids["Owen Hartley"]], list(TIE_PREDICATES)) if l["to"] == ids["Hugo Lyle"]]
    assert not api.paths([ids["Owen Hartley"]], [ids["Hugo Lyle"]], max_hops=2, predicates=list(TIE_PREDICATES))


def test_the_graph_gives_knowing_of_its_own_kind_and_no_tie_edge(memory):
    env, ids = memory
    api = GraphAPI(env.store, now=utcnow())
    tunde, rafaela = ids["Tunde Okafor"], ids["Rafaela Costa"]
    assert not [l for l in api.links([tunde], list(TIE_PREDICATES)) if l["to"] == rafaela]
    assert not api.paths([tunde], [rafaela], max_hops=2, predicates=list(TIE_PREDICATES))
    [heard] = [l for l in api.links([tunde]) if l["to"] == rafaela]
    assert heard["predicate"] == "knows_of"
    # my own knowing of Priya Raman makes her no contact of mine
    assert ids["Priya Raman"] not in {c["id"] for c in api.network(1)}
    # the ties page: a distinct kind of edge, read "knows of"
    ties = invoke(env, "entity_ties", {"ref": str(tunde), "hops": 1})
    [edge] = [e for e in ties["edges"] if {e["source"], e["target"]} == {tunde, rafaela}]
    assert edge["predicate"] == "knows_of" and link_words("knows", edge["stance"]) == "knows of"


def test_the_brief_and_the_mcp_answer_say_knows_of(memory):
    env, ids = memory
    [brief] = [c for c in _ask(env, "Tell me about Tunde Okafor") if c["kind"] == "brief"]
    assert "knows of Rafaela Costa" in brief["why"] and "knows Rafaela" not in brief["why"]
    from backchannel.web.mcp_server import about_entity

    about = about_entity(invoke(env, "export_entity", {"ref": "Tunde Okafor", "reader": "mcp"}))
    statements = [f["statement"] for f in about["current_facts"]]
    assert "Tunde Okafor knows of Rafaela Costa" in statements
    assert not any(s == "Tunde Okafor knows Rafaela Costa" for s in statements)
    # `trace` under a proposal: the evidence as the words held it
    from backchannel.ops.trust_view import evidence_trust

    heard = _rows(env.store, ids["Tunde Okafor"], ids["Rafaela Costa"])[0]["id"]
    ended = _rows(env.store, ids["Owen Hartley"], ids["Hugo Lyle"])[-1]["id"]
    facts = [e["fact"] for e in evidence_trust(env.store, [heard, ended])]
    assert facts == ["Tunde Okafor knows_of Rafaela Costa", "Owen Hartley worked_with (ended) Hugo Lyle"]


def test_the_judge_counts_no_knowing_of_as_a_tie_even_once_corrected(memory):
    env, ids = memory
    facts = WakeFacts(env.store, utcnow())
    assert facts.tie(ids["Priya Raman"])[0] == 0  # I only know of her
    assert facts.tie(ids["Tunde Okafor"])[0] == 0  # we only met: no link said
    # a correction of the date keeps what the words said: still no tie
    [row] = _rows(env.store, ids["Alex Moreau"], ids["Priya Raman"])
    invoke(env, "correct_assertion", {"assertion_id": row["id"], "valid_from": "2025-01-01", "reason": "since then"})
    [fixed] = _rows(env.store, ids["Alex Moreau"], ids["Priya Raman"])
    assert fixed["id"] != row["id"] and fixed["stance"] == "knows_of"
    assert WakeFacts(env.store, utcnow()).tie(ids["Priya Raman"])[0] == 0
    assert ids["Priya Raman"] not in {c["id"] for c in GraphAPI(env.store, now=utcnow()).network(1)}

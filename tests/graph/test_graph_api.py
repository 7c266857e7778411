"""The graph API over the hand-built seed story (real DuckDB store, real index)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backchannel.graph.api import API_METHODS, GraphAPI, GraphAPIError
from backchannel.graph.index import IndexCache, signature
from backchannel.graph.stubs import api_stubs
from backchannel.graph.types import Candidate, CandidateError, candidates_from_result
from tests.support.synth import SEED_NOW, seed_story


@pytest.fixture
def seeded(store):
    ids = seed_story(store)
    return store, ids, GraphAPI(store, now=SEED_NOW)


def test_me_and_now(seeded):
    _, ids, api = seeded
    assert api.me() == {"id": ids["Me"], "name": "Me", "kind": "person"}
    assert api.now() == "2025-06-02T09:00:00"


def test_resolve_role_at_org_gives_current_holder_only(seeded):
    _, ids, api = seeded
    got = api.resolve("CIO", org="Acme")
    assert [g["id"] for g in got] == [ids["Sophie Martin"]]  # not Robert Petit, who left; not Julie (Initech)
    assert got[0]["match"] == "role" and got[0]["org"] == ids["Acme"] and got[0]["title"] == "CIO"
    assert [g["id"] for g in api.resolve("CIO of Acme")] == [ids["Sophie Martin"]]
    assert {g["id"] for g in api.resolve("cio")} == {ids["Sophie Martin"], ids["Julie Bernard"]}
    assert api.resolve("CIO", org="Nowhere Inc") == []


def test_resolve_names_and_aliases(seeded):
    _, ids, api = seeded
    assert api.resolve("Marc")[0]["id"] == ids["Marc Dupont"]
    assert api.resolve("marc dupont")[0]["id"] == ids["Marc Dupont"]
    assert api.resolve("Acme Corp", kind="organisation")[0]["id"] == ids["Acme"]
    assert api.resolve("Martin")[0]["id"] == ids["Sophie Martin"]  # a last name matches a full name
    assert api.resolve("Acme", kind="person") == []
    with pytest.raises(GraphAPIError):
        api.resolve("")


def test_entity_details_and_current_roles(seeded):
    _, ids, api = seeded
    by_id = {e["id"]: e for e in api.entity([ids["Sophie Martin"], ids["Robert Petit"], ids["Paul Durand"]])}
    assert [(r["title"], r["org_name"]) for r in by_id[ids["Sophie Martin"]]["roles"]] == [("CIO", "Acme")]
    assert by_id[ids["Robert Petit"]]["roles"] == []
    assert "Paul" in by_id[ids["Paul Durand"]]["aliases"]
    assert by_id[ids["Sophie Martin"]]["degree"] == 3


def test_assertions_about_filters(seeded):
    _, ids, api = seeded
    paul = api.assertions_about([ids["Paul Durand"]])
    assert {a["predicate"] for a in paul} == {"works_at", "committed_to", "knows"}
    assert [a["said_at"] for a in paul] == sorted((a["said_at"] for a in paul), reverse=True)
    promises = api.assertions_about([ids["Paul Durand"]], predicates=["committed_to"])
    assert {a["literal"] for a in promises} == {"review the contract"} and len(promises) == 2
    assert len(api.assertions_about([ids["Paul Durand"]], predicates=["committed_to"], since=10)) == 1
    assert len(api.assertions_about([ids["Paul Durand"]], since="2025-05-25")) == 3
    # Superseded facts are left out: Robert's CIO assertion is gone, his `left` remains.
    assert [a["predicate"] for a in api.assertions_about([ids["Robert Petit"]], predicates=["works_at", "left"])] == [
        "left"
    ]
    # as_of: Marc and Sophie worked together in 2018, not in 2023.
    ww = dict(predicates=["worked_with"])
    assert api.assertions_about([ids["Marc Dupont"]], as_of="2024-06-01", **ww) == []
    assert len(api.assertions_about([ids["Marc Dupont"]], as_of="2025-01-01", **ww)) == 0  # true 2016-2021 only
    cio = api.assertions_about([ids["Sophie Martin"]], predicates=["works_at"], as_of="2025-06-01")
    assert [a["object"] for a in cio] == [ids["Acme"]]
    assert (
        api.assertions_about([ids["Sophie Martin"]], predicates=["works_at"], as_of="2024-01-01") == []
    )  # not said yet
    first = api.assertions_about([ids["Marc Dupont"]], **ww)[0]
    assert first["valid_from"] == "2016-01-01" and first["valid_to"] == "2021-12-31"
    assert first["qualifier"] == "Globex" and first["speaker_name"] == "Marc Dupont"


def test_links_between_and_mentions(seeded):
    _, ids, api = seeded
    links = api.links([ids["Sophie Martin"]])
    assert {(l["to"], l["predicate"], l["dir"]) for l in links} == {
        (ids["Marc Dupont"], "worked_with", "in"),
        (ids["Acme"], "works_at", "out"),
        (ids["Tom Blanc"], "worked_with", "in"),
    }
    assert all(l["from"] == ids["Sophie Martin"] for l in links)
    assert api.links([ids["Sophie Martin"]], predicates=["works_at"])[0]["qualifier"] == "CIO"
    between = api.between([ids["Marc Dupont"]], [ids["Sophie Martin"], ids["Acme"]])
    assert [(b["from"], b["to"]) for b in between] == [(ids["Marc Dupont"], ids["Sophie Martin"])]
    mentions = api.mentions_of([ids["Sophie Martin"]])
    assert {m["speaker"] for m in mentions} == {ids["Marc Dupont"], ids["Tom Blanc"]}
    with pytest.raises(GraphAPIError):
        api.links(["Marc"])


def test_network_is_my_contacts(seeded):
    _, ids, api = seeded
    net = {c["id"]: c for c in api.network()}
    assert set(net) == {ids["Marc Dupont"], ids["Paul Durand"], ids["Nina Roux"]}
    assert net[ids["Marc Dupont"]]["strength"] >= 2  # a knows link and shared meetings
    assert net[ids["Nina Roux"]]["last_seen"].startswith((SEED_NOW - timedelta(days=274)).date().isoformat())
    two = {c["id"]: c["hops"] for c in api.network(hops=2)}
    assert two[ids["Sophie Martin"]] == 2 and two[ids["Robert Petit"]] == 2
    with pytest.raises(GraphAPIError):
        api.network(hops=5)


def test_paths_with_evidence(seeded):
    _, ids, api = seeded
    found = api.paths([ids["Me"]], [ids["Sophie Martin"]], max_hops=3, predicates=["knows", "worked_with"])
    assert [p["nodes"] for p in found] == [[ids["Me"], ids["Marc Dupont"], ids["Sophie Martin"]]]
    p = found[0]
    assert p["hops"] == 2 and p["predicates"] == ["knows", "worked_with"] and p["qualifiers"][1] == "Globex"
    quotes = [e["quote"] for e in api.evidence([p["edges"][0][0], p["edges"][1][0]])]
    assert quotes == ["Good to see you Marc", "I worked with Sophie Martin at Globex from 2016 to 2021"]
    assert api.paths([ids["Me"]], [ids["Sophie Martin"]], max_hops=1) == []
    with pytest.raises(GraphAPIError):
        api.paths([ids["Me"]], [ids["Sophie Martin"]], max_hops=9)


def test_events_signals_evidence(seeded):
    _, ids, api = seeded
    ev = api.upcoming_events(days=7)
    assert [e["uid"] for e in ev] == ["lunch-marc"] and ev[0]["attendee_ids"] == [ids["Marc Dupont"]]
    assert api.upcoming_events(days=1) == []
    assert [s["id"] for s in api.recent_signals(days=7, org_ids=[ids["Acme"]])] == ["Gseedtender"]
    assert api.recent_signals(days=7, org_ids=[ids["Globex"]]) == []
    e = api.evidence([3, 999999])
    assert len(e) == 1 and e[0]["source_title"] == "Coffee with Marc" and e[0]["speaker"] == "Marc Dupont"


def test_touched_counts_and_rpc_methods(seeded):
    _, ids, api = seeded
    methods = api.rpc_methods()
    assert set(methods) == set(API_METHODS)
    api.take_touched()
    methods["links"]([ids["Sophie Martin"]])
    assert api.take_touched() == 3
    assert api.take_touched() == 0


def test_index_refreshes_when_assertions_change(seeded):
    store, ids, api = seeded
    before = api.index
    assert api.links([ids["Tom Blanc"]], predicates=["knows"]) == []
    store.con.execute(
        "INSERT INTO assertions (subject_id, predicate, object_id, speaker_id, said_at, modality, quote)"
        " VALUES (?, 'knows', ?, ?, ?, 'stated', 'x')",
        [ids["Tom Blanc"], ids["Julie Bernard"], ids["Tom Blanc"], SEED_NOW],
    )
    assert before.sig != signature(store)
    api.rpc_methods()  # a new run: the index is rebuilt once
    assert api.index is not before
    assert [l["to"] for l in api.links([ids["Tom Blanc"]], predicates=["knows"])] == [ids["Julie Bernard"]]
    assert IndexCache.get(store) is api.index  # warm: same signature, same index


def test_stubs_come_from_the_real_methods():
    text = api_stubs()
    for name in API_METHODS:
        assert f"def {name}(" in text
    assert "def resolve(name_or_role: str, org: str | int | None = None, kind: str | None = None)" in text
    assert GraphAPI.links.__doc__.split("\n")[0].strip() in text
    assert "'" not in text.split("class api:")[1].split("def resolve")[1].split(")")[0]  # no quoted annotations
    assert api_stubs(["links"]).count("def ") == 1


def test_candidates_from_program_results():
    got = candidates_from_result(
        [
            {
                "kind": "introduction",
                "entities": [2, 3],
                "path": [1, 2, 3],
                "evidence": [1, 2],
                "score": 1.7,
                "why": "x",
            },
            {"kind": "brief", "entities": [{"id": 4}], "evidence": [{"assertion_id": 9, "quote": "q"}], "score": 0.2},
        ]
    )
    assert got[0].score == 1.0 and got[0].evidence_ids == [1, 2]
    assert got[1].entities == [4] and got[1].evidence[0].quote == "q"
    assert Candidate.from_dict(got[0].to_dict()).to_dict() == got[0].to_dict()
    assert got[0].dedupe_key() == "introduction:2,3"
    with pytest.raises(CandidateError):
        candidates_from_result("nope")
    with pytest.raises(CandidateError):
        candidates_from_result([{"kind": "x", "entities": ["Marc"]}])

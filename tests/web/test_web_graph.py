"""Ties as a graph and what was said on a timeline: the operations behind the
drawings on a real store (the seed story), and the timeline's layout."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.memory import utcnow
from backchannel.ops import OpEnv, OpError, invoke
from backchannel.web.graph_view import data_block, timeline_layout
from tests.support.synth import seed_story


def _env(store):
    return OpEnv(store=store, settings=Settings(), paths=resolve_paths())


def _names(graph):
    return {n["id"]: n["name"] for n in graph["nodes"]}


def _ties(graph):
    names = _names(graph)
    return {(names[e["source"]], e["predicate"], names[e["target"]]) for e in graph["edges"]}


def test_ties_out_to_two_hops_with_the_owners_ties_marked(store):
    ids = seed_story(store, now=utcnow())
    g = invoke(_env(store), "entity_ties", {"ref": str(ids["Sophie Martin"])})
    hops = {n["name"]: n["hop"] for n in g["nodes"]}
    assert g["center"] == ids["Sophie Martin"] and hops["Sophie Martin"] == 0
    assert hops["Marc Dupont"] == 1 and hops["Acme"] == 1 and hops["Tom Blanc"] == 1
    assert hops["Paul Durand"] == 2 and hops["Robert Petit"] == 2 and "Initech" not in hops  # through Acme
    assert hops["Me"] == 2 and next(n for n in g["nodes"] if n["name"] == "Me")["is_owner"]
    ties = _ties(g)
    assert ("Marc Dupont", "worked_with", "Sophie Martin") in ties and ("Me", "knows", "Marc Dupont") in ties
    # Robert Petit's CIO post at Acme was superseded: not a tie; his `left` is.
    assert ("Robert Petit", "works_at", "Acme") not in ties and ("Robert Petit", "left", "Acme") in ties
    me_marc = next(
        e
        for e in g["edges"]
        if e["predicate"] == "knows" and e["source"] == ids["Me"] and e["target"] == ids["Marc Dupont"]
    )
    assert me_marc["owners_tie"] and me_marc["quote"] == "Good to see you Marc" and me_marc["speaker"] == "Me"
    assert not next(
        e
        for e in g["edges"]
        if e["predicate"] == "worked_with" and e["target"] == ids["Sophie Martin"] and e["source"] == ids["Marc Dupont"]
    )["owners_tie"]
    # The owner met Marc, Paul and Nina: `met` edges to those drawn (Marc and Paul here).
    met = {_names(g)[e["target"]] for e in g["edges"] if e["predicate"] == "met"}
    assert met == {"Marc Dupont", "Paul Durand"}
    assert next(n for n in g["nodes"] if n["name"] == "Sophie Martin")["title"] == "CIO"
    # Each was said once: found again from its other end, a tie still counts once.
    assert {e["count"] for e in g["edges"] if e["predicate"] != "met"} == {1}
    assert next(e for e in g["edges"] if e["predicate"] == "met" and e["target"] == ids["Marc Dupont"])["count"] == 2
    both = invoke(_env(store), "entity_drawings", {"ref": str(ids["Sophie Martin"])})  # the page's one call
    assert both["ties"] == g and both["timeline"] == invoke(_env(store), "entity_timeline", {"ref": "Sophie Martin"})
    one_hop = invoke(_env(store), "entity_ties", {"ref": str(ids["Sophie Martin"]), "hops": 1})
    assert {n["hop"] for n in one_hop["nodes"]} == {0, 1}


def test_a_large_neighbourhood_is_capped_nearest_then_most_trusted_and_counted(store):
    ids = seed_story(store, now=utcnow())
    full = invoke(_env(store), "entity_ties", {"ref": str(ids["Sophie Martin"])})
    capped = invoke(_env(store), "entity_ties", {"ref": str(ids["Sophie Martin"]), "max_nodes": 4})
    assert len(capped["nodes"]) == 4 and capped["more"] == len(full["nodes"]) - 4
    assert capped["total_nodes"] == len(full["nodes"])
    assert [n["hop"] for n in capped["nodes"]] == [0, 1, 1, 1]  # the nearest first
    kept = {n["id"] for n in capped["nodes"]}
    assert all(e["source"] in kept and e["target"] in kept for e in capped["edges"])
    with pytest.raises(OpError, match="hops is 1 or 2"):
        invoke(_env(store), "entity_ties", {"ref": "Sophie Martin", "hops": 3})
    with pytest.raises(OpError, match="max_nodes is from 1 to 500"):
        invoke(_env(store), "entity_ties", {"ref": "Sophie Martin", "max_nodes": 0})
    with pytest.raises(OpError, match="no entity named"):
        invoke(_env(store), "entity_ties", {"ref": "Nobody Atall"})


def test_a_merged_entitys_ties_live_on_the_entity_it_was_merged_into(store):
    ids = seed_story(store, now=utcnow())
    invoke(_env(store), "entities_merge", {"keep": str(ids["Sophie Martin"]), "merge": str(ids["Tom Blanc"])})
    g = invoke(_env(store), "entity_ties", {"ref": str(ids["Marc Dupont"])})
    assert "Tom Blanc" not in _names(g).values()
    assert ("Marc Dupont", "worked_with", "Sophie Martin") in _ties(g)
    assert ("Sophie Martin", "worked_with", "Sophie Martin") not in _ties(g)  # no loop from the merge


def test_the_timeline_has_each_assertion_its_span_and_promises_open_kept_overdue(store):
    now = utcnow()
    ids = seed_story(store, now=now)
    env = _env(store)
    # Marc later says the pricing went out: his promise is kept, by the judge's own rule.
    store.con.execute(
        "INSERT INTO sources (id, content_hash, title, format, meeting_date, meeting_date_origin,"
        " participants, utterance_count, extractor) VALUES ('Slater0000001', 'seed:later', 'Follow-up',"
        " 'text', ?, 'mtime', ['Marc Dupont'], 1, 'seed')",
        [now - timedelta(days=1)],
    )
    store.con.execute(
        "INSERT INTO utterances (source_id, idx, speaker, speaker_id, text) VALUES "
        "('Slater0000001', 0, 'Marc Dupont', ?, 'I sent you the pricing this morning.')",
        [ids["Marc Dupont"]],
    )
    tl = invoke(env, "entity_timeline", {"ref": str(ids["Marc Dupont"])})
    by_fact = {i["fact"]: i for i in tl["items"]}
    assert by_fact["Marc Dupont committed to send you the pricing"]["promise"]["state"] == "kept"
    assert "I sent you the pricing" in by_fact["Marc Dupont committed to send you the pricing"]["promise"]["kept"]
    span = by_fact["Marc Dupont worked with Sophie Martin (Globex)"]
    assert (span["valid_from"], span["valid_to"]) == ("2016-01-01", "2021-12-31")
    # Paul's review has no due date: open; give one a past due date and it is overdue.
    paul = invoke(env, "entity_timeline", {"ref": str(ids["Paul Durand"])})
    assert {i["promise"]["state"] for i in paul["items"] if i["promise"]} == {"open"}
    store.con.execute(
        "UPDATE assertions SET valid_to = ? WHERE subject_id = ? AND predicate = 'committed_to'",
        [(now - timedelta(days=2)).date(), ids["Paul Durand"]],
    )
    paul = invoke(env, "entity_timeline", {"ref": str(ids["Paul Durand"])})
    assert {i["promise"]["state"] for i in paul["items"] if i["promise"]} == {"overdue"}
    acme = invoke(env, "entity_timeline", {"ref": str(ids["Acme"])})
    robert = next(i for i in acme["items"] if i["fact"] == "Robert Petit works at Acme (CIO)")
    assert robert["superseded_at"] and not robert["file_dated"]


def test_the_timeline_layout_marks_unknown_ends_file_dates_supersession_and_promise_states():
    item = {
        "predicate": "works_at",
        "said_at": "2025-06-01T10:00:00",
        "valid_from": None,
        "valid_to": None,
        "superseded_at": None,
        "file_dated": True,
        "promise": None,
        "fact": "A works at B",
        "id": 1,
    }
    tl = {
        "today": "2026-01-01",
        "items": [
            item,
            {**item, "id": 2, "valid_from": "2016-01-01", "valid_to": "2021-12-31", "file_dated": False},
            {**item, "id": 3, "superseded_at": "2025-08-01T00:00:00"},
            {**item, "id": 4, "predicate": "committed_to", "promise": {"due": "2025-06-10", "state": "overdue"}},
        ],
    }
    lay = timeline_layout(tl)
    rows = {r["item"]["id"]: r for r in lay["rows"]}
    assert rows[1]["start_unknown"] and rows[1]["end_unknown"] and rows[1]["tail_to"] == lay["today_x"]
    assert not rows[2]["start_unknown"] and not rows[2]["end_unknown"] and rows[2]["bar"][0] < rows[2]["bar"][1]
    assert lay["x0"] <= rows[2]["bar"][0] < rows[1]["said_x"] <= lay["x1"]
    assert rows[3]["tail_to"] < lay["today_x"]  # an open end stops at its correction, not today
    assert rows[4]["promise"]["state"] == "overdue" and rows[4]["promise"]["due_x"] > rows[4]["said_x"]
    assert [t["label"] for t in lay["ticks"]][:2] == ["2016", "2017"]
    capped = timeline_layout(tl, rows=2)
    assert len(capped["rows"]) == 2 and capped["hidden"] == 2 and capped["rows"][0]["item"]["id"] == 3


def test_the_graph_data_block_cannot_close_its_script_element():
    text = str(data_block({"quote": "</script><script>alert(1)</script> & more"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\\u003c/script\\u003e" in text


def test_the_vendored_library_is_the_one_its_readme_names_with_its_licence():
    import hashlib
    import re
    from pathlib import Path

    import backchannel.web

    here = Path(backchannel.web.__file__).parent / "static" / "vendor" / "cytoscape"
    readme = (here / "README.md").read_text()
    lib = (here / "cytoscape.min.js").read_bytes()
    assert hashlib.sha256(lib).hexdigest() == re.search(r"sha256: `([0-9a-f]{64})`", readme).group(1)
    version = re.search(r"version \*\*([\d.]+)\*\*", readme).group(1)
    assert f'"{version}"'.encode() in lib and "MIT" in readme
    assert (here / "LICENSE").read_text().startswith("Copyright (c) 2016-")

"""api.paths against an independent oracle (networkx, tests only) on random graphs."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import networkx as nx
import pytest

from backchannel.graph.api import GraphAPI
from tests.support.synth import generate

PREDS = ("knows", "worked_with", "works_at", "mentioned_with", "introduced")


def _random_graph(store, seed: int, n: int = 40, m: int = 130):
    """n entities, m assertions: multi-edges, self-loops, literals and superseded rows included."""
    rng = random.Random(seed)
    ids = [
        store.scalar(
            "INSERT INTO entities (kind, name, norm) VALUES ('person', ?, ?) RETURNING id",
            [f"P{seed}-{i}", f"p{seed}-{i}"],
        )
        for i in range(n)
    ]
    rows, base = [], datetime(2024, 1, 1)
    for k in range(m):
        s, o = rng.choice(ids), rng.choice(ids)
        literal = rng.random() < 0.08
        superseded = rng.random() < 0.1
        rows.append(
            (
                s,
                "committed_to" if literal else rng.choice(PREDS),
                None if literal else o,
                "a promise" if literal else None,
                rng.choice(ids),
                base + timedelta(days=rng.randint(0, 500)),
                base if superseded else None,
                "stated",
                f"q{k}",
            )
        )
    store.insert_rows(
        "assertions",
        [
            "subject_id",
            "predicate",
            "object_id",
            "object_literal",
            "speaker_id",
            "said_at",
            "superseded_at",
            "modality",
            "quote",
        ],
        rows,
    )
    return ids


def _oracle_graph(store, predicates=None) -> tuple[nx.Graph, dict[frozenset, set[int]]]:
    g = nx.Graph()
    support: dict[frozenset, set[int]] = {}
    for aid, s, o, p in store.con.execute(
        "SELECT id, subject_id, object_id, predicate FROM assertions"
        " WHERE object_id IS NOT NULL AND superseded_at IS NULL"
    ).fetchall():
        if predicates is not None and p not in predicates:
            continue
        if s != o:
            g.add_edge(s, o)
        support.setdefault(frozenset((s, o)), set()).add(aid)
    return g, support


def _oracle_paths(g: nx.Graph, sources, targets, hops: int) -> set[tuple[int, ...]]:
    out = set()
    for s in sources:
        for t in targets:
            if s != t and s in g and t in g:
                out.update(tuple(p) for p in nx.all_simple_paths(g, s, t, cutoff=hops))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_paths_match_networkx_on_random_graphs(store, seed):
    ids = _random_graph(store, seed)
    api = GraphAPI(store)
    rng = random.Random(100 + seed)
    for predicates in (None, ["knows", "worked_with"]):
        g, support = _oracle_graph(store, predicates)
        for hops in (1, 2, 3):
            sources, targets = rng.sample(ids, 3), rng.sample(ids, 3)
            got = api.paths(sources, targets, max_hops=hops, predicates=predicates, limit=10**6)
            want = _oracle_paths(g, sources, targets, hops)
            assert {tuple(p["nodes"]) for p in got} == want, (seed, predicates, hops)
            assert len(got) == len(want)  # no duplicates
            assert [p["hops"] for p in got] == sorted(p["hops"] for p in got)
            for p in got:
                for (u, v), edge in zip(zip(p["nodes"], p["nodes"][1:]), p["edges"]):
                    assert set(edge) == support[frozenset((u, v))]


def test_paths_limit_keeps_the_shortest(store):
    ids = _random_graph(store, 9, n=30, m=150)
    api = GraphAPI(store)
    everything = api.paths(ids[:4], ids[4:8], max_hops=3, limit=10**6)
    assert len(everything) > 5
    top = api.paths(ids[:4], ids[4:8], max_hops=3, limit=5)
    assert len(top) == 5
    assert max(p["hops"] for p in top) <= sorted(p["hops"] for p in everything)[4]


def test_paths_match_networkx_on_a_synthetic_memory(store):
    g_synth = generate(store, 4000, n_people=300, n_orgs=12, contacts=40, seed=7)
    api = GraphAPI(store)
    social = ["knows", "worked_with", "introduced"]
    g, _ = _oracle_graph(store, social)
    target = g_synth.named["Sophie Martin"]
    for hops in (1, 2, 3):
        got = api.paths([g_synth.owner], [target], max_hops=hops, predicates=social, limit=10**6)
        assert {tuple(p["nodes"]) for p in got} == _oracle_paths(g, [g_synth.owner], [target], hops)
    assert [g_synth.owner, g_synth.named["Marc Dupont"], target] in [p["nodes"] for p in got]

"""Extraction by meaning (backchannel/extraction/meaning): the trained head on sentences written
for this test only (in no bank file, no story, no dev set), one or more per relation and per
stance, with negatives; through the real embedding model and the shipped weights."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from backchannel.core.vocabulary import STANCES
from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning import train
from backchannel.extraction.meaning.classifier import classify, provenance
from backchannel.extraction.meaning.slots import fill

# (masked sentence, relation, stance): none of these is in bank/*.jsonl.
UNSEEN = [
    ("Funnily enough I spent three years reporting to {P} at {O}.", "worked_with", "asserted"),
    ("Me and {P}, we basically ran the Leeds office between us.", "worked_with", "asserted"),
    ("I've been friends with {P} since primary school.", "knows", "asserted"),
    ("{P} and I shared a house at university.", "knows", "asserted"),
    ("{P}, she's now running partnerships for {O}.", "works_at", "asserted"),
    ("{O} have brought in {P} as their chief risk officer.", "works_at", "asserted"),
    ("{P} walked out of {O} back in March.", "left", "asserted"),
    ("I'll pop the revised budget over to you before Thursday.", "committed_to", "asserted"),
    ("{P} could you unmute please?", "none", "asserted"),
    ("{O} published its results this morning.", "none", "asserted"),
    ("After that project I swore I'd never team up with {P} again.", "worked_with", "ended"),
    ("I'm aware of {P}, but only from her talks.", "knows", "knows_of"),
    ("I've honestly never met {P}.", "knows", "negated"),
    ("If we ever got {P} on board I'd be thrilled to work with her.", "worked_with", "hypothetical"),
    ("The grapevine says {P} is off to {O}.", "works_at", "rumour"),
    ("{P2} mentioned that {P} has moved to {O}.", "works_at", "reported"),
    ("{P} and I co-founded {O}, obviously, ha ha, just messing with you.", "worked_with", "joke"),
    ("For this role-play, you and {P} are colleagues at {O}.", "worked_with", "exercise"),
]


def test_unseen_paraphrases_relation_and_stance():
    readings = classify([fill(t) for t, _r, _s in UNSEEN])
    rel_ok = [r.relation == want for r, (_t, want, _s) in zip(readings, UNSEEN)]
    st_ok = [r.stance == want for r, (_t, _r, want) in zip(readings, UNSEEN)]
    wrong = [
        (t, r.relation, r.stance) for r, (t, wr, ws) in zip(readings, UNSEEN) if r.relation != wr or r.stance != ws
    ]
    # a learned head is not a rule: most, not all, unseen wordings; the misses are printed
    assert sum(rel_ok) >= 0.8 * len(UNSEEN), wrong
    assert sum(st_ok) >= 0.7 * len(UNSEEN), wrong


def _meeting(*lines: tuple[str, str]) -> Transcript:
    return Transcript(
        utterances=[Utterance(idx=i, speaker=s, text=x) for i, (s, x) in enumerate(lines)],
        format="text",
        meeting_date=datetime(2026, 11, 3, 10, 0),
    )


def _facts(t: Transcript) -> set[tuple]:
    return {
        (a.subject.name, a.predicate, a.object.name if a.object else a.object_literal, a.stance)
        for a in offline.extract(t)
    }


def test_new_wordings_become_facts():
    t = _meeting(
        ("Dana", "So yeah, I spent, um, three years reporting to Ravi Menon at Unilever."),
        ("Lee", "Oh nice."),
        ("Dana", "And Chloe Barnes, she's now running partnerships over at Siemens."),
    )
    facts = _facts(t)
    assert ("Dana", "worked_with", "Ravi Menon", "asserted") in facts
    assert any(f[0] == "Chloe Barnes" and f[1] == "works_at" and f[2] == "Siemens" for f in facts)


def test_not_facts_are_not_stored_and_ended_ties_are_marked():
    t = _meeting(
        ("Dana", "For this role-play, you and Omar Haddad are colleagues at Siemens."),
        ("Dana", "If we ever got Nadia Okafor on board I'd be thrilled to work with her."),
        ("Lee", "After that merger I swore I'd never team up with Ravi Menon again."),
        ("Lee", "Nice weather today, Chloe Barnes."),
    )
    facts = _facts(t)
    assert not any(f[2] in ("Omar Haddad", "Nadia Okafor", "Chloe Barnes") for f in facts), facts
    ended = [f for f in facts if f[2] == "Ravi Menon"]
    assert ended and all(f[3] == "ended" for f in ended), facts


def test_stored_stance_and_trust(tmp_path):
    from backchannel.extraction.writer import write_source
    from backchannel.memory.store import Store

    t = _meeting(
        ("Dana", "Rumour has it Ravi Menon is joining Siemens as CFO."),
        ("Lee", "I'd never work with Chloe Barnes again, that went badly."),
    )
    extracted = offline.extract(t)
    with Store.open(tmp_path / "m.duckdb") as store:
        write_source(store, t, extracted, owner_names=["Dana"], extractor="offline")
        rows = store.query(
            "SELECT predicate, CAST(stance AS VARCHAR) AS stance, trust, confidence, trust_reasons FROM assertions"
        )
    by_stance = {r["stance"]: r for r in rows}
    assert "rumour" in by_stance and "rumour" in by_stance["rumour"]["trust_reasons"]
    assert by_stance["rumour"]["trust"] < by_stance["rumour"]["confidence"]
    assert "ended" in by_stance


def test_shipped_weights_match_the_bank():
    meta = provenance()
    assert meta["bank_sha256"] == train.bank_hash()
    assert meta["tasks"]["stance"]["classes"] == list(STANCES)
    assert set(meta["tasks"]["relation"]["cv"]) == {"prototype", "linear", "mlp"}


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_training_is_deterministic(kind):
    rows = train.load_bank()[::20]
    from backchannel.embedding import embed

    x = embed([fill(r["text"]) for r in rows])
    y = np.array([train.RELATIONS.index(r["relation"]) for r in rows])
    from backchannel.extraction.meaning import heads

    a = heads.fit(kind, x, y, len(train.RELATIONS), seed=7, steps=60)
    b = heads.fit(kind, x, y, len(train.RELATIONS), seed=7, steps=60)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    acc = (heads.predict_proba(kind, a, x).argmax(axis=1) == y).mean()
    assert acc > 0.5  # it learned something on its own training slice

"""The rejection memory: structured suppression by scope and semantic suppression
with all-MiniLM-L6-v2, explained; plugged into the daemon's gate."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from backchannel.config import resolve_paths
from backchannel.memory import rejections
from backchannel.memory.store import utcnow
from backchannel.ops import OpEnv
from backchannel.ops import feedback_ops as ops
from tests.support.delivery_support import add_entity, add_proposal, make_settings

PAIRS = Path(__file__).resolve().parents[2] / "bench" / "rejection_pairs.json"


@pytest.fixture(scope="module", autouse=True)
def model():
    """Load the model once for the module (a few seconds)."""
    rejections.embed(["warm up"])


def _env(store) -> OpEnv:
    return OpEnv(store=store, settings=make_settings(), paths=resolve_paths())


def _world(store):
    marc, acme, sofia, northwind = (
        add_entity(store, "Marc Dupont"),
        add_entity(store, "Acme", "organisation"),
        add_entity(store, "Sofia Rossi"),
        add_entity(store, "Northwind", "organisation"),
    )
    return marc, acme, sofia, northwind


def test_dismissed_proposal_reworded_is_suppressed_with_its_explanation_unrelated_is_not(store):
    marc, acme, sofia, northwind = _world(store)
    pid = add_proposal(store, entity_ids=[marc, acme])
    ops.dismiss(_env(store), pid, reason="not a target account")
    # Re-derived from new evidence, other words, and (after a re-resolution) another entity id for
    # Marc: the structured net cannot see it, the semantic one does.
    marc_again = add_entity(store, "M. Dupont")
    reworded = (
        "Acme has put out a call for tenders. Marc Dupont, whom you meet this Thursday, once worked "
        "alongside Acme's chief information officer: a good moment to request an introduction. "
        '"Their CIO and I spent three years together at Globex."'
    )
    hit = rejections.check(store, reworded, "introduction", [marc_again, acme + 100], utcnow())
    assert hit is not None and hit.scope == "semantic" and hit.proposal_id == pid
    assert re.fullmatch(
        rf"suppressed: 0\.\d\d similar to {pid}, dismissed \d{{4}}-\d\d-\d\d: not a target account", hit.reason
    ), hit.reason
    assert hit.similarity >= rejections.DEFAULT_THRESHOLD
    unrelated = (
        "You have not spoken to Sofia Rossi of Northwind for eleven months; she said she would be hiring "
        'a data team in the spring. "We\'re going to build out a data team early next year."'
    )
    assert rejections.check(store, unrelated, "reconnect", [sofia, northwind], utcnow()) is None
    # Same kind, same target organisation, another intermediary: a different proposal, not suppressed.
    other = (
        "Julia Costa knows the CIO of Acme from university, and Acme published a tender. Ask Julia for an "
        'introduction. "Acme\'s CIO and I studied together."'
    )
    assert (
        rejections.check(store, other, "introduction", [add_entity(store, "Julia Costa"), acme + 100], utcnow()) is None
    )


def test_structured_scopes(store):
    marc, acme, sofia, northwind = _world(store)
    env = _env(store)
    p_this = add_proposal(store, entity_ids=[marc, acme])
    ops.dismiss(env, p_this, reason="already in touch", scope="this")
    hit = rejections.check(store, "completely different words", "introduction", [acme, marc], utcnow())
    assert hit.scope == "this" and hit.proposal_id == p_this
    assert hit.reason.startswith(f"suppressed: same introduction as {p_this} (Marc Dupont, Acme), dismissed ")
    assert hit.reason.endswith(": already in touch")
    assert rejections.check(store, "x", "brief", [marc, acme], utcnow()) is None  # another kind: not "this"
    ops.accept(env, p_this)  # changed their mind: the dismissal is lifted
    assert rejections.check(store, "completely different words", "introduction", [acme, marc], utcnow()) is None
    assert store.scalar("SELECT count(*) FROM rejection_embeddings WHERE proposal_id = ?", [p_this]) == 0

    p_entity = add_proposal(store, kind="reconnect", entity_ids=[sofia, northwind], title="Reconnect with Sofia")
    ops.dismiss(env, p_entity, reason="left the company", scope="entity", entity="Sofia Rossi")
    hit = rejections.check(store, "y", "brief", [sofia, 999], utcnow())
    assert hit.scope == "entity" and "anything about Sofia Rossi" in hit.reason
    assert rejections.check(store, "y", "brief", [northwind], utcnow()) is None  # --entity narrowed it

    p_kind = add_proposal(store, kind="birthday", entity_ids=[marc], title="Wish Marc a happy birthday")
    until = (utcnow() + timedelta(days=10)).date().isoformat()
    ops.dismiss(env, p_kind, reason="not my style", scope="kind", until=until)
    hit = rejections.check(store, "z", "birthday", [12345], utcnow())
    assert hit.scope == "kind" and f"until {until}" in hit.reason
    assert rejections.check(store, "z", "birthday", [12345], utcnow() + timedelta(days=11)) is None


def test_semantic_suppression_lapses_with_until(store):
    marc, acme, *_ = _world(store)
    pid = add_proposal(store, entity_ids=[marc, acme])
    until = (utcnow() + timedelta(days=3)).date().isoformat()
    ops.dismiss(_env(store), pid, reason="later", until=until)
    text = "Ask Marc Dupont on Thursday to introduce you to Acme's CIO; Acme just published a tender."
    assert rejections.check(store, text, "introduction", [777], utcnow()) is not None
    assert rejections.check(store, text, "introduction", [777], utcnow() + timedelta(days=4)) is None


def test_semantic_net_compares_like_kinds_only(store):
    """The demo's story: the owner dismisses the introduction via Marc; the meeting
    brief about Marc quotes the same lines (0.84 similar) but is another proposal."""
    data = json.loads(PAIRS.read_text())
    d13 = next(d for d in data["dismissed"] if d["id"] == "D13")
    brief = next(c for c in data["candidates"] if c["kind"] == "brief" and "Globex case study" in c["text"])
    marc, acme, *_ = _world(store)
    pid = add_proposal(store, entity_ids=[marc, acme], why=d13["text"], evidence=[])
    ops.dismiss(_env(store), pid, reason="already in touch with Sophie")
    [sim] = (rejections.embed([brief["text"]]) @ rejections.embed([d13["text"]]).T)[0]
    assert sim >= rejections.DEFAULT_THRESHOLD  # what made the brief a false positive before
    assert rejections.check(store, brief["text"], "brief", [marc], utcnow()) is None
    # Kinds drift in generated code: "intro" / "Introduction" still count as the same kind.
    for kind in ("intro", "Introduction", "introduction"):
        hit = rejections.check(store, d13["text"], kind, [4242], utcnow())
        assert hit is not None and hit.scope == "semantic" and hit.proposal_id == pid, kind
    assert rejections.same_kind("follow-up", "follow_up") and not rejections.same_kind("brief", "birthday")
    assert not rejections.same_kind("in", "introduction")  # too short to be a prefix


def test_gate_hook_explains_the_suppression(store):
    from backchannel.engine import gate

    marc, acme, *_ = _world(store)
    pid = add_proposal(store, entity_ids=[marc, acme])
    ops.dismiss(_env(store), pid, reason="not a target account")
    d = gate.check_rejection(
        store,
        "Tender from Acme published today; Marc knows Acme's CIO from his Globex "
        "years. Ask Marc to introduce you at Thursday's meeting.",
        "introduction",
        [4242],
        utcnow(),
    )
    assert not d.passed and d.check == "rejection"
    assert f"similar to {pid}" in d.reason and "not a target account" in d.reason
    assert gate.check_rejection(store, "Quarterly board report due Tuesday.", "other", [1], utcnow()).passed


def test_calibrated_threshold_separates_the_labelled_set():
    data = json.loads(PAIRS.read_text())
    dismissed = rejections.embed([d["text"] for d in data["dismissed"]])
    cands = rejections.embed([c["text"] for c in data["candidates"]])
    same = np.array(
        [[rejections.same_kind(c["kind"], d["kind"]) for d in data["dismissed"]] for c in data["candidates"]]
    )
    sims = np.where(same, cands @ dismissed.T, -1.0)  # as `check` compares: same kind only
    ids = [d["id"] for d in data["dismissed"]]
    pos = [sims[i, ids.index(c["same_as"])] for i, c in enumerate(data["candidates"]) if c["same_as"]]
    neg = [sims[i].max() for i, c in enumerate(data["candidates"]) if not c["same_as"]]
    t = rejections.DEFAULT_THRESHOLD
    assert max(neg) < t, "a different proposal would be suppressed"
    assert np.mean(np.array(pos) >= t) >= 0.9, "too many rewordings slip through"

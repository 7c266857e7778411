"""The gate and the judge read the store once per wake (judge_facts.WakeFacts,
gate.WakeReads, rejections.unchanged_during), not once per candidate: on a real store,
every candidate of a wake gets exactly the judgement and the gate decision it gets when
read alone, and a proposal made during the wake counts for the candidates after it."""

from __future__ import annotations

from datetime import timedelta

from backchannel.config import Settings, resolve_paths
from backchannel.engine import gate, judge
from backchannel.memory import rejections
from backchannel.memory.store import utcnow
from backchannel.ops import OpEnv, feedback_ops
from tests.support import synth
from tests.support.delivery_support import add_entity, add_proposal, make_settings


def _evidence(store, ids):
    from backchannel.graph.types import Candidate
    from backchannel.memory.assertions import load_evidence

    return load_evidence(store, Candidate(kind="x", entities=[], score=0.5, evidence_ids=list(ids)))


def _about(store, subject: int, predicate: str | None = None) -> list[int]:
    return [
        r[0]
        for r in store.con.execute(
            "SELECT id FROM assertions WHERE subject_id = ? AND (? IS NULL OR predicate = ?) ORDER BY id",
            [subject, predicate, predicate],
        ).fetchall()
    ]


def test_a_wakes_candidates_are_judged_as_each_alone(store):
    now = synth.SEED_NOW
    ids = synth.seed_story(store, now)
    me, marc, sophie, paul, nina = (ids[n] for n in ("Me", "Marc Dupont", "Sophie Martin", "Paul Durand", "Nina Roux"))
    # Paul says the review is done in a later meeting; the news names Nina.
    store.con.execute(
        "INSERT INTO sources (id, title, meeting_date, content_hash, format) VALUES "
        "('Slater', 'later', ?, 'hl', 'text')",
        [now - timedelta(days=2)],
    )
    store.con.execute(
        "INSERT INTO utterances (source_id, idx, speaker, speaker_id, text) VALUES "
        "('Slater', 0, 'Paul Durand', ?, 'I finished the contract review, all done.')",
        [paul],
    )
    store.con.execute(
        "INSERT INTO signals (id, source, title, org_ids, seen_at, published_at) VALUES "
        "('Gnina', 'drop', 'Nina Roux joins the board of Initech', [], ?, ?)",
        [now, now - timedelta(days=3)],
    )
    intro = _evidence(store, _about(store, marc, "worked_with") + _about(store, sophie, "works_at"))
    candidates = [
        ("introduction", sorted([marc, sophie]), intro),
        ("brief", [marc], _evidence(store, _about(store, marc))),
        ("commitment", [marc], _evidence(store, _about(store, marc, "committed_to"))),
        ("commitment", [paul], _evidence(store, _about(store, paul, "committed_to"))),
        ("commitment", [me], _evidence(store, _about(store, me, "committed_to"))),
        ("reconnect", [nina], _evidence(store, _about(store, nina))),
        ("reconnect", [marc], _evidence(store, _about(store, marc, "worked_with"))),
    ]
    alone = [judge.offline(store, entity_ids=i, evidence=ev, now=now, kind=k).as_dict() for k, i, ev in candidates]
    facts = judge.facts_for(store, now, candidates)
    together = [
        judge.offline(store, entity_ids=i, evidence=ev, now=now, kind=k, facts=facts).as_dict()
        for k, i, ev in candidates
    ]
    assert together == alone
    # The cases read what they should: a meeting and the news, a kept promise, a meeting too close.
    assert alone[0]["meeting"]["with"] == ["Marc Dupont"] and alone[0]["signal"]["id"] == "Gseedtender"
    assert alone[3]["veto"]["check"] == "kept" and "contract review" in alone[3]["veto"]["reason"]
    assert alone[5]["signal"]["id"] == "Gnina" and alone[5]["signals"]["trigger"] > 0
    assert alone[6]["veto"]["check"] == "meeting_soon"
    # Facts read for another moment are not used for this one.
    later = now + timedelta(days=3)
    assert (
        judge.offline(
            store, entity_ids=[marc], evidence=candidates[1][2], now=later, kind="brief", facts=facts
        ).as_dict()
        == judge.offline(store, entity_ids=[marc], evidence=candidates[1][2], now=later, kind="brief").as_dict()
    )


def _propose(store, pid: str, key: str, created) -> None:
    store.con.execute(
        """INSERT INTO proposals (id, run_id, dedupe_key, kind, entity_ids, title, body, score, evidence, status,
               created_at, updated_at) VALUES (?, 'R0', ?, 'brief', [], 't', 'b', 0.9, '[]', 'pending', ?, ?)""",
        [pid, key, created, created],
    )


def test_the_gate_reads_once_per_wake_and_counts_what_the_wake_proposed(store):
    now = synth.SEED_NOW
    s = Settings()
    s.gate = s.gate.model_copy(update={"quiet_hours": "off", "min_gap_minutes": 0, "max_per_day": 2})
    _propose(store, "P-1", gate.dedupe_key("brief", [1]), now - timedelta(days=3))
    keys = [gate.dedupe_key("brief", [i]) for i in (1, 2, 3, 4)]
    reads = gate.WakeReads(store, s, now, keys)

    def both(i: int) -> gate.Decision:
        alone = gate.before_judge(store, s, "brief", [i], "a brief", now)
        assert gate.before_judge(store, s, "brief", [i], "a brief", now, reads) == alone
        return alone

    assert both(1).check == "dedupe" and "P-1" in both(1).reason  # proposed before this wake
    assert both(2).passed
    _propose(store, "P-2", keys[1], now)  # the wake proposes #2...
    reads.proposal_made()
    assert both(2).check == "dedupe" and "P-2" in both(2).reason  # ...so #2 again is a duplicate
    assert both(3).passed
    _propose(store, "P-3", keys[2], now)
    reads.proposal_made()
    assert both(4).check == "rate_day"  # two today: the day's limit
    assert both(5).check == "rate_day"  # a key the wake did not announce is read alone


def test_the_rejection_memory_is_checked_once_in_a_wakes_gate_loop(store):
    marc, acme = add_entity(store, "Marc Dupont"), add_entity(store, "Acme", "organisation")
    env = OpEnv(store=store, settings=make_settings(), paths=resolve_paths())
    first = add_proposal(store, entity_ids=[marc, acme])
    feedback_ops.dismiss(env, first, reason="already in touch", scope="this")
    now = utcnow()
    alone = rejections.check(store, "other words", "introduction", [marc, acme], now)
    assert alone.proposal_id == first
    with rejections.unchanged_during(store):
        assert rejections.check(store, "other words", "introduction", [marc, acme], now) == alone
        assert rejections.check(store, "a brief", "brief", [marc], now) is None
        # The block's promise is that nothing dismisses meanwhile: its caches are not read again...
        second = add_proposal(store, kind="brief", entity_ids=[marc], title="Before you meet Marc")
        feedback_ops.dismiss(env, second, reason="not now", scope="this")
        assert rejections.check(store, "a brief", "brief", [marc], now) is None
    # ...and after it they are.
    assert rejections.check(store, "a brief", "brief", [marc], now).proposal_id == second

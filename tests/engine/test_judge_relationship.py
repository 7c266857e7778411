"""The judge reads the relationship, on a real store: no introduction to someone the
owner already knows or met, a promise kept when the recipient says it arrived, briefs
from recent conversations and open promises, and time (a past meeting is not upcoming,
year-old or future-dated news is not fresh)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.engine import judge
from backchannel.graph.api import GraphAPI
from backchannel.memory import entities
from backchannel.memory.store import utcnow
from backchannel.ops import OpEnv, invoke
from tests.engine.test_judging import _assertion, _evidence, _meeting


@pytest.fixture
def people(store):
    me = entities.ensure_owner(store, "Alex Moreau")
    marc = entities.create(store, "Marc Dupont", "person")
    sophie = entities.create(store, "Sophie Martin", "person")
    acme = entities.create(store, "Acme", "organisation")
    return me.id, marc.id, sophie.id, acme.id


def _source(store, sid, when, turns):
    """A meeting `when` with `turns` [(speaker id, text)]."""
    store.con.execute(
        "INSERT INTO sources (id, title, meeting_date, content_hash, format) VALUES (?, ?, ?, ?, 'txt')",
        [sid, f"meeting {sid}", when, f"hash-{sid}"],
    )
    for i, (speaker, text) in enumerate(turns):
        store.con.execute(
            "INSERT INTO utterances (source_id, idx, speaker, speaker_id, text) VALUES (?, ?, ?, ?, ?)",
            [sid, i, f"speaker {speaker}", speaker, text],
        )


def _intro(store, people, now):
    me, marc, sophie, acme = people
    _meeting(store, "coffee", 20, [marc], now)
    store.con.execute(
        "INSERT INTO signals (id, source, title, org_ids, seen_at, published_at) VALUES "
        "('s', 'drop', 'Acme publishes a tender', ?, ?, ?)",
        [[acme], now, now],
    )
    role = _assertion(store, sophie, "works_at", acme, said=now - timedelta(days=30))
    link = _assertion(store, marc, "worked_with", sophie, said=now - timedelta(days=400))
    return _evidence(store, [link, role])


def test_no_introduction_to_someone_the_owner_met_or_knows(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    ev = _intro(store, people, now)
    path = [me, marc, sophie]
    j = judge.offline(store, entity_ids=[marc, sophie], evidence=ev, now=now, kind="introduction", path=path)
    assert j.veto is None and j.score >= 0.6
    # Alex and Sophie both spoke in a call last month: a tie, whatever Marc knows.
    _source(
        store,
        "call",
        now - timedelta(days=26),
        [(sophie, "Thanks for making the time, Alex."), (me, "Glad we talk directly.")],
    )
    j = judge.offline(store, entity_ids=[marc, sophie], evidence=ev, now=now, kind="introduction", path=path)
    assert j.score == 0 and j.veto["check"] == "already_connected"
    assert "Sophie Martin" in j.veto["reason"] and "1 meeting(s)" in j.veto["reason"]
    # Marc, the introducer, also met Alex: that is what makes him one, not a veto.
    _source(store, "lunch", now - timedelta(days=100), [(marc, "Hello."), (me, "Hi Marc.")])
    j = judge.offline(store, entity_ids=[marc, sophie], evidence=ev, now=now, kind="introduction", path=path)
    assert j.veto["check"] == "already_connected" and "Marc" not in j.veto["reason"].split(":")[0]


def test_a_link_between_owner_and_target_is_a_tie_too(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    ev = _intro(store, people, now)
    _assertion(store, me, "knows", sophie, said=now - timedelta(days=700), speaker=me)
    j = judge.offline(
        store, entity_ids=[marc, sophie], evidence=ev, now=now, kind="introduction", path=[me, marc, sophie]
    )
    assert j.veto["check"] == "already_connected" and "1 link(s) between you" in j.veto["reason"]


def test_a_promise_is_kept_when_the_recipient_says_it_arrived(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    promise = _assertion(
        store,
        me,
        "committed_to",
        said=now - timedelta(days=8),
        literal="send you the rollout deck",
        recipient=marc,
        valid_to=(now + timedelta(days=2)).date(),
    )
    ev = _evidence(store, [promise])

    def check():
        return judge.offline(store, entity_ids=[me, marc], evidence=ev, now=now, kind="commitment")

    assert check().veto is None
    # Not yet: a wait, a question, and someone who is neither maker nor recipient, in their own meeting.
    _source(
        store,
        "a",
        now - timedelta(days=6),
        [
            (marc, "We have not got the rollout deck yet."),
            (marc, "I still haven't received the rollout deck, by the way."),
            (marc, "Did the rollout deck arrive on your side?"),
        ],
    )
    _source(store, "b", now - timedelta(days=5), [(sophie, "Got the rollout deck, thanks.")])
    assert check().veto is None
    # The recipient thanks the maker for it, in a later meeting.
    _source(
        store,
        "c",
        now - timedelta(days=2),
        [(marc, "Hello again. Got the rollout deck, thanks Alex! The board liked it.")],
    )
    j = check()
    assert j.veto["check"] == "kept" and "Got the rollout deck, thanks Alex!" in j.veto["reason"]
    assert "Marc Dupont" in j.veto["reason"]
    # `ask` reads the same: the graph API says it is kept, and the skill no longer lists it as open.
    [k] = GraphAPI(store, Settings()).kept([promise])
    assert k["id"] == promise and k["speaker_name"] == "Marc Dupont" and k["quote"].startswith("Got the rollout deck")
    env = OpEnv(store=store, settings=Settings(), paths=resolve_paths().ensure())
    out = invoke(env, "skill_run", {"name": "open_commitments", "args": {"people": ["me"]}})
    assert out["candidates"] == [] and "kept since" in out["why_nothing"]


def test_a_promise_to_the_owner_is_kept_when_the_owner_thanks_for_it(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    promise = _assertion(
        store,
        marc,
        "committed_to",
        said=now - timedelta(days=10),
        literal="send you the audit figures",
        recipient=me,
        valid_to=(now + timedelta(days=1)).date(),
    )
    ev = _evidence(store, [promise])
    _source(store, "d", now - timedelta(days=3), [(me, "Thank you for the audit figures, Marc, very useful.")])
    j = judge.offline(store, entity_ids=[me, marc], evidence=ev, now=now, kind="commitment")
    assert j.veto["check"] == "kept" and "audit figures" in j.veto["reason"]


def test_a_brief_counts_recent_conversations_and_open_promises(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    ev = _evidence(store, [_assertion(store, marc, "works_at", acme, said=now - timedelta(days=20))])
    _meeting(store, "tomorrow", 18, [marc], now)
    alone = judge.offline(store, entity_ids=[marc], evidence=ev, now=now, kind="brief")
    assert alone.veto is None and alone.score < 0.6 and alone.signals["conversation"] == 0
    # A talk months ago is no recent conversation.
    _source(store, "old", now - timedelta(days=200), [(me, "Hello Marc."), (marc, "Hello.")])
    assert judge.offline(store, entity_ids=[marc], evidence=ev, now=now, kind="brief").signals["conversation"] == 0
    _source(store, "t1", now - timedelta(days=16), [(me, "How is the pilot?"), (marc, "Slow.")])
    _source(store, "t2", now - timedelta(days=4), [(marc, "The data arrived."), (me, "Good news.")])
    j = judge.offline(store, entity_ids=[marc], evidence=ev, now=now, kind="brief")
    assert j.score >= 0.6 and j.signals["conversation"] == 1.0
    assert any(r.startswith("2 conversation(s) with you") for r in j.reasons)
    # One recent talk and a meeting tomorrow are enough, even with nothing else known.
    one = judge.offline(store, entity_ids=[sophie], evidence=[], now=now, kind="brief")
    assert one.veto["check"] == "no_meeting"
    _meeting(store, "sophie", 18, [sophie], now)
    _source(store, "t3", now - timedelta(days=3), [(sophie, "See you soon."), (me, "Sure.")])
    assert judge.offline(store, entity_ids=[sophie], evidence=[], now=now, kind="brief").score >= 0.6
    # An open promise either way counts.
    _assertion(store, marc, "committed_to", said=now - timedelta(days=5), literal="send the figures", recipient=me)
    j = judge.offline(store, entity_ids=[marc], evidence=ev, now=now, kind="brief")
    assert j.signals["promises"] == 1.0 and any("they promised you" in r for r in j.reasons)


def test_a_past_meeting_is_not_upcoming_and_old_or_future_news_is_not_fresh(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    role = _assertion(store, sophie, "works_at", acme, said=now - timedelta(days=30))
    link = _assertion(store, marc, "worked_with", sophie, said=now - timedelta(days=400))
    ev = _evidence(store, [link, role])
    _meeting(store, "yesterday", -26, [marc], now)
    j = judge.offline(store, entity_ids=[marc], evidence=_evidence(store, [link]), now=now, kind="brief")
    assert j.veto["check"] == "no_meeting"
    for sid, published in (("old", now - timedelta(days=430)), ("ahead", now + timedelta(days=300))):
        store.con.execute(
            "INSERT INTO signals (id, source, title, org_ids, seen_at, published_at) VALUES "
            "(?, 'drop', 'Acme publishes a tender', ?, ?, ?)",
            [sid, [acme], now, published],
        )
        j = judge.offline(
            store, entity_ids=[marc, sophie], evidence=ev, now=now, kind="introduction", path=[me, marc, sophie]
        )
        assert j.signals["meeting"] == 0 and j.signals["signal"] == 0 and j.score < 0.6, sid
    store.con.execute(
        "INSERT INTO signals (id, source, title, org_ids, seen_at, published_at) VALUES "
        "('today', 'drop', 'Acme publishes a tender', ?, ?, ?)",
        [[acme], now, now - timedelta(days=1)],
    )
    j = judge.offline(store, entity_ids=[marc, sophie], evidence=ev, now=now, kind="introduction")
    assert j.signals["signal"] == 1.0 and j.signal["id"] == "today"


def test_the_recipient_needs_to_name_only_one_topic_word(store, people):
    me, marc, sophie, acme = people
    now = utcnow()
    promise = _assertion(
        store,
        me,
        "committed_to",
        said=now - timedelta(days=9),
        recipient=marc,
        literal="send you the updated pricing for the enterprise tier",
        valid_to=(now + timedelta(days=3)).date(),
    )
    ev = _evidence(store, [promise])
    # Someone else at the recipient's meeting, naming one word of four: not enough.
    _source(
        store, "e", now - timedelta(days=4), [(sophie, "We got the pricing from another vendor."), (marc, "Right.")]
    )
    assert judge.offline(store, entity_ids=[me, marc], evidence=ev, now=now, kind="commitment").veto is None
    _source(store, "f", now - timedelta(days=2), [(marc, "Got the pricing, thanks.")])
    j = judge.offline(store, entity_ids=[me, marc], evidence=ev, now=now, kind="commitment")
    assert j.veto["check"] == "kept" and "Got the pricing, thanks." in j.veto["reason"]

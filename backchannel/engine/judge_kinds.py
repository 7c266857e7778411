"""Per-kind judging: what makes each kind of candidate worth an interruption.

Each kind has its own features (each in [0, 1]), read from the store, and a
logistic model over them: score = sigmoid(bias + sum(weight * feature)). The
weights start from the documented priors below (docs/judging.md) and are
refitted from the owner's accept/dismiss history (`calibrate.py`), the priors
acting as the regulariser. Some conditions are not a matter of degree: they
veto the candidate, with a reason `trace` shows (an ambiguous link, a link too
weak to carry an introduction, a reconnect with someone met tomorrow).

    brief         meeting soon + how well memory knows the person (trusted facts)
    commitment    a recipient + a due date close or just past, or a meeting with
                  the recipient before which the promise must be kept
    reconnect     months of silence + a trigger about the person or their
                  organisation + how close the tie is; never when a meeting is near
    introduction  meeting + signal + evidence, each link trusted (the weakest counts)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from backchannel.engine.judge_facts import WakeFacts, promise_key, promise_of
from backchannel.memory.store import Store

# Priors: {kind: (bias, {feature: weight})}. Chosen so the documented situations
# land on the right side of the default threshold 0.6 (logit 0.405); see docs/judging.md.
PRIORS: dict[str, tuple[float, dict[str, float]]] = {
    "introduction": (-3.8, {"meeting": 2.0, "signal": 2.0, "evidence": 1.0, "trust": 1.0}),
    "brief": (-4.6, {"meeting": 3.0, "knowledge": 4.0, "trust": 1.0}),
    "commitment": (-4.4, {"due": 2.5, "meeting": 2.5, "recipient": 2.0, "trust": 1.0}),
    "reconnect": (-4.2, {"silence": 1.5, "trigger": 3.0, "tie": 1.5, "trust": 0.5}),
}
LINK_TRUST_FLOOR = 0.45  # an introduction is never built on a link trusted less than this
TRUSTED = 0.5  # a fact counts towards "knowing someone well" from this trust up
KNOWN_FACTS = 4  # this many trusted facts: memory knows the person fully (knowledge = 1)
BRIEF_HOURS = 24  # a brief comes the day before the meeting (the default lead_hours), not days ahead
RECONNECT_QUIET_DAYS = 7  # a meeting with them within this many days: no reconnect
SILENCE_FULL_DAYS = 180  # silent this long: silence = 1
DUE_AHEAD_FULL_D, DUE_AHEAD_ZERO_D, OVERDUE_MAX_D = 7, 21, 14
SOCIAL = ("knows", "worked_with", "introduced")
ORG_KIND = 2  # graph/index.py's code for an organisation entity
# A later turn by the promiser saying it is done ("I sent you the pricing on Monday").
_DONE = re.compile(r"\b(?:sent|shared|emailed|mailed|forwarded|attached|delivered|uploaded|done|finished|"
                   r"envoy[ée]e?s?|transmis|partag[ée]e?s?)\b", re.I)
_TOPIC_STOP = {"send", "will", "with", "your", "that", "this", "from", "about", "next", "week", "by", "the", "you",
               "envoie", "vous", "pour", "avec"}


@dataclass
class KindView:
    features: dict[str, float]
    reasons: list[str]
    veto: tuple[str, str] | None = None  # (check, reason)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def score(kind: str, features: dict[str, float], weights: tuple[float, dict[str, float]] | None = None) -> float:
    bias, w = weights or PRIORS[kind]
    return sigmoid(bias + sum(w.get(k, 0.0) * v for k, v in features.items()))


def trust_of(e: dict[str, Any]) -> float:
    """COALESCE(trust, confidence) of one evidence row; unknown counts as 0.5."""
    t = e.get("trust")
    if t is None:
        t = e.get("confidence")
    return float(t) if t is not None else 0.5


def _reasons(e: dict[str, Any]) -> list[str]:
    return [str(r) for r in (e.get("trust_reasons") or [])]


def _quote(e: dict[str, Any]) -> str:
    q = str(e.get("quote") or "")
    return q if len(q) <= 80 else q[:77] + "..."


# -- the kinds -----------------------------------------------------------------


def introduction(evidence: list[dict[str, Any]], base: dict[str, float]) -> KindView:
    feats = {"meeting": base["meeting"], "signal": base["signal"], "evidence": base["evidence"]}
    if not evidence:
        return KindView({**feats, "trust": 0.0}, ["no evidence"], ("low_trust", "no evidence behind the path"))
    for e in evidence:
        if "ambiguous_reference" in _reasons(e):
            return KindView({**feats, "trust": 0.0}, [], (
                "ambiguous_link", f"the link '{_quote(e)}' (#{e.get('assertion_id')}) names a person memory cannot "
                "tell apart from another with the same name; no introduction is built on it"))
    weakest = min(evidence, key=trust_of)
    t = trust_of(weakest)
    feats["trust"] = t
    why = f"weakest link trust {t:.2f}" + (f" ({', '.join(_reasons(weakest))})" if _reasons(weakest) else "")
    if t < LINK_TRUST_FLOOR:
        return KindView(feats, [why], ("low_trust", f"{why} below {LINK_TRUST_FLOOR}: '{_quote(weakest)}' "
                                                    f"(#{weakest.get('assertion_id')})"))
    return KindView(feats, [why])


def brief(facts: WakeFacts, entity_ids: list[int], evidence: list[dict[str, Any]], base: dict[str, float]) -> KindView:
    trusted = {e.get("assertion_id") for e in evidence if trust_of(e) >= TRUSTED}
    # What links them to the owner counts too (the brief's text leaves it out: the owner knows it).
    owner = facts.owner()
    shared = facts.store.scalar(
        f"""SELECT count(*) FROM assertions WHERE superseded_at IS NULL AND predicate IN {SOCIAL}
            AND coalesce(trust, confidence) >= ? AND ((list_contains(?, subject_id) AND object_id = ?)
                 OR (subject_id = ? AND list_contains(?, object_id)))""",
        [TRUSTED, [int(i) for i in entity_ids], owner, owner, [int(i) for i in entity_ids]]) if owner else 0
    n = len(trusted) + int(shared or 0)
    mean = sum(trust_of(e) for e in evidence) / len(evidence) if evidence else 0.0
    feats = {"meeting": base["meeting"], "knowledge": min(n, KNOWN_FACTS) / KNOWN_FACTS, "trust": mean}
    reasons = [f"{n} trusted fact(s) about them ({len(trusted)} of {len(evidence)} in the brief, "
               f"{int(shared or 0)} linking them to you)"]
    m = facts.next_meeting(entity_ids, 30)
    if m is None:
        return KindView(feats, reasons, ("no_meeting", "no upcoming meeting with them: a brief prepares a meeting"))
    if m[0] > BRIEF_HOURS:
        return KindView(feats, reasons, ("too_early", f"the meeting '{m[1]}' is {m[0]:.0f} h away; a brief comes "
                                                      f"within {BRIEF_HOURS} h of it"))
    return KindView(feats, reasons)


def _due_strength(due: date, today: date) -> float:
    ahead = (due - today).days
    if ahead < -OVERDUE_MAX_D:
        return 0.0
    if ahead <= DUE_AHEAD_FULL_D:
        return 1.0
    return max(0.0, 1 - (ahead - DUE_AHEAD_FULL_D) / (DUE_AHEAD_ZERO_D - DUE_AHEAD_FULL_D))


def commitment(facts: WakeFacts, evidence: list[dict[str, Any]], horizon_days: float,
               meeting_strength: Any) -> KindView:
    p = promise_of(evidence)
    if p is None:
        return KindView({"due": 0.0, "meeting": 0.0, "recipient": 0.0, "trust": 0.0}, ["no promise in evidence"])
    now = facts.now
    kept = _kept(facts, p)
    if kept:
        return KindView({"due": 0.0, "meeting": 0.0, "recipient": 0.0, "trust": trust_of(p)}, [], ("kept", kept))
    reasons = []
    due = p.get("valid_to")
    if isinstance(due, str):
        due = date.fromisoformat(due[:10])
    if isinstance(due, datetime):
        due = due.date()
    s_due = _due_strength(due, now.date()) if due else 0.0
    reasons.append(f"due {due}" if due else "no due date")
    owner = facts.owner()
    recipient = p.get("recipient_id")
    subject = p.get("subject_id")
    if recipient is not None:
        s_rec, counterpart = 1.0, int(recipient)
        reasons.append(f"promised to #{recipient}")
    elif subject is not None and owner is not None and int(subject) != owner:
        s_rec, counterpart = 0.5, int(subject)  # someone else's promise, said to the owner's face
        reasons.append("no recipient recorded; someone else's promise")
    else:
        s_rec, counterpart = 0.0, None
        reasons.append("no recipient recorded")
    s_meet = 0.0
    if counterpart is not None:
        m = facts.next_meeting([counterpart], horizon_days)
        if m:
            s_meet = meeting_strength(m[0], horizon_days)
            reasons.append(f"meeting '{m[1]}' with them in {m[0]:.0f} h")
    return KindView({"due": s_due, "meeting": s_meet, "recipient": s_rec, "trust": trust_of(p)}, reasons)


def _topic(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[^\W\d_]{4,}", (text or "").lower()) if w not in _TOPIC_STOP}


def _kept(facts: WakeFacts, promise: dict[str, Any]) -> str | None:
    """A later turn by the promiser, in a later meeting, that says the promised thing
    was done and names at least half of its topic words; None when there is none."""
    key = promise_key(promise)
    topic = _topic(promise.get("literal") or promise.get("quote") or "")
    if key is None or not topic:
        return None
    for text, when in facts.later_turns(*key):
        if _DONE.search(text) and len(topic & _topic(text)) * 2 >= len(topic):
            return f"kept since: '{text if len(text) <= 80 else text[:77] + '...'}' ({when:%Y-%m-%d})"
    return None


def strongest_links(store: Store, evidence_ids: list[int]) -> list[int]:
    """An introduction's evidence with each social link (knows, worked with, introduced)
    backed by the most trusted live assertion between the same two people: the newest
    mention of a tie may be the weakest (a hearsay, a transcript that asks to be believed)
    while an older first-hand one holds."""
    ids = [int(i) for i in evidence_ids]
    if not ids:
        return ids
    rows = store.con.execute(
        f"""WITH ev AS (SELECT id, subject_id AS s, object_id AS o, coalesce(trust, confidence) AS t
                        FROM assertions WHERE id = ANY(?::BIGINT[]) AND predicate IN {SOCIAL} AND object_id IS NOT NULL)
            SELECT ev.id, arg_max(a.id, coalesce(a.trust, a.confidence)), max(coalesce(a.trust, a.confidence)),
                   any_value(ev.t)
            FROM ev JOIN assertions a ON a.predicate IN {SOCIAL} AND a.superseded_at IS NULL
                 AND ((a.subject_id = ev.s AND a.object_id = ev.o) OR (a.subject_id = ev.o AND a.object_id = ev.s))
            GROUP BY ev.id""", [ids]).fetchall()
    better = {int(r[0]): int(r[1]) for r in rows if r[2] is not None and r[3] is not None and r[2] > r[3]}
    return list(dict.fromkeys(better.get(i, i) for i in ids))


def commitment_entities(store: Store, entity_ids: list[int], evidence: list[dict[str, Any]]) -> list[int]:
    """A reminder is about the promise's maker and its recipient."""
    ids = {int(i) for i in entity_ids}
    for e in evidence:
        if e.get("predicate") == "committed_to" and e.get("recipient_id") is not None:
            ids.add(int(e["recipient_id"]))
    return sorted(ids)


def _history(store: Store, person: int, owner: int | None) -> tuple[datetime | None, int]:
    """(when they were last said anything about in a meeting, mail or note, or said anything (a news
    item about them is not hearing from them), live social links between
    them and the owner), from the process's in-memory graph index (graph/index.py): a gather
    over their adjacency instead of a scan of every assertion."""
    from backchannel.graph.index import NO_TIME, IndexCache

    idx = IndexCache.get(store)
    nodes = idx.node_array([person])
    if not len(nodes):
        return None, 0
    pos = idx.incident(nodes)
    rows = idx.adj_row[idx.keep(pos, None)]
    rows = rows[~idx.news[rows]]  # a news item about them is no word from them
    secs = max(int(idx.said[rows].max()) if len(rows) else int(NO_TIME), int(idx.last_spoke[nodes].max()))
    linked = 0
    if owner is not None and 0 <= owner < idx.n_nodes:
        social = idx.keep(pos, idx.pred_mask(SOCIAL), entity_edges=True)
        linked = int((idx.adj_other[social] == int(idx.canon[owner])).sum())
    when = None if secs == int(NO_TIME) else datetime(1970, 1, 1) + timedelta(seconds=secs)
    return when, linked


def organisations_of(store: Store, person: int) -> list[int]:
    """Organisations the person is linked to by a live assertion (works at, left, ...), from
    the in-memory graph index: what a signal must be about to concern them."""
    import numpy as np

    from backchannel.graph.index import IndexCache

    idx = IndexCache.get(store)
    nodes = idx.node_array([person])
    if not len(nodes):
        return []
    pos = idx.keep(idx.incident(nodes), None, entity_edges=True)
    others = np.unique(idx.adj_other[pos])
    return [int(o) for o in others.tolist() if int(idx.kind[o]) == ORG_KIND]


def reconnect(facts: WakeFacts, entity_ids: list[int], evidence: list[dict[str, Any]], signal_of: Any) -> KindView:
    person = int(entity_ids[0]) if entity_ids else None
    feats = {"silence": 0.0, "trigger": 0.0, "tie": 0.0, "trust": 0.0}
    if person is None:
        return KindView(feats, ["nobody to reconnect with"])
    m = facts.next_meeting([person], RECONNECT_QUIET_DAYS)
    if m:
        return KindView(feats, [], ("meeting_soon", f"you meet them in {m[0]:.0f} h ('{m[1]}'): the brief before "
                                                    "that meeting covers it, not a reconnect"))
    said, linked = _history(facts.store, person, facts.owner())
    spoke, met = facts.spoken(person)
    last = max([t for t in (said, spoke) if t is not None], default=None)
    days = (facts.now - last).total_seconds() / 86400 if last else SILENCE_FULL_DAYS
    feats["silence"] = max(0.0, min(1.0, days / SILENCE_FULL_DAYS))
    reasons = [f"silent for {days:.0f} days"]
    met = int(met or 0)
    feats["tie"] = 1.0 if linked else 0.5 if met >= 2 else 0.25 if met else 0.0
    reasons.append("linked to you" if linked else f"met in {met} meeting(s)")
    s_sig, sig_reason = signal_of(person)
    feats["trigger"] = s_sig
    reasons.append(sig_reason or "no news about them or their organisation")
    feats["trust"] = max((trust_of(e) for e in evidence), default=0.6)
    return KindView(feats, reasons)

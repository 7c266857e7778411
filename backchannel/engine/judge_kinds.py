"""Per-kind judging: what makes each kind of candidate worth an interruption.

Each kind has its own features (each in [0, 1]), read from the store, and a
logistic model over them: score = sigmoid(bias + sum(weight * feature)). The
weights start from the documented priors below (docs/judging.md) and are
refitted from the owner's accept/dismiss history (`calibrate.py`), the priors
acting as the regulariser. Some conditions are not a matter of degree: they
veto the candidate, with a reason `trace` shows (an ambiguous link, a link too
weak to carry an introduction, a reconnect with someone met tomorrow).

    brief         meeting soon + how well memory knows the person (trusted facts) + what
                  the owner and they said to each other lately + promises open between them
    commitment    a recipient + a due date close or just past, or a meeting with
                  the recipient before which the promise must be kept
    reconnect     months of silence + a trigger about the person or their
                  organisation + how close the tie is; never when a meeting is near
    introduction  meeting + signal + evidence, each link trusted (the weakest counts); never to
                  someone the owner already knows or met
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from backchannel.core.ties import TIE_PREDICATES, live_tie_sql
from backchannel.engine.judge_facts import RECENT_TALK_D, WakeFacts, promise_key, promise_of
from backchannel.graph import kept
from backchannel.memory.store import Store

# Priors: {kind: (bias, {feature: weight})}. Chosen so the documented situations
# land on the right side of the default threshold 0.6 (logit 0.405); see docs/judging.md.
PRIORS: dict[str, tuple[float, dict[str, float]]] = {
    "introduction": (-3.8, {"meeting": 2.0, "signal": 2.0, "evidence": 1.0, "trust": 1.0}),
    "brief": (-4.6, {"meeting": 3.0, "knowledge": 4.0, "trust": 1.0, "conversation": 2.5, "promises": 1.5}),
    "commitment": (-4.4, {"due": 2.5, "meeting": 2.5, "recipient": 2.0, "trust": 1.0}),
    "reconnect": (-4.2, {"silence": 1.5, "trigger": 3.0, "tie": 1.5, "trust": 0.5}),
}
LINK_TRUST_FLOOR = 0.45  # an introduction is never built on a link trusted less than this
TRUSTED = 0.5  # a fact counts towards "knowing someone well" from this trust up
KNOWN_FACTS = 4  # this many trusted facts: memory knows the person fully (knowledge = 1)
TALK_HALF_LIFE_D = 30  # a conversation with them counts half after a month (the brief's `conversation`)
BRIEF_HOURS = 24  # a brief comes the day before the meeting (the default lead_hours), not days ahead
RECONNECT_QUIET_DAYS = 7  # a meeting with them within this many days: no reconnect
SILENCE_FULL_DAYS = 180  # silent this long: silence = 1
DUE_AHEAD_FULL_D, DUE_AHEAD_ZERO_D, OVERDUE_MAX_D = 7, 21, 14
SOCIAL = TIE_PREDICATES
ORG_KIND = 2  # graph/index.py's code for an organisation entity


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


def direct_tie(facts: WakeFacts, target: int) -> str | None:
    """Why the owner needs no introduction to `target` (a link between them, or a meeting
    both spoke in), or None."""
    if facts.owner() is None or int(target) == facts.owner():
        return None
    links, met, last = facts.tie(int(target))
    if not links and not met:
        return None
    name = facts.names([int(target)]).get(int(target)) or f"#{target}"
    said = []
    if links:
        said.append(f"{links} link(s) between you (knows, worked with, introduced)")
    if met:
        said.append(f"you both spoke in {met} meeting(s)" + (f", last on {last:%Y-%m-%d}" if last else ""))
    return f"you already know {name}: {'; '.join(said)}; no introduction through someone else is needed"


def introduction(
    evidence: list[dict[str, Any]], base: dict[str, float], facts: WakeFacts | None = None, target: int | None = None
) -> KindView:
    feats = {"meeting": base["meeting"], "signal": base["signal"], "evidence": base["evidence"]}
    tied = direct_tie(facts, target) if facts is not None and target is not None else None
    if tied:
        return KindView({**feats, "trust": 0.0}, [tied], ("already_connected", tied))
    if not evidence:
        return KindView({**feats, "trust": 0.0}, ["no evidence"], ("low_trust", "no evidence behind the path"))
    for e in evidence:
        if "ambiguous_reference" in _reasons(e):
            return KindView(
                {**feats, "trust": 0.0},
                [],
                (
                    "ambiguous_link",
                    f"the link '{_quote(e)}' (#{e.get('assertion_id')}) names a person memory cannot "
                    "tell apart from another with the same name; no introduction is built on it",
                ),
            )
    weakest = min(evidence, key=trust_of)
    t = trust_of(weakest)
    feats["trust"] = t
    why = f"weakest link trust {t:.2f}" + (f" ({', '.join(_reasons(weakest))})" if _reasons(weakest) else "")
    if t < LINK_TRUST_FLOOR:
        return KindView(
            feats,
            [why],
            ("low_trust", f"{why} below {LINK_TRUST_FLOOR}: '{_quote(weakest)}' (#{weakest.get('assertion_id')})"),
        )
    return KindView(feats, [why])


def brief(facts: WakeFacts, entity_ids: list[int], evidence: list[dict[str, Any]], base: dict[str, float]) -> KindView:
    trusted = {e.get("assertion_id") for e in evidence if trust_of(e) >= TRUSTED}
    # What links them to the owner counts too (the brief's text leaves it out: the owner knows it).
    owner_id = facts.owner()
    shared = (
        facts.store.scalar(
            f"""SELECT count(*) FROM assertions a WHERE {live_tie_sql("a")}
            AND coalesce(a.trust, a.confidence) >= ? AND ((list_contains(?, a.subject_id) AND a.object_id = ?)
                 OR (a.subject_id = ? AND list_contains(?, a.object_id)))""",
            [TRUSTED, [int(i) for i in entity_ids], owner_id, owner_id, [int(i) for i in entity_ids]],
        )
        if owner_id
        else 0
    )
    n = len(trusted) + int(shared or 0)
    mean = sum(trust_of(e) for e in evidence) / len(evidence) if evidence else 0.0
    feats = {"meeting": base["meeting"], "knowledge": min(n, KNOWN_FACTS) / KNOWN_FACTS, "trust": mean}
    reasons = [
        f"{n} trusted fact(s) about them ({len(trusted)} of {len(evidence)} in the brief, "
        f"{int(shared or 0)} linking them to you)"
    ]
    # What a brief is for: what you and they said to each other lately, and what is open between you.
    talks = sorted({t for i in entity_ids for t in facts.talks(int(i)) if t is not None}, reverse=True)
    recency = sum(0.5 ** (max((facts.now - t).total_seconds() / 86400, 0.0) / TALK_HALF_LIFE_D) for t in talks)
    feats["conversation"] = min(1.0, recency)
    reasons.append(
        f"{len(talks)} conversation(s) with you in the last {RECENT_TALK_D} days"
        + (f", the latest on {talks[0]:%Y-%m-%d}" if talks else "")
    )
    promises = {p for i in entity_ids for p in facts.open_promises(int(i))}
    feats["promises"] = min(1.0, float(len(promises)))
    owner = facts.owner()
    if promises:
        latest = max(promises, key=lambda p: p[3])
        who = "you promised them" if latest[2] == owner else "they promised you"
        reasons.append(f"{len(promises)} open promise(s) between you ({who} to {latest[1][:60]!s})")
    else:
        reasons.append("no open promise between you")
    m = facts.next_meeting(entity_ids, 30)
    if m is None:
        return KindView(feats, reasons, ("no_meeting", "no upcoming meeting with them: a brief prepares a meeting"))
    if m[0] > BRIEF_HOURS:
        return KindView(
            feats,
            reasons,
            ("too_early", f"the meeting '{m[1]}' is {m[0]:.0f} h away; a brief comes within {BRIEF_HOURS} h of it"),
        )
    return KindView(feats, reasons)


def _due_strength(due: date, today: date) -> float:
    ahead = (due - today).days
    if ahead < -OVERDUE_MAX_D:
        return 0.0
    if ahead <= DUE_AHEAD_FULL_D:
        return 1.0
    return max(0.0, 1 - (ahead - DUE_AHEAD_FULL_D) / (DUE_AHEAD_ZERO_D - DUE_AHEAD_FULL_D))


def commitment(
    facts: WakeFacts, evidence: list[dict[str, Any]], horizon_days: float, meeting_strength: Any
) -> KindView:
    p = promise_of(evidence)
    if p is None:
        return KindView({"due": 0.0, "meeting": 0.0, "recipient": 0.0, "trust": 0.0}, ["no promise in evidence"])
    now = facts.now
    kept = why_kept(facts, p)
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
    if (
        owner is not None
        and recipient is not None
        and subject is not None
        and owner not in (int(recipient), int(subject))
    ):
        # Made by one person to another, the owner only heard it: not theirs to keep or to chase.
        return KindView(
            {"due": 0.0, "meeting": 0.0, "recipient": 0.0, "trust": trust_of(p)},
            [],
            ("not_owners", "a promise between two others: the owner neither made it nor is owed it"),
        )
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


def why_kept(facts: WakeFacts, promise: dict[str, Any]) -> str | None:
    """Why the promise is kept (graph/kept.py: the maker saying it is done, or anyone else in
    a later meeting of the maker or the recipient saying it arrived), or None."""
    key = promise_key(promise)
    if key is None:
        return None
    found = kept.keeping_turn(
        facts.later_turns(*key), key[0], promise.get("literal") or promise.get("quote") or "", key[2]
    )
    if found is None:
        return None
    text, when, speaker = found
    who = facts.names([speaker]).get(speaker) if speaker is not None else None
    quote = text if len(text) <= 80 else text[:77] + "..."
    return f"kept since: '{quote}' ({who + ', ' if who else ''}{when:%Y-%m-%d})"


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
            FROM ev JOIN assertions a ON {live_tie_sql("a")}
                 AND ((a.subject_id = ev.s AND a.object_id = ev.o) OR (a.subject_id = ev.o AND a.object_id = ev.s))
            GROUP BY ev.id""",
        [ids],
    ).fetchall()
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
    the in-memory graph index, and by one not said as a rumour: what a signal must be about to
    concern them."""
    import numpy as np

    from backchannel.graph.index import IndexCache

    idx = IndexCache.get(store)
    nodes = idx.node_array([person])
    if not len(nodes):
        return []
    pos = idx.keep(idx.incident(nodes), None, entity_edges=True)
    others = np.unique(idx.adj_other[pos])
    orgs = [int(o) for o in others.tolist() if int(idx.kind[o]) == ORG_KIND]
    if not orgs:
        return []
    # An organisation they are only rumoured to be at or joining ("I heard he might be off to Paystack")
    # is not theirs: its news is no reason to write to them.
    marks = ", ".join("?" * len(orgs))
    vouched = store.con.execute(
        "SELECT DISTINCT CASE WHEN subject_id = ? THEN object_id ELSE subject_id END FROM assertions"
        " WHERE superseded_at IS NULL AND coalesce(CAST(stance AS VARCHAR), 'asserted') <> 'rumour'"
        f" AND ((subject_id = ? AND object_id IN ({marks})) OR (object_id = ? AND subject_id IN ({marks})))",
        [person, person, *orgs, person, *orgs],
    ).fetchall()
    keep = {int(r[0]) for r in vouched}
    return [o for o in orgs if o in keep]


def reconnect(facts: WakeFacts, entity_ids: list[int], evidence: list[dict[str, Any]], signal_of: Any) -> KindView:
    person = int(entity_ids[0]) if entity_ids else None
    feats = {"silence": 0.0, "trigger": 0.0, "tie": 0.0, "trust": 0.0}
    if person is None:
        return KindView(feats, ["nobody to reconnect with"])
    m = facts.next_meeting([person], RECONNECT_QUIET_DAYS)
    if m:
        return KindView(
            feats,
            [],
            (
                "meeting_soon",
                f"you meet them in {m[0]:.0f} h ('{m[1]}'): the brief before that meeting covers it, not a reconnect",
            ),
        )
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

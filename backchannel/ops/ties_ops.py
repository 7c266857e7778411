"""A person's or organisation's ties as a graph, and the path behind an introduction:
the read side of the web app's drawings (web/graph_view.py), as named operations so the
page reads nothing the CLI could not.

A tie is a live (not superseded) assertion between two entities; the people the owner
met (spoke in the same meeting) are the owner's own ties, drawn as `met` edges. Out to
two hops, at most `max_nodes` nodes: the nearest first, then by trust, then by how
recently the tie was said; the rest are counted, not dropped silently."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from backchannel.core.ties import link_kind
from backchannel.ops import OpEnv, OpError, op
from backchannel.ops.memory_ops import ASSERTION_COLUMNS, ASSERTION_JOINS
from backchannel.ops.privacy_ops import find_one

LINK_PREDICATES = ("works_at", "left", "worked_with", "knows", "introduced", "mentioned_with")
MAX_NODES_CAP = 500  # a page never draws more, whatever it asks for
FILE_DATED = ("filename", "mtime")  # the meeting's date was read off the file, not the transcript


def iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat() if isinstance(value, date | datetime) else str(value)


def _live_ids(env: OpEnv) -> dict[int, int]:
    """{entity id: the entity it lives on as} for every merged-away entity (merges may chain)."""
    merged = {
        int(r["id"]): int(r["merged_into"])
        for r in env.store.query("SELECT id, merged_into FROM entities WHERE merged_into IS NOT NULL")
    }
    out = {}
    for eid in merged:
        seen, cur = {eid}, merged[eid]
        while cur in merged and merged[cur] not in seen:
            seen.add(cur)
            cur = merged[cur]
        out[eid] = cur
    return out


def _links_touching(env: OpEnv, ids: list[int]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ", ".join(f"'{p}'" for p in LINK_PREDICATES)
    return env.store.query(
        f"SELECT {ASSERTION_COLUMNS} {ASSERTION_JOINS} WHERE a.object_id IS NOT NULL AND a.superseded_at IS NULL "
        f"AND a.predicate IN ({marks}) AND (list_contains($1, a.subject_id) OR list_contains($1, a.object_id)) "
        "ORDER BY a.said_at NULLS LAST, a.id",
        [ids],
    )


def _merged_into_each(env: OpEnv, live: dict[int, int], ids: set[int]) -> list[int]:
    """`ids` and every entity merged into one of them (their assertions still name the old id)."""
    return sorted(ids | {old for old, new in live.items() if new in ids})


def _edge(a: dict[str, Any], s: int, o: int) -> dict[str, Any]:
    return {
        "id": f"a{a['id']}",
        "assertion_id": a["id"],
        "source": s,
        "target": o,
        "predicate": link_kind(a["predicate"], a.get("stance")),  # knowing *of* someone: its own kind
        "stance": a.get("stance") or "asserted",
        "trust": round(float(a["trust"] or 0.0), 3),
        "quote": a["quote"],
        "speaker": a["speaker"],
        "said_at": iso(a["said_at"]),
        "qualifier": a["qualifier"],
        "modality": a["modality"],
        "date_origin": a["date_origin"],
        "file_dated": a["date_origin"] in FILE_DATED,
        "count": 1,
    }


def _owner(env: OpEnv) -> dict[str, Any] | None:
    rows = env.store.query("SELECT id, name, kind FROM entities WHERE is_owner AND merged_into IS NULL LIMIT 1")
    return rows[0] if rows else None


def _met_edges(env: OpEnv, owner_id: int, people: list[int]) -> list[dict[str, Any]]:
    """One `met` edge per person who spoke in a meeting the owner spoke in: the latest such meeting."""
    if not people:
        return []
    rows = env.store.query(
        """SELECT o.speaker_id AS other, s.id AS source_id, s.title, s.meeting_date, s.meeting_date_origin,
                  count(DISTINCT s.id) OVER (PARTITION BY o.speaker_id) AS meetings
           FROM utterances me JOIN utterances o ON o.source_id = me.source_id AND o.speaker_id <> me.speaker_id
           JOIN sources s ON s.id = me.source_id
           WHERE me.speaker_id = ? AND list_contains(?, o.speaker_id)
           QUALIFY row_number() OVER (PARTITION BY o.speaker_id ORDER BY s.meeting_date DESC NULLS LAST, s.id DESC) = 1
           ORDER BY other""",
        [owner_id, people],
    )
    return [
        {
            "id": f"met{owner_id}-{r['other']}",
            "assertion_id": None,
            "source": owner_id,
            "target": int(r["other"]),
            "predicate": "met",
            "trust": 1.0,
            "quote": f"in '{r['title']}'" + (f" and {r['meetings'] - 1} other meeting(s)" if r["meetings"] > 1 else ""),
            "speaker": None,
            "said_at": iso(r["meeting_date"]),
            "qualifier": None,
            "modality": None,
            "date_origin": r["meeting_date_origin"],
            "file_dated": r["meeting_date_origin"] in FILE_DATED,
            "count": int(r["meetings"]),
        }
        for r in rows
    ]


def _titles(env: OpEnv, live: dict[int, int], ids: list[int]) -> dict[int, str]:
    """A live title for each entity that has one: has_title, else the qualifier of a works_at."""
    rows = env.store.query(
        """SELECT subject_id, predicate, coalesce(object_literal, qualifier) AS title FROM assertions
           WHERE superseded_at IS NULL AND list_contains(?, subject_id)
             AND (predicate = 'has_title' OR (predicate = 'works_at' AND qualifier IS NOT NULL))
           ORDER BY predicate = 'has_title', said_at NULLS FIRST, id""",
        [_merged_into_each(env, live, set(ids))],
    )
    return {live.get(int(r["subject_id"]), int(r["subject_id"])): r["title"] for r in rows if r["title"]}


def _graph(
    env: OpEnv,
    live: dict[int, int],
    edges: dict[tuple, dict[str, Any]],
    hop: dict[int, int],
    center: list[int],
    max_nodes: int,
    owner: dict[str, Any] | None,
) -> dict[str, Any]:
    """Nodes ranked (hop, -trust, -recency), capped at max_nodes; edges between kept nodes."""
    best: dict[int, tuple[float, str]] = {}
    for e in edges.values():
        for end in (e["source"], e["target"]):
            t, when = best.get(end, (0.0, ""))
            best[end] = (max(t, e["trust"]), max(when, e["said_at"] or ""))
    owner_id = int(owner["id"]) if owner else None

    def rank(n: int) -> tuple:
        t, when = best.get(n, (0.0, ""))
        newest = -datetime.fromisoformat(when).timestamp() if when else 0.0
        return (hop[n], n != owner_id, -t, newest, n)

    ordered = sorted(hop, key=rank)
    kept = ordered[: max(max_nodes, len(center))]
    left_out = ordered[len(kept) :]
    ids = list(kept)
    rows = {
        int(r["id"]): r
        for r in env.store.query("SELECT id, name, kind, is_owner FROM entities WHERE list_contains(?, id)", [ids])
    }
    titles = _titles(env, live, ids)
    nodes = [
        {
            "id": n,
            "name": rows[n]["name"],
            "kind": rows[n]["kind"],
            "is_owner": bool(rows[n]["is_owner"]),
            "hop": hop[n],
            "center": n in center,
            "title": titles.get(n),
            "trust": round(best.get(n, (0.0, ""))[0], 3),
            "last_said": best.get(n, (0.0, ""))[1] or None,
        }
        for n in kept
        if n in rows
    ]
    keep = {n["id"] for n in nodes}
    kept_edges = [e for e in edges.values() if e["source"] in keep and e["target"] in keep]
    for e in kept_edges:
        e["owners_tie"] = owner_id is not None and owner_id in (e["source"], e["target"])
    return {
        "nodes": nodes,
        "edges": kept_edges,
        "more": len(left_out),
        "total_nodes": len(ordered),
        "owner_id": owner_id,
    }


class _Ties:
    """Ties as they are found: one per (subject, predicate, object), its most trusted mention
    shown and every mention counted; an assertion found again from its other end counts once."""

    def __init__(self, live: dict[int, int]) -> None:
        self.live = live
        self.edges: dict[tuple, dict[str, Any]] = {}
        self.seen: set[int] = set()

    def add(self, a: dict[str, Any]) -> tuple[int, int] | None:
        """Add assertion `a`; its two ends (as live entities), or None for a loop."""
        s, o = self.live.get(a["subject_id"], a["subject_id"]), self.live.get(a["object_id"], a["object_id"])
        if s == o:
            return None
        if a["id"] in self.seen:
            return s, o
        self.seen.add(a["id"])
        key = (s, o, link_kind(a["predicate"], a.get("stance")))
        edge, old = _edge(a, s, o), self.edges.get(key)
        if old is None:
            self.edges[key] = edge
        elif (old["trust"], old["said_at"] or "") >= (edge["trust"], edge["said_at"] or ""):
            old["count"] += 1
        else:
            edge["count"] = old["count"] + 1
            self.edges[key] = edge
        return s, o


@op(read=True)
def entity_ties(env: OpEnv, ref: str, hops: int = 2, max_nodes: int = 40) -> dict[str, Any]:
    """The ties of one entity out to `hops` (1 or 2), at most `max_nodes` nodes: {center,
    nodes [{id, name, kind, is_owner, hop, title, trust, last_said}], edges [{source,
    target, predicate, trust, quote, speaker, said_at, file_dated, owners_tie, ...}],
    more (nodes left out), total_nodes, owner_id}."""
    try:
        hops, max_nodes = int(hops), int(max_nodes)
    except (TypeError, ValueError):
        raise OpError("hops and max_nodes are whole numbers") from None
    if hops not in (1, 2):
        raise OpError(f"hops is 1 or 2, got {hops}")
    if not 1 <= max_nodes <= MAX_NODES_CAP:
        raise OpError(f"max_nodes is from 1 to {MAX_NODES_CAP}, got {max_nodes}")
    e = find_one(env, ref)
    live = _live_ids(env)
    center = live.get(e.id, e.id)
    hop = {center: 0}
    ties = _Ties(live)
    frontier = {center}
    for depth in range(1, hops + 1):
        found: set[int] = set()
        for a in _links_touching(env, _merged_into_each(env, live, frontier)):
            ends = ties.add(a)
            if ends:
                found.update(n for n in ends if n not in hop)
        for n in found:
            hop[n] = depth
        frontier = found
    owner = _owner(env)
    if owner is not None:
        oid = int(owner["id"])
        met = _met_edges(env, oid, _merged_into_each(env, live, {n for n in hop if n != oid}))
        for m in met:
            m["target"] = live.get(m["target"], m["target"])
        met = [m for m in met if m["target"] in hop]
        if oid not in hop and met and min(hop[m["target"]] for m in met) + 1 <= hops:
            hop[oid] = min(hop[m["target"]] for m in met) + 1
        if oid in hop:  # the owner is in the drawing: whom they met in it
            for m in met:
                ties.edges.setdefault((oid, m["target"], "met"), m)
    out = _graph(env, live, ties.edges, hop, [center], max_nodes, owner)
    out["center"] = center
    return out


@op(read=True)
def proposal_path(env: OpEnv, id: str) -> dict[str, Any]:  # noqa: A002 - the user's word for it
    """The ties an introduction rests on, as a graph: its evidence's links, the owner's
    meetings with the people on the path, the people it is about marked as `center`."""
    from backchannel.ops.daemon_ops import proposal

    p = proposal(env, id)
    live = _live_ids(env)
    ids = [int(x["assertion_id"]) for x in p.get("evidence") or [] if isinstance(x, dict) and x.get("assertion_id")]
    rows = env.store.query(
        f"SELECT {ASSERTION_COLUMNS} {ASSERTION_JOINS} WHERE list_contains(?, a.id) AND a.object_id IS NOT NULL",
        [ids or [-1]],
    )
    ties = _Ties(live)
    about = [live.get(i, i) for i in p["entity_ids"]]
    hop = {n: 0 for n in about}
    for a in rows:
        for n in ties.add(a) or ():
            hop.setdefault(n, 1)
    owner = _owner(env)
    if owner is not None:
        people = [n for n in hop if n != owner["id"]]
        for m in _met_edges(env, int(owner["id"]), _merged_into_each(env, live, set(people))):
            m["target"] = live.get(m["target"], m["target"])
            ties.edges.setdefault((m["source"], m["target"], "met"), m)
            hop.setdefault(int(owner["id"]), 1)
    out = _graph(env, live, ties.edges, hop, about, MAX_NODES_CAP, owner)
    out["center"] = about[0] if about else None
    out["proposal_id"] = p["id"]
    return out

"""Simple paths between two sets of entities over the CSR index.

Distances to the targets are computed first by a vectorised breadth-first
search from the target side; the depth-first walk from the sources then only
steps onto entities that can still reach a target within the hops left. So the
walk visits little more than the entities that lie on answers, even when a hub
(an organisation with thousands of employees) sits next to the target.
"""

from __future__ import annotations

import numpy as np

from backchannel.graph.index import GraphIndex

FAR = np.int8(127)
MAX_PATHS = 100_000  # hard ceiling before sorting, whatever `limit` says


def target_distances(
    idx: GraphIndex, targets: np.ndarray, depth: int, pmask: np.ndarray | None
) -> tuple[np.ndarray, int]:
    """Hop distance to the nearest target (FAR beyond `depth`), and entries scanned."""
    dist = np.full(idx.n_nodes, FAR, dtype=np.int8)
    dist[targets] = 0
    frontier, scanned = targets, 0
    for d in range(1, depth + 1):
        pos = idx.incident(frontier)
        scanned += len(pos)
        pos = idx.keep(pos, pmask, entity_edges=True)
        nbrs = np.unique(idx.adj_other[pos])
        nbrs = nbrs[dist[nbrs] > d]
        if len(nbrs) == 0:
            break
        dist[nbrs] = d
        frontier = nbrs
    return dist, scanned


def simple_paths(
    idx: GraphIndex, sources: np.ndarray, targets: np.ndarray, max_hops: int, pmask: np.ndarray | None
) -> tuple[list[list[int]], int]:
    """Every simple path (no entity twice) of 1..max_hops links from a source to a
    target, as entity id lists; and the number of index entries scanned."""
    if max_hops < 1 or len(sources) == 0 or len(targets) == 0:
        return [], 0
    dist, scanned = target_distances(idx, targets, max_hops - 1, pmask)
    target_set = set(targets.tolist())
    found: list[list[int]] = []
    adj_cache: dict[int, np.ndarray] = {}

    def neighbours(u: int) -> np.ndarray:
        nonlocal scanned
        got = adj_cache.get(u)
        if got is None:
            pos = idx.incident(np.array([u], dtype=np.int64))
            scanned += len(pos)
            pos = idx.keep(pos, pmask, entity_edges=True)
            got = np.unique(idx.adj_other[pos])
            adj_cache[u] = got
        return got

    def walk(path: list[int], on_path: set[int]) -> None:
        rem = max_hops - (len(path) - 1)  # links still allowed
        nbrs = neighbours(path[-1])
        nbrs = nbrs[dist[nbrs] <= rem - 1]
        for v in nbrs.tolist():
            if v in on_path:
                continue
            if len(found) >= MAX_PATHS:
                return
            path.append(v)
            if v in target_set:
                found.append(list(path))
            if rem - 1 > 0:
                on_path.add(v)
                walk(path, on_path)
                on_path.discard(v)
            path.pop()

    for s in sources.tolist():
        walk([s], {s})
    return found, scanned


def edge_rows(idx: GraphIndex, u: int, v: int, pmask: np.ndarray | None) -> np.ndarray:
    """Rows of the live assertions linking u and v (either direction), most recent first."""
    pos = idx.keep(idx.incident(np.array([u], dtype=np.int64)), pmask, entity_edges=True)
    rows = idx.adj_row[pos[idx.adj_other[pos] == v]]
    rows = np.unique(rows)
    return rows[np.argsort(-idx.said[rows], kind="stable")]

"""The graph API: what a program in the sandbox may ask of memory.

Read-only, set-oriented (every call takes whole frontiers) and served from the
in-memory index where it matters. Every method takes and returns plain JSON
values; the docstrings are what the model reads (see stubs.py), so they say
exactly what comes back. Superseded assertions are left out. The parent counts
the assertions each call scans or returns (`take_touched`).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from backchannel.core.ties import TIE_PREDICATES
from backchannel.core.timeutil import as_naive_utc, db_now
from backchannel.core.vocabulary import API_METHODS, MODALITIES
from backchannel.graph import addressed
from backchannel.graph import paths as pathsearch
from backchannel.graph.errors import GraphAPIError
from backchannel.graph.index import NO_DAY, NO_TIME, GraphIndex, IndexCache, iso_days, iso_times
from backchannel.memory.text import norm_name

if TYPE_CHECKING:
    from backchannel.memory.store import Store

SOCIAL = TIE_PREDICATES
MAX_NAME_MATCHES = 25  # resolve() by name returns at most this many, best first
KIND_NAMES = {0: None, 1: "person", 2: "organisation", 3: "role"}
# Words that do not make a title: "minister of education" asks for "Minister for Education".
_TITLE_STOP = {"the", "a", "an", "of", "for", "at", "in", "on", "and", "our", "their", "its"}


def _title_matches(role_norm: str, title: str) -> bool:
    """Whether a title ("Minister for Education", "CIO") answers the role asked for:
    the same words, the role's words inside the title ("director of education" in
    "interim director of education"), or every content word of the role in it."""
    tn = norm_name(title)
    if not tn:
        return False
    if tn == role_norm or f" {role_norm} " in f" {tn} ":
        return True
    want = [w for w in role_norm.split() if w not in _TITLE_STOP]
    have = set(tn.split())
    return len(want) >= 2 and all(w in have for w in want)


def _id_list(ids: Any, what: str = "entity_ids") -> list[int]:
    if ids is None:
        return []
    if isinstance(ids, (int, dict)) and not isinstance(ids, bool):
        ids = [ids]
    if not isinstance(ids, (list, tuple, set)):
        raise GraphAPIError(f"{what} must be an id or a list of ids, got {type(ids).__name__}")
    out = []
    for v in ids:
        if isinstance(v, dict):
            v = v.get("id")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
            raise GraphAPIError(f"{what}: {v!r} is not an entity id")
        out.append(int(v))
    return out


class GraphAPI:
    """Served to sandboxed programs through `rpc_methods()`."""

    def __init__(
        self, store: Store, settings: Any = None, *, now: datetime | None = None, scopes: list[str] | None = None
    ):
        self.store = store
        self.settings = settings
        self.scopes = scopes  # the source scopes this reader may see ([scope]); None: all
        self._now = now
        self._touched = 0
        self._idx: GraphIndex | None = None
        self._network_cache: dict[tuple, list[dict]] = {}

    # -- parent side ----------------------------------------------------------
    @property
    def index(self) -> GraphIndex:
        if self._idx is None:
            self.refresh()
        return self._idx  # type: ignore[return-value]

    def refresh(self) -> GraphIndex:
        """Rebuild the index if the assertions changed since it was built."""
        idx = IndexCache.get(self.store)
        if self.scopes is not None:
            idx = idx.scoped(self.store, self.scopes)
        if idx is not self._idx:
            self._network_cache.clear()
        self._idx = idx
        return idx

    def rpc_methods(self) -> dict[str, Any]:
        """Name -> callable, for the sandbox to serve. Refreshes the index first."""
        self.refresh()
        return {name: getattr(self, name) for name in API_METHODS}

    def take_touched(self) -> int:
        """Assertions touched since the last call (and reset)."""
        n, self._touched = self._touched, 0
        return n

    def _now_dt(self) -> datetime:
        return self._now or db_now()

    def _secs(self, value: Any, what: str) -> int:
        """An ISO date/time, or an int meaning that many days before now, as epoch seconds."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            dt = self._now_dt() - timedelta(days=float(value))
        elif isinstance(value, str):
            try:
                dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise GraphAPIError(f"{what}: {value!r} is not an ISO date") from None
            dt = as_naive_utc(dt)
        else:
            raise GraphAPIError(f"{what}: expected an ISO date or a number of days, got {value!r}")
        return int((dt - datetime(1970, 1, 1)).total_seconds())

    # -- shaping results --------------------------------------------------------
    def _assertion_dicts(self, rows: np.ndarray) -> list[dict[str, Any]]:
        idx = self.index
        names = idx.names
        said, vf, vt = iso_times(idx.said[rows]), iso_days(idx.vfrom[rows]), iso_days(idx.vto[rows])
        out = []
        for i, r in enumerate(rows.tolist()):
            s, o, spk = int(idx.subj[r]), int(idx.obj[r]), int(idx.spk[r])
            q, lit = int(idx.qual[r]), int(idx.lit[r])
            out.append(
                {
                    "id": int(idx.aid[r]),
                    "subject": s,
                    "subject_name": names[s] if s < idx.n_nodes else None,
                    "predicate": idx.preds[idx.pred[r]],
                    "object": o if o >= 0 else None,
                    "object_name": names[o] if 0 <= o < idx.n_nodes else None,
                    "literal": idx.lits[lit] if lit >= 0 else None,
                    "qualifier": idx.quals[q] if q >= 0 else None,
                    "speaker": spk if spk >= 0 else None,
                    "speaker_name": names[spk] if 0 <= spk < idx.n_nodes else None,
                    "said_at": said[i],
                    "valid_from": vf[i],
                    "valid_to": vt[i],
                    "confidence": round(float(idx.conf[r]), 3),
                    "modality": MODALITIES[int(idx.modality[r])],
                }
            )
        return out

    def _entity_dict(self, eid: int) -> dict[str, Any]:
        idx = self.index
        return {"id": eid, "name": idx.name(eid), "kind": KIND_NAMES[int(idx.kind[eid])] if eid < idx.n_nodes else None}

    def _current_roles(self, nodes: np.ndarray) -> dict[int, list[dict[str, Any]]]:
        """Current works_at of each person: not ended, and no `left` said later for that org."""
        idx = self.index
        today = (self._now_dt().date() - date(1970, 1, 1)).days
        pos = idx.incident(nodes)
        self._touched += len(pos)
        pos = pos[idx.adj_dir[pos] == 1]
        rows = idx.adj_row[idx.keep(pos, idx.pred_mask(["works_at", "left"]), entity_edges=True)]
        left: dict[tuple[int, int], int] = {}
        works = []
        for r in rows.tolist():
            key = (int(idx.subj[r]), int(idx.obj[r]))
            if idx.preds[idx.pred[r]] == "left":
                left[key] = max(left.get(key, int(NO_TIME)), int(idx.said[r]))
            elif idx.vto[r] == NO_DAY or idx.vto[r] >= today:
                works.append((key, r))
        out: dict[int, list[dict[str, Any]]] = {}
        for (s, o), r in works:
            if (s, o) in left and left[(s, o)] >= idx.said[r]:
                continue
            q = int(idx.qual[r])
            out.setdefault(s, []).append(
                {
                    "org": o,
                    "org_name": idx.name(o),
                    "title": idx.quals[q] if q >= 0 else None,
                    "assertion": int(idx.aid[r]),
                }
            )
        return out

    # -- the API ------------------------------------------------------------------
    def me(self) -> dict:
        """The owner of this memory: {"id", "name", "kind"}."""
        idx = self.index
        if idx.owner is None:
            row = self.store.con.execute(
                "SELECT id FROM entities WHERE is_owner AND merged_into IS NULL ORDER BY id LIMIT 1"
            ).fetchone()
            if row is None:
                raise GraphAPIError("no owner entity in memory")
            return {"id": int(row[0]), "name": idx.name(int(row[0])), "kind": "person"}
        return self._entity_dict(idx.owner)

    def now(self) -> str:
        """The current time as this API sees it, ISO 8601 UTC ("2025-03-01T09:00:00")."""
        return self._now_dt().isoformat(timespec="seconds")

    def resolve(self, name_or_role: str, org: str | int | None = None, kind: str | None = None) -> list[dict]:
        """Entities named `name_or_role` (name or alias, case/accent-insensitive;
        a first name matches a full name), or, for a role or title ("CIO"), the people
        who currently hold it, at `org` (name or id) if given. "CIO of Acme" works too.
        `kind`: "person", "organisation" or "role" to restrict.
        Returns [{"id", "name", "kind", "match": "name" | "role", and for role matches
        "title", "org", "org_name", "assertion"}], best first (at most 25 name matches);
        [] when nothing matches."""
        if not isinstance(name_or_role, str) or not name_or_role.strip():
            raise GraphAPIError("resolve: name_or_role must be a non-empty string")
        text = name_or_role.strip()
        if org is None:
            for sep in (" of ", " at ", " @ "):
                if sep in text.lower():
                    i = text.lower().index(sep)
                    roles = self._role_holders(text[:i], text[i + len(sep) :])
                    if roles:
                        return roles
        found = [] if org is not None else self._by_name(text, kind)
        if kind in (None, "person"):
            found += [r for r in self._role_holders(text, org) if r["id"] not in {f["id"] for f in found}]
        return found

    def _by_name(self, text: str, kind: str | None) -> list[dict]:
        n = norm_name(text)
        rows = self.store.con.execute(
            """SELECT DISTINCT e.id, (e.norm = ? OR a.norm = ?) AS exact FROM entities e
               LEFT JOIN aliases a ON a.entity_id = e.id
               WHERE e.merged_into IS NULL AND (e.norm = ? OR a.norm = ?
                     OR e.norm LIKE ? OR a.norm LIKE ? OR e.norm LIKE ? OR a.norm LIKE ?)""",
            [n, n, n, n, n + " %", n + " %", "% " + n, "% " + n],
        ).fetchall()
        idx = self.index
        kinds = {v: k for k, v in KIND_NAMES.items()}
        best: dict[int, bool] = {}
        for eid, exact in rows:
            eid = int(eid)
            if kind and (eid >= idx.n_nodes or int(idx.kind[eid]) != kinds.get(kind)):
                continue
            best[eid] = best.get(eid, False) or bool(exact)
        ranked = sorted(
            best, key=lambda e: (not best[e], -int(idx.indptr[e + 1] - idx.indptr[e]) if e < idx.n_nodes else 0, e)
        )
        out = []
        for eid in ranked[:MAX_NAME_MATCHES]:
            d = self._entity_dict(eid)
            d["match"] = "name"
            out.append(d)
        return out

    def _role_holders(self, role: str, org: str | int | None) -> list[dict]:
        idx = self.index
        rn = norm_name(role)
        if not rn:
            return []
        codes = [i for i, q in enumerate(idx.quals) if _title_matches(rn, q)]
        out = self._works_at_holders(codes, org)
        if org is None:  # a title said without an organisation ("Minister for Education")
            out += [h for h in self._title_holders(rn) if h["id"] not in {o["id"] for o in out}]
        return out

    def _title_holders(self, rn: str) -> list[dict]:
        """People with a current has_title literal matching the role words `rn`."""
        idx = self.index
        codes = [i for i, q in enumerate(idx.lits) if _title_matches(rn, q)]
        if not codes or "has_title" not in idx.preds:
            return []
        rows = np.nonzero(np.isin(idx.lit, codes) & idx.alive & (idx.pred == idx.preds.index("has_title")))[0]
        self._touched += len(rows)
        out, seen = [], set()
        for r in rows.tolist():
            pid = int(idx.subj[r])
            if pid in seen or int(idx.kind[pid]) not in (0, 1):  # people only
                continue
            seen.add(pid)
            d = self._entity_dict(pid)
            d.update(match="role", title=idx.lits[int(idx.lit[r])], org=None, org_name=None, assertion=int(idx.aid[r]))
            out.append(d)
        return out

    def _works_at_holders(self, codes: list[int], org: str | int | None) -> list[dict]:
        idx = self.index
        org_ids: set[int] | None = None
        if org is not None:
            if isinstance(org, int):
                org_ids = {org}
            else:
                org_ids = {d["id"] for d in self._by_name(str(org), "organisation")}
            if not org_ids:
                return []
        if not codes:
            return []
        rows = np.nonzero(np.isin(idx.qual, codes) & idx.alive & (idx.obj >= 0))[0]
        rows = rows[[idx.preds[p] == "works_at" for p in idx.pred[rows].tolist()]] if len(rows) else rows
        self._touched += len(rows)
        people = np.unique(idx.subj[rows])
        roles = self._current_roles(people)
        out, seen = [], set()
        for pid in people.tolist():
            for r in roles.get(pid, []):
                if r["title"] is None or int(idx.qual[idx.rows_of([r["assertion"]])[0]]) not in codes:
                    continue
                if org_ids is not None and r["org"] not in org_ids:
                    continue
                if (pid, r["org"]) in seen:
                    continue
                seen.add((pid, r["org"]))
                d = self._entity_dict(pid)
                d.update(match="role", title=r["title"], org=r["org"], org_name=r["org_name"], assertion=r["assertion"])
                out.append(d)
        return out

    def entity(self, ids: list[int]) -> list[dict]:
        """Details of entities: [{"id", "name", "kind", "is_owner", "aliases", "degree"
        (assertions touching it), "roles": current [{"org", "org_name", "title", "assertion"}]}]."""
        ids = _id_list(ids)
        idx = self.index
        nodes = idx.node_array(ids)
        roles = self._current_roles(nodes)
        aliases: dict[int, list[str]] = {}
        if len(nodes):
            for eid, alias in self.store.con.execute(
                "SELECT entity_id, alias FROM aliases WHERE list_contains(?, entity_id) ORDER BY alias",
                [nodes.tolist()],
            ).fetchall():
                aliases.setdefault(int(eid), []).append(alias)
        out = []
        for eid in nodes.tolist():
            d = self._entity_dict(eid)
            d.update(
                is_owner=eid == idx.owner,
                aliases=aliases.get(eid, []),
                degree=int(idx.indptr[eid + 1] - idx.indptr[eid]),
                roles=roles.get(eid, []),
            )
            out.append(d)
        return out

    def assertions_about(
        self,
        entity_ids: list[int],
        predicates: list[str] | None = None,
        since: str | int | None = None,
        as_of: str | None = None,
    ) -> list[dict]:
        """Assertions whose subject or object is one of `entity_ids`, most recent first.
        `predicates` filters (e.g. ["works_at", "committed_to"]); `since`: said on or after
        (ISO date, or an int = that many days ago); `as_of`: true at that date (valid_from..valid_to)
        and said by then. Each: {"id", "subject", "subject_name", "predicate", "object",
        "object_name", "literal", "qualifier", "speaker", "speaker_name", "said_at",
        "valid_from", "valid_to", "confidence", "modality"}."""
        idx = self.index
        pos = idx.incident(idx.node_array(_id_list(entity_ids)))
        self._touched += len(pos)
        rows = np.unique(idx.adj_row[idx.keep(pos, idx.pred_mask(predicates))])
        if since is not None:
            rows = rows[idx.said[rows] >= self._secs(since, "since")]
        if as_of is not None:
            t = self._secs(as_of, "as_of")
            day = t // 86400
            ok = (idx.said[rows] <= t) & ((idx.vfrom[rows] == NO_DAY) | (idx.vfrom[rows] <= day))
            ok &= (idx.vto[rows] == NO_DAY) | (idx.vto[rows] >= day)
            rows = rows[ok]
        rows = rows[np.argsort(-idx.said[rows], kind="stable")]
        return self._assertion_dicts(rows)

    def links(self, entity_ids: list[int], predicates: list[str] | None = None) -> list[dict]:
        """Entity-to-entity links touching any of `entity_ids` (fast: served from memory).
        Each: {"id" (assertion), "from" (the entity you asked about), "to" (the other
        entity), "predicate", "dir" ("out": from is the subject, "in": from is the object),
        "qualifier", "speaker", "said_at", "valid_from", "valid_to", "confidence"}. A predicate
        "knows_of" is knowing *of* someone (the name, not the person): no tie, never a path."""
        idx = self.index
        pos = idx.incident(idx.node_array(_id_list(entity_ids)))
        self._touched += len(pos)
        pos = idx.keep(pos, idx.pred_mask(predicates), entity_edges=True)
        rows = idx.adj_row[pos]
        frm = np.where(idx.adj_dir[pos] == 1, idx.subj[rows], idx.obj[rows]).tolist()
        other = idx.adj_other[pos].tolist()
        dirs = idx.adj_dir[pos].tolist()
        said, vf, vt = iso_times(idx.said[rows]), iso_days(idx.vfrom[rows]), iso_days(idx.vto[rows])
        aid, pred, qual = idx.aid[rows].tolist(), idx.pred[rows].tolist(), idx.qual[rows].tolist()
        spk, conf = idx.spk[rows].tolist(), idx.conf[rows].tolist()
        preds, quals = idx.preds, idx.quals
        return [
            {
                "id": aid[i],
                "from": frm[i],
                "to": other[i],
                "predicate": preds[pred[i]],
                "dir": "out" if dirs[i] == 1 else "in",
                "qualifier": quals[qual[i]] if qual[i] >= 0 else None,
                "speaker": spk[i] if spk[i] >= 0 else None,
                "said_at": said[i],
                "valid_from": vf[i],
                "valid_to": vt[i],
                "confidence": round(conf[i], 3),
            }
            for i in range(len(aid))
        ]

    def between(self, a_ids: list[int], b_ids: list[int], predicates: list[str] | None = None) -> list[dict]:
        """Assertions directly linking any entity of `a_ids` with any of `b_ids` (either
        direction), as links (see `links`), "from" always in a_ids."""
        b = set(_id_list(b_ids, "b_ids"))
        return [l for l in self.links(a_ids, predicates) if l["to"] in b]

    def subjects_of(self, predicates: list[str]) -> list[int]:
        """Ids of every entity that is the subject of a current (not superseded) assertion
        with one of `predicates`, e.g. everyone who made a commitment: ["committed_to"]."""
        idx = self.index
        if not isinstance(predicates, (list, tuple)) or not all(isinstance(p, str) for p in predicates):
            raise GraphAPIError("subjects_of: predicates must be a list of strings")
        codes = [idx.preds.index(p) for p in predicates if p in idx.preds]
        if not codes:
            return []
        rows = np.nonzero(np.isin(idx.pred, codes) & idx.alive)[0]
        self._touched += len(rows)
        return sorted({int(x) for x in idx.subj[rows].tolist()})

    def network(self, hops: int = 1) -> list[dict]:
        """My contacts: people linked to me by knows / worked_with / introduced, or who
        spoke in a meeting I spoke in; hops=2 adds their own knows/worked_with contacts.
        Each: {"id", "name", "hops", "strength" (links + shared meetings), "last_seen"
        (latest date we met, were linked, or they spoke; ISO or null)}; strongest first."""
        if hops not in (1, 2):
            raise GraphAPIError("network: hops must be 1 or 2")
        key = (hops,)
        if key not in self._network_cache:
            self._network_cache[key] = self._network(hops)
        return [dict(c) for c in self._network_cache[key]]

    def _network(self, hops: int) -> list[dict]:
        idx = self.index
        me = self.me()["id"]
        strength: dict[int, int] = {}
        seen: dict[int, int] = {}

        def bump(eid: int, t: int, n: int = 1) -> None:
            if eid == me or not (0 <= eid < idx.n_nodes) or idx.kind[eid] not in (0, 1):
                return
            strength[eid] = strength.get(eid, 0) + n
            seen[eid] = max(seen.get(eid, int(NO_TIME)), t)

        pmask = idx.pred_mask(SOCIAL)
        pos = idx.incident(np.array([me], dtype=np.int64))
        self._touched += len(pos)
        pos = idx.keep(pos, pmask, entity_edges=True)
        for other, r in zip(idx.adj_other[pos].tolist(), idx.adj_row[pos].tolist()):
            bump(other, int(idx.said[r]))
        for spk, shared, last in self.store.con.execute(
            """SELECT u.speaker_id, count(DISTINCT u.source_id), max(epoch(s.meeting_date))::BIGINT
               FROM utterances u JOIN sources s ON s.id = u.source_id
               WHERE u.speaker_id IS NOT NULL AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], coalesce(s.scope, 'default')))
                 AND u.source_id IN (SELECT source_id FROM utterances WHERE speaker_id = ?)
               GROUP BY 1""",
            [self.scopes, self.scopes, me],
        ).fetchall():
            bump(
                int(idx.canon[spk]) if spk < idx.n_nodes else int(spk),
                int(last) if last is not None else int(NO_TIME),
                int(shared),
            )
        hop_of = {c: 1 for c in strength}
        if hops == 2 and strength:
            first = np.array(sorted(strength), dtype=np.int64)
            pos = idx.incident(first)
            self._touched += len(pos)
            pos = idx.keep(pos, idx.pred_mask(("knows", "worked_with")), entity_edges=True)
            for other, r in zip(idx.adj_other[pos].tolist(), idx.adj_row[pos].tolist()):
                if other not in hop_of and other != me:
                    bump(other, int(idx.said[r]))
                    hop_of.setdefault(other, 2)
        out: list[dict[str, Any]] = []
        for eid, n in strength.items():
            t = max(seen[eid], int(idx.last_spoke[eid]))
            out.append(
                {
                    "id": eid,
                    "name": idx.name(eid),
                    "hops": hop_of[eid],
                    "strength": n,
                    "last_seen": iso_times(np.array([t]))[0],
                }
            )
        out.sort(key=lambda c: (c["hops"], -c["strength"], c["id"]))
        return out

    def paths(
        self,
        from_ids: list[int],
        to_ids: list[int],
        max_hops: int = 3,
        predicates: list[str] | None = None,
        limit: int = 50,
    ) -> list[dict]:
        """Simple paths (no entity twice) of 1..max_hops links from any of `from_ids` to any
        of `to_ids`, over entity-to-entity assertions (only `predicates` if given, e.g.
        ["knows", "worked_with", "introduced"]). Shortest first, then most recent evidence;
        at most `limit`. Each: {"nodes": [entity ids], "names": [...], "hops",
        "edges": [[assertion ids linking nodes[i] and nodes[i+1]], most recent first],
        "predicates" and "qualifiers": of each edge's first assertion}."""
        if not isinstance(max_hops, int) or not 1 <= max_hops <= 4:
            raise GraphAPIError("paths: max_hops must be an int from 1 to 4")
        idx = self.index
        pmask = idx.pred_mask(predicates)
        found, scanned = pathsearch.simple_paths(
            idx,
            idx.node_array(_id_list(from_ids, "from_ids")),
            idx.node_array(_id_list(to_ids, "to_ids")),
            max_hops,
            pmask,
        )
        self._touched += scanned
        limit = max(0, int(limit))
        if len(found) > 4 * limit:  # shaping costs a gather per link: pre-cut to the shortest
            found = sorted(found, key=lambda n: (len(n), n))[: 4 * limit]
        shaped, rows_of_pair = [], {}
        for nodes in found:
            edges = []
            for u, v in zip(nodes, nodes[1:]):
                if (u, v) not in rows_of_pair:
                    rows_of_pair[(u, v)] = pathsearch.edge_rows(idx, u, v, pmask)
                edges.append(rows_of_pair[(u, v)])
            recency = min(int(idx.said[e[0]]) for e in edges)
            shaped.append((len(nodes), -recency, nodes, edges))
        shaped.sort(key=lambda t: (t[0], t[1], t[2]))
        out = []
        for _, _, nodes, edges in shaped[:limit]:
            out.append(
                {
                    "nodes": nodes,
                    "names": [idx.name(n) for n in nodes],
                    "hops": len(nodes) - 1,
                    "edges": [idx.aid[e].tolist() for e in edges],
                    "predicates": [idx.preds[idx.pred[e[0]]] for e in edges],
                    "qualifiers": [idx.quals[idx.qual[e[0]]] if idx.qual[e[0]] >= 0 else None for e in edges],
                }
            )
        return out

    def mentions_of(self, entity_ids: list[int], predicates: list[str] | None = None) -> list[dict]:
        """Who said something about `entity_ids`: assertions whose subject or object is one
        of them and whose speaker is someone else, most recent first (same fields as
        `assertions_about`; "speaker" / "speaker_name" say who mentioned them)."""
        targets = set(_id_list(entity_ids))
        return [
            a
            for a in self.assertions_about(list(targets), predicates)
            if a["speaker"] is not None and a["speaker"] not in targets
        ]

    def upcoming_events(self, days: int = 14) -> list[dict]:
        """Calendar events starting within `days` from now, soonest first:
        [{"uid", "starts_at", "ends_at", "summary", "location", "attendees" (as written),
        "attendee_ids" (resolved entities)}]. Empty when no calendar is configured."""
        start = self._now_dt()
        rows = self.store.query(
            "SELECT uid, starts_at, ends_at, summary, location, attendees, attendee_ids FROM calendar_events"
            " WHERE starts_at >= ? AND starts_at <= ? ORDER BY starts_at",
            [start, start + timedelta(days=float(days))],
        )
        for r in rows:
            r["starts_at"] = r["starts_at"].isoformat() if r["starts_at"] else None
            r["ends_at"] = r["ends_at"].isoformat() if r["ends_at"] else None
            r["attendee_ids"] = [
                int(self.index.canon[i]) if i < self.index.n_nodes else int(i) for i in r["attendee_ids"]
            ]
        return rows

    def recent_signals(self, days: int = 30, org_ids: list[int] | None = None) -> list[dict]:
        """External signals (feeds: tenders, news) published in the last `days`, newest
        first, only those naming one of `org_ids` if given: [{"id", "title", "summary",
        "url", "published_at", "org_ids"}]."""
        since = self._now_dt() - timedelta(days=float(days))
        rows = self.store.query(
            "SELECT id, title, summary, url, published_at, org_ids FROM signals"
            " WHERE coalesce(published_at, seen_at) >= ? ORDER BY coalesce(published_at, seen_at) DESC",
            [since],
        )
        wanted = set(_id_list(org_ids, "org_ids")) if org_ids is not None else None
        out = []
        for r in rows:
            if wanted is not None and not wanted.intersection(r["org_ids"]):
                continue
            r["published_at"] = r["published_at"].isoformat() if r["published_at"] else None
            out.append(r)
        return out

    def kept(self, assertion_ids: list[int]) -> list[dict]:
        """Which of the promises (committed_to assertions) `assertion_ids` a later meeting says
        were kept: the maker saying it is done ("I sent you the pricing"), or anyone else in a
        later meeting of the maker or the recipient saying it arrived ("got the deck, thanks").
        [{"id", "quote" (the words that say so), "speaker", "speaker_name", "date" (ISO)}]
        for the kept ones only."""
        from backchannel.graph.kept import kept_promises

        ids = _id_list(assertion_ids, "assertion_ids")
        self._touched += len(ids)
        idx = self.index
        out = []
        for aid, k in sorted(kept_promises(self.store, ids).items()):
            spk = k["speaker_id"]
            spk = int(idx.canon[spk]) if spk is not None and 0 <= spk < idx.n_nodes else spk
            out.append(
                {
                    "id": aid,
                    "quote": k["quote"],
                    "speaker": spk,
                    "speaker_name": idx.name(spk) if spk is not None else None,
                    "date": k["date"].isoformat(timespec="seconds") if k["date"] else None,
                }
            )
        return out

    def conversations(self, entity_ids: list[int], days: int = 90, limit: int = 5) -> list[dict]:
        """Meetings of the last `days` (up to now) where I and one of `entity_ids` both spoke,
        newest first, at most `limit` per person: [{"person", "source_id", "title", "date" (ISO),
        "turns" (theirs), "last_words" (their last turn there, at most 160 characters)}].
        What we said to each other lately: what a brief before meeting them is for."""
        ids = _id_list(entity_ids)
        if not ids:
            return []
        idx = self.index
        owner = self.me()["id"]
        now = self._now_dt()
        # a merged person's utterances may still carry an old id: ask for every id that maps to them
        canon = {int(i): int(idx.canon[i]) if 0 <= i < idx.n_nodes else int(i) for i in ids}
        alias_ids = [int(i) for i in np.nonzero(np.isin(idx.canon, list(set(canon.values()))))[0].tolist()] or ids
        rows = self.store.con.execute(
            """WITH mine AS (SELECT DISTINCT source_id FROM utterances WHERE speaker_id = ?),
                    theirs AS (SELECT u.speaker_id, u.source_id, count(*) AS turns,
                                      arg_max(u.text, u.idx) AS last_words
                               FROM utterances u JOIN mine ON mine.source_id = u.source_id
                               WHERE list_contains(?, u.speaker_id) GROUP BY ALL)
               SELECT t.speaker_id, t.source_id, s.title, s.meeting_date, t.turns, t.last_words
               FROM theirs t JOIN sources s ON s.id = t.source_id
               WHERE s.meeting_date <= ? AND s.meeting_date >= ? AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], coalesce(s.scope, 'default')))
               ORDER BY s.meeting_date DESC, t.source_id""",
            [owner, alias_ids, now, now - timedelta(days=float(days)), self.scopes, self.scopes],
        ).fetchall()
        out: list[dict[str, Any]] = []
        per: dict[int, int] = {}
        for spk, src, title, when, turns, words in rows:
            person = int(idx.canon[spk]) if 0 <= spk < idx.n_nodes else int(spk)
            if person == owner or per.get(person, 0) >= max(0, int(limit)):
                continue
            per[person] = per.get(person, 0) + 1
            text = " ".join(str(words or "").split())
            out.append(
                {
                    "person": person,
                    "source_id": src,
                    "title": title,
                    "date": when.isoformat(timespec="seconds") if when else None,
                    "turns": int(turns),
                    "last_words": text if len(text) <= 160 else text[:157] + "...",
                }
            )
        return out

    def addressed_as(self, title: str, naming: str | None = None, limit: int = 10) -> list[dict]:
        """People the others address by `title` ("Chair", "Minister"): each turn that speaks to
        the title ("Thank you, Chair.", "Mr. Chair, I ...", "My last question, Chair, is")
        addresses the last other speaker before it. With `naming`, only in the meetings of that
        body: the sources whose first turns name it in one sentence (every word of it, as a word
        start, case and order ignored: "covid committee" finds "Special Committee on the COVID-19
        pandemic"), e.g. the "Children, Young People and Education Committee", an organisation
        memory may hold no entity for. Finds who chaired a meeting when no assertion says so. Returns [{"id", "name", "times", "sources" (titles), "quote" (one
        turn addressing them), "quote_speaker", "quote_source", "named_quote" (where `naming`
        is said, theirs first), "named_speaker"}], most addressed first; [] when none."""
        return addressed.addressed_as(self.store, self.index, self.scopes, title, naming, limit)

    def evidence(self, assertion_ids: list[int]) -> list[dict]:
        """What backs assertions: [{"assertion_id", "quote" (verbatim), "speaker_id",
        "speaker", "said_at", "source_id", "source_title", "source_date", "date_origin"}], in the order
        asked; `date_origin` "mtime" means the date is the file's, not known to be the meeting's."""
        ids = _id_list(assertion_ids, "assertion_ids")
        if not ids:
            return []
        rows = self.store.query(
            """SELECT a.id AS assertion_id, a.quote, a.speaker_id, e.name AS speaker, a.said_at,
                      a.source_id, s.title AS source_title, s.meeting_date AS source_date,
                      s.meeting_date_origin AS date_origin
               FROM assertions a LEFT JOIN entities e ON e.id = a.speaker_id
               LEFT JOIN sources s ON s.id = a.source_id WHERE list_contains(?, a.id)
                 AND (a.source_id IS NULL OR ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], s.scope))""",
            [ids, self.scopes, self.scopes],
        )
        self._touched += len(rows)
        by_id = {r["assertion_id"]: r for r in rows}
        out = []
        for i in ids:
            r = by_id.get(i)
            if r is None:
                continue
            for k in ("said_at", "source_date"):
                r[k] = r[k].isoformat() if isinstance(r[k], (date, datetime)) else r[k]
            out.append(r)
        return out

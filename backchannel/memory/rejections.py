"""The rejection memory: what the owner dismissed is not proposed again.

Two nets, checked by the gate before the judge (`check`):

1. structured suppressions, one row per dismissal (table `suppressions`):
   scope `this` (the same kind on the same entities), `entity` (anything that
   involves the entity) or `kind` (every proposal of that kind), each until a
   date or for good;
2. semantic suppression: the dismissed proposal's text is embedded with
   all-MiniLM-L6-v2 (384-d, normalised); a candidate whose text is at least
   `DEFAULT_THRESHOLD` cosine-similar to an active dismissal of the same kind
   (`same_kind`: "intro" matches "introduction") is suppressed, however it is
   worded. The threshold is calibrated in docs/rejection-memory.md. The
   candidate is embedded only when such a dismissal exists; candidate vectors
   are cached by text, and `prefetch` embeds a sweep's candidates in one batch
   (bench/feedback.py: the check then costs about a millisecond at 10k dismissals).

Every hit explains itself: "suppressed: 0.91 similar to P-123, dismissed
2026-11-02: not a target account".
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from backchannel.memory.store import Store

from backchannel.memory.store import utcnow

# Calibrated on bench/rejection_pairs.json (docs/rejection-memory.md): paraphrases of
# the same proposal score 0.71-0.95, different proposals at most 0.73.
DEFAULT_THRESHOLD = 0.75
DIM = 384


@dataclass(frozen=True)
class Suppression:
    """Why a candidate must stay silent. `reason` is what logs and `trace` show."""

    reason: str
    scope: str  # this | entity | kind | semantic | error
    proposal_id: str | None = None
    similarity: float | None = None
    until: datetime | None = None

    def __str__(self) -> str:
        return self.reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "scope": self.scope,
            "proposal_id": self.proposal_id,
            "similarity": self.similarity,
            "until": self.until.isoformat() if self.until else None,
        }


def proposal_text(proposal: dict[str, Any]) -> str:
    """The text remembered for a dismissed proposal, built like the gate's candidate
    text (the candidate's why + its evidence quotes), so like is compared with like;
    the title and body stand in when there is no why."""
    ev = proposal.get("evidence") or []
    if isinstance(ev, str):
        ev = json.loads(ev)
    quotes = [str(e.get("quote") or "") for e in ev if isinstance(e, dict)]
    why = (proposal.get("why") or "").strip()
    if not why:
        why = f"{proposal.get('title') or ''}. {proposal.get('body') or ''}".strip(". ")
    return " ".join([why] + [q for q in quotes if q]).strip()


def _kind_norm(kind: str | None) -> str:
    return "".join(ch for ch in str(kind or "").casefold() if ch.isalnum())


def same_kind(a: str | None, b: str | None) -> bool:
    """Kinds named by generated code drift ("intro", "Introduction", "follow-up"):
    equal once lowercased to letters and digits, or one a prefix (4+ letters) of the other."""
    x, y = _kind_norm(a), _kind_norm(b)
    if x == y:
        return True
    short, long_ = sorted((x, y), key=len)
    return len(short) >= 4 and long_.startswith(short)


def embed(texts: list[str]) -> np.ndarray:
    """Normalised float32 vectors (n, 384), from the shared embedder."""
    import numpy as np

    from backchannel.embedding import embed as _embed

    vecs = np.asarray(_embed(list(texts)), dtype=np.float32)
    return vecs.reshape(len(texts), -1)


# Candidate vectors by text: the same candidate comes back at every sweep until it is
# proposed or its trigger fades, and a sweep's candidates are embedded in one batch.
_VECTORS: OrderedDict[str, Any] = OrderedDict()
VECTOR_CACHE_SIZE = 4096


def candidate_vectors(texts: list[str]) -> list[Any]:
    """Vectors for `texts`, from the cache, the missing ones embedded in one batch."""
    missing = list(dict.fromkeys(t for t in texts if t not in _VECTORS))
    if missing:
        for t, v in zip(missing, embed(missing)):
            _VECTORS[t] = v
    out = []
    for t in texts:
        _VECTORS.move_to_end(t)
        out.append(_VECTORS[t])
    while len(_VECTORS) > VECTOR_CACHE_SIZE:
        _VECTORS.popitem(last=False)
    return out


def prefetch(store: Store, items: list[tuple[str, str]], now: datetime) -> int:
    """Embed, in one batch, the candidate texts of (kind, text) `items` that the semantic
    net will compare (an active dismissal of the same kind exists); the checks that follow
    then cost a lookup and one matrix product each. Returns how many texts it embedded."""
    import numpy as np

    with _LOCK:
        m = _matrix(store)
        if not m.ids:
            return 0
        active = m.until > np.datetime64(now, "us")
        kinds = {m.kinds[i] for i in np.unique(m.kind_idx[active]).tolist()} if active.any() else set()
    texts = [t for k, t in items if t.strip() and any(same_kind(k, d) for d in kinds)]
    todo = [t for t in dict.fromkeys(texts) if t not in _VECTORS]
    if todo:
        candidate_vectors(todo)
    return len(todo)


def _day(ts: datetime | None) -> str:
    return f"{ts:%Y-%m-%d}" if ts else "?"


def _names(store: Store, ids: list[int]) -> str:
    if not ids:
        return ""
    rows = store.query("SELECT id, name FROM entities WHERE id IN (SELECT unnest(?::BIGINT[]))", [list(ids)])
    by_id = {r["id"]: r["name"] for r in rows}
    return ", ".join(by_id.get(i, f"#{i}") for i in ids)


def _explain(store: Store, row: dict[str, Any]) -> str:
    why = f": {row['reason']}" if row.get("reason") else ""
    until = f" until {_day(row['until'])}" if row.get("until") else ""
    when = f"dismissed {_day(row['created_at'])}{until}"
    if row["scope"] == "this":
        return (
            f"suppressed: same {row['kind']} as {row['proposal_id']} ({_names(store, row['entity_ids'])}), {when}{why}"
        )
    if row["scope"] == "entity":
        return f"suppressed: anything about {_names(store, row['entity_ids'])} (from {row['proposal_id']}), {when}{why}"
    return f"suppressed: every {row['kind']} proposal (from {row['proposal_id']}), {when}{why}"


class _Suppressions:
    """The live structured suppressions, indexed by kind, by entity and by (kind, entities);
    loaded once per store and reloaded when the table changes (counts and maxima are the
    version), so a check is one tiny query and a few dictionary lookups."""

    def __init__(self) -> None:
        self.version: tuple[Any, ...] | None = None
        self.by_kind: dict[str, list[dict[str, Any]]] = {}
        self.by_entity: dict[int, list[dict[str, Any]]] = {}
        self.by_this: dict[tuple[str, tuple[int, ...]], list[dict[str, Any]]] = {}


_SUPPRESSIONS: dict[tuple[int, str], _Suppressions] = {}


def _suppressions(store: Store) -> _Suppressions:
    snap = _SUPPRESSIONS.get((id(store.con), str(store.path)))
    if snap is not None and _trusted(store, "suppressions"):
        return snap
    version = store.aggregate(
        "SELECT count(*), count(lifted_at), max(id), max(created_at), max(lifted_at) FROM suppressions"
    )
    snap = _SUPPRESSIONS.setdefault((id(store.con), str(store.path)), _Suppressions())
    if snap.version == version:
        _checked(store, "suppressions")
        return snap
    fresh = _Suppressions()
    for r in store.query("SELECT * FROM suppressions WHERE lifted_at IS NULL ORDER BY created_at DESC, id DESC"):
        r["entity_ids"] = [int(e) for e in (r["entity_ids"] or [])]
        if r["scope"] == "kind":
            fresh.by_kind.setdefault(r["kind"], []).append(r)
        elif r["scope"] == "entity":
            for e in r["entity_ids"]:
                fresh.by_entity.setdefault(e, []).append(r)
        else:
            fresh.by_this.setdefault((r["kind"], tuple(sorted(r["entity_ids"]))), []).append(r)
    fresh.version = version
    _SUPPRESSIONS[(id(store.con), str(store.path))] = fresh
    _checked(store, "suppressions")
    return fresh


_STEADY: dict[tuple[int, str], set[str]] = {}  # stores inside `unchanged_during` -> caches checked in it


@contextlib.contextmanager
def unchanged_during(store: Store) -> Iterator[None]:
    """A block in which the caller writes no dismissal or suppression (the gate loop of a
    wake): each cache's version query (~1-3 ms) runs at its first use in the block, not at
    every check."""
    key = (id(store.con), str(store.path))
    with _LOCK:
        outer = key in _STEADY
        _STEADY.setdefault(key, set())
    try:
        yield
    finally:
        if not outer:
            with _LOCK:
                _STEADY.pop(key, None)


def _trusted(store: Store, cache: str) -> bool:
    """Inside `unchanged_during`, whether `cache` was checked in it already. Under _LOCK."""
    return cache in _STEADY.get((id(store.con), str(store.path)), ())


def _checked(store: Store, cache: str) -> None:
    """Record that `cache` was just checked against the table (inside `unchanged_during`)."""
    _STEADY.get((id(store.con), str(store.path)), set()).add(cache)


def check_structured(store: Store, kind: str, entity_ids: list[int], now: datetime) -> Suppression | None:
    """The newest live suppression of `kind`, of any of `entity_ids`, or of this exact
    (kind, entities), that has not lapsed by `now`; None when there is none."""
    ids = sorted({int(e) for e in entity_ids})
    with _LOCK:
        snap = _suppressions(store)
        hits = list(snap.by_kind.get(kind, [])) + list(snap.by_this.get((kind, tuple(ids)), []))
        for e in ids:
            hits.extend(snap.by_entity.get(e, []))
    live = [r for r in hits if r["until"] is None or r["until"] > now]
    if not live:
        return None
    r = dict(max(live, key=lambda x: (x["created_at"], x["id"])))
    return Suppression(_explain(store, r), r["scope"], r["proposal_id"], None, r["until"])


class _Matrix:
    """The active dismissals' vectors, loaded once per store and reloaded only when
    the table changes (its row count and vector count are the version)."""

    def __init__(self) -> None:
        self.version: tuple[Any, ...] | None = None
        self.ids: list[str] = []
        self.meta: list[dict[str, Any]] = []
        self.vectors: Any = None
        self.until: Any = None
        self.kinds: list[str] = []  # the distinct kinds; kind_idx[i] indexes it
        self.kind_idx: Any = None


_CACHE: dict[tuple[int, str], _Matrix] = {}
_LOCK = threading.Lock()


def _fill_missing(store: Store) -> None:
    """Embed dismissals stored without a vector (dismiss stays fast: the CLI never loads the model)."""
    rows = store.query("SELECT proposal_id, text FROM rejection_embeddings WHERE vector IS NULL ORDER BY proposal_id")
    if not rows or store.read_only:
        return
    for i in range(0, len(rows), 256):
        part = rows[i : i + 256]
        vecs = embed([r["text"] for r in part])
        # One statement per batch (atomic on its own): the gate may call this inside or outside a transaction.
        values = ", ".join("(?, ?::FLOAT[384])" for _ in part)
        store.con.execute(
            f"""UPDATE rejection_embeddings SET vector = v.vec FROM (VALUES {values}) AS v(pid, vec)
                WHERE rejection_embeddings.proposal_id = v.pid""",
            [x for r, vec in zip(part, vecs) for x in (r["proposal_id"], vec.tolist())],
        )


def _matrix(store: Store) -> _Matrix:
    import numpy as np

    m = _CACHE.get((id(store.con), str(store.path)))
    if m is not None and m.version is not None and _trusted(store, "matrix"):
        return m
    query = "SELECT count(*), count(vector), max(dismissed_at), max(until) FROM rejection_embeddings"
    version = store.aggregate(query)
    if version[0] != version[1] and not store.read_only:  # dismissals stored without a vector yet
        _fill_missing(store)
        version = store.aggregate(query)
    m = _CACHE.setdefault((id(store.con), str(store.path)), _Matrix())
    if m.version == version:
        _checked(store, "matrix")
        return m
    res = store.con.execute(
        # coalesce: fetchnumpy masks NULLs, and "for good" must compare as the far future.
        """SELECT proposal_id, coalesce(reason, '') AS reason, dismissed_at,
                  coalesce(until, TIMESTAMP '9999-12-31') AS until, kind, vector FROM rejection_embeddings
           WHERE vector IS NOT NULL ORDER BY dismissed_at, proposal_id"""
    ).fetchnumpy()
    n = len(res["proposal_id"])
    m.ids = [str(x) for x in res["proposal_id"]]
    m.meta = [{"reason": res["reason"][i], "dismissed_at": res["dismissed_at"][i]} for i in range(n)]
    m.vectors = np.stack(list(res["vector"])).astype(np.float32) if n else np.zeros((0, DIM), np.float32)
    m.until = np.asarray(res["until"], dtype="datetime64[us]")
    kinds = [str(k) for k in res["kind"]]
    m.kinds = sorted(set(kinds))
    index = {k: i for i, k in enumerate(m.kinds)}
    m.kind_idx = np.asarray([index[k] for k in kinds], dtype=np.int32)
    m.version = version
    _checked(store, "matrix")
    return m


def check_semantic(
    store: Store, candidate_text: str, now: datetime, threshold: float = DEFAULT_THRESHOLD, kind: str | None = None
) -> Suppression | None:
    """The nearest active dismissal (of the same kind, when `kind` is given) at or
    above `threshold`, explained; None when there is none."""
    import numpy as np

    if not candidate_text.strip():
        return None
    with _LOCK:
        m = _matrix(store)
        if not m.ids:
            return None
        active = m.until > np.datetime64(now, "us")
        if kind is not None:
            # A meeting brief is not the introduction it shares quotes with (0.84 on the demo's story).
            wanted = [i for i, k in enumerate(m.kinds) if same_kind(k, kind)]
            active &= np.isin(m.kind_idx, wanted)
        if not active.any():
            return None  # nothing to compare with: the candidate is not embedded at all
        sims = np.where(active, m.vectors @ candidate_vectors([candidate_text])[0], -1.0)
        best = int(np.argmax(sims))
        score = float(sims[best])
        if score < threshold:
            return None
        pid, meta = m.ids[best], m.meta[best]
    dismissed = np.datetime64(meta["dismissed_at"], "us").item()  # a datetime at microsecond precision
    reason = meta["reason"]
    tail = f": {reason}" if reason else ""
    return Suppression(
        f"suppressed: {score:.2f} similar to {pid}, dismissed {_day(dismissed)}{tail}",
        "semantic",
        pid,
        round(score, 4),
        None,
    )


def check(
    store: Store,
    candidate_text: str,
    kind: str,
    entity_ids: list[int],
    now: datetime | None = None,
    *,
    threshold: float | None = None,
) -> Suppression | None:
    """The gate's hook: a Suppression when the candidate matches a past dismissal, else None.

    Structured suppressions are checked first (exact and cheap), then semantic
    similarity to every active dismissal of the same kind.
    """
    now = now or utcnow()
    hit = check_structured(store, kind, entity_ids, now)
    if hit is not None:
        return hit
    try:
        return check_semantic(
            store, candidate_text, now, DEFAULT_THRESHOLD if threshold is None else threshold, kind=kind
        )
    except Exception as exc:  # noqa: BLE001 - a broken model must not let dismissed proposals back in
        # Silence is the default: when the memory cannot tell, the candidate waits.
        return Suppression(
            f"suppressed: the rejection memory could not check ({type(exc).__name__}: {exc}); silence is the default",
            "error",
        )


# -- recording ---------------------------------------------------------------
def lift(store: Store, proposal_id: str, now: datetime | None = None) -> int:
    """Forget a dismissal (the owner accepted the proposal after all); returns the suppressions lifted."""
    n = len(
        store.con.execute(
            "UPDATE suppressions SET lifted_at = ? WHERE proposal_id = ? AND lifted_at IS NULL RETURNING id",
            [now or utcnow(), proposal_id],
        ).fetchall()
    )
    store.con.execute("DELETE FROM rejection_embeddings WHERE proposal_id = ?", [proposal_id])
    return n


def remember_dismissal(
    store: Store,
    proposal: dict[str, Any],
    *,
    scope: str,
    reason: str | None,
    until: datetime | None,
    feedback_id: int | None,
    entity_ids: list[int] | None = None,
    now: datetime | None = None,
) -> list[int]:
    """Record the structured suppression(s) and the text for the semantic net.
    Call inside the dismissal's transaction. Returns the suppression ids."""
    now = now or utcnow()
    ids = sorted({int(e) for e in proposal.get("entity_ids") or []})
    if scope == "this":
        targets = [ids]
    elif scope == "entity":
        targets = [[e] for e in (sorted({int(x) for x in entity_ids}) if entity_ids else ids)]
    elif scope == "kind":
        targets = [[]]
    else:
        raise ValueError(f"scope must be this, entity or kind, not {scope!r}")
    made = []
    for ents in targets:
        made.append(
            store.scalar(
                """INSERT INTO suppressions (scope, proposal_id, kind, entity_ids, reason, until, feedback_id, created_at)
               VALUES (?, ?, ?, ?::BIGINT[], ?, ?, ?, ?) RETURNING id""",
                [scope, proposal["id"], proposal["kind"], ents, reason, until, feedback_id, now],
            )
        )
    store.con.execute(
        """INSERT INTO rejection_embeddings (proposal_id, kind, entity_ids, text, vector, reason, dismissed_at, until)
           VALUES (?, ?, ?::BIGINT[], ?, NULL, ?, ?, ?)
           ON CONFLICT (proposal_id) DO UPDATE SET reason = excluded.reason, dismissed_at = excluded.dismissed_at,
                                                   until = excluded.until""",
        [proposal["id"], proposal["kind"], ids, proposal_text(proposal), reason, now, until],
    )
    return made

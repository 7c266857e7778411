"""The costlier entity-resolution layers, after exact and alias matching
(`resolve/entities.py`) found nothing: fuzzy string match, embedding similarity, and a
model call only for what is still ambiguous.

Thresholds (scores of rapidfuzz are 0-100, cosines 0-1):
- fuzzy: `token_sort_ratio` of normalised names >= 90 ("Jon Smith" ~ "John Smith",
  "Dupont Marc" ~ "Marc Dupont"), and at least 4 points ahead of the best other
  entity, accepts. `WRatio` >= 85 ("Marc" ~ "Marc Dupont", "Globex" ~ "Globex Corp")
  only makes a candidate for the later layers: a first name alone is not proof.
- embedding (all-MiniLM-L6-v2): cosine >= 0.92 and 0.05 ahead accepts, for
  organisations only ("ACME Corp" ~ "Acme Corporation" is 0.98); for people,
  name embeddings say little ("Sophie Martin" vs "Marc Dupont" is 0.24, but two
  different Marcs score high), so they only make candidates. Cosine >= 0.5 makes
  a candidate ("IBM" ~ "International Business Machines" is 0.53).
- model: with a configured extract model (never offline), the candidates go to
  the model, which must name one of them with confidence >= 0.6.
Anything else is no match: the caller creates a new entity, and a later
`backchannel entities merge` can join them (reversibly).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

import numpy as np

from backchannel.memory.store import Store
from backchannel.memory.text import norm_name

log = logging.getLogger(__name__)

FUZZY_ACCEPT = 90.0
FUZZY_MARGIN = 4.0
FUZZY_CANDIDATE = 85.0
EMBED_ACCEPT = 0.92
EMBED_MARGIN = 0.05
EMBED_CANDIDATE = 0.5
EMBED_ACCEPT_KINDS = {"organisation"}
MODEL_MIN_CONFIDENCE = 0.6
MAX_MODEL_CANDIDATES = 5


@dataclass
class Candidate:
    entity_id: int
    name: str
    names: list[str]  # the name and aliases, normalised
    score: float = 0.0
    layer: str = ""


def _candidates(store: Store, kind: str) -> list[Candidate]:
    rows = store.con.execute(
        """SELECT e.id, e.name, e.norm, list(a.norm) FILTER (WHERE a.norm IS NOT NULL)
           FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
           WHERE e.merged_into IS NULL AND e.kind = ?
           GROUP BY e.id, e.name, e.norm ORDER BY e.id""",
        [kind],
    ).fetchall()
    return [Candidate(r[0], r[1], sorted({r[2], *(r[3] or [])})) for r in rows]


def _best_two(scores: dict[int, float]) -> tuple[int | None, float, float]:
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if not ranked:
        return None, 0.0, 0.0
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    return ranked[0][0], ranked[0][1], second


def fuzzy_layer(n: str, cands: list[Candidate]) -> tuple[int | None, float, list[Candidate]]:
    """(accepted id or None, best score, candidates worth a closer look)."""
    from rapidfuzz import fuzz

    sort_scores: dict[int, float] = {}
    maybe: list[Candidate] = []
    for c in cands:
        sort_scores[c.entity_id] = max(fuzz.token_sort_ratio(n, x) for x in c.names)
        w = max(fuzz.WRatio(n, x) for x in c.names)
        if w >= FUZZY_CANDIDATE or sort_scores[c.entity_id] >= FUZZY_CANDIDATE:
            c.score, c.layer = max(w, sort_scores[c.entity_id]) / 100.0, "fuzzy"
            maybe.append(c)
    best, s1, s2 = _best_two(sort_scores)
    if best is not None and s1 >= FUZZY_ACCEPT and s1 - s2 >= FUZZY_MARGIN:
        return best, s1, maybe
    return None, s1, maybe


_vectors: dict[str, np.ndarray] = {}


def _vectors_for(names: list[str]) -> np.ndarray:
    from backchannel import embedding

    missing = [x for x in dict.fromkeys(names) if x not in _vectors]
    if missing:
        for x, v in zip(missing, embedding.embed(missing)):
            _vectors[x] = v
    return np.stack([_vectors[x] for x in names]) if names else np.zeros((0, embedding.DIM), np.float32)


def embedding_layer(n: str, kind: str, cands: list[Candidate]) -> tuple[int | None, float, list[Candidate]]:
    flat = [(c, x) for c in cands for x in c.names]
    if not flat:
        return None, 0.0, []
    matrix = _vectors_for([x for _, x in flat])
    sims = matrix @ _vectors_for([n])[0]
    per_entity: dict[int, float] = {}
    for (c, _), s in zip(flat, sims):
        per_entity[c.entity_id] = max(per_entity.get(c.entity_id, -1.0), float(s))
    maybe = []
    for c in cands:
        if per_entity[c.entity_id] >= EMBED_CANDIDATE:
            c.score, c.layer = per_entity[c.entity_id], "embedding"
            maybe.append(c)
    best, s1, s2 = _best_two(per_entity)
    if kind in EMBED_ACCEPT_KINDS and best is not None and s1 >= EMBED_ACCEPT and s1 - s2 >= EMBED_MARGIN:
        return best, s1, maybe
    return None, s1, maybe


def _template(name: str) -> Template:
    return Template((resources.files("backchannel.extraction") / "prompts" / name).read_text(encoding="utf-8"))


def model_layer(
    store: Store, name: str, kind: str, cands: list[Candidate], gateway: Any, run_id: str | None
) -> tuple[int | None, float]:
    from backchannel.agent.models import GatewayError
    from backchannel.agent.schemas import ResolutionAnswer

    listing = "\n".join(
        f"- id {c.entity_id}: {c.name}" + (f" (also: {', '.join(c.names)})" if c.names else "") for c in cands
    )
    messages = [
        {"role": "system", "content": _template("resolve_system.md").template},
        {"role": "user", "content": _template("resolve_user.md").substitute(name=name, kind=kind, candidates=listing)},
    ]
    try:
        c = gateway.complete("resolve", messages, run_id=run_id, response_model=ResolutionAnswer, max_tokens=200)
    except GatewayError as exc:
        # Resolution degrades to "no match" (a new entity, mergeable later) rather
        # than failing the whole source; the failed call is recorded by the gateway.
        log.warning("model resolution of %r skipped: %s", name, exc)
        return None, 0.0
    answer: ResolutionAnswer = c.parsed
    ids = {x.entity_id for x in cands}
    if answer.match_id in ids and answer.confidence >= MODEL_MIN_CONFIDENCE:
        return answer.match_id, answer.confidence
    return None, answer.confidence


def resolve_extra(
    store: Store, name: str, kind: str, *, gateway: Any = None, run_id: str | None = None
) -> tuple[int | None, str, float]:
    """(entity id or None, method, score) for a surface name that exact and alias
    matching did not resolve. method is fuzzy, embedding, model or none."""
    n = norm_name(name)
    cands = _candidates(store, kind)
    if not n or not cands:
        return None, "none", 0.0
    eid, fscore, maybe = fuzzy_layer(n, cands)
    if eid is not None:
        return eid, "fuzzy", fscore / 100.0
    eid, escore, emaybe = embedding_layer(n, kind, cands)
    if eid is not None:
        return eid, "embedding", escore
    pool = {c.entity_id: c for c in [*maybe, *emaybe]}
    best = max([fscore / 100.0, escore])
    if not pool or gateway is None or not gateway.available("resolve"):
        return None, "none", best
    ranked = sorted(pool.values(), key=lambda c: -c.score)[:MAX_MODEL_CANDIDATES]
    eid, conf = model_layer(store, name, kind, ranked, gateway, run_id)
    if eid is not None:
        return eid, "model", conf
    return None, "none", best

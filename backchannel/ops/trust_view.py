"""How much each piece of evidence behind a proposal or a candidate can be trusted, and why:
the rows `trace` shows under each proposal and each candidate of a run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from backchannel.core.ties import TIE_PREDICATES, link_kind
from backchannel.memory.store import Store
from backchannel.memory.trust import describe


def _words(row: dict[str, Any]) -> str:
    """The predicate as stored ('works_at'), as trace always showed it; a tie said as knowing *of*
    someone is 'knows_of', an ended one 'worked_with (ended)'."""
    kind = link_kind(row["predicate"], row["stance"])
    return f"{kind} (ended)" if row["stance"] == "ended" and row["predicate"] in TIE_PREDICATES else kind


def evidence_trust(store: Store, assertion_ids: Iterable[Any]) -> list[dict[str, Any]]:
    """[{assertion_id, fact, quote, trust, trust_reasons, why}] in the order given; ids no
    longer in memory (forgotten) are left out."""
    ids = []
    for x in assertion_ids:
        try:
            ids.append(int(x))
        except (TypeError, ValueError):
            continue
    ids = list(dict.fromkeys(ids))
    if not ids:
        return []
    rows = store.query(
        """SELECT a.id, s.name AS subject, a.predicate, CAST(a.stance AS VARCHAR) AS stance,
                  coalesce(o.name, a.object_literal) AS object, a.quote,
                  coalesce(a.trust, a.confidence) AS trust, coalesce(a.trust_reasons, []) AS trust_reasons
           FROM assertions a JOIN entities s ON s.id = a.subject_id LEFT JOIN entities o ON o.id = a.object_id
           WHERE list_contains(?, a.id)""",
        [ids],
    )
    by_id = {r["id"]: r for r in rows}
    return [
        {
            "assertion_id": i,
            # "Tunde knows_of Rafaela", "Owen worked_with (ended) Hugo": how the words held it
            "fact": f"{by_id[i]['subject']} {_words(by_id[i])} {by_id[i]['object'] or ''}".strip(),
            "quote": by_id[i]["quote"],
            "trust": by_id[i]["trust"],
            "trust_reasons": list(by_id[i]["trust_reasons"]),
            "why": describe(by_id[i]["trust_reasons"]),
        }
        for i in ids
        if i in by_id
    ]


def candidate_evidence_ids(candidate: dict[str, Any]) -> list[Any]:
    """The assertion ids a candidate (as logged in sweep.done) rests on."""
    ids = list(candidate.get("evidence_ids") or [])
    for e in candidate.get("evidence") or []:
        ids.append(e.get("assertion_id") if isinstance(e, dict) else e)
    return ids


def candidates_evidence_trust(store: Store, candidates: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """dedupe key -> evidence_trust of that candidate, for a run's trace."""
    from backchannel.engine.gate import dedupe_key

    return {
        dedupe_key(c.get("kind") or "?", c.get("entities") or []): evidence_trust(store, candidate_evidence_ids(c))
        for c in candidates
    }

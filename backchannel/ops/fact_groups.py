"""One fact, many sources: identical assertions shown once, with every source that said it.

The rows stay (each is its own evidence, and erasure, trust and supersession work per
row); only what is shown folds them. Identical means the same subject, predicate,
object (entity, or literal up to case and spacing), qualifier, recipient and stance ("knows"
and "knows of" are two facts), and the same state (current or superseded).
"""

from __future__ import annotations

import re
from typing import Any


def fact_key(a: dict[str, Any]) -> tuple[Any, ...]:
    literal = re.sub(r"\s+", " ", str(a.get("object_literal") or "")).strip().casefold()
    return (
        a.get("subject_id"),
        a.get("predicate"),
        a.get("object_id"),
        literal,
        str(a.get("qualifier") or "").casefold(),
        a.get("recipient_id"),
        a.get("stance") or "asserted",
        bool(a.get("superseded_at")),
    )


def group_facts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{"fact": the first row, "also": the other rows of the same fact, "sources": distinct
    source ids in order}], in the order of each fact's first row."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for a in rows:
        g = groups.get(fact_key(a))
        if g is None:
            groups[fact_key(a)] = {"fact": a, "also": [], "sources": [a.get("source_id")]}
        else:
            g["also"].append(a)
            if a.get("source_id") not in g["sources"]:
                g["sources"].append(a.get("source_id"))
    return list(groups.values())

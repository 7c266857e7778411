"""Names near one that matched nothing: "Kirsty Wiliams" -> did you mean "Kirsty Williams"?

Candidates are the names and aliases of the entities in memory, seat labels among them
("Project Manager (ES2004a)": a meeting's speaker known only by a seat). Near means
rapidfuzz's WRatio on normalised strings, so a typo, a missing honorific or a label
written without its meeting all come close; a label that holds the words asked for
counts as a seat label, said as such.
"""

from __future__ import annotations

import re
from typing import Any

from backchannel.memory.store import Store

_MIN_SCORE = 86  # WRatio 0-100: one or two letters wrong in a name, or the words inside a label
_SEAT = re.compile(r"^(?P<label>.+?)\s*\((?P<meeting>[^()]+)\)$")


def near_names(store: Store, text: str, *, limit: int = 5) -> list[dict[str, Any]]:
    """Up to `limit` entities whose name or an alias is near `text`, best first:
    [{"id", "kind", "name", "via" (the alias that matched, or None), "seat" (bool), "score"}]."""
    from rapidfuzz import fuzz, process, utils

    query = utils.default_process(text or "")
    if len(query) < 2:
        return []
    rows = store.con.execute(
        """SELECT e.id, e.kind, e.name, a.alias FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
           WHERE e.merged_into IS NULL"""
    ).fetchall()
    labels: list[tuple[int, str, str, str]] = []
    for eid, kind, name, alias in rows:
        labels.append((eid, kind, name, name))
        if alias and alias != name:
            labels.append((eid, kind, name, alias))
    choices = [utils.default_process(label) for _eid, _kind, _name, label in labels]
    found = process.extract(
        query, choices, scorer=fuzz.WRatio, processor=None, limit=limit * 8, score_cutoff=_MIN_SCORE
    )
    best: dict[int, dict[str, Any]] = {}
    for _choice, score, i in found:
        eid, kind, name, label = labels[i]
        if choices[i] == query:
            continue  # the same string would have matched: not a suggestion
        seat = _SEAT.match(label)
        is_seat = bool(seat and utils.default_process(seat["label"]) == query)
        if not is_seat and fuzz.ratio(query, choices[i]) < _MIN_SCORE - 6 and query not in choices[i].split():
            # WRatio's partial match alone ("Ann" in "Joanne"): a name must be near as a whole,
            # or hold the words asked for.
            if not set(query.split()) <= set(choices[i].split()):
                continue
        item = {
            "id": eid,
            "kind": kind,
            "name": name,
            "via": label if label != name else None,
            "seat": is_seat,
            "score": round(float(score), 1),
        }
        if eid not in best or item["score"] > best[eid]["score"]:
            best[eid] = item
    return sorted(best.values(), key=lambda d: (-d["score"], d["name"]))[:limit]


def suggestion(store: Store, text: str) -> str:
    """'; did you mean "Kirsty Williams"?' or '; "Project Manager" is a seat label: ...', or ''."""
    near = near_names(store, text)
    if not near:
        return ""
    seats = [n for n in near if n["seat"]]
    if seats and len(seats) == len(near):
        shown = ", ".join(f'"{n["name"]}" (as "{n["via"]}")' if n["via"] else f'"{n["name"]}"' for n in seats)
        return f'; "{text}" is a seat label (a speaker known by role in a meeting): {shown}'
    words = []
    for n in near:
        via = f' ({"seat label" if n["seat"] else "alias"} "{n["via"]}")' if n["via"] else ""
        words.append(f'"{n["name"]}"{via}')
    return "; did you mean " + " or ".join(words) + "?"

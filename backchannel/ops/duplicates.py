"""Entities that may be one: proposed for a merge, never merged here.

Three reasons, each exact enough to show a person:
- acronym: one organisation's name or alias is an acronym whose letters are the
  initials of the other's name ("ADEW" and "Association of Directors of Education
  Wales", the check of extraction/offline_acronyms);
- honorific: the names are the same once titles and postnominals are dropped
  ("Ms. Elizabeth May", "Elizabeth May"; "Dawn Bowden AM", "Dawn Bowden");
- spelling: the names (so dropped) are near letter for letter (rapidfuzz ratio
  >= 92: "Association of Directors of Education in Wales" and "... Education Wales").
Two labels that differ only in their bracketed meeting ("Project Manager (ES2004a)",
"Project Manager (ES2004b)") are two seats, never a pair; nor are two entities that
were merged once and split again (the user said they are not one).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from backchannel.memory.store import Store

_HONORIFICS = {
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "dr",
    "prof",
    "professor",
    "sir",
    "dame",
    "hon",
    "honourable",
    "honorable",
    "the",
    "rt",
    "right",
    "lord",
    "lady",
    "rev",
    "reverend",
    "cllr",
    "councillor",
}
_POSTNOMINALS = {"am", "ms", "mp", "msp", "mla", "mep", "qc", "kc", "phd", "obe", "mbe", "cbe", "jr", "sr"}
_BRACKET = re.compile(r"\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*")
_SPELLING = 92
_FUZZY_MAX = 4000
_MAX_SAME_NAME = 8  # entities of one kind compared letter by letter (above it, only the exact keys)


@functools.lru_cache(maxsize=65536)
def base_name(name: str) -> tuple[str, str]:
    """(the name without honorifics, postnominals and brackets, casefolded; the brackets' text)."""
    brackets = " ".join(m.group(1).strip() for m in _BRACKET.finditer(name)).casefold()
    words = [w.strip(".,").casefold() for w in _BRACKET.sub(" ", name).split()]
    while words and words[0] in _HONORIFICS:
        words = words[1:]
    while len(words) > 1 and words[-1] in _POSTNOMINALS:
        words = words[:-1]
    return " ".join(w for w in words if w), brackets


def _seats_apart(a: str, b: str) -> bool:
    """Two labels whose brackets both say something and differ: two meetings' seats."""
    (_x, ba), (_y, bb) = base_name(a), base_name(b)
    return bool(ba and bb and ba != bb)


def find_duplicates(store: Store, *, limit: int = 200) -> list[dict[str, Any]]:
    """Pairs of entities that may be one, best first:
    [{"keep": {"id", "name", "kind", "assertions"}, "other": {...}, "why": "acronym"|"honorific"|"spelling",
      "detail", "score"}]; `keep` is the one to merge into (more facts, or the full name)."""
    from backchannel.extraction.mentions.acronyms import spells_initials

    rows = store.con.execute(
        """SELECT e.id, e.kind, e.name, e.is_owner,
                  list(DISTINCT a.alias) FILTER (WHERE a.alias IS NOT NULL),
                  (SELECT count(*) FROM assertions s WHERE s.subject_id = e.id OR s.object_id = e.id)
           FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
           WHERE e.merged_into IS NULL AND e.kind IN ('person', 'organisation')
           GROUP BY e.id, e.kind, e.name, e.is_owner"""
    ).fetchall()
    apart = {
        tuple(sorted(p))
        for p in store.con.execute(
            "SELECT kept_id, merged_id FROM entity_merges WHERE undone_at IS NOT NULL"
        ).fetchall()
    }
    info = {r[0]: {"id": r[0], "name": r[2], "kind": r[1], "assertions": int(r[5]), "owner": bool(r[3])} for r in rows}
    names = {r[0]: [r[2], *[a for a in (r[4] or []) if a != r[2]]] for r in rows}
    found: dict[tuple[int, int], dict[str, Any]] = {}

    def add(a: int, b: int, why: str, detail: str, score: float) -> None:
        key = (min(a, b), max(a, b))
        if a == b or key in apart or (key in found and found[key]["score"] >= score):
            return
        found[key] = {"pair": key, "why": why, "detail": detail, "score": score}

    # honorific: the same base name (and no two different brackets)
    by_base: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for eid, kind, *_rest in rows:
        for n in names[eid]:
            base, _br = base_name(n)
            if base:
                by_base.setdefault((kind, base), []).append((eid, n))
    for group in by_base.values():
        if len({eid for eid, _n in group}) > _MAX_SAME_NAME:
            continue  # a name this common ("John Smith" twenty times) is many people, not one
        for i, (a, na) in enumerate(group):
            for b, nb in group[i + 1 :]:
                if a != b and not _seats_apart(na, nb):
                    add(a, b, "honorific", f'"{na}" and "{nb}" are one name once titles and brackets are dropped', 1.0)
    # acronym: an all-capitals name or alias spelling the initials of the other organisation's name
    orgs = [r[0] for r in rows if r[1] == "organisation"]
    by_initial: dict[str, list[tuple[int, str]]] = {}  # long forms by their first letter: few to check
    for b in orgs:
        for long in names[b]:
            words = long.split()
            if len(words) >= 2:
                for w in words[:2]:  # "The Welsh ...": the first word may be skipped
                    by_initial.setdefault(w[:1].upper(), []).append((b, long))
    for a in orgs:
        for short in names[a]:
            letters = short.replace("&", "")
            if not (2 <= len(letters) <= 7 and letters.isalpha() and letters.isupper()):
                continue
            for b, long in by_initial.get(letters[0], []):
                if b != a and short not in names[b] and spells_initials(short, long.split()):
                    add(a, b, "acronym", f'"{short}" spells the initials of "{long}"', 0.95)
    # spelling: near letter for letter
    from rapidfuzz import fuzz, process

    for kind in ("person", "organisation"):
        ids = [r[0] for r in rows if r[1] == kind]
        if len(ids) > _FUZZY_MAX:
            continue
        bases = [base_name(info[i]["name"])[0] for i in ids]
        for i, j_scores in enumerate(
            process.cdist(bases, bases, scorer=fuzz.ratio, score_cutoff=_SPELLING, dtype="uint8")
        ):
            for j in j_scores.nonzero()[0]:
                j = int(j)
                if (
                    j > i
                    and bases[i] != bases[j]
                    and len(bases[i]) >= 5
                    and len(bases[j]) >= 5
                    and not _seats_apart(info[ids[i]]["name"], info[ids[j]]["name"])
                ):
                    a, b = ids[i], ids[j]
                    add(
                        a,
                        b,
                        "spelling",
                        f'"{info[a]["name"]}" and "{info[b]["name"]}" differ by a few letters',
                        float(j_scores[j]) / 100 * 0.9,
                    )
    out = []
    for (a, b), f in found.items():
        ea, eb = info[a], info[b]
        keep, other = sorted(
            (ea, eb),
            key=lambda e: (
                not e["owner"],
                -e["assertions"],
                "(" in e["name"],
                -len(base_name(e["name"])[0]),
                len(e["name"]),
                e["id"],
            ),
        )
        if f["why"] == "acronym":  # the full name is the one to keep, the acronym becomes its alias
            keep, other = sorted((ea, eb), key=lambda e: (not e["owner"], e["name"].isupper(), -e["assertions"]))
        out.append(
            {
                "keep": {k: keep[k] for k in ("id", "name", "kind", "assertions")},
                "other": {k: other[k] for k in ("id", "name", "kind", "assertions")},
                "why": f["why"],
                "detail": f["detail"],
                "score": round(f["score"], 3),
            }
        )
    out.sort(key=lambda d: (-d["score"], d["keep"]["name"]))
    return out[:limit]

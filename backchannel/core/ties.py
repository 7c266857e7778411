"""What makes a row a tie between two people, defined once for every reader of ties: the
graph index (and so the graph API, the introductions and the brief), the judge's SQL, the
ties page, `ask`, the MCP tools and the CLI.

A tie is a live knows / worked_with / introduced row. Two stances keep such a row out:
- knows_of: knowing *of* someone ("I know the name, never met her") is stored as what it
  is, a fact about the speaker, and no tie: the graph gives it its own kind, HEARD_OF, so
  no mask of tie predicates ever selects it, and it reads "knows of";
- ended: a tie said to have ended or soured ("we fell out") is stored for the judge, and it
  takes every tie row between the same two people out of the paths (graph/index.py).
"""

from __future__ import annotations

TIE_PREDICATES = ("knows", "worked_with", "introduced")
HEARD_OF = "knows_of"  # the stance, and the kind of link the graph gives a tie row said under it
NO_TIE_STANCES = ("knows_of", "ended")

_WORDS = {HEARD_OF: "knows of"}


def link_kind(predicate: str, stance: str | None) -> str:
    """The kind of link a row is: its predicate, or HEARD_OF for a tie said under stance knows_of."""
    return HEARD_OF if stance == HEARD_OF and predicate in TIE_PREDICATES else predicate


def link_words(predicate: str, stance: str | None = None) -> str:
    """How a row's link reads: 'worked with', 'knows of', 'worked with (ended)'."""
    kind = link_kind(predicate, stance)
    words = _WORDS.get(kind, kind.replace("_", " "))
    return f"{words} (ended)" if stance == "ended" and predicate in TIE_PREDICATES else words


def live_tie_sql(a: str = "a") -> str:
    """SQL true when row `a` of assertions is a tie: a live tie predicate, not said as knowing
    *of* someone or as ended, and no live ended tie between the same two people."""
    preds = ", ".join(f"'{p}'" for p in TIE_PREDICATES)
    stances = ", ".join(f"'{s}'" for s in NO_TIE_STANCES)
    return (
        f"({a}.superseded_at IS NULL AND {a}.predicate IN ({preds}) AND {a}.object_id IS NOT NULL"
        f" AND coalesce(CAST({a}.stance AS VARCHAR), 'asserted') NOT IN ({stances})"
        f" AND NOT EXISTS (SELECT 1 FROM assertions ended_tie WHERE ended_tie.stance = 'ended'"
        f" AND ended_tie.superseded_at IS NULL AND ended_tie.predicate IN ({preds})"
        f" AND ((ended_tie.subject_id = {a}.subject_id AND ended_tie.object_id = {a}.object_id)"
        f" OR (ended_tie.subject_id = {a}.object_id AND ended_tie.object_id = {a}.subject_id))))"
    )

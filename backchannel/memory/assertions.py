"""The assertions and utterances tables, their one writer (besides memory's own
whole-graph operations, merges.py and erasure.py, which rewrite every table they
touch in one transaction). Every function runs in the caller's transaction: the
transcript writer's one transaction per source, an import's one transaction, a
redate's. Reads are many and analytical (graph/, ops/, skills): they stay with
their features."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from backchannel.memory.store import Store, utcnow

UTTERANCE_COLUMNS = ("source_id", "idx", "speaker", "speaker_id", "start_s", "end_s", "text")


def insert_utterances(store: Store, rows: Sequence[Sequence[Any]], *, defer: bool = False) -> None:
    """Utterance rows, in UTTERANCE_COLUMNS order (one multi-row insert per 400). `defer`: in a
    `Store.batch()`, held and inserted with the batch's other rows at its commit."""
    store.insert_rows("utterances", list(UTTERANCE_COLUMNS), rows, defer=defer)


def insert_assertions(store: Store, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Assertion rows in `columns` order (the writer lets DuckDB number them, an import
    brings its own ids)."""
    store.insert_rows("assertions", list(columns), rows)


def set_said_at(store: Store, source_id: str, said_at: Any) -> None:
    """Every assertion of a source moves to its meeting's (new) date."""
    store.con.execute("UPDATE assertions SET said_at = ? WHERE source_id = ?", [said_at, source_id])


def set_validity(store: Store, assertion_id: int, valid_from: Any, valid_to: Any) -> None:
    """A relative date phrase computed again against a new meeting date."""
    store.con.execute(
        "UPDATE assertions SET valid_from = ?, valid_to = ? WHERE id = ?", [valid_from, valid_to, assertion_id]
    )


def close(store: Store, assertion_id: int, end: date | None, superseded_by: int) -> None:
    """End a functional fact at `end`, superseded by a later one (memory/supersede.py);
    the first supersession time is kept, and the end it had before goes to
    assertion_closings, for a replay of a run that saw it open (engine/replay.py)."""
    close_many(store, [(assertion_id, end, superseded_by)])


def close_many(store: Store, closes: Sequence[tuple[int, date | None, int]]) -> None:
    """`close` for several (assertion_id, end, superseded_by) in two statements, not two
    each (a meeting's titled facts close a few older ones). In order: an assertion closed
    twice ends as the last close left it, and its one closing row keeps the end it had
    before the first, as two `close` calls in a row would."""
    last: dict[int, tuple[date | None, int]] = {}
    for assertion_id, end, superseded_by in closes:
        last[assertion_id] = (end, superseded_by)
    if not last:
        return
    now, ids = utcnow(), list(last)
    store.con.execute(
        "INSERT INTO assertion_closings (assertion_id, valid_to_before, closed_at)"
        " SELECT id, valid_to, ? FROM assertions WHERE id IN (SELECT unnest(?::BIGINT[])) AND superseded_at IS NULL",
        [now, ids],
    )
    store.con.execute(
        "UPDATE assertions SET valid_to = u.valid_to, superseded_at = coalesce(assertions.superseded_at, ?),"
        " superseded_by = u.superseded_by FROM (SELECT unnest(?::BIGINT[]) AS id, unnest(?::DATE[]) AS valid_to,"
        " unnest(?::BIGINT[]) AS superseded_by) u WHERE assertions.id = u.id",
        [now, ids, [last[i][0] for i in ids], [last[i][1] for i in ids]],
    )


# Evidence: the assertions a candidate rests on, as a proposal stores and a judge reads them.
def load_evidence(store: Store, candidate: Any) -> list[dict[str, Any]]:
    """The candidate's evidence as the proposal stores it, read from memory."""
    return load_evidence_many(store, [candidate])[0]


def load_evidence_many(store: Store, candidates: list[Any]) -> list[list[dict[str, Any]]]:
    """`load_evidence` for several candidates in one query (a scan costs ~5 ms at 1M assertions)."""
    wanted = sorted({int(i) for c in candidates for i in (getattr(c, "evidence_ids", None) or [])})
    by_id: dict[int, dict[str, Any]] = {}
    if wanted:
        for r in store.query(
            """SELECT a.id AS assertion_id, a.quote, a.speaker_id, sp.name AS speaker, a.said_at, a.source_id,
                      s.title AS source_title, a.confidence, a.predicate, coalesce(a.trust, a.confidence) AS trust,
                      a.trust_reasons, a.recipient_id, a.subject_id, a.object_id, a.valid_to, a.object_literal AS literal,
                      s.meeting_date_origin AS date_origin
               FROM assertions a LEFT JOIN entities sp ON sp.id = a.speaker_id LEFT JOIN sources s ON s.id = a.source_id
               WHERE a.id = ANY(?::BIGINT[])""",
            [wanted],
        ):
            r["said_at"] = r["said_at"].isoformat() if r["said_at"] else None
            r["valid_to"] = r["valid_to"].isoformat() if r.get("valid_to") else None
            r["trust_reasons"] = list(r.get("trust_reasons") or [])
            by_id[int(r["assertion_id"])] = r
    out = []
    for c in candidates:
        ids = list(getattr(c, "evidence_ids", None) or [])
        if not ids:
            out.append([e.to_dict() for e in getattr(c, "evidence", [])])
            continue
        rows = [dict(by_id[i]) for i in dict.fromkeys(int(x) for x in ids) if i in by_id]
        out.append(sorted(rows, key=lambda r: (r["said_at"] is None, r["said_at"] or "", r["assertion_id"])))
    return out

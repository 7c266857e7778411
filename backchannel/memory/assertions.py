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
    the first supersession time is kept."""
    now = utcnow()
    # The end it had before, for a replay of a run that saw it open (engine/replay.py).
    store.con.execute(
        "INSERT INTO assertion_closings (assertion_id, valid_to_before, closed_at)"
        " SELECT id, valid_to, ? FROM assertions WHERE id = ? AND superseded_at IS NULL",
        [now, assertion_id],
    )
    store.con.execute(
        "UPDATE assertions SET valid_to = ?, superseded_at = coalesce(superseded_at, ?), superseded_by = ?"
        " WHERE id = ?",
        [end, now, superseded_by, assertion_id],
    )

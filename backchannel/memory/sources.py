"""The sources table, its one writer: one row per ingested transcript, email or
imported file. Each function runs in the caller's transaction: the transcript
writer's source row commits with its utterances and assertions (one transaction per
source), an import's with the whole import. Erasure (memory/erasure.py) rewrites
rows inside its own one transaction."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from backchannel.memory.store import Store, utcnow


def insert_ingested(
    store: Store,
    sid: str,
    *,
    content_hash: str,
    path: str | None,
    title: str | None,
    format: str,
    meeting_date: date | datetime | None,
    meeting_date_origin: str | None,  # noqa: A002
    participants: list[str],
    utterance_count: int,
    extractor: str,
    trust_reasons: list[str],
    assertion_count: int,
) -> None:
    """A transcript's row, written last with its counts (one INSERT, no UPDATE: nobody sees
    the assertions without their source). In a `Store.batch()` (email) the row is held and
    inserted with the batch's others at its commit; `Store.held_value` finds it meanwhile."""
    store.insert_rows(
        "sources",
        [
            "id",
            "content_hash",
            "path",
            "title",
            "format",
            "meeting_date",
            "meeting_date_origin",
            "participants",
            "utterance_count",
            "extractor",
            "ingested_at",
            "trust_reasons",
            "assertion_count",
        ],
        [
            (
                sid,
                content_hash,
                path,
                title,
                format,
                meeting_date,
                meeting_date_origin,
                participants,
                utterance_count,
                extractor,
                utcnow(),
                trust_reasons,
                assertion_count,
            )
        ],
        defer=True,
    )


def insert_imported(store: Store, sid: str, *, content_hash: str, title: str, meeting_date: Any) -> None:
    """The source an imported JSONL line cites (graph/importer.py)."""
    store.con.execute(
        "INSERT INTO sources (id, content_hash, title, format, meeting_date, meeting_date_origin, extractor,"
        " ingested_at) VALUES (?, ?, ?, 'import', ?, 'import', 'import', ?)",
        [sid, content_hash, title, meeting_date, utcnow()],
    )


def recount(store: Store, ids: list[str]) -> None:
    """Utterance and assertion counts recomputed for `ids` (after an import added rows)."""
    store.con.execute(
        """UPDATE sources SET
               utterance_count = (SELECT count(*) FROM utterances u WHERE u.source_id = sources.id),
               assertion_count = (SELECT count(*) FROM assertions a WHERE a.source_id = sources.id)
           WHERE list_contains(?, id)""",
        [ids],
    )


def set_path(store: Store, sid: str, new: str, old: str) -> None:
    """Where the transcript is now (processed/), only if it was still where it was dropped."""
    store.con.execute("UPDATE sources SET path = ? WHERE id = ? AND path = ?", [new, sid, old])


def set_date_origin(store: Store, sid: str, origin: str) -> None:
    store.con.execute("UPDATE sources SET meeting_date_origin = ? WHERE id = ?", [origin, sid])


def set_date(store: Store, sid: str, meeting_date: Any, origin: str) -> None:
    store.con.execute(
        "UPDATE sources SET meeting_date = ?, meeting_date_origin = ? WHERE id = ?", [meeting_date, origin, sid]
    )


def exists(store: Store, sid: str) -> bool:
    return bool(store.scalar("SELECT 1 FROM sources WHERE id = ?", [sid]))


def set_file_date(store: Store, sid: str, file_date: Any) -> None:
    """The file's mtime of a source whose meeting date is unknown: shown, never computed with."""
    store.con.execute("UPDATE sources SET file_date = ? WHERE id = ?", [file_date, sid])

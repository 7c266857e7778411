"""A stored meeting gets a better date: the same content ingested again under a name
that carries one (or with `ingest --date`, or with metadata), where the stored date
was only the file's mtime.

Everything that was computed from the old date moves with it, in one transaction:
the source's date and origin, `said_at` of its assertions, and the dates resolved
from relative phrases ("next Friday", "since March"), recomputed against the new
date the way the extractor that wrote them computes them. Supersession is applied
again to the moved assertions, so a fact that is now the later one closes the
earlier holder of its title. (Closures made under the old date are kept: they are
history, and `assertions --as-of` shows both.)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from backchannel.extraction.formats.meeting_date import ORIGIN_WORDS, outranks
from backchannel.extraction.formats.transcript import Transcript
from backchannel.memory import assertions, sources, supersede
from backchannel.memory.store import Store

# (valid_from, valid_to) of an assertion
Validity = tuple[date | None, date | None]
# (predicate, date phrase, utterance index, span start, span end) -> the phrase's dates, or None
PhraseDates = Callable[[str, str, int, int, int], Validity | None]


def redate_source(store: Store, source_id: str, transcript: Transcript, *, owner_names: list[str]) -> dict | None:
    """Move `source_id` to `transcript.meeting_date` when its origin outranks the stored
    one (`meeting_date.outranks`) and the date differs. Returns what changed
    ({"from", "from_origin", "to", "to_origin", "assertions"}), or None."""
    row = store.query("SELECT meeting_date, meeting_date_origin, extractor FROM sources WHERE id = ?", [source_id])
    if not row or transcript.meeting_date is None:
        return None
    old, old_origin, extractor = row[0]["meeting_date"], row[0]["meeting_date_origin"], row[0]["extractor"]
    new, new_origin = transcript.meeting_date, transcript.meeting_date_origin
    # outranks(None, ...) is False: a transcript without an origin never moves a source
    if new_origin is None or not outranks(new_origin, old_origin) or (old == new and old_origin == new_origin):
        return None
    if old == new:  # same day, better origin: only the origin changes
        sources.set_date_origin(store, source_id, new_origin)
        return {"from": _iso(old), "from_origin": old_origin, "to": _iso(new), "to_origin": new_origin, "assertions": 0}
    dated = _phrase_dates(transcript, extractor, owner_names)
    with store.transaction():
        sources.set_date(store, source_id, new, new_origin)
        rows = store.con.execute(
            "SELECT id, predicate, utterance_idx, span_start, span_end, date_phrase FROM assertions "
            "WHERE source_id = ? ORDER BY id",
            [source_id],
        ).fetchall()
        assertions.set_said_at(store, source_id, new)
        moved = 0
        for aid, predicate, u_idx, start, end, phrase in rows:
            if not phrase:
                continue
            got = dated(predicate, phrase, u_idx, start, end)
            if got is not None:
                assertions.set_validity(store, aid, got[0], got[1])
                moved += 1
        ids = [r[0] for r in rows]
        if ids:
            supersede.apply(store, ids)
        change = {
            "from": _iso(old),
            "from_origin": old_origin,
            "to": _iso(new),
            "to_origin": new_origin,
            "assertions": len(ids),
            "relative_dates": moved,
        }
        store.append_event(
            "source_redated",
            {"source_id": source_id, "path": transcript.path, **change},
            key=f"redate:{source_id}:{_iso(new)}:{new_origin}",
        )
    return change


def stored_transcript(store: Store, source_id: str) -> Transcript | None:
    """The stored utterances of `source_id` as a Transcript (`sources redate`: the file may be gone)."""
    from backchannel.extraction.formats.transcript import Utterance

    src = store.query("SELECT title, format, path, participants FROM sources WHERE id = ?", [source_id])
    if not src:
        return None
    rows = store.con.execute(
        "SELECT idx, speaker, text, start_s, end_s FROM utterances WHERE source_id = ? ORDER BY idx", [source_id]
    ).fetchall()
    return Transcript(
        utterances=[Utterance(i, spk, text, start, end) for i, spk, text, start, end in rows],
        format=src[0]["format"],
        title=src[0]["title"],
        path=src[0]["path"],
        participants=list(src[0]["participants"] or []),
    )


def redate_stored(store: Store, source_id: str, when: datetime, *, owner_names: list[str]) -> dict | None:
    """`sources redate`: `source_id` moves to `when` (origin "user", which outranks every other),
    with what depends on its date; None when it already has that date."""
    transcript = stored_transcript(store, source_id)
    if transcript is None:
        return None
    transcript.meeting_date, transcript.meeting_date_origin = when, "user"
    return redate_source(store, source_id, transcript, owner_names=owner_names)


def describe(change: dict[str, Any]) -> str:
    """'date unknown → 2018-10-11 (the file name)', 'date 2026-03-05 (ingest --date) → 2026-03-06 (sources redate)'."""
    to = f"{str(change['to'])[:10]} ({ORIGIN_WORDS.get(change['to_origin'], change['to_origin'])})"
    if not change["from"]:
        return f"date unknown → {to}"
    return f"date {str(change['from'])[:10]} ({ORIGIN_WORDS.get(change['from_origin'], change['from_origin'])}) → {to}"


def _iso(v: Any) -> str | None:
    return v.isoformat() if isinstance(v, datetime) else (str(v) if v is not None else None)


def _phrase_dates(transcript: Transcript, extractor: str | None, owner_names: list[str]) -> PhraseDates:
    """fn(predicate, phrase, utterance_idx, span_start, span_end) -> (valid_from, valid_to) or None:
    the dates the extractor that wrote the assertion gives it under the new meeting date."""
    if extractor == "offline":
        # The offline rules are deterministic and cheap: run them again and take their dates.
        from backchannel.extraction import offline

        by_key: dict[tuple[str, int, int, int] | tuple[str, int, str], Validity] = {}
        for a in offline.extract(transcript, owner_names=owner_names):
            if a.date_phrase:
                by_key[(a.predicate, a.utterance_idx, a.span_start, a.span_end)] = (a.valid_from, a.valid_to)
                by_key.setdefault((a.predicate, a.utterance_idx, a.date_phrase), (a.valid_from, a.valid_to))

        def offline_dates(predicate: str, phrase: str, u_idx: int, start: int, end: int) -> Validity | None:
            return by_key.get((predicate, u_idx, start, end)) or by_key.get((predicate, u_idx, phrase))

        return offline_dates
    # A model's assertions: its phrase, resolved the way model extraction resolves it (no model call).
    from backchannel.extraction import model as model_extract

    def model_dates(predicate: str, phrase: str, u_idx: int, start: int, end: int) -> Validity | None:
        return model_extract.phrase_validity(predicate, phrase, transcript.meeting_date)

    return model_dates

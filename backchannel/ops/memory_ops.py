"""Operations on the memory: ingest, and the read-side listings."""

from __future__ import annotations

from datetime import date
from typing import Any

from backchannel.memory import entities as entity_repo
from backchannel.ops import OpEnv, OpError, op

ASSERTION_COLUMNS = """
    a.id, a.predicate, a.subject_id, s.name AS subject, a.object_id, o.name AS object,
    a.object_literal, a.qualifier, a.speaker_id, sp.name AS speaker, a.said_at, a.valid_from, a.valid_to,
    a.recorded_at, a.superseded_at, a.confidence, a.modality, a.source_id, a.utterance_idx,
    a.span_start, a.span_end, a.quote, a.date_phrase, a.extractor,
    src.meeting_date_origin AS date_origin,
    coalesce(a.trust, a.confidence) AS trust, coalesce(a.trust_reasons, []) AS trust_reasons,
    a.recipient_id, r.name AS recipient, coalesce(CAST(a.stance AS VARCHAR), 'asserted') AS stance
"""
ASSERTION_JOINS = """
    FROM assertions a
    JOIN entities s ON s.id = a.subject_id
    LEFT JOIN entities o ON o.id = a.object_id
    LEFT JOIN entities sp ON sp.id = a.speaker_id
    LEFT JOIN sources src ON src.id = a.source_id
    LEFT JOIN entities r ON r.id = a.recipient_id
"""


@op(read=False)
def ingest(env: OpEnv, paths: list[str], meeting_date: str | None = None) -> dict[str, Any]:
    """Ingest files (absolute paths); returns {"ingested", "skipped", "failed", "results"}.
    `meeting_date` (YYYY-MM-DD, `ingest --date`) dates the files whose content and name carry no date."""
    from backchannel.extractors.ingest import ingest_files
    from backchannel.extractors.meeting_date import parse_given_date

    try:
        given = parse_given_date(meeting_date) if meeting_date else None
    except ValueError as exc:
        raise OpError(str(exc)) from None
    gateway = _gateway(env)
    results = ingest_files(env.store, env.settings, paths, gateway=gateway, given_date=given)
    return {
        "ingested": sum(r.status == "ingested" for r in results),
        "skipped": sum(r.status == "skipped" for r in results),
        "failed": [{"path": r.path, "error": r.error} for r in results if r.status == "failed"],
        "deferred": [{"path": r.path, "error": r.error} for r in results if r.status == "deferred"],
        "results": [r.to_dict() for r in results],
    }


def _gateway(env: OpEnv):
    if env.settings.models.extract == "offline":
        return None
    from backchannel.agent.models import Gateway

    return Gateway(env.settings, env.store, env.paths)


@op(read=True)
def sources(env: OpEnv, limit: int = 1000) -> list[dict[str, Any]]:
    return env.store.query(
        """SELECT id, title, format, meeting_date, meeting_date_origin, participants, utterance_count,
                  assertion_count, extractor, path, content_hash, ingested_at
           FROM sources ORDER BY meeting_date NULLS LAST, ingested_at LIMIT ?""",
        [int(limit)],
    )


def _find_source(env: OpEnv, ref: str) -> dict[str, Any]:
    rows = env.store.query(
        "SELECT * FROM sources WHERE id = ? OR content_hash LIKE ? OR path = ? OR title = ? ORDER BY id",
        [ref, ref.lower() + "%" if len(ref) >= 6 else "\x00", ref, ref],
    )
    if not rows:
        rows = env.store.query("SELECT * FROM sources WHERE id LIKE ? ORDER BY id", [ref + "%"])
    if not rows:
        raise OpError(f"no source matches {ref!r} (see `backchannel sources`)")
    if len(rows) > 1:
        raise OpError(f"{ref!r} matches {len(rows)} sources: " + ", ".join(r["id"] for r in rows[:5]))
    return rows[0]


@op(read=True)
def source(env: OpEnv, ref: str, utterances: bool = True) -> dict[str, Any]:
    src = _find_source(env, ref)
    out = dict(src)
    if utterances:
        out["utterances"] = env.store.query(
            "SELECT idx, speaker, speaker_id, start_s, end_s, text FROM utterances WHERE source_id = ? ORDER BY idx",
            [src["id"]],
        )
    out["assertions"] = env.store.query(
        f"SELECT {ASSERTION_COLUMNS} {ASSERTION_JOINS} WHERE a.source_id = ? ORDER BY a.utterance_idx, a.id",
        [src["id"]],
    )
    out["ambiguous_references"] = _ambiguous_references(env, src)
    return out


def _ambiguous_references(env: OpEnv, src: dict[str, Any]) -> dict[str, list[str]]:
    """{first name: every person it could mean} for names this source used without context,
    as the writer logged them (extractors/resolve.py)."""
    import json

    rows = env.store.query("SELECT data FROM events WHERE key = ?", [f"ingest:{src.get('content_hash')}"])
    data = json.loads(rows[0]["data"]) if rows and rows[0]["data"] else {}
    return data.get("ambiguous_references") or {}


@op(read=True)
def assertions(env: OpEnv, about: str | None = None, predicate: str | None = None,
               include_superseded: bool = True, limit: int = 1000, as_of: str | None = None,
               min_trust: float | None = None) -> list[dict[str, Any]]:
    """Assertions with evidence. `as_of` (YYYY-MM-DD) keeps those that held on that day
    (started on or before it, by valid_from else said_at, and not ended by then), the
    same rule as memory.supersede.as_of: "who was CIO of Acme in 2024?"."""
    where, params = [], []
    if as_of:
        try:
            day = date.fromisoformat(as_of)
        except ValueError:
            raise OpError(f"--as-of wants a date like 2024-06-01, got {as_of!r}") from None
        where.append("coalesce(a.valid_from, CAST(a.said_at AS DATE)) <= ? AND (a.valid_to IS NULL OR a.valid_to > ?)")
        params += [day, day]
    if about:
        found = entity_repo.find(env.store, about) or entity_repo.find_by_first_name(env.store, about)
        if not found:
            raise OpError(f"no entity named {about!r} (see `backchannel entities`)")
        ids = [e.id for e in found]
        marks = ", ".join("?" for _ in ids)
        where.append(f"(a.subject_id IN ({marks}) OR a.object_id IN ({marks}))")
        params += ids + ids
    if predicate:
        from backchannel.core.vocabulary import PREDICATES

        if predicate not in PREDICATES:  # a typo must not read as "nothing known"
            raise OpError(f"unknown predicate {predicate!r}; use one of {', '.join(PREDICATES)}")
        where.append("a.predicate = ?")
        params.append(predicate)
    if not include_superseded:
        where.append("a.superseded_at IS NULL")
    if min_trust is not None:
        try:
            floor = float(min_trust)
        except (TypeError, ValueError):
            raise OpError(f"--min-trust wants a number from 0 to 1, got {min_trust!r}") from None
        if not 0.0 <= floor <= 1.0:
            raise OpError(f"--min-trust wants a number from 0 to 1, got {min_trust!r}")
        where.append("coalesce(a.trust, a.confidence) >= ?")
        params.append(floor)
    sql = f"SELECT {ASSERTION_COLUMNS} {ASSERTION_JOINS}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY a.said_at NULLS LAST, a.id LIMIT ?"
    return env.store.query(sql, params + [int(limit)])


@op(read=True)
def entities(env: OpEnv, kind: str | None = None) -> list[dict[str, Any]]:
    return entity_repo.all_entities(env.store, kind)

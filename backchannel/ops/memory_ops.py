"""Operations on the memory: ingest, and the read-side listings."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from backchannel.memory import entities as entity_repo
from backchannel.ops import OpEnv, OpError, op

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway

ASSERTION_COLUMNS = """
    a.id, a.predicate, a.subject_id, s.name AS subject, a.object_id, o.name AS object,
    a.object_literal, a.qualifier, a.speaker_id, sp.name AS speaker, a.said_at, a.valid_from, a.valid_to,
    a.recorded_at, a.superseded_at, a.confidence, a.modality, a.source_id, a.utterance_idx,
    a.span_start, a.span_end, a.quote, a.date_phrase, a.extractor,
    src.meeting_date_origin AS date_origin, src.file_date AS file_date,
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
def ingest(
    env: OpEnv,
    paths: list[str],
    meeting_date: str | None = None,
    file_dates: dict[str, str] | None = None,
    scope: str | None = None,
) -> dict[str, Any]:
    """Ingest files (absolute paths); returns {"ingested", "skipped", "failed", "results"}.
    `meeting_date` (YYYY-MM-DD, `ingest --date`) dates the files whose content and name carry no date;
    `file_dates` ({absolute path: YYYY-MM-DD}, `ingest --date FILE=DATE`) one file each.
    `scope` (`ingest --scope`) is the scope of every source written, instead of [scope] folders and default."""
    from backchannel.extraction.formats.meeting_date import parse_given_date
    from backchannel.extraction.ingest import ingest_files

    try:
        given = parse_given_date(meeting_date) if meeting_date else None
        own = {p: parse_given_date(d) for p, d in (file_dates or {}).items()}
    except ValueError as exc:
        raise OpError(str(exc)) from None
    gateway = _gateway(env)
    settings = env.settings
    if scope is not None:
        if not scope.strip():
            raise OpError("--scope needs a word (work, personal, a client's name)")
        settings = settings.model_copy(
            update={"scope": settings.scope.model_copy(update={"default": scope.strip(), "folders": {}})}
        )
    results = ingest_files(env.store, settings, paths, gateway=gateway, given_date=given, file_dates=own)
    if any(r.redated for r in results):
        _dates_moved(env)
    return {
        "ingested": sum(r.status == "ingested" for r in results),
        "skipped": sum(r.status == "skipped" for r in results),
        "failed": [{"path": r.path, "error": r.error} for r in results if r.status == "failed"],
        "deferred": [{"path": r.path, "error": r.error} for r in results if r.status == "deferred"],
        "results": [r.to_dict() for r in results],
    }


def _gateway(env: OpEnv) -> Gateway | None:
    if env.settings.models.extract == "offline":
        return None
    from backchannel.agent.models import Gateway

    return Gateway(env.settings, env.store, env.paths)


@op(read=True)
def sources(env: OpEnv, limit: int = 1000) -> list[dict[str, Any]]:
    return env.store.query(
        """SELECT id, title, format, meeting_date, meeting_date_origin, file_date, participants, utterance_count,
                  assertion_count, extractor, path, content_hash, ingested_at, scope, consent,
                  utterances_trimmed_at
           FROM sources ORDER BY meeting_date NULLS LAST, ingested_at LIMIT ?""",
        [int(limit)],
    )


@op(read=False)
def source_redate(env: OpEnv, ref: str, meeting_date: str) -> dict[str, Any]:
    """Set a source's meeting date (`sources redate`); its assertions' dates, relative dates
    and due dates move with it. Returns {"source_id", "changed": {...} or None}."""
    from backchannel.extraction.formats.meeting_date import parse_given_date
    from backchannel.extraction.ingest import owner_names
    from backchannel.extraction.redate import redate_stored

    try:
        when = parse_given_date(meeting_date)
    except ValueError as exc:
        raise OpError(str(exc).replace("--date", "the date")) from None
    src = _find_source(env, ref)
    if src["format"] in ("import", "email"):
        raise OpError(
            f"{src['id']} is {'an import' if src['format'] == 'import' else 'an email'}: its date comes "
            "with it and is not changed here"
        )
    changed = redate_stored(env.store, src["id"], when, owner_names=owner_names(env.settings))
    if changed:
        _dates_moved(env)
    return {"source_id": src["id"], "title": src["title"], "changed": changed}


def _dates_moved(env: OpEnv) -> None:
    """The graph index holds said_at and validity; a date change moves no row count, so
    its signature cannot see it: drop it, the next read rebuilds it."""
    from backchannel.graph.index import IndexCache

    IndexCache.drop(env.store)


def _find_source(env: OpEnv, ref: str) -> dict[str, Any]:
    rows = env.store.query(
        "SELECT * FROM sources WHERE id = ? OR content_hash LIKE ? OR path = ? OR title = ? ORDER BY id",
        [ref, ref.lower() + "%" if len(ref) >= 6 else "\x00", ref, ref],
    )
    if not rows:
        rows = env.store.query("SELECT * FROM sources WHERE id LIKE ? ORDER BY id", [ref + "%"])
    if not rows:
        raise OpError(f"no source matches {ref!r}{_source_suggestion(env, ref)} (see `backchannel sources`)")
    if len(rows) > 1:
        raise OpError(f"{ref!r} matches {len(rows)} sources: " + ", ".join(r["id"] for r in rows[:5]))
    return rows[0]


@op(read=True)
def suggest_names(env: OpEnv, names: list[str]) -> list[dict[str, Any]]:
    """For each name that names no entity, the near names, seat labels and aliases
    (ops.near_names): [{"name", "suggestion"}], only those with one."""
    from backchannel.ops.near_names import suggestion

    out = []
    for name in names[:10]:
        if not isinstance(name, str) or entity_repo.find(env.store, name):
            continue
        said = suggestion(env.store, name)
        if said:
            out.append({"name": name, "suggestion": said.lstrip("; ")})
    return out


@op(read=True)
def owner_presence(env: OpEnv) -> dict[str, Any]:
    """Whether the owner speaks in the meetings: {"owner", "sources", "spoken_in", "speakers"
    (the most frequent speakers, [{"name", "sources"}]), "config"}. A memory where the owner
    never speaks proposes nothing for them, and `ingest` and `wake` say so."""
    me = entity_repo.owner(env.store)
    total = env.store.scalar("SELECT count(*) FROM sources WHERE format NOT IN ('import', 'email')") or 0
    spoken = 0
    if me is not None:
        spoken = (
            env.store.scalar(
                "SELECT count(DISTINCT u.source_id) FROM utterances u JOIN sources s ON s.id = u.source_id "
                "WHERE u.speaker_id = ? AND s.format NOT IN ('import', 'email')",
                [me.id],
            )
            or 0
        )
    speakers = env.store.query(
        """SELECT e.name, count(DISTINCT u.source_id) AS sources FROM utterances u JOIN entities e ON e.id = u.speaker_id
           WHERE e.merged_into IS NULL AND NOT e.is_owner GROUP BY e.name ORDER BY sources DESC, count(*) DESC
           LIMIT 5"""
    )
    return {
        "owner": me.name if me else env.settings.owner.name,
        "sources": int(total),
        "spoken_in": int(spoken),
        "speakers": speakers,
        "config": str(env.paths.config_file),
    }


def owner_absent_note(presence: dict[str, Any]) -> str | None:
    """What to say when the owner speaks in none of the meetings (None when they do, or none is stored)."""
    if not presence["sources"] or presence["spoken_in"]:
        return None
    seen = ", ".join(f'"{s["name"]}"' for s in presence["speakers"][:3])
    first = presence["speakers"][0]["name"] if presence["speakers"] else "Speaker 1"
    return (
        f"note: you ({presence['owner']}) speak in none of the {presence['sources']} meetings, so nothing is "
        "proposed for you from them (introductions, reminders and briefs start from what you said and "
        f"heard). If you are one of the speakers{' (' + seen + ')' if seen else ''}: "
        f'`backchannel entities merge "{presence["owner"]}" "{first}"` makes what they said yours, and '
        f"the name under [owner] aliases in {presence['config']} (or `backchannel init --alias NAME` on a "
        "new setup) attributes it in later meetings."
    )


def _source_suggestion(env: OpEnv, ref: str) -> str:
    """A title near `ref`, or the person or organisation it names (`show "Kirsty Williams"`)."""
    from rapidfuzz import fuzz, process, utils

    from backchannel.ops.near_names import near_names

    titles = [
        r[0] for r in env.store.con.execute("SELECT DISTINCT title FROM sources WHERE title IS NOT NULL").fetchall()
    ]
    close = process.extract(ref, titles, scorer=fuzz.WRatio, processor=utils.default_process, limit=3, score_cutoff=86)
    if close:
        return "; did you mean the meeting " + " or ".join(f'"{t}"' for t, _s, _i in close) + "?"
    exact = entity_repo.find(env.store, ref)
    names = [e.name for e in exact] or [n["name"] for n in near_names(env.store, ref, limit=3)]
    if names:
        return (
            f"; {' or '.join(repr(n) for n in names)} is in memory as a person or organisation: "
            f'`backchannel assertions --about "{names[0]}"`'
        )
    return ""


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
    out["also_in"] = _also_in(env, src["id"])
    return out


def _also_in(env: OpEnv, source_id: str) -> dict[str, list[str]]:
    """{assertion id (as a string: JSON keys): other sources holding the same fact (ops/fact_groups.py)}."""
    rows = env.store.con.execute(
        """SELECT a.id, list(DISTINCT b.source_id ORDER BY b.source_id)
           FROM assertions a JOIN assertions b
             ON b.subject_id = a.subject_id AND b.predicate = a.predicate AND b.stance IS NOT DISTINCT FROM a.stance
            AND b.object_id IS NOT DISTINCT FROM a.object_id
            AND lower(trim(coalesce(b.object_literal, ''))) = lower(trim(coalesce(a.object_literal, '')))
            AND lower(coalesce(b.qualifier, '')) = lower(coalesce(a.qualifier, ''))
            AND b.recipient_id IS NOT DISTINCT FROM a.recipient_id
            AND (b.superseded_at IS NULL) = (a.superseded_at IS NULL)
            AND b.source_id <> a.source_id
           WHERE a.source_id = ? GROUP BY a.id""",
        [source_id],
    ).fetchall()
    return {str(aid): list(others) for aid, others in rows}


def _ambiguous_references(env: OpEnv, src: dict[str, Any]) -> dict[str, list[str]]:
    """{first name: every person it could mean} for names this source used without context,
    as the writer logged them (extraction/resolve/entities.py)."""
    import json

    rows = env.store.query("SELECT data FROM events WHERE key = ?", [f"ingest:{src.get('content_hash')}"])
    data = json.loads(rows[0]["data"]) if rows and rows[0]["data"] else {}
    return data.get("ambiguous_references") or {}


@op(read=True)
def assertions(
    env: OpEnv,
    about: str | None = None,
    predicate: str | None = None,
    include_superseded: bool = True,
    limit: int = 1000,
    as_of: str | None = None,
    min_trust: float | None = None,
) -> list[dict[str, Any]]:
    """Assertions with evidence. `as_of` (YYYY-MM-DD) keeps those that held on that day
    (started on or before it, by valid_from else said_at, and not ended by then), the
    same rule as memory.supersede.as_of: "who was CIO of Acme in 2024?"."""
    where: list[str] = []
    params: list[Any] = []
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
            from backchannel.ops.near_names import suggestion

            raise OpError(f"no entity named {about!r}{suggestion(env.store, about)} (see `backchannel entities`)")
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


@op(read=True)
def entity_duplicates(env: OpEnv, limit: int = 200) -> list[dict[str, Any]]:
    """People and organisations that may be one (acronym, honorific, spelling: ops/duplicates.py),
    each with the merge that would join them; nothing is merged here."""
    from backchannel.ops.duplicates import find_duplicates

    return find_duplicates(env.store, limit=int(limit))

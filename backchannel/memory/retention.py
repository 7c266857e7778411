"""The retention sweep's erasure: what each `[retention]` period removes, in one
transaction (the durable run around it is engine/retention_run.py; the file rewrite
that makes the deleted bytes unreadable is erasure.rewrite).

- Raw utterances of sources ingested more than `utterances_days` ago: deleted. With
  `keep_quotes` (the default) an utterance that backs assertions keeps only the quoted
  spans, joined by " … ", and each assertion's span is moved to its quote's new place,
  so every quote stays a verbatim slice of its utterance. Without it, quotes go too.
  A trimmed source is marked (`utterances_trimmed_at`), so a second sweep does nothing.
- Assertions said more than `assertions_days` ago, unless a newer source says the same
  fact (same subject, predicate and object) or the owner stated it (a correction).
- Proposals last updated more than `proposals_days` ago (with their outbox and feedback
  rows; suppressions, which hold no text, stay so a dismissal keeps its effect).
- Finished runs older than `runs_days`, with their events, model-call and edge records.

Every statement is set-based: at 1M assertions the sweep is a few joins (bench/retention.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from backchannel.memory.store import Store

SEPARATOR = " … "


@dataclass(frozen=True)
class Cutoffs:
    """Naive-UTC instants; None: that kind of record is kept."""

    utterances: datetime | None
    assertions: datetime | None
    proposals: datetime | None
    runs: datetime | None
    keep_quotes: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cutoffs:
        def when(v: Any) -> datetime | None:
            return datetime.fromisoformat(v) if v else None

        return cls(
            when(d.get("utterances")),
            when(d.get("assertions")),
            when(d.get("proposals")),
            when(d.get("runs")),
            bool(d.get("keep_quotes", True)),
        )

    @classmethod
    def of(
        cls,
        now: datetime,
        *,
        utterances_days: int | None,
        assertions_days: int | None,
        proposals_days: int | None,
        runs_days: int | None,
        keep_quotes: bool = True,
    ) -> Cutoffs:
        def cut(days: int | None) -> datetime | None:
            return None if days is None else now - timedelta(days=days)

        return cls(cut(utterances_days), cut(assertions_days), cut(proposals_days), cut(runs_days), keep_quotes)


def apply(store: Store, cut: Cutoffs, *, keep_run: str | None = None) -> dict[str, int]:
    """Erase what the cutoffs name, in the caller's transaction. `keep_run`: the sweep's
    own run, never removed by the runs period. Returns counts per kind."""
    counts: dict[str, int] = {}
    if cut.utterances is not None:
        counts.update(_trim_utterances(store, cut.utterances, cut.keep_quotes))
    if cut.assertions is not None:
        counts["assertions_expired"] = _expire_assertions(store, cut.assertions)
    if cut.proposals is not None:
        counts["proposals_deleted"] = _delete_proposals(store, cut.proposals)
    if cut.runs is not None:
        counts["runs_deleted"] = _delete_runs(store, cut.runs, keep_run)
    return counts


def _count(store: Store, sql: str, params: list[Any] | None = None) -> int:
    return int(store.scalar(sql, params or []) or 0)


def _trim_utterances(store: Store, cutoff: datetime, keep_quotes: bool) -> dict[str, int]:
    con = store.con
    con.execute(
        "CREATE OR REPLACE TEMP TABLE retention_sources AS SELECT id FROM sources "
        "WHERE ingested_at <= ? AND utterances_trimmed_at IS NULL",
        [cutoff],
    )
    n_sources = _count(store, "SELECT count(*) FROM retention_sources")
    if not n_sources:
        return {"sources_trimmed": 0, "utterances_deleted": 0, "utterances_kept_as_quotes": 0}
    before = _count(store, "SELECT count(*) FROM utterances WHERE source_id IN (SELECT id FROM retention_sources)")
    kept = 0
    if keep_quotes:
        # The quoted spans that are verbatim slices of their utterance, one piece per distinct span,
        # each placed after the pieces before it and a separator.
        sep = len(SEPARATOR)
        con.execute(f"""CREATE OR REPLACE TEMP TABLE retention_pieces AS
            WITH spans AS (
                SELECT DISTINCT a.source_id, a.utterance_idx AS idx, a.span_start AS s, a.span_end AS e
                FROM assertions a JOIN utterances u ON u.source_id = a.source_id AND u.idx = a.utterance_idx
                WHERE a.source_id IN (SELECT id FROM retention_sources) AND a.quote IS NOT NULL
                  AND a.span_start IS NOT NULL AND a.span_end > a.span_start
                  AND substring(u.text, a.span_start + 1, a.span_end - a.span_start) = a.quote)
            SELECT *, coalesce(sum(e - s + {sep}) OVER (PARTITION BY source_id, idx ORDER BY s, e
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS ns
            FROM spans""")
        con.execute(
            """CREATE OR REPLACE TEMP TABLE retention_text AS
            SELECT p.source_id, p.idx, string_agg(substring(u.text, p.s + 1, p.e - p.s), ? ORDER BY p.s, p.e) AS text
            FROM retention_pieces p JOIN utterances u ON u.source_id = p.source_id AND u.idx = p.idx
            GROUP BY p.source_id, p.idx""",
            [SEPARATOR],
        )
        con.execute("""UPDATE assertions SET span_start = p.ns, span_end = p.ns + (p.e - p.s)
            FROM retention_pieces p WHERE assertions.source_id = p.source_id AND assertions.utterance_idx = p.idx
              AND assertions.span_start = p.s AND assertions.span_end = p.e""")
        con.execute("""DELETE FROM utterances WHERE source_id IN (SELECT id FROM retention_sources)
            AND NOT EXISTS (SELECT 1 FROM retention_text t WHERE t.source_id = utterances.source_id
                            AND t.idx = utterances.idx)""")
        con.execute("""UPDATE utterances SET text = t.text FROM retention_text t
            WHERE utterances.source_id = t.source_id AND utterances.idx = t.idx""")
        kept = _count(store, "SELECT count(*) FROM retention_text")
        for table in ("retention_pieces", "retention_text"):
            con.execute(f"DROP TABLE {table}")
    else:
        con.execute("DELETE FROM utterances WHERE source_id IN (SELECT id FROM retention_sources)")
        con.execute(
            "UPDATE assertions SET quote = NULL, span_start = NULL, span_end = NULL "
            "WHERE source_id IN (SELECT id FROM retention_sources)"
        )
    con.execute("""UPDATE sources SET utterances_trimmed_at = now()::TIMESTAMP,
                       utterance_count = (SELECT count(*) FROM utterances u WHERE u.source_id = sources.id)
                   WHERE id IN (SELECT id FROM retention_sources)""")
    con.execute("DROP TABLE retention_sources")
    return {"sources_trimmed": n_sources, "utterances_deleted": before - kept, "utterances_kept_as_quotes": kept}


def _expire_assertions(store: Store, cutoff: datetime) -> int:
    con = store.con
    con.execute(
        """CREATE OR REPLACE TEMP TABLE retention_expired AS
        SELECT a.id FROM assertions a
        WHERE coalesce(a.said_at, a.recorded_at) < ? AND a.extractor <> 'owner'
          AND NOT EXISTS (
              SELECT 1 FROM assertions b
              WHERE b.subject_id = a.subject_id AND b.predicate = a.predicate AND b.stance IS NOT DISTINCT FROM a.stance
                AND b.object_id IS NOT DISTINCT FROM a.object_id
                AND b.object_literal IS NOT DISTINCT FROM a.object_literal
                AND b.source_id IS DISTINCT FROM a.source_id
                AND coalesce(b.said_at, b.recorded_at) >= ?)""",
        [cutoff, cutoff],
    )
    n = _count(store, "SELECT count(*) FROM retention_expired")
    if n:
        con.execute("DELETE FROM import_keys WHERE assertion_id IN (SELECT id FROM retention_expired)")
        con.execute(
            "DELETE FROM assertion_changes WHERE assertion_id IN (SELECT id FROM retention_expired) "
            "OR new_id IN (SELECT id FROM retention_expired)"
        )
        con.execute(
            "UPDATE assertions SET superseded_by = NULL WHERE superseded_by IN (SELECT id FROM retention_expired)"
        )
        con.execute("DELETE FROM assertions WHERE id IN (SELECT id FROM retention_expired)")
        con.execute("""UPDATE sources SET assertion_count = (SELECT count(*) FROM assertions a
                                                             WHERE a.source_id = sources.id)""")
    con.execute("DROP TABLE retention_expired")
    return n


def _delete_proposals(store: Store, cutoff: datetime) -> int:
    con = store.con
    ids = [r[0] for r in con.execute("SELECT id FROM proposals WHERE updated_at < ?", [cutoff]).fetchall()]
    if ids:
        for table in ("outbox", "feedback"):
            con.execute(f"DELETE FROM {table} WHERE list_contains(?, proposal_id)", [ids])
        con.execute("DELETE FROM proposals WHERE list_contains(?, id)", [ids])
    return len(ids)


def _delete_runs(store: Store, cutoff: datetime, keep_run: str | None) -> int:
    con = store.con
    ids = [
        r[0]
        for r in con.execute(
            "SELECT id FROM runs WHERE status <> 'running' AND coalesce(finished_at, started_at) < ? AND id IS DISTINCT FROM ?"
            " AND id NOT IN (SELECT run_id FROM proposals)",
            [cutoff, keep_run],
        ).fetchall()
    ]
    if ids:
        con.execute("DELETE FROM events WHERE list_contains(?, run_id)", [ids])
        con.execute("DELETE FROM model_calls WHERE list_contains(?, run_id)", [ids])
        con.execute("DELETE FROM edges WHERE list_contains(?, run_id)", [ids])
        con.execute("DELETE FROM runs WHERE list_contains(?, id)", [ids])
    # MCP calls outside any run are kept as long as runs are.
    con.execute("DELETE FROM edges WHERE run_id IS NULL AND created_at < ?", [cutoff])
    return len(ids)

"""`search`: entities by name or alias, and assertions by what was said, for the web
app's search box and the MCP server's search tool (the CLI has `entities` and
`assertions --about`; this one looks for a phrase anywhere)."""

from __future__ import annotations

from typing import Any

from backchannel.ops import OpEnv, OpError, op
from backchannel.ops.memory_ops import ASSERTION_COLUMNS, ASSERTION_JOINS

MAX_LIMIT = 200


def _like(text: str) -> str:
    """A LIKE pattern matching `text` literally anywhere (% and _ typed by the user are not wildcards)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@op(read=True)
def search(env: OpEnv, query: str, limit: int = 50) -> dict[str, Any]:
    """Entities whose name or an alias contains `query`, and assertions whose quote,
    subject, object or literal contains it (case-insensitive), newest said first."""
    q = (query or "").strip()
    if not q:
        raise OpError("search needs some text to look for")
    if len(q) > 500:
        raise OpError("search text is limited to 500 characters")
    limit = max(1, min(int(limit), MAX_LIMIT))
    pattern = _like(q)
    entities = env.store.query(
        """SELECT e.id, e.kind, e.name, e.is_owner,
                  list(DISTINCT al.alias ORDER BY al.alias) FILTER (WHERE al.alias IS NOT NULL) AS aliases,
                  (SELECT count(*) FROM assertions s WHERE s.subject_id = e.id OR s.object_id = e.id) AS assertion_count
           FROM entities e LEFT JOIN aliases al ON al.entity_id = e.id
           WHERE e.merged_into IS NULL
             AND (e.name ILIKE $1 ESCAPE '\\'
                  OR EXISTS (SELECT 1 FROM aliases x WHERE x.entity_id = e.id AND x.alias ILIKE $1 ESCAPE '\\'))
           GROUP BY ALL ORDER BY assertion_count DESC, e.name LIMIT $2""",
        [pattern, limit],
    )
    assertions = env.store.query(
        f"""SELECT {ASSERTION_COLUMNS}, src.title AS source_title {ASSERTION_JOINS}
            WHERE a.quote ILIKE $1 ESCAPE '\\' OR s.name ILIKE $1 ESCAPE '\\' OR o.name ILIKE $1 ESCAPE '\\'
               OR a.object_literal ILIKE $1 ESCAPE '\\'
            ORDER BY a.said_at DESC NULLS LAST, a.id DESC LIMIT $2""",
        [pattern, limit],
    )
    return {"query": q, "entities": entities, "assertions": assertions}

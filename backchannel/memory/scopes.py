"""Scopes: each source carries one (work, personal, a client's name; `sources.scope`), and
each reader (the sweep, `ask`, MCP, exports, each delivery channel) is configured with the
scopes it may see (`[scope]`; None: every scope). A fact with no source (the owner's
correction) is visible to every reader."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from backchannel.config.privacy import ScopeSettings
from backchannel.memory.store import Store


def reader_scopes(settings: ScopeSettings, reader: str) -> list[str] | None:
    """The scopes `reader` (sweep, ask, mcp, export) may read; None: all of them."""
    allowed: list[str] | None = getattr(settings, reader, None)
    return None if allowed is None else list(allowed)


def out_of_scope_assertions(store: Store, scopes: Sequence[str]) -> list[int]:
    """Ids of the assertions whose source is in none of `scopes`."""
    return [
        r[0]
        for r in store.con.execute(
            "SELECT a.id FROM assertions a JOIN sources s ON s.id = a.source_id "
            "WHERE NOT list_contains(?, coalesce(s.scope, 'default')) ORDER BY a.id",
            [list(scopes)],
        ).fetchall()
    ]


def scopes_of(store: Store, source_ids: Iterable[str | None]) -> set[str]:
    ids = sorted({s for s in source_ids if s})
    if not ids:
        return set()
    return {
        str(r[0])
        for r in store.con.execute(
            "SELECT DISTINCT coalesce(scope, 'default') FROM sources WHERE list_contains(?, id)", [ids]
        ).fetchall()
    }


def channels_for(settings: ScopeSettings, channels: Sequence[str], cited: set[str]) -> tuple[list[str], list[str]]:
    """(channels that may carry a proposal citing sources of the `cited` scopes, those that may not)."""
    kept: list[str] = []
    withheld: list[str] = []
    for c in channels:
        allowed = settings.channels.get(c)
        (kept if allowed is None or cited <= set(allowed) else withheld).append(c)
    return kept, withheld

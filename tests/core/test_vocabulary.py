"""The vocabulary is defined once (core/vocabulary.py); the database's CHECK
constraints repeat it in SQL. These tests keep the two in step, on a real store."""

from __future__ import annotations

import re

from backchannel.core.vocabulary import ENTITY_KINDS, MODALITIES
from backchannel.memory.store import Store


def _check_values(store: Store, table: str, column: str) -> list[str]:
    """The values a CHECK (column IN (...)) constraint of the live schema allows."""
    texts = [
        r[0]
        for r in store.con.execute(
            "SELECT constraint_text FROM duckdb_constraints() WHERE table_name = ? AND constraint_type = 'CHECK'",
            [table],
        ).fetchall()
    ]
    for text in texts:
        m = re.search(rf"\(?{column}\)? IN \(([^)]*)\)", text)
        if m:
            return re.findall(r"'([^']*)'", m.group(1))
    raise AssertionError(f"no CHECK on {table}.{column} in {texts}")


def test_schema_checks_match_the_vocabulary(tmp_path):
    with Store.open(tmp_path / "m.duckdb") as store:
        assert _check_values(store, "entities", "kind") == list(ENTITY_KINDS)
        assert _check_values(store, "assertions", "modality") == list(MODALITIES)


def test_stance_enum_matches_the_vocabulary(tmp_path):
    from backchannel.core.vocabulary import STANCES

    with Store.open(tmp_path / "m.duckdb") as store:
        values = store.con.execute("SELECT enum_range(NULL::assertion_stance)").fetchone()[0]
        assert list(values) == list(STANCES)
        cols = {
            r[0]: r[1]
            for r in store.con.execute(
                "SELECT column_name, column_default FROM duckdb_columns() WHERE table_name = 'assertions'"
            ).fetchall()
        }
        assert "stance" in cols and "asserted" in (cols["stance"] or "")

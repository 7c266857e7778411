"""Upgrading a database made by a past release, not only a blank one.

How the past databases are made, and why so: tests/fixtures/releases/make_fixture.py
ran each release's own code (its CLI, from `git archive COMMIT`) on the demo story plus
a sweep, an import, feedback, a merge and (where the release reads mail) an .eml, then
dumped the database with DuckDB's EXPORT DATABASE: the release's catalog as it stood
(schema.sql: the tables as its migrations left them, the sequences at their positions,
the indexes) and every table as CSV. A committed .duckdb file would be tied to one
DuckDB storage version; a dump is text any later DuckDB loads, and it holds the old
schema as built, not as today's migration files would rebuild it. The git history is
not needed at test time (a shallow CI clone has none).

Release points:
- a3bac18 (2026-11-29), the last before trust: migrations 0001 to 0045. Upgrading runs
  0100 (trust per assertion), 0101, 0110, 0111 and 0170 over rows that never had them.
- 8c60a08 (2026-12-01), the previous release: migrations up to 0170. Today nothing is
  pending for it; the test keeps it so the next migration is tested against real rows.

Each is restored into a fresh file, opened with today's Store (which migrates), and
then read and written through today's operations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from backchannel.config import load_settings, resolve_paths
from backchannel.memory import Store
from backchannel.memory.store import migration_files
from backchannel.ops import OpEnv, invoke

RELEASES = Path(__file__).resolve().parents[1] / "fixtures" / "releases"
BEFORE_TRUST = ["0001_core", "0010_model_calls", "0030_runs_proposals", "0040_delivery", "0045_graph_import_keys"]


def restore(dump: Path, db: Path) -> None:
    """The dump loaded into a new database file, as EXPORT DATABASE's IMPORT would, with
    the CSV paths of the machine that made it replaced by the dump's folder."""
    con = duckdb.connect(str(db))
    try:
        con.execute((dump / "schema.sql").read_text())
        for stmt in (dump / "load.sql").read_text().split(";\n"):
            if stmt.strip():
                con.execute(re.sub(r"FROM '[^']*/([\w.]+\.csv)'", lambda m: f"FROM '{dump / m.group(1)}'", stmt))
    finally:
        con.close()


def _counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return {
        t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
        for (t,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
    }


def _names(rows: list[dict]) -> set[tuple]:
    return {(r["subject"], r["predicate"], r["object"], r.get("qualifier")) for r in rows}


@pytest.mark.parametrize("release", ["a3bac18", "8c60a08"])
def test_a_past_release_database_upgrades_and_serves_every_read_and_write(home, release):
    dump = RELEASES / release
    paths = resolve_paths().ensure()
    restore(dump, paths.db_file)
    con = duckdb.connect(str(paths.db_file), read_only=True)
    old = _counts(con)
    old_migrations = [r[0] for r in con.execute("SELECT name FROM schema_migrations ORDER BY 1").fetchall()]
    accepted = con.execute("SELECT id FROM proposals WHERE status = 'accepted'").fetchall()
    intro = con.execute("SELECT id FROM proposals WHERE kind = 'introduction' ORDER BY created_at").fetchone()
    old_confidence = dict(con.execute("SELECT id, confidence FROM assertions").fetchall())
    max_assertion = con.execute("SELECT max(id) FROM assertions").fetchone()[0]
    con.close()
    if release == "a3bac18":
        assert old_migrations == BEFORE_TRUST
    assert old["assertions"] and old["proposals"] >= 2 and old["feedback"] and old["outbox"] and accepted and intro

    with Store.open(paths.db_file) as st:  # today's migrator runs here
        assert st.applied_migrations() == [name for name, _ in migration_files()]
        new = _counts(st.con)
        assert {t: new[t] for t in old if t != "schema_migrations"} == {
            t: n for t, n in old.items() if t != "schema_migrations"
        }  # every row survived
        # Columns added since: filled with their defaults on the old rows (0100: trust = confidence).
        trust = {r["id"]: r for r in st.query("SELECT id, trust, trust_reasons, confidence FROM assertions")}
        assert all(r["trust"] is not None and r["trust_reasons"] is not None for r in trust.values())
        if release == "a3bac18":
            assert all(trust[i]["trust"] == c and trust[i]["trust_reasons"] == [] for i, c in old_confidence.items())

        settings = load_settings(paths)
        env = OpEnv(store=st, settings=settings, paths=paths)
        # Reads: what the demo story said, and what the import said, with its evidence.
        about_sophie = invoke(env, "assertions", {"about": "Sophie Martin"})
        assert ("Sophie Martin", "works_at", "Acme", "CIO") in _names(about_sophie)
        yvonne = invoke(env, "assertions", {"about": "Yvonne Lacroix"})
        assert ("Yvonne Lacroix", "works_at", "Zenith Optics", "COO") in _names(yvonne)
        source = invoke(env, "source", {"ref": next(r["source_id"] for r in about_sophie if r["source_id"])})
        assert source["utterances"]
        listed = invoke(env, "proposals", {"limit": 100})
        assert len(listed) == old["proposals"]
        shown = invoke(env, "proposal", {"id": accepted[0][0]})
        assert shown["status"] == "accepted"
        introduction = invoke(env, "proposal", {"id": intro[0]})
        assert introduction["evidence"] and "Sophie Martin" in json.dumps(introduction)
        assert invoke(env, "trace", {"id": intro[0]})["events"]
        assert invoke(env, "status", {})["config_problems"] == []
        # The import keys the old release wrote still recognise its lines (by id and by content).
        lines = (dump / "import.jsonl").read_text().splitlines()
        again = invoke(env, "import_assertions", {"path": str(dump / "import.jsonl")})
        assert (again["assertions_imported"], again["assertions_skipped"]) == (0, old["import_keys"])
        assert old["import_keys"] == sum(json.loads(x)["type"] == "assertion" for x in lines)
        # Writes: a new fact takes the next id (the sequences kept their positions), a sweep runs.
        fresh = json.loads(lines[0]) | {"id": "after-upgrade", "name": "Paul Henry"}
        extra = Path(home) / "more.jsonl"
        extra.write_text(
            json.dumps(fresh)
            + "\n"
            + json.dumps({"type": "assertion", "subject": fresh["id"], "predicate": "knows", "object": "me"})
            + "\n"
        )
        added = invoke(env, "import_assertions", {"path": str(extra)})
        assert added["assertion_ids"] == [max_assertion + 1]
        swept = invoke(env, "wake", {"kind": "sweep"})
        assert [r["status"] for r in swept["runs"]] == ["done"]


def test_a_meeting_dated_by_its_mtime_becomes_date_unknown_on_upgrade(home):
    """0220 on the previous release's rows: a source dated only by its file's mtime keeps
    that date as `file_date` only; said_at and the dates resolved from relative phrases
    against it go (a phrase with a year stays); dated sources are untouched."""
    from datetime import date, datetime

    paths = resolve_paths().ensure()
    restore(RELEASES / "8c60a08", paths.db_file)
    con = duckdb.connect(str(paths.db_file))
    [sid] = con.execute(
        "SELECT s.id FROM sources s JOIN assertions a ON a.source_id = s.id WHERE s.meeting_date IS "
        "NOT NULL GROUP BY s.id HAVING count(*) >= 2 ORDER BY s.id LIMIT 1"
    ).fetchone()
    con.execute(
        "UPDATE sources SET meeting_date = ?, meeting_date_origin = 'mtime' WHERE id = ?",
        [datetime(2026, 11, 20, 9, 0), sid],
    )
    ids = [
        r[0] for r in con.execute("SELECT id FROM assertions WHERE source_id = ? ORDER BY id LIMIT 2", [sid]).fetchall()
    ]
    con.execute(
        "UPDATE assertions SET date_phrase = 'next Friday', valid_to = DATE '2026-11-27' WHERE id = ?", [ids[0]]
    )
    con.execute(
        "UPDATE assertions SET date_phrase = 'since 2019', valid_from = DATE '2019-01-01' WHERE id = ?", [ids[1]]
    )
    dated = con.execute(
        "SELECT count(*) FROM assertions WHERE source_id <> ? AND said_at IS NOT NULL", [sid]
    ).fetchone()[0]
    con.close()
    with Store.open(paths.db_file) as st:
        src = st.query("SELECT meeting_date, meeting_date_origin, file_date FROM sources WHERE id = ?", [sid])[0]
        assert src == {"meeting_date": None, "meeting_date_origin": "mtime", "file_date": datetime(2026, 11, 20, 9, 0)}
        rows = {
            r["id"]: r
            for r in st.query("SELECT id, said_at, valid_from, valid_to FROM assertions WHERE source_id = ?", [sid])
        }
        assert {r["said_at"] for r in rows.values()} == {None}
        assert rows[ids[0]]["valid_to"] is None and rows[ids[1]]["valid_from"] == date(2019, 1, 1)
        assert st.scalar("SELECT count(*) FROM assertions WHERE source_id <> ? AND said_at IS NOT NULL", [sid]) == dated

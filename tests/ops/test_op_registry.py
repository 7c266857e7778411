"""The operation registry: every operation is declared once, with `@op(read=...)` at its
definition, and an operation declared read-only really never writes the store."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

from tests.support.web_support import story_home

OPS_DIR = Path(__file__).resolve().parents[2] / "backchannel" / "ops"


def _declared() -> list[str]:
    """The operation names declared by `@op(...)` in the ops package's source."""
    names = []
    for f in sorted(OPS_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "op":
                    given = deco.args[0].value if deco.args else None
                    names.append(given or node.name)
    return names


def test_every_operation_is_declared_exactly_once_at_its_definition():
    from backchannel.ops import operations

    declared = _declared()
    assert len(declared) == len(set(declared)), sorted(n for n in declared if declared.count(n) > 1)
    registry = operations()
    assert sorted(declared) == sorted(registry)
    for name, spec in registry.items():
        assert spec.fn.__module__.startswith("backchannel.ops."), name
        assert spec.read <= spec.on_reader, name  # a read is always served on the reader
    # Only `wake` runs on the reader without being a read (it enqueues; see Op.on_reader).
    assert sorted(n for n, s in registry.items() if s.on_reader and not s.read) == ["wake"]


def test_a_second_registration_of_a_name_is_refused():
    from backchannel.ops import op, operations

    operations()

    def status(env):  # same name as daemon_ops.status, another function
        return {}

    with pytest.raises(RuntimeError, match="registered twice"):
        op(read=True)(status)


def _fingerprint(db: Path) -> dict[str, str]:
    """A hash of every table's rows, and the sequences' positions."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall():
            rows = con.execute(f'SELECT * FROM "{table}"').fetchall()
            out[table] = hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()
        out["sequences"] = repr(
            con.execute("SELECT sequence_name, last_value FROM duckdb_sequences() ORDER BY 1").fetchall()
        )
        return out
    finally:
        con.close()


def test_read_operations_never_write(home):
    """Each read op runs on a store with the demo's story in it (sources, facts, proposals,
    a trace): once on a read-only DuckDB connection (a write would raise), then on a
    read-write one, after which every table and sequence is as it was."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.memory import Store
    from backchannel.ops import OpEnv, operations

    ids = story_home(home)
    paths = resolve_paths()
    settings = load_settings(paths)
    from backchannel.memory import entities as entity_repo

    with Store.open(paths.db_file) as st:
        source_id = st.scalar("SELECT id FROM sources ORDER BY id LIMIT 1")
        intro_run = st.scalar("SELECT run_id FROM proposals WHERE id = ?", [ids.intro])
        entity_repo.create(st, "Ms. Sophie Martin", "person")  # a near-duplicate for entity_duplicates to find
    sample_args = {
        "sources": {},
        "source": {"ref": source_id},
        "assertions": {"about": "Sophie Martin"},
        "entities": {},
        "export_entity": {"ref": "Sophie Martin"},
        "forget_plan": {"ref": "Sophie Martin"},
        "usage": {},
        "status": {},
        "proposals": {},
        "proposal": {"id": ids.intro},
        "trace": {"id": ids.intro},
        "proposal_action": {"id": ids.intro},
        "search": {"query": "Acme"},
        "entity_ties": {"ref": "Sophie Martin"},
        "proposal_path": {"id": ids.intro},
        "entity_timeline": {"ref": "Sophie Martin"},
        "entity_drawings": {"ref": "Sophie Martin"},
        "consent_list": {},
        "audit": {"ref": "Sophie Martin"},
        "assertion_history": {"assertion_id": 1},
        "export_all": {"directory": str(home / "export-all")},
        "suggest_names": {"names": ["Sophie Martn"]},
        "owner_presence": {},
        "entity_duplicates": {},
        "agents": {},
        "replay": {"run_id": intro_run},
    }
    reads = {n: s for n, s in operations().items() if s.read}
    assert sorted(reads) == sorted(sample_args), "give each read operation sample arguments here"
    before = _fingerprint(paths.db_file)
    for read_only in (True, False):
        with Store.open(paths.db_file, read_only=read_only) as st:
            env = OpEnv(store=st, settings=settings, paths=paths)
            for name, spec in reads.items():
                result = spec.fn(env, **sample_args[name])
                assert result, f"{name} returned nothing: the sample arguments do not reach the data"
        assert _fingerprint(paths.db_file) == before, f"a read operation wrote (read_only={read_only})"

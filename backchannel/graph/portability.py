"""`backchannel export --all` and `backchannel import all`: the whole memory in open
formats, and back.

The export is a folder:
- `memory.jsonl`: the documented import format (docs/import-format.md): entity lines
  (with aliases; the owner as "me"), assertion lines with their evidence (quote, the
  whole utterance, speaker, date, source), superseded ones included with their
  `superseded_at`; then `proposal`, `feedback` and `suppression` lines (docs/privacy.md).
- `parquet/<table>.parquet`: every table as it is, for analysis (DuckDB, pandas, Spark).

`import_all` reads `memory.jsonl` into a store (a fresh home, typically): entities and
assertions through the ordinary importer (validated first, all or nothing), then the
proposals, the owner's verdicts on them and the suppressions those verdicts made, with
their entity references mapped to the new ids. Importing the same file twice adds nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from backchannel.graph.import_rows import OWNER_REF
from backchannel.graph.importer import ImportFailed, assertion_line, import_jsonl
from backchannel.memory import entities as ents
from backchannel.memory.store import Store
from backchannel.memory.text import norm_name

EXTRA_TYPES = ("proposal", "feedback", "suppression")
PARQUET_TABLES = (
    "sources",
    "utterances",
    "entities",
    "aliases",
    "entity_merges",
    "assertions",
    "assertion_changes",
    "proposals",
    "feedback",
    "suppressions",
    "outbox",
    "runs",
    "events",
    "model_calls",
    "calendar_events",
    "signals",
    "consent_withdrawals",
)


def _iso(v: Any) -> Any:
    return v.isoformat() if hasattr(v, "isoformat") else v


def _refs(store: Store) -> dict[int, str]:
    owner = ents.owner(store)
    ref: dict[int, str] = {owner.id: OWNER_REF} if owner else {}
    used = set(ref.values())
    for e in ents.all_entities(store):
        if e["id"] in ref:
            continue
        key = f"{e['kind']}:{e['name']}"
        ref[e["id"]] = key if key not in used else f"{key}#{e['id']}"
        used.add(ref[e["id"]])
    return ref


def export_lines(store: Store, scopes: list[str] | None = None) -> list[str]:
    """The memory as import lines. `scopes`: only assertions from sources of these scopes
    (and those with no source, such as the owner's corrections)."""
    ref = _refs(store)
    lines = []
    for e in ents.all_entities(store):
        if ref.get(e["id"]) == OWNER_REF:
            continue
        lines.append(
            {
                "type": "entity",
                "id": ref[e["id"]],
                "kind": e["kind"],
                "name": e["name"],
                "aliases": [a for a in (e["aliases"] or []) if a != e["name"]],
            }
        )
    where = "" if scopes is None else " AND (a.source_id IS NULL OR list_contains($1, s.scope))"
    rows = store.query(
        f"""SELECT a.id, a.subject_id, a.predicate, a.object_id, a.object_literal, a.qualifier, a.speaker_id,
                  a.said_at, a.valid_from, a.valid_to, a.confidence, a.modality, a.quote, a.date_phrase,
                  a.superseded_at, a.extractor, s.title AS source, s.meeting_date AS source_date, u.text
           FROM assertions a LEFT JOIN sources s ON s.id = a.source_id
           LEFT JOIN utterances u ON u.source_id = a.source_id AND u.idx = a.utterance_idx
           WHERE true{where} ORDER BY a.id""",
        [scopes] if scopes is not None else [],
    )
    for r in rows:
        if r["subject_id"] not in ref or (r["object_id"] is not None and r["object_id"] not in ref):
            continue  # points at a merged-away entity; its live twin carries the fact
        line = {"type": "assertion", "id": f"backchannel:{r['id']}", **assertion_line(r, ref)}
        line["extractor"] = r["extractor"]
        if r["superseded_at"] is not None:
            line["superseded_at"] = r["superseded_at"].isoformat()
        lines.append(line)
    if scopes is None:  # proposals quote evidence of any scope: carried only by an unscoped export
        lines += _feedback_lines(store, ref)
    return [json.dumps(x, ensure_ascii=False, default=str) for x in lines]


def _feedback_lines(store: Store, ref: dict[int, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in store.query(
        "SELECT id, kind, entity_ids, title, body, score, why, CAST(evidence AS VARCHAR) AS evidence,"
        " CAST(action AS VARCHAR) AS action, status, created_at, updated_at FROM proposals ORDER BY id"
    ):
        out.append(
            {
                "type": "proposal",
                "id": p["id"],
                "kind": p["kind"],
                "entities": [ref[i] for i in p["entity_ids"] if i in ref],
                "title": p["title"],
                "body": p["body"],
                "score": p["score"],
                "why": p["why"],
                "evidence": json.loads(p["evidence"] or "[]"),
                "action": json.loads(p["action"]) if p["action"] else None,
                "status": p["status"],
                "created_at": _iso(p["created_at"]),
                "updated_at": _iso(p["updated_at"]),
            }
        )
    for f in store.query(
        "SELECT id, proposal_id, verdict, reason, scope, until, via, created_at FROM feedback ORDER BY id"
    ):
        out.append(
            {
                "type": "feedback",
                "id": f["id"],
                "proposal": f["proposal_id"],
                "verdict": f["verdict"],
                "reason": f["reason"],
                "scope": f["scope"],
                "until": _iso(f["until"]),
                "via": f["via"],
                "created_at": _iso(f["created_at"]),
            }
        )
    for s in store.query(
        "SELECT id, scope, proposal_id, kind, entity_ids, reason, until, created_at, lifted_at "
        "FROM suppressions ORDER BY id"
    ):
        out.append(
            {
                "type": "suppression",
                "id": s["id"],
                "scope": s["scope"],
                "proposal": s["proposal_id"],
                "kind": s["kind"],
                "entities": [ref[i] for i in s["entity_ids"] if i in ref],
                "reason": s["reason"],
                "until": _iso(s["until"]),
                "created_at": _iso(s["created_at"]),
                "lifted_at": _iso(s["lifted_at"]),
            }
        )
    return out


# With `[scope] export` set, these tables are written with only the rows of the allowed scopes,
# and the tables whose rows can quote any scope (proposals, the run log) are left out.
_SCOPED_TABLES = {
    "sources": "SELECT * FROM sources WHERE list_contains({scopes}, scope)",
    "utterances": "SELECT u.* FROM utterances u JOIN sources s ON s.id = u.source_id WHERE list_contains({scopes}, s.scope)",
    "assertions": "SELECT a.* FROM assertions a LEFT JOIN sources s ON s.id = a.source_id "
    "WHERE a.source_id IS NULL OR list_contains({scopes}, s.scope)",
}
_UNSCOPED_ONLY = {
    "proposals",
    "feedback",
    "suppressions",
    "outbox",
    "runs",
    "events",
    "model_calls",
    "assertion_changes",
}


def _sql_list(values: list[str]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]::VARCHAR[]"


def export_all(store: Store, directory: Path, scopes: list[str] | None = None) -> dict[str, Any]:
    """Write `directory`/memory.jsonl and `directory`/parquet/*.parquet; returns counts.
    `scopes` (`[scope] export`): only what those scopes may show (see _SCOPED_TABLES)."""
    directory = Path(directory)
    made = [d for d in (directory, directory / "parquet") if not d.exists()]
    (directory / "parquet").mkdir(parents=True, exist_ok=True)
    for d in made:  # folders we create are the owner's only; an existing one keeps its mode
        d.chmod(0o700)
    lines = export_lines(store, scopes)
    path = directory / "memory.jsonl"
    fd = path.open("w", encoding="utf-8")
    with fd:
        for line in lines:
            fd.write(line + "\n")
    path.chmod(0o600)
    tables = {}
    for table in PARQUET_TABLES:
        if scopes is not None and table in _UNSCOPED_ONLY:
            continue
        if store.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]):
            target = directory / "parquet" / f"{table}.parquet"
            query = f"SELECT * FROM {table}"
            if scopes is not None and table in _SCOPED_TABLES:
                query = _SCOPED_TABLES[table].format(scopes=_sql_list(scopes))
            store.con.execute(f"COPY ({query}) TO '{target}' (FORMAT parquet)")
            target.chmod(0o600)
            tables[table] = int(store.scalar(f"SELECT count(*) FROM ({query})") or 0)
    kinds: dict[str, int] = {}
    for line in lines:
        t = json.loads(line)["type"]
        kinds[t] = kinds.get(t, 0) + 1
    return {"directory": str(directory), "jsonl": str(path), "lines": kinds, "parquet": tables}


def import_all(
    store: Store, lines: Iterable[str], *, owner_name: str, owner_aliases: list[str], source_file: str | None = None
) -> dict[str, Any]:
    """Import an `export --all` file (see the module doc). Raises ImportFailed on a bad line."""
    core, extra, problems = [], [], []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
        except ValueError:
            core.append(raw)  # the importer names the problem with its line
            continue
        if isinstance(d, dict) and d.get("type") in EXTRA_TYPES:
            extra.append((n, d))
            core.append("")  # keep the importer's line numbers the file's
        else:
            core.append(raw)
    refs: dict[str, tuple[str, str] | None] = {OWNER_REF: None}
    for raw in core:
        d = json.loads(raw) if raw.strip().startswith("{") else None
        if isinstance(d, dict) and d.get("type") == "entity":
            refs[str(d.get("id"))] = (str(d.get("name")), str(d.get("kind") or "person"))
    for n, d in extra:
        for r in d.get("entities") or []:
            if str(r) not in refs:
                problems.append(f"line {n}: entity {r!r} is not declared in the file")
    if problems:
        raise ImportFailed(problems)
    with store.batch():  # one transaction: the importer's joins it, so a failure anywhere keeps nothing
        report = import_jsonl(store, core, owner_name=owner_name, owner_aliases=owner_aliases, source_file=source_file)
        out = {**report.to_dict(), "proposals_imported": 0, "feedback_imported": 0, "suppressions_imported": 0}
        ids = _entity_ids(store, refs)
        pmap: dict[str, str] = {}
        for _, d in extra:
            if d["type"] == "proposal":
                pmap[str(d["id"])] = _proposal(store, d, ids, out)
        for _, d in extra:
            if d["type"] == "feedback":
                _feedback(store, d, pmap, out)
            elif d["type"] == "suppression":
                _suppression(store, d, ids, pmap, out)
    return out


def _entity_ids(store: Store, refs: dict[str, tuple[str, str] | None]) -> dict[str, int]:
    owner = ents.owner(store)
    out: dict[str, int] = {}
    for ref, spec in refs.items():
        if spec is None:
            if owner:
                out[ref] = owner.id
            continue
        name, kind = spec
        eid = store.scalar(
            "SELECT id FROM entities WHERE norm = ? AND kind = ? AND merged_into IS NULL ORDER BY id LIMIT 1",
            [norm_name(name), kind],
        )
        if eid is not None:
            out[ref] = int(eid)
    return out


def _once(store: Store, key: str) -> bool:
    return store.append_event("import.row", {"key": key}, key=key) is not None


def _proposal(store: Store, d: dict[str, Any], ids: dict[str, int], out: dict[str, Any]) -> str:
    key = f"import:proposal:{d['id']}:{d.get('created_at')}"
    known = store.scalar("SELECT CAST(data AS VARCHAR) FROM events WHERE key = ?", [key + ":id"])
    if known:
        return str(json.loads(known)["id"])
    pid = str(d["id"])
    if store.scalar("SELECT 1 FROM proposals WHERE id = ?", [pid]) or not re.fullmatch(r"P-\d+", pid):
        pid = f"P-{store.scalar('SELECT nextval(?)', ['proposal_numbers'])}"
    # The numbering goes on after the imported ones: a new proposal never takes an imported id.
    while int(store.scalar("SELECT nextval('proposal_numbers')")) < int(pid.split("-")[1]):
        pass
    entity_ids = sorted(ids[str(r)] for r in d.get("entities") or [] if str(r) in ids)
    evidence = [dict(e) for e in d.get("evidence") or [] if isinstance(e, dict)]
    for e in evidence:  # the cited assertions' new ids, through the importer's keys
        new = store.scalar(
            "SELECT assertion_id FROM import_keys WHERE key = ?", [f"import:backchannel:{e.get('assertion_id')}"]
        )
        if new is not None:
            e["assertion_id"] = int(new)
    store.con.execute(
        """INSERT INTO proposals (id, run_id, dedupe_key, kind, entity_ids, title, body, score, why, evidence, action,
                                  status, created_at, updated_at) VALUES (?, 'import', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [
            pid,
            f"{d['kind']}:{','.join(map(str, entity_ids))}",
            d["kind"],
            entity_ids,
            d.get("title") or "",
            d.get("body") or "",
            float(d.get("score") or 0),
            d.get("why"),
            json.dumps(evidence),
            json.dumps(d["action"]) if d.get("action") else None,
            d.get("status") or "pending",
            d.get("created_at"),
            d.get("updated_at") or d.get("created_at"),
        ],
    )
    store.append_event("import.row", {"id": pid}, key=key + ":id")
    out["proposals_imported"] += 1
    return pid


def _feedback(store: Store, d: dict[str, Any], pmap: dict[str, str], out: dict[str, Any]) -> None:
    pid = pmap.get(str(d.get("proposal")))
    if pid is None or not _once(store, f"import:feedback:{d.get('id')}:{d.get('created_at')}"):
        return
    store.con.execute(
        "INSERT INTO feedback (proposal_id, verdict, reason, scope, until, via, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            pid,
            d["verdict"],
            d.get("reason"),
            d.get("scope"),
            d.get("until"),
            d.get("via") or "import",
            d.get("created_at"),
        ],
    )
    out["feedback_imported"] += 1


def _suppression(
    store: Store, d: dict[str, Any], ids: dict[str, int], pmap: dict[str, str], out: dict[str, Any]
) -> None:
    if not _once(store, f"import:suppression:{d.get('id')}:{d.get('created_at')}"):
        return
    entity_ids = sorted(ids[str(r)] for r in d.get("entities") or [] if str(r) in ids)
    store.con.execute(
        "INSERT INTO suppressions (scope, proposal_id, kind, entity_ids, reason, until, created_at, "
        "lifted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            d["scope"],
            pmap.get(str(d.get("proposal"))),
            d.get("kind"),
            entity_ids,
            d.get("reason"),
            d.get("until"),
            d.get("created_at"),
            d.get("lifted_at"),
        ],
    )
    out["suppressions_imported"] += 1

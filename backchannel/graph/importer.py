"""Import entities and assertions with evidence from JSONL (docs/import-format.md).

The whole file is validated first; any problem fails the import with every bad
line named and nothing written. Then everything is written in one transaction.
Entities match existing ones by name or alias (and kind); assertion lines are
idempotent: a line's "id", else the hash of its content, is remembered in
`import_keys`, so importing a file twice (or a file that grew) adds only what is new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from backchannel.extractors.result import MODALITIES, PREDICATES
from backchannel.memory import assertions as assertion_table, entities as ents, sources as sources_table
from backchannel.memory.store import Store, utcnow
from backchannel.memory.trust import trust_score
from backchannel.memory.text import norm_name
from backchannel.timeutil import as_naive_utc

KINDS = ("person", "organisation", "role")
OWNER_REF = "me"
LITERAL_PREDICATES = {"has_title", "committed_to"}
MAX_PROBLEMS = 50


class ImportFailed(Exception):
    """The file has problems; `problems` names each bad line. Nothing was written."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        super().__init__("; ".join(problems[:MAX_PROBLEMS]) + more)


@dataclass
class ImportReport:
    entities_created: int = 0
    entities_matched: int = 0
    assertions_imported: int = 0
    assertions_skipped: int = 0  # already imported (same id or content)
    sources_created: int = 0
    assertion_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(vars(self))
        d["assertion_ids"] = self.assertion_ids[:1000]
        return d


def _date(value: Any, what: str, problems: list[str], line: int, *, with_time: bool = False) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        problems.append(f"line {line}: {what} must be an ISO date string")
        return None
    try:
        if with_time:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
            dt = as_naive_utc(dt)  # stored as naive UTC, like every TIMESTAMP column
            return dt.isoformat(sep=" ")
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        problems.append(f"line {line}: {what} {value!r} is not an ISO date")
        return None


def _check_entity(d: dict[str, Any], line: int, problems: list[str]) -> None:
    if not isinstance(d.get("id"), (str, int)) or str(d.get("id")) == "":
        problems.append(f"line {line}: entity needs an \"id\" (a reference used by assertion lines)")
    if str(d.get("id")) == OWNER_REF:
        problems.append(f"line {line}: entity id {OWNER_REF!r} is reserved for the owner")
    if not isinstance(d.get("name"), str) or not norm_name(d.get("name") or ""):
        problems.append(f"line {line}: entity needs a \"name\"")
    if d.get("kind", "person") not in KINDS:
        problems.append(f"line {line}: entity kind {d.get('kind')!r} is not one of {', '.join(KINDS)}")
    if not isinstance(d.get("aliases", []), list) or not all(isinstance(a, str) for a in d.get("aliases", [])):
        problems.append(f"line {line}: \"aliases\" must be a list of strings")


def _check_assertion(d: dict[str, Any], line: int, refs: set[str], problems: list[str]) -> None:
    def ref_ok(field_name: str, required: bool) -> None:
        v = d.get(field_name) if field_name != "speaker" else (d.get("evidence") or {}).get("speaker")
        if v is None:
            if required:
                problems.append(f"line {line}: assertion needs \"{field_name}\"")
            return
        if str(v) not in refs:
            problems.append(f"line {line}: {field_name} {v!r} is not an entity id declared in the file (or \"me\")")

    ref_ok("subject", True)
    pred = d.get("predicate")
    if not isinstance(pred, str) or pred not in PREDICATES:  # a list is not even hashable
        problems.append(f"line {line}: predicate {pred!r} is not one of {', '.join(PREDICATES)}")
    if isinstance(pred, str) and pred in LITERAL_PREDICATES:
        if not isinstance(d.get("object_literal"), str) or not d["object_literal"].strip():
            problems.append(f"line {line}: {pred} needs \"object_literal\" (a string)")
    elif pred is not None:
        ref_ok("object", True)
    if d.get("modality", "stated") not in MODALITIES:
        problems.append(f"line {line}: modality {d.get('modality')!r} is not one of {', '.join(MODALITIES)}")
    conf = d.get("confidence", 0.7)
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
        problems.append(f"line {line}: confidence must be a number from 0 to 1")
    ev = d.get("evidence")
    if ev is None:
        return
    if not isinstance(ev, dict):
        problems.append(f"line {line}: \"evidence\" must be an object")
        return
    ref_ok("speaker", False)
    quote, text = ev.get("quote"), ev.get("text")
    if quote is not None and (not isinstance(quote, str) or not quote.strip()):
        problems.append(f"line {line}: evidence quote must be a non-empty string")
    if text is not None and (not isinstance(text, str) or (isinstance(quote, str) and quote not in text)):
        problems.append(f"line {line}: evidence quote does not occur verbatim in evidence text")


def parse_lines(lines: Iterable[str]) -> tuple[dict[str, tuple[int, dict]], list[tuple[int, dict]]]:
    """Validate every line; returns ({ref: (line, entity)}, [(line, assertion)]) or raises ImportFailed."""
    problems: list[str] = []
    entities: dict[str, tuple[int, dict]] = {}
    assertions: list[tuple[int, dict]] = []
    assertion_ids: dict[str, int] = {}  # an id twice in one file: which content is meant?
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc.msg} at column {exc.colno})")
            continue
        except (ValueError, RecursionError) as exc:  # nested too deep; an integer of 5000 digits
            problems.append(f"line {n}: not usable JSON ({type(exc).__name__}: {str(exc)[:80]})")
            continue
        if not isinstance(d, dict):
            problems.append(f"line {n}: each line must be a JSON object")
            continue
        kind = d.get("type")
        if kind == "entity":
            _check_entity(d, n, problems)
            ref = str(d.get("id"))
            if ref in entities:
                problems.append(f"line {n}: entity id {ref!r} already declared on line {entities[ref][0]}")
            entities[ref] = (n, d)
        elif kind == "assertion":
            key = d.get("id")
            if key not in (None, ""):
                if str(key) in assertion_ids:
                    problems.append(f"line {n}: assertion id {key!r} already used on line {assertion_ids[str(key)]}")
                assertion_ids.setdefault(str(key), n)
            assertions.append((n, d))
        else:
            problems.append(f"line {n}: \"type\" must be \"entity\" or \"assertion\", got {kind!r}")
    refs = set(entities) | {OWNER_REF}
    for n, d in assertions:
        _check_assertion(d, n, refs, problems)
        for key in ("valid_from", "valid_to"):
            d[key] = _date(d.get(key), key, problems, n)
        ev = d.get("evidence") if isinstance(d.get("evidence"), dict) else {}
        if ev:
            ev["said_at"] = _date(ev.get("said_at"), "evidence said_at", problems, n, with_time=True)
            ev["source_date"] = _date(ev.get("source_date"), "evidence source_date", problems, n, with_time=True)
    if problems:
        # In file order (the checks run in two passes); stable within a line.
        problems.sort(key=lambda p: int(p.split(":", 1)[0].split()[1]))
        raise ImportFailed(problems)
    return entities, assertions


def line_key(d: dict[str, Any]) -> str:
    """The idempotency key of an assertion line: its "id", else its content's hash."""
    if d.get("id") not in (None, ""):
        return f"import:{d['id']}"
    canonical = json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "import:sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:40]


def _resolve_entities(store: Store, specs: dict[str, tuple[int, dict]], owner: int,
                      report: ImportReport) -> dict[str, int]:
    known: dict[tuple[str, str], int] = {}
    for eid, kind, n in store.con.execute(
            "SELECT e.id, e.kind, a.norm FROM entities e JOIN aliases a ON a.entity_id = e.id"
            " WHERE e.merged_into IS NULL UNION SELECT id, kind, norm FROM entities WHERE merged_into IS NULL"
            " ORDER BY 1 DESC").fetchall():
        known[(n, kind)] = int(eid)  # lowest id wins: rows come highest first
    out = {OWNER_REF: owner}
    for ref, (_, d) in specs.items():
        kind = d.get("kind", "person")
        names = [d["name"], *d.get("aliases", [])]
        if d.get("is_owner"):
            eid = owner
        else:
            eid = next((known[(norm_name(n), kind)] for n in names if (norm_name(n), kind) in known), None)
        if eid is None:
            eid = ents.create(store, d["name"], kind, source_id=None).id
            report.entities_created += 1
        else:
            report.entities_matched += 1
        for n in names:
            ents.add_alias(store, eid, n)
            known[(norm_name(n), kind)] = eid
        out[ref] = eid
    return out


def _source_for(store: Store, ev: dict[str, Any], cache: dict[tuple, str], report: ImportReport) -> str | None:
    title = ev.get("source")
    if not title and not ev.get("quote"):
        return None
    title = str(title or "import")
    key = (title, ev.get("source_date"))
    if key in cache:
        return cache[key]
    content_hash = hashlib.sha256(f"import\x1f{title}\x1f{ev.get('source_date') or ''}".encode()).hexdigest()
    sid = "S" + content_hash[:12]
    if not sources_table.exists(store, sid):
        sources_table.insert_imported(store, sid, content_hash=content_hash, title=title,
                                      meeting_date=ev.get("source_date") or ev.get("said_at"))
        report.sources_created += 1
    cache[key] = sid
    return sid


def import_jsonl(store: Store, lines: Iterable[str], *, owner_name: str = "Me",
                 owner_aliases: list[str] | tuple[str, ...] = (), source_file: str | None = None) -> ImportReport:
    """Validate then import `lines` in one transaction. Raises ImportFailed on any problem."""
    specs, assertion_lines = parse_lines(lines)
    report = ImportReport()
    with store.transaction():
        owner = ents.ensure_owner(store, owner_name, list(owner_aliases)).id
        ref_ids = _resolve_entities(store, specs, owner, report)
        keys = [line_key(d) for _, d in assertion_lines]
        seen = {r[0] for r in store.con.execute(
            "SELECT key FROM import_keys WHERE list_contains(?, key)", [keys]).fetchall()} if keys else set()
        todo, fresh = [], set()
        for (n, d), k in zip(assertion_lines, keys):
            if k in seen or k in fresh:
                report.assertions_skipped += 1
                continue
            fresh.add(k)
            todo.append((n, d, k))
        if todo:
            names = {ref: d["name"] for ref, (_, d) in specs.items()}
            names[OWNER_REF] = owner_name
            _write_assertions(store, todo, ref_ids, names, source_file, report)
        store.append_event("import.assertions", {
            "file": source_file, "imported": report.assertions_imported, "skipped": report.assertions_skipped,
            "entities_created": report.entities_created, "entities_matched": report.entities_matched})
    return report


def _write_assertions(store: Store, todo: list[tuple[int, dict, str]], ref_ids: dict[str, int],
                      names: dict[str, str], source_file: str | None, report: ImportReport) -> None:
    ids = [r[0] for r in store.con.execute(
        "SELECT nextval('assertion_ids') FROM range(?)", [len(todo)]).fetchall()]
    sources: dict[tuple, str] = {}
    next_idx: dict[str, int] = {}
    utter, rows = [], []
    for aid, (n, d, _) in zip(ids, todo):
        ev = d.get("evidence") or {}
        sid = _source_for(store, ev, sources, report) if ev else None
        quote = ev.get("quote")
        spk = ref_ids[str(ev["speaker"])] if ev.get("speaker") is not None else None
        uidx = start = end = None
        if sid and quote:
            if sid not in next_idx:
                next_idx[sid] = int(store.scalar(
                    "SELECT coalesce(max(idx) + 1, 0) FROM utterances WHERE source_id = ?", [sid]))
            uidx = next_idx[sid]
            next_idx[sid] += 1
            text = ev.get("text") or quote
            start = text.index(quote)
            end = start + len(quote)
            label = names.get(str(ev.get("speaker"))) if ev.get("speaker") is not None else None
            utter.append((sid, uidx, label, spk, None, None, text))
        obj = d.get("object")
        rows.append((
            aid, ref_ids[str(d["subject"])], d["predicate"], ref_ids[str(obj)] if obj is not None else None,
            d.get("object_literal"), d.get("qualifier"), spk, ev.get("said_at"), d.get("valid_from"),
            d.get("valid_to"), utcnow(), float(d.get("confidence", 0.7)),
            d.get("modality") or ("commitment" if d["predicate"] == "committed_to" else "stated"),
            sid, uidx, start, end, quote, d.get("date_phrase"), "import",
            trust_score(float(d.get("confidence", 0.7)), ["imported"]), ["imported"]))
    assertion_table.insert_utterances(store, utter)
    assertion_table.insert_assertions(
        store,
        ["id", "subject_id", "predicate", "object_id", "object_literal", "qualifier", "speaker_id", "said_at",
         "valid_from", "valid_to", "recorded_at", "confidence", "modality", "source_id", "utterance_idx",
         "span_start", "span_end", "quote", "date_phrase", "extractor", "trust", "trust_reasons"], rows)
    now = utcnow()
    store.insert_rows("import_keys", ["key", "assertion_id", "source_file", "line", "imported_at"],
                      [(k, aid, source_file, n, now) for aid, (n, _, k) in zip(ids, todo)])
    report.assertions_imported += len(todo)
    report.assertion_ids.extend(ids)
    touched = sorted(set(sources.values()))
    if touched:  # the counts `backchannel sources` lists, kept true as the transcript writer keeps them
        sources_table.recount(store, touched)
    try:
        from backchannel.memory.supersede import apply as supersede
    except ImportError:  # supersession arrives with ingest; without it nothing is closed
        return
    supersede(store, ids)


__all__ = ["ImportFailed", "ImportReport", "export_jsonl", "import_jsonl", "line_key", "parse_lines"]


def export_jsonl(store: Store) -> list[str]:
    """Every live entity and live assertion as import lines (the inverse of import_jsonl)."""
    lines = []
    owner = ents.owner(store)
    ref = {owner.id: OWNER_REF} if owner else {}
    used = set(ref.values())
    for e in ents.all_entities(store):
        if owner and e["id"] == owner.id:
            continue
        key = f"{e['kind']}:{e['name']}"  # readable, and stable across stores
        ref[e["id"]] = key if key not in used else f"{key}#{e['id']}"
        used.add(ref[e["id"]])
        lines.append(json.dumps({"type": "entity", "id": ref[e["id"]], "kind": e["kind"], "name": e["name"],
                                 "aliases": [a for a in (e["aliases"] or []) if a != e["name"]]},
                                ensure_ascii=False))
    rows = store.query(
        """SELECT a.id, a.subject_id, a.predicate, a.object_id, a.object_literal, a.qualifier, a.speaker_id,
                  a.said_at, a.valid_from, a.valid_to, a.confidence, a.modality, a.quote, a.date_phrase,
                  s.title AS source, s.meeting_date AS source_date, u.text
           FROM assertions a LEFT JOIN sources s ON s.id = a.source_id
           LEFT JOIN utterances u ON u.source_id = a.source_id AND u.idx = a.utterance_idx
           WHERE a.superseded_at IS NULL ORDER BY a.id""")
    for r in rows:
        if r["subject_id"] not in ref or (r["object_id"] is not None and r["object_id"] not in ref):
            continue  # points at a merged-away entity; its live twin carries the fact
        line: dict[str, Any] = {"type": "assertion", "subject": ref[r["subject_id"]], "predicate": r["predicate"]}
        if r["object_id"] is not None:
            line["object"] = ref[r["object_id"]]
        for k in ("object_literal", "qualifier", "date_phrase"):
            if r[k] is not None:
                line[k] = r[k]
        for k in ("valid_from", "valid_to"):
            if r[k] is not None:
                line[k] = r[k].isoformat()
        line["confidence"] = r["confidence"]
        line["modality"] = r["modality"]
        ev: dict[str, Any] = {}
        if r["quote"] is not None:
            ev["quote"] = r["quote"]
            if r["text"] and r["text"] != r["quote"]:
                ev["text"] = r["text"]
        if r["speaker_id"] in ref:
            ev["speaker"] = ref[r["speaker_id"]]
        if r["said_at"] is not None:
            ev["said_at"] = r["said_at"].isoformat()
        if r["source"] is not None:
            ev["source"] = r["source"]
        if r["source_date"] is not None:
            ev["source_date"] = r["source_date"].isoformat()
        if ev:
            line["evidence"] = ev
        lines.append(json.dumps(line, ensure_ascii=False))
    return lines

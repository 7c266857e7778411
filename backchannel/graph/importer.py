"""Import entities and assertions with evidence from JSONL (docs/import-format.md).

The whole file is validated first, each line into its model (graph/import_rows.py);
any problem fails the import with every bad line named and nothing written. Then
everything is written in one transaction.
Entities match existing ones by name or alias (and kind); assertion lines are
idempotent: a line's "id", else the hash of its content, is remembered in
`import_keys`, so importing a file twice (or a file that grew) adds only what is new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from backchannel.graph.import_rows import OWNER_REF, AssertionRow, EntityRow, EvidenceRow, content, problems_of
from backchannel.memory import assertions as assertion_table
from backchannel.memory import entities as ents
from backchannel.memory import sources as sources_table
from backchannel.memory.store import Store, utcnow
from backchannel.memory.supersede import apply as supersede
from backchannel.memory.text import norm_name
from backchannel.memory.trust import trust_score

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


def parse_lines(lines: Iterable[str]) -> tuple[dict[str, tuple[int, EntityRow]], list[tuple[int, AssertionRow, str]]]:
    """Validate every line into its model; returns ({ref: (line, entity)}, [(line, assertion, key)])
    or raises ImportFailed naming every problem with its line (and field)."""
    problems: list[str] = []
    entities: dict[str, tuple[int, EntityRow]] = {}
    assertions: list[tuple[int, AssertionRow, str]] = []
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
            ref = str(d.get("id"))
            if ref in entities:
                problems.append(f"line {n}: entity id {ref!r} already declared on line {entities[ref][0]}")
            try:
                entities[ref] = (n, EntityRow.model_validate(d))
            except ValidationError as exc:
                problems += problems_of(exc, n, "entity")
        elif kind == "assertion":
            key = d.get("id")
            if key not in (None, ""):
                if str(key) in assertion_ids:
                    problems.append(f"line {n}: assertion id {key!r} already used on line {assertion_ids[str(key)]}")
                assertion_ids.setdefault(str(key), n)
            try:
                row = AssertionRow.model_validate(d)
            except ValidationError as exc:
                problems += problems_of(exc, n, "assertion")
                continue
            assertions.append((n, row, line_key(content(d, row))))
        else:
            problems.append(f'line {n}: "type" must be "entity" or "assertion", got {kind!r}')
    refs = set(entities) | {OWNER_REF}
    for n, row, _ in assertions:
        for field_name, v in row.refs().items():
            if str(v) not in refs:
                problems.append(f'line {n}: {field_name} {v!r} is not an entity id declared in the file (or "me")')
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


def _resolve_entities(
    store: Store, specs: dict[str, tuple[int, EntityRow]], owner: int, report: ImportReport
) -> dict[str, int]:
    known: dict[tuple[str, str], int] = {}
    for eid, kind, n in store.con.execute(
        "SELECT e.id, e.kind, a.norm FROM entities e JOIN aliases a ON a.entity_id = e.id"
        " WHERE e.merged_into IS NULL UNION SELECT id, kind, norm FROM entities WHERE merged_into IS NULL"
        " ORDER BY 1 DESC"
    ).fetchall():
        known[(n, kind)] = int(eid)  # lowest id wins: rows come highest first
    out = {OWNER_REF: owner}
    for ref, (_, d) in specs.items():
        kind = d.kind
        names = [d.name, *d.aliases]
        if d.is_owner:
            eid = owner
        else:
            eid = next((known[(norm_name(n), kind)] for n in names if (norm_name(n), kind) in known), None)
        if eid is None:
            eid = ents.create(store, d.name, kind, source_id=None).id
            report.entities_created += 1
        else:
            report.entities_matched += 1
        for n in names:
            ents.add_alias(store, eid, n)
            known[(norm_name(n), kind)] = eid
        out[ref] = eid
    return out


def _source_for(store: Store, ev: EvidenceRow, cache: dict[tuple, str], report: ImportReport) -> str | None:
    if not ev.source and not ev.quote:
        return None
    title = ev.source or "import"
    key = (title, ev.source_date)
    if key in cache:
        return cache[key]
    content_hash = hashlib.sha256(f"import\x1f{title}\x1f{ev.source_date or ''}".encode()).hexdigest()
    sid = "S" + content_hash[:12]
    if not sources_table.exists(store, sid):
        sources_table.insert_imported(
            store, sid, content_hash=content_hash, title=title, meeting_date=ev.source_date or ev.said_at
        )
        report.sources_created += 1
    cache[key] = sid
    return sid


def import_jsonl(
    store: Store,
    lines: Iterable[str],
    *,
    owner_name: str = "Me",
    owner_aliases: list[str] | tuple[str, ...] = (),
    source_file: str | None = None,
) -> ImportReport:
    """Validate then import `lines` in one transaction. Raises ImportFailed on any problem."""
    specs, assertion_lines = parse_lines(lines)
    report = ImportReport()
    with store.transaction():
        owner = ents.ensure_owner(store, owner_name, list(owner_aliases)).id
        ref_ids = _resolve_entities(store, specs, owner, report)
        keys = [k for _, _, k in assertion_lines]
        seen = (
            {
                r[0]
                for r in store.con.execute("SELECT key FROM import_keys WHERE list_contains(?, key)", [keys]).fetchall()
            }
            if keys
            else set()
        )
        todo, fresh = [], set()
        for n, row, k in assertion_lines:
            if k in seen or k in fresh:
                report.assertions_skipped += 1
                continue
            fresh.add(k)
            todo.append((n, row, k))
        if todo:
            names = {ref: d.name for ref, (_, d) in specs.items()}
            names[OWNER_REF] = owner_name
            _write_assertions(store, todo, ref_ids, names, source_file, report)
        store.append_event(
            "import.assertions",
            {
                "file": source_file,
                "imported": report.assertions_imported,
                "skipped": report.assertions_skipped,
                "entities_created": report.entities_created,
                "entities_matched": report.entities_matched,
            },
        )
    return report


def _write_assertions(
    store: Store,
    todo: list[tuple[int, AssertionRow, str]],
    ref_ids: dict[str, int],
    names: dict[str, str],
    source_file: str | None,
    report: ImportReport,
) -> None:
    ids = [r[0] for r in store.con.execute("SELECT nextval('assertion_ids') FROM range(?)", [len(todo)]).fetchall()]
    sources: dict[tuple, str] = {}
    next_idx: dict[str, int] = {}
    utter, rows = [], []
    for aid, (_line, d, _) in zip(ids, todo):
        ev = d.evidence or EvidenceRow()
        sid = _source_for(store, ev, sources, report)
        quote = ev.quote
        spk = ref_ids[str(ev.speaker)] if ev.speaker is not None else None
        uidx = start = end = None
        if sid and quote:
            if sid not in next_idx:
                next_idx[sid] = int(
                    store.scalar("SELECT coalesce(max(idx) + 1, 0) FROM utterances WHERE source_id = ?", [sid])
                )
            uidx = next_idx[sid]
            next_idx[sid] += 1
            text = ev.text or quote
            start = text.index(quote)
            end = start + len(quote)
            label = names.get(str(ev.speaker)) if ev.speaker is not None else None
            utter.append((sid, uidx, label, spk, None, None, text))
        obj = d.object
        rows.append(
            (
                aid,
                ref_ids[str(d.subject)],
                d.predicate,
                ref_ids[str(obj)] if obj is not None else None,
                d.object_literal,
                d.qualifier,
                spk,
                ev.said_at,
                d.valid_from,
                d.valid_to,
                utcnow(),
                d.confidence,
                d.stated_modality(),
                sid,
                uidx,
                start,
                end,
                quote,
                d.date_phrase,
                d.extractor or "import",
                trust_score(d.confidence, ["imported"]),
                ["imported"],
                d.superseded_at,
            )
        )
    assertion_table.insert_utterances(store, utter)
    assertion_table.insert_assertions(
        store,
        [
            "id",
            "subject_id",
            "predicate",
            "object_id",
            "object_literal",
            "qualifier",
            "speaker_id",
            "said_at",
            "valid_from",
            "valid_to",
            "recorded_at",
            "confidence",
            "modality",
            "source_id",
            "utterance_idx",
            "span_start",
            "span_end",
            "quote",
            "date_phrase",
            "extractor",
            "trust",
            "trust_reasons",
            "superseded_at",
        ],
        rows,
    )
    now = utcnow()
    store.insert_rows(
        "import_keys",
        ["key", "assertion_id", "source_file", "line", "imported_at"],
        [(k, aid, source_file, n, now) for aid, (n, _, k) in zip(ids, todo)],
    )
    report.assertions_imported += len(todo)
    report.assertion_ids.extend(ids)
    touched = sorted(set(sources.values()))
    if touched:  # the counts `backchannel sources` lists, kept true as the transcript writer keeps them
        sources_table.recount(store, touched)
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
        lines.append(
            json.dumps(
                {
                    "type": "entity",
                    "id": ref[e["id"]],
                    "kind": e["kind"],
                    "name": e["name"],
                    "aliases": [a for a in (e["aliases"] or []) if a != e["name"]],
                },
                ensure_ascii=False,
            )
        )
    rows = store.query(
        """SELECT a.id, a.subject_id, a.predicate, a.object_id, a.object_literal, a.qualifier, a.speaker_id,
                  a.said_at, a.valid_from, a.valid_to, a.confidence, a.modality, a.quote, a.date_phrase,
                  s.title AS source, s.meeting_date AS source_date, u.text
           FROM assertions a LEFT JOIN sources s ON s.id = a.source_id
           LEFT JOIN utterances u ON u.source_id = a.source_id AND u.idx = a.utterance_idx
           WHERE a.superseded_at IS NULL ORDER BY a.id"""
    )
    for r in rows:
        if r["subject_id"] not in ref or (r["object_id"] is not None and r["object_id"] not in ref):
            continue  # points at a merged-away entity; its live twin carries the fact
        lines.append(json.dumps(assertion_line(r, ref), ensure_ascii=False))
    return lines


def assertion_line(r: dict[str, Any], ref: dict[int, str]) -> dict[str, Any]:
    """One assertion row (subject_id, predicate, object_id, literals, dates, confidence,
    modality, quote, utterance text, speaker_id, said_at, source, source_date) as a line of
    the import format, entities written as their `ref`. The utterance's text is carried only
    when it holds the quote verbatim, which the importer requires of it."""
    line: dict[str, Any] = {"type": "assertion", "subject": ref[r["subject_id"]], "predicate": r["predicate"]}
    if r["object_id"] is not None:
        line["object"] = ref[r["object_id"]]
    for k in ("object_literal", "qualifier", "date_phrase"):
        if r[k] is not None:
            line[k] = r[k]
    for k in ("valid_from", "valid_to"):
        if r[k] is not None:
            line[k] = r[k].isoformat()
    line["confidence"], line["modality"] = r["confidence"], r["modality"]
    ev: dict[str, Any] = {}
    if r["quote"] is not None:
        ev["quote"] = r["quote"]
        if r["text"] and r["text"] != r["quote"] and r["quote"] in r["text"]:
            ev["text"] = r["text"]
    if r["speaker_id"] in ref:
        ev["speaker"] = ref[r["speaker_id"]]
    for k in ("said_at", "source", "source_date"):
        if r[k] is not None:
            ev[k] = r[k].isoformat() if hasattr(r[k], "isoformat") else r[k]
    if ev:
        line["evidence"] = ev
    return line

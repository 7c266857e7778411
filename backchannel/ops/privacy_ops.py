"""Operations for a person's data: everything we hold about them (export), and
what erasing them would remove (forget_plan; the erasure itself is `backchannel forget`)."""

from __future__ import annotations

from typing import Any

from backchannel.memory import entities as entity_repo
from backchannel.memory import proposals
from backchannel.ops import OpEnv, OpError, op
from backchannel.ops.memory_ops import ASSERTION_COLUMNS, ASSERTION_JOINS


def find_one(env: OpEnv, ref: str) -> entity_repo.Entity:
    """An entity by id or by a name/alias that names exactly one."""
    if ref.isdigit():
        e = entity_repo.get(env.store, int(ref))
        if e is None:
            raise OpError(f"no entity with id {ref}")
        return e
    found = entity_repo.find(env.store, ref)
    if not found:
        from backchannel.ops.near_names import suggestion

        raise OpError(f"no entity named {ref!r}{suggestion(env.store, ref)} (see `backchannel entities`)")
    if len(found) > 1:
        raise OpError(
            f"{ref!r} names {len(found)} entities; use an id: "
            + ", ".join(f"{e.id} ({e.kind} {e.name})" for e in found)
        )
    return found[0]


@op(read=True)
def export_entity(env: OpEnv, ref: str, reader: str = "export") -> dict[str, Any]:
    """Everything held about one entity: aliases, merges, assertions (as subject, object
    or speaker) with evidence, utterances they spoke, proposals about them. Only from the
    source scopes `[scope] export` (or `[scope] mcp` for the MCP server) allows; the read
    is recorded in the access log (`backchannel audit`)."""
    from backchannel.ops.rights_ops import record_access

    if reader not in ("export", "mcp", "web"):
        raise OpError(f"unknown reader {reader!r}")
    e = find_one(env, ref)
    store = env.store
    ids = [e.id] + [r[0] for r in store.con.execute("SELECT id FROM entities WHERE merged_into = ?", [e.id]).fetchall()]
    scopes = None if reader == "web" else getattr(env.settings.scope, reader)  # the web app is the owner's own view
    in_scope = "($2::VARCHAR[] IS NULL OR {col} IS NULL OR list_contains($2::VARCHAR[], {scope}))"
    assertions = store.query(
        f"SELECT {ASSERTION_COLUMNS}, src.title AS source_title {ASSERTION_JOINS} WHERE (list_contains($1, a.subject_id) "
        "OR list_contains($1, a.object_id) OR list_contains($1, a.speaker_id) OR list_contains($1, a.recipient_id)) "
        f"AND {in_scope.format(col='a.source_id', scope='src.scope')} ORDER BY a.said_at NULLS LAST, a.id",
        [ids, scopes],
    )
    said = store.query(
        "SELECT u.source_id, s.title, s.meeting_date, u.idx, u.speaker, u.start_s, u.end_s, u.text "
        "FROM utterances u JOIN sources s ON s.id = u.source_id WHERE list_contains($1, u.speaker_id) "
        f"AND {in_scope.format(col='u.source_id', scope='s.scope')} "
        "ORDER BY s.meeting_date NULLS LAST, u.source_id, u.idx",
        [ids, scopes],
    )
    record_access(
        env,
        reader,
        ids,
        assertions=len(assertions),
        excerpts=sum(1 for a in assertions if a.get("quote")) if reader == "mcp" else 0,
        detail={"mcp": "MCP about", "web": "web page"}.get(reader, "export"),
    )
    return {
        "entity": {"id": e.id, "kind": e.kind, "name": e.name, "is_owner": e.is_owner},
        "aliases": store.query(
            "SELECT alias, source_id, created_at FROM aliases WHERE list_contains(?, entity_id) ORDER BY created_at",
            [ids],
        ),
        "merges": store.query(
            "SELECT m.*, k.name AS kept_name, g.name AS merged_name FROM entity_merges m "
            "LEFT JOIN entities k ON k.id = m.kept_id LEFT JOIN entities g ON g.id = m.merged_id "
            "WHERE list_contains($1, m.kept_id) OR list_contains($1, m.merged_id) ORDER BY m.id",
            [ids],
        ),
        "assertions": assertions,
        "utterances": said,
        "proposals": proposals.about_entities(store, ids),
    }


@op(read=True)
def forget_plan(env: OpEnv, ref: str) -> dict[str, Any]:
    """What `forget` would remove for one entity, changing nothing (`forget --dry-run`,
    which may run while the daemon does). The owner is refused."""
    from backchannel.memory import erasure

    e = find_one(env, ref)
    if e.is_owner:
        raise OpError("that is you (the [owner] of this memory); remove the data folder instead")
    return {"entity": {"id": e.id, "kind": e.kind, "name": e.name}, **erasure.plan(env.store, e.id).to_dict()}


def withdraw_consent(env: OpEnv, name: str, aliases: list[str] | None = None) -> dict[str, Any]:
    """Record that `name` (a person in memory, or someone not in it yet) withdrew consent,
    then erase what exists as `forget` does. Writes: the caller holds the store (the CLI,
    the daemon stopped) and rewrites the file after (erasure.rewrite)."""
    from backchannel.memory import consent, erasure

    store = env.store
    found = entity_repo.find(store, name) if not name.isdigit() else []
    e = find_one(env, name) if name.isdigit() or len(found) > 1 else (found[0] if found else None)
    if e is not None and e.is_owner:
        raise OpError("that is you (the [owner] of this memory); you cannot withdraw from your own memory")
    names = [name, *(aliases or [])]
    first_names: list[str] = []
    if e is not None:
        names += erasure.names_of(store, e.id)
        first_names = [n.split()[0] for n in names if " " in n.strip() and "@" not in n]
    with store.transaction():
        person = consent.withdraw(store, names, first_names=first_names, via="cli")
        store.append_event("consent.withdrawn", {"person": person, "names_hashed": len(set(names))})
    counts: dict[str, int] = {}
    if e is not None:
        counts = erasure.forget(store, e.id).counts
    counts.update({f"text_{k}": v for k, v in erasure.redact_names(store, names).items()})
    return {"person": person, "label": consent.label(name), "was_in_memory": e is not None, "counts": counts}


@op(read=True)
def consent_list(env: OpEnv) -> dict[str, Any]:
    """Who withdrew consent: the database's records (initials and hash counts only) and the
    names listed in `[consent] withdrawn`; and the sources whose turns were filtered."""
    from backchannel.memory import consent

    return {
        "withdrawn": consent.withdrawals(env.store),
        "configured": list(env.settings.consent.withdrawn),
        "no_capture": env.settings.consent.no_capture,
        "sources": env.store.query("SELECT id, title, consent, scope FROM sources WHERE consent <> 'ok' ORDER BY id"),
    }


@op(read=False)
def retention_sweep(env: OpEnv) -> dict[str, Any]:
    """Run the retention sweep: through the daemon's queue (it rewrites the file after the
    run), or here, resuming a sweep a crash left unfinished. In-process, the caller rewrites
    the file once the store is closed (`detail.rewrite`)."""
    if env.daemon is not None:
        return env.daemon.request_wake("retention")
    from backchannel.core.timeutil import aware_now
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.engine.retention_run import unfinished_run
    from backchannel.engine.wakes.retention import manual_wake

    resume = unfinished_run(env.store)
    if resume:
        out = run_wake_once(
            env.store, env.settings, env.paths, {"kind": "retention", "key": None, "payload": {}}, run_id=resume
        )
    else:
        out = run_wake_once(env.store, env.settings, env.paths, manual_wake(aware_now()))
    return {"ran_in_process": True, "resumed_run": resume, **out.to_dict()}


@op(read=True)
def export_all(env: OpEnv, directory: str) -> dict[str, Any]:
    """The whole memory (`export --all`): memory.jsonl in the import format and Parquet per
    table, under `directory` (created; files 0600). `[scope] export` limits the assertions."""
    from pathlib import Path

    from backchannel.graph.portability import export_all as write_all
    from backchannel.ops.rights_ops import record_access

    out = write_all(env.store, Path(directory), env.settings.scope.export)
    record_access(env, "export_all", [], assertions=out["lines"].get("assertion", 0), detail="export --all")
    return out


@op(read=False)
def import_all(env: OpEnv, file: str) -> dict[str, Any]:
    """`import all FILE`: an `export --all` memory.jsonl into this memory."""
    from backchannel.graph.importer import ImportFailed
    from backchannel.graph.portability import import_all as read_all

    try:
        with open(file, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise OpError(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        return {
            "file": file,
            **read_all(
                env.store,
                lines,
                owner_name=env.settings.owner.name,
                owner_aliases=list(env.settings.owner.aliases),
                source_file=file,
            ),
        }
    except ImportFailed as exc:
        raise OpError(f"{file}: nothing imported: {exc}") from None

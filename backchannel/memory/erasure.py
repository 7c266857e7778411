"""Forgetting a person, for real.

DuckDB keeps deleted rows readable in the database file and its WAL until the
file is rewritten, so erasure is two steps: `forget()` deletes and redacts every
row that holds the person (one transaction), then `rewrite()` copies the live
database into a fresh file (`COPY FROM DATABASE`) and swaps it in. Sequences and
constraints survive the copy; the old bytes do not.

What goes: the entity and every entity merged into it, their aliases and merge
log, assertions they are the subject, object or speaker of, utterances they
spoke, proposals about them with their outbox, feedback and rejection-memory
rows; their names are redacted from other utterances, source titles and
participants, calendar attendees, the event log and run payloads. The content
hash of each source stays, so re-ingesting the same transcript does not bring
them back.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from backchannel.memory.store import Store, utcnow

REDACTED = "[forgotten]"


@dataclass
class ForgetReport:
    entity_ids: list[int]
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"entity_ids": self.entity_ids, "counts": self.counts}


def _family(store: Store, entity_id: int) -> list[int]:
    """The entity and everything merged into it, transitively."""
    ids, frontier = {entity_id}, [entity_id]
    while frontier:
        rows = store.con.execute("SELECT id FROM entities WHERE list_contains(?, merged_into)", [frontier]).fetchall()
        frontier = [r[0] for r in rows if r[0] not in ids]
        ids.update(frontier)
    return sorted(ids)


def _names(store: Store, ids: list[int]) -> list[str]:
    rows = store.con.execute(
        "SELECT name FROM entities WHERE list_contains(?, id) UNION SELECT alias FROM aliases WHERE list_contains(?, entity_id)",
        [ids, ids],
    ).fetchall()
    names = {r[0] for r in rows if r[0] and len(r[0].strip()) >= 2}
    # People are called by their first name ("Marc, good to see you"): redact it too,
    # unless another person in memory has the same one.
    for first in {n.split()[0] for n in names if " " in n.strip() and "@" not in n}:
        if len(first) >= 3 and not store.scalar(
            "SELECT count(*) FROM entities WHERE kind = 'person' AND NOT list_contains(?, id) AND starts_with(norm, ?)",
            [ids, first.lower() + " "],
        ):
            names.add(first)
    # Longest first, so "Marc Dupont" is redacted before "Marc".
    return sorted(names, key=len, reverse=True)


def _pattern(names: list[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)", re.IGNORECASE)


def plan(store: Store, entity_id: int) -> ForgetReport:
    """What `forget` would remove, without changing anything."""
    ids = _family(store, entity_id)

    def count(sql: str) -> int:
        return int(store.scalar(sql, [ids]) or 0)

    return ForgetReport(
        ids,
        {
            "assertions": count(
                "SELECT count(*) FROM assertions WHERE list_contains($1, subject_id) "
                "OR list_contains($1, object_id) OR list_contains($1, speaker_id)"
            ),
            "utterances": count("SELECT count(*) FROM utterances WHERE list_contains($1, speaker_id)"),
            "proposals": count("SELECT count(*) FROM proposals WHERE list_has_any(entity_ids, $1)"),
        },
    )


def forget(store: Store, entity_id: int) -> ForgetReport:
    """Delete and redact everything about the entity, in one transaction. Call
    `rewrite()` afterwards (with the store closed) so no deleted byte remains."""
    with store.transaction():
        report = plan(store, entity_id)
        ids = report.entity_ids
        rx = _pattern(_names(store, ids))
        con = store.con

        def redact(text: str | None) -> str | None:
            return rx.sub(REDACTED, text) if (rx and text) else text

        proposals = [
            r[0] for r in con.execute("SELECT id FROM proposals WHERE list_has_any(entity_ids, ?)", [ids]).fetchall()
        ]
        if rx is not None:
            for pid, title, body, evidence in con.execute(
                "SELECT id, title, body, CAST(evidence AS VARCHAR) FROM proposals"
            ).fetchall():
                if pid not in proposals and rx.search(" ".join([title or "", body or "", evidence or ""])):
                    proposals.append(pid)
        for table in ("outbox", "feedback", "rejection_embeddings"):
            con.execute(f"DELETE FROM {table} WHERE list_contains(?, proposal_id)", [proposals])
        con.execute(
            "DELETE FROM suppressions WHERE list_contains(?, proposal_id) OR list_has_any(entity_ids, ?)",
            [proposals, ids],
        )
        con.execute("DELETE FROM proposals WHERE list_contains(?, id)", [proposals])
        report.counts["proposals"] = len(proposals)

        con.execute(
            "DELETE FROM import_keys WHERE assertion_id IN (SELECT id FROM assertions WHERE "
            "list_contains($1, subject_id) OR list_contains($1, object_id) OR list_contains($1, speaker_id))",
            [ids],
        )
        con.execute(
            "DELETE FROM assertion_changes WHERE assertion_id IN (SELECT id FROM assertions WHERE "
            "list_contains($1, subject_id) OR list_contains($1, object_id) OR list_contains($1, speaker_id)) "
            "OR new_id IN (SELECT id FROM assertions WHERE list_contains($1, subject_id) "
            "OR list_contains($1, object_id) OR list_contains($1, speaker_id))",
            [ids],
        )
        con.execute(
            "DELETE FROM assertions WHERE list_contains($1, subject_id) OR list_contains($1, object_id) "
            "OR list_contains($1, speaker_id)",
            [ids],
        )
        # A promise made to them stays the promiser's fact, with no link left to the person.
        con.execute("UPDATE assertions SET recipient_id = NULL WHERE list_contains(?, recipient_id)", [ids])
        con.execute("DELETE FROM utterances WHERE list_contains(?, speaker_id)", [ids])
        if rx is not None:
            _redact_text(store, rx, redact, report)
        con.execute(
            "UPDATE calendar_events SET attendee_ids = list_filter(attendee_ids, lambda x: NOT list_contains(?, x)) "
            "WHERE list_has_any(attendee_ids, ?)",
            [ids, ids],
        )
        _forget_mail(store, ids, redact if rx is not None else None)
        con.execute("DELETE FROM aliases WHERE list_contains(?, entity_id)", [ids])
        con.execute("DELETE FROM entity_merges WHERE list_contains($1, kept_id) OR list_contains($1, merged_id)", [ids])
        con.execute("DELETE FROM entities WHERE list_contains(?, id)", [ids])
        con.execute(
            "UPDATE sources SET assertion_count = (SELECT count(*) FROM assertions a WHERE a.source_id = sources.id),"
            " utterance_count = (SELECT count(*) FROM utterances u WHERE u.source_id = sources.id)"
        )
        store.append_event("entity.forgotten", {"entities": len(ids), **report.counts})
    return report


def _forget_mail(store: Store, ids: list[int], redact: Callable[[str | None], str | None] | None) -> None:
    """Email: the person's addresses leave the message rows and a subject naming
    them is redacted. The Message-ID stays, so the same message read again stays skipped."""
    addrs = sorted({n.lower() for n in _names(store, ids) if "@" in n})
    con = store.con
    if addrs:
        con.execute(
            """UPDATE mail_messages SET sender = CASE WHEN list_contains($1, sender) THEN NULL ELSE sender END,
                           recipients = list_filter(recipients, lambda x: NOT list_contains($1, x))
                       WHERE list_contains($1, sender) OR list_has_any(recipients, $1)""",
            [addrs],
        )
    if redact is not None:
        for mid, subject, origin in con.execute("SELECT message_id, subject, origin FROM mail_messages").fetchall():
            if redact(subject) != subject or redact(origin) != origin:
                con.execute(
                    "UPDATE mail_messages SET subject = ?, origin = ? WHERE message_id = ?",
                    [redact(subject), redact(origin), mid],
                )


def _redact_text(
    store: Store, rx: re.Pattern[str], redact: Callable[[str | None], str | None], report: ForgetReport
) -> None:
    con = store.con
    changed = 0
    for sid, idx, speaker, text in con.execute("SELECT source_id, idx, speaker, text FROM utterances").fetchall():
        new_text, new_speaker = redact(text) or "", redact(speaker)
        if new_text == text and new_speaker == speaker:
            continue
        changed += 1
        con.execute(
            "UPDATE utterances SET text = ?, speaker = ? WHERE source_id = ? AND idx = ?",
            [new_text, new_speaker, sid, idx],
        )
        # Quotes of other people's assertions stay verbatim slices of the redacted text.
        for aid, quote in con.execute(
            "SELECT id, quote FROM assertions WHERE source_id = ? AND utterance_idx = ?", [sid, idx]
        ).fetchall():
            if quote is None:
                continue  # nothing verbatim to keep in step
            new_quote = redact(quote) or ""
            start = new_text.find(new_quote)
            if start < 0 and new_speaker and new_speaker.find(new_quote) >= 0:
                start = new_speaker.find(new_quote)  # a fact a speaker label states ("Hon. X (Minister of Y)")
            if start < 0:
                con.execute("DELETE FROM assertions WHERE id = ?", [aid])
            else:
                con.execute(
                    "UPDATE assertions SET quote = ?, span_start = ?, span_end = ? WHERE id = ?",
                    [new_quote, start, start + len(new_quote), aid],
                )
    report.counts["utterances_redacted"] = changed
    for sid, title, path, participants in con.execute("SELECT id, title, path, participants FROM sources").fetchall():
        new = [redact(p) for p in participants]
        if redact(title) != title or redact(path) != path or new != participants:
            con.execute(
                "UPDATE sources SET title = ?, path = ?, participants = ? WHERE id = ?",
                [redact(title), redact(path), new, sid],
            )
    for uid, starts, attendees, summary in con.execute(
        "SELECT uid, starts_at, attendees, summary FROM calendar_events"
    ).fetchall():
        new = [redact(a) for a in attendees]
        if new != attendees or redact(summary) != summary:
            con.execute(
                "UPDATE calendar_events SET attendees = ?, summary = ? WHERE uid = ? AND starts_at = ?",
                [new, redact(summary), uid, starts],
            )
    for cid, reason in con.execute("SELECT id, reason FROM assertion_changes WHERE reason IS NOT NULL").fetchall():
        if redact(reason) != reason:  # the owner's reason for a correction may name them
            con.execute("UPDATE assertion_changes SET reason = ? WHERE id = ?", [redact(reason), cid])
    marker = json.dumps({"redacted": "forget", "at": utcnow().isoformat()})
    events = [
        r[0] for r in con.execute("SELECT seq, CAST(data AS VARCHAR) FROM events").fetchall() if rx.search(r[1] or "")
    ]
    con.execute("UPDATE events SET data = ? WHERE list_contains(?, seq)", [marker, events])
    runs = [
        r[0]
        for r in con.execute("SELECT id, CAST(wake_payload AS VARCHAR) FROM runs").fetchall()
        if rx.search(r[1] or "")
    ]
    con.execute("UPDATE runs SET wake_payload = ? WHERE list_contains(?, id)", [marker, runs])
    report.counts["events_redacted"] = len(events) + len(runs)


def rewrite(path: Path) -> None:
    """Copy the live database into a fresh file and swap it in: deleted rows and the
    old WAL are gone afterwards. The store must be closed; a crash before the swap
    leaves the old file intact (and a stale `.rewrite` file, removed next time)."""
    path = Path(path)
    fresh = path.with_name(path.name + ".rewrite")
    for leftover in (fresh, Path(str(fresh) + ".wal")):
        leftover.unlink(missing_ok=True)
    con = duckdb.connect(str(path), config={"autoinstall_known_extensions": "false"})
    try:
        con.execute("CHECKPOINT")
        row = con.execute("SELECT current_database()").fetchone()
        assert row is not None  # a connection always has a current database
        name = row[0]
        con.execute(f"ATTACH '{fresh}' AS fresh")
        con.execute(f'COPY FROM DATABASE "{name}" TO fresh')
        con.execute("DETACH fresh")
    finally:
        con.close()
    with open(fresh, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(fresh, path)
    Path(str(path) + ".wal").unlink(missing_ok=True)


def names_of(store: Store, entity_id: int) -> list[str]:
    """Every name, alias and address of an entity and those merged into it (and a first
    name no other person in memory shares), longest first: what `forget` redacts."""
    return _names(store, _family(store, entity_id))


def redact_names(store: Store, names: list[str]) -> dict[str, int]:
    """Redact `names` wherever they were written down (utterances, quotes, source titles and
    participants, calendar attendees, the event log, run payloads), in one transaction: for a
    person who withdrew consent without ever becoming an entity. Call `rewrite()` after."""
    rx = _pattern(sorted({n for n in names if len(n.strip()) >= 2}, key=len, reverse=True))
    report = ForgetReport([])
    if rx is None:
        return report.counts

    def redact(text: str | None) -> str | None:
        return rx.sub(REDACTED, text) if text else text

    with store.transaction():
        _redact_text(store, rx, redact, report)
    return report.counts


def pending_marker(path: Path) -> Path:
    """Beside the database: present from just before an erasure commits until the file is
    rewritten. Whoever opens the store next finishes the rewrite first (Store.open), so a
    crash between the erasure and the rewrite never leaves deleted bytes readable for long."""
    path = Path(path)
    return path.with_name(path.name + ".rewrite-pending")


def mark_rewrite_pending(path: Path) -> None:
    marker = pending_marker(path)
    with open(marker, "w") as fh:
        fh.write("rewrite the database file: an erasure committed\n")
        fh.flush()
        os.fsync(fh.fileno())
    dir_fd = os.open(marker.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def complete_pending_rewrite(path: Path) -> bool:
    """Rewrite the file if an erasure asked for it (the store must be closed). True if it did."""
    marker = pending_marker(path)
    if not marker.exists():
        return False
    if Path(path).exists():
        rewrite(path)
    marker.unlink(missing_ok=True)
    return True

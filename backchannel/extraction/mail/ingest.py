"""Email into memory: one message -> one source, from a `.eml` file, a Maildir, an mbox
file, or IMAP (engine/mail_sync.py hands each message's bytes to `ingest_message`).

Idempotency, as for transcripts: a message whose identity (Message-ID, else a hash of
its headers and body) is stored is skipped before anything is parsed further; its
content hash keys the source, so a crash between the source's commit and the
`mail_messages` row is repaired on the next read, never doubled.

A message that cannot be read is one failed outcome with its reason; the mailbox
(and the daemon) carry on with the next.
"""

from __future__ import annotations

import functools
import mailbox
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from backchannel.config import Settings
from backchannel.core.timeutil import as_naive_utc
from backchannel.extraction.formats.transcript import TranscriptError
from backchannel.extraction.mail.message import MAX_MESSAGE_BYTES, MailError, parse_message
from backchannel.extraction.mail.rules import extract_mail_rules, merge
from backchannel.extraction.mail.transcript import MailTranscript, to_transcript
from backchannel.memory import entities
from backchannel.memory.store import Store, utcnow
from backchannel.memory.text import norm_name

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway
    from backchannel.extraction.ingest import IngestOutcome
    from backchannel.extraction.resolve.entities import SourceResolver

MAIL_SUFFIXES = {".eml", ".mbox", ".mbx"}
MBOX_SUFFIXES = (".mbox", ".mbx")  # many messages in one file


def max_message_bytes(settings: Settings) -> int:
    mail = getattr(settings, "mail", None)
    return int(mail.max_message_mb * 1_000_000) if mail is not None else MAX_MESSAGE_BYTES


# -- where messages are -------------------------------------------------------------


def is_maildir(path: Path) -> bool:
    return path.is_dir() and (path / "cur").is_dir() and (path / "new").is_dir()


def is_mail_file(path: Path) -> bool:
    """An .eml/.mbox file, or a message file inside a Maildir's cur/ or new/."""
    if path.suffix.lower() in MAIL_SUFFIXES:
        return True
    return path.parent.name in ("cur", "new") and is_maildir(path.parent.parent)


def maildir_messages(root: Path) -> Iterator[Path]:
    """Every message file of every Maildir under `root` (root itself, nested ones, and
    Maildir++ '.Sent'-style subfolders), in a stable order; tmp/ (deliveries in
    progress) is never read."""
    for dirpath, dirs, files in os.walk(root):
        here = Path(dirpath)
        dirs.sort()
        if here.name in ("cur", "new") and is_maildir(here.parent):
            for name in sorted(files):
                if not name.startswith("."):
                    yield here / name
            dirs[:] = []
        elif is_maildir(here):
            dirs[:] = [d for d in dirs if d != "tmp"]


def _read_bytes(path: Path, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MailError(path, "not a regular file")
        if st.st_size > limit:
            raise MailError(
                path,
                f"too large: {st.st_size / 1e6:.1f} MB; messages up to {limit / 1e6:.0f} MB are "
                "read ([mail] max_message_mb); its attachments would not be kept anyway",
            )
        return f.read(limit + 1)


# -- ingesting ---------------------------------------------------------------------


def ingest_mail_file(
    store: Store,
    settings: Settings,
    path: Path,
    *,
    gateway: Gateway | None = None,
    run_id: str | None = None,
    strict: bool = False,
) -> IngestOutcome:
    """An .eml or Maildir message file (one outcome), or an mbox file (one outcome that
    sums its messages; `ingest_mbox` gives them one by one). `strict` (the inbox): links,
    special files and hard links are refused, as for transcripts."""
    from backchannel.extraction.formats.parse import unreadable_reason
    from backchannel.extraction.ingest import IngestOutcome

    if strict:
        try:
            why = unreadable_reason(os.lstat(path), None)
        except OSError as exc:
            return IngestOutcome(str(path), "failed", error=f"cannot read: {exc.strerror or exc}")
        if why:
            return IngestOutcome(str(path), "failed", error=why)

    if path.suffix.lower() in MBOX_SUFFIXES:
        # Many messages of ~15 small statements each: one DuckDB thread (Store.single_threaded).
        # Not per single-message file: switching DuckDB's thread count costs more than one message saves.
        with store.single_threaded():
            outcomes = list(ingest_mbox(store, settings, path, gateway=gateway, run_id=run_id))
        return summarise(str(path), outcomes)
    try:
        data = _read_bytes(path, max_message_bytes(settings))
    except TranscriptError as exc:
        return IngestOutcome(str(path), "failed", error=exc.reason)
    except OSError as exc:
        return IngestOutcome(str(path), "failed", error=f"cannot read: {exc.strerror or exc}")
    return ingest_message(store, settings, data, str(path), gateway=gateway, run_id=run_id)


def ingest_mbox(
    store: Store, settings: Settings, path: Path, *, gateway: Gateway | None = None, run_id: str | None = None
) -> Iterator[IngestOutcome]:
    """Each message of an mbox file, as outcomes whose path is `FILE#N` (N from 1),
    written several to a transaction (mail/batch.py)."""
    from backchannel.extraction.ingest import IngestOutcome
    from backchannel.extraction.mail.batch import BATCH_MESSAGES, ingest_messages

    try:
        box = mailbox.mbox(str(path), create=False)
        keys = list(box.iterkeys())
    except Exception as exc:  # not an mbox at all, or unreadable
        yield IngestOutcome(str(path), "failed", error=f"cannot read the mbox file: {exc}")
        return
    limit = max_message_bytes(settings)
    try:
        messages = [(f"{path}#{n}", _mbox_reader(box, key, n, f"{path}#{n}")) for n, key in enumerate(keys, 1)]
        for i in range(0, len(messages), BATCH_MESSAGES):
            yield from ingest_messages(
                store, settings, messages[i : i + BATCH_MESSAGES], gateway=gateway, run_id=run_id, max_bytes=limit
            )
    finally:
        box.close()


def _mbox_reader(box: mailbox.mbox, key: str, n: int, origin: str) -> Callable[[], bytes]:
    def read() -> bytes:
        try:
            return box.get_bytes(key)
        except Exception as exc:
            raise MailError(origin, f"cannot read message {n}: {exc}") from None

    return read


def ingest_mail_files(
    store: Store, settings: Settings, paths: list[Path], *, gateway: Gateway | None = None, run_id: str | None = None
) -> list[IngestOutcome]:
    """Single-message files (Maildir messages, .eml), one outcome each, in order: written
    several to a transaction on one DuckDB thread when extraction is offline
    (mail/batch.py); else, or for one file, each as `ingest_mail_file` does."""
    from backchannel.extraction.mail.batch import batchable, ingest_messages

    if len(paths) < 2 or not batchable(settings, gateway):
        return [ingest_mail_file(store, settings, p, gateway=gateway, run_id=run_id) for p in paths]
    limit = max_message_bytes(settings)
    messages = [(str(p), functools.partial(_read_bytes, p, limit)) for p in paths]
    with store.single_threaded():
        return ingest_messages(store, settings, messages, gateway=gateway, run_id=run_id, max_bytes=limit)


def summarise(path: str, outcomes: list[IngestOutcome]) -> IngestOutcome:
    from backchannel.extraction.ingest import IngestOutcome

    failed = [o for o in outcomes if o.status == "failed"]
    new = [o for o in outcomes if o.status == "ingested"]
    total = sum(o.assertions for o in outcomes)
    title = f"{len(outcomes)} messages: {len(new)} new, {len(outcomes) - len(new) - len(failed)} known, {len(failed)} failed"
    if failed:
        detail = "; ".join(f"{o.path.rsplit('#', 1)[-1]}: {o.error}" for o in failed[:20])
        more = f" (and {len(failed) - 20} more)" if len(failed) > 20 else ""
        return IngestOutcome(
            path,
            "failed",
            assertions=total,
            title=title,
            error=f"{len(failed)} of {len(outcomes)} messages could not be read (the others are "
            f"stored): message {detail}{more}",
        )
    if not outcomes:
        return IngestOutcome(path, "failed", error="no message in this mbox file")
    return IngestOutcome(
        path,
        "ingested" if new else "skipped",
        source_id=new[0].source_id if new else outcomes[0].source_id,
        assertions=total,
        title=title,
    )


def known_message(
    store: Store, identity: str, addresses: Sequence[str] = ()
) -> tuple[str | None, dict[str, str], set[tuple[int, str]]]:
    """(the source of a message with this identity, or None; {address: person name} for
    the addresses memory already knows; the (person id, address) aliases already stored),
    in one round trip."""
    row = store.con.execute(
        """SELECT (SELECT source_id FROM mail_messages WHERE message_id = ?),
                  (SELECT list(struct_pack(n := a.norm, name := e.name, id := e.id)) FROM aliases a
                   JOIN entities e ON e.id = a.entity_id
                   WHERE e.kind = 'person' AND e.merged_into IS NULL AND list_contains(?, a.norm))""",
        [identity, sorted({norm_name(a) for a in addresses if a})],
    ).fetchall()[0]
    found = row[1] or []
    # A message written earlier in the same Store.batch() is held, not yet in the table.
    source = row[0] or store.held_value("mail_messages", "message_id", identity, "source_id")
    return source, {r["n"]: r["name"] for r in found}, {(int(r["id"]), r["n"]) for r in found}


def ingest_message(
    store: Store,
    settings: Settings,
    data: bytes,
    origin: str,
    *,
    gateway: Gateway | None = None,
    run_id: str | None = None,
    max_bytes: int | None = None,
) -> IngestOutcome:
    """One message's bytes into memory; an IngestOutcome (path = `origin`)."""
    from backchannel.extraction import ingest as ingest_mod
    from backchannel.extraction.ingest import IngestOutcome
    from backchannel.extraction.writer import QuoteMismatch, write_source

    try:
        msg = parse_message(data, origin, max_bytes=max_bytes or max_message_bytes(settings))
    except TranscriptError as exc:
        return IngestOutcome(origin, "failed", error=exc.reason)
    identity = msg.identity()
    known, names_by_addr, known_aliases = known_message(
        store, identity, [a.addr for a in (msg.sender, *msg.recipients()) if a]
    )
    if known:
        return IngestOutcome(origin, "skipped", source_id=known, title=msg.subject)
    owner = settings.owner
    try:
        transcript = to_transcript(msg, origin, owner_name=owner.name, owner_email=owner.email, tz=owner.timezone)
    except TranscriptError as exc:
        return IngestOutcome(origin, "failed", error=exc.reason, title=msg.subject)
    _use_known_names(transcript, names_by_addr)
    from backchannel.extraction import capture

    try:  # consent headers and withdrawn people, before anything is hashed or extracted
        admission = capture.admit_mail(store, settings, transcript, data, origin)
    except TranscriptError as exc:
        return IngestOutcome(origin, "failed", error=exc.reason, title=None)
    # The message row commits with its source (on_written), so no crash separates them;
    # a source already there (created=False below) just gets its row checked.
    content_hash = transcript.content_hash()
    names = ingest_mod.owner_names(settings)
    try:
        extracted, intros, extractor, stats = ingest_mod.extract_assertions(
            transcript.extraction_view(), settings, names, gateway=gateway, run_id=run_id
        )
        if extractor == "offline":
            extra = extract_mail_rules(transcript, transcript.kinds, _known(transcript, names))
        else:  # a model read the text; signatures are structure it is not shown
            sig = {i: k for i, k in transcript.kinds.items() if k == "signature"}
            extra = extract_mail_rules(transcript, sig)
        extracted = merge(extracted, extra)
        result = write_source(
            store,
            transcript,
            extracted,
            owner_names=names,
            extractor=extractor,
            self_intros=intros,
            content_hash=content_hash,
            resolve_extra=ingest_mod.extra_resolver(settings, gateway, run_id),
            on_written=lambda sid, resolver: _record(store, transcript, sid, origin, resolver, known_aliases),
        )
    except QuoteMismatch as exc:
        return IngestOutcome(origin, "failed", error=f"internal extractor error: {exc}", title=transcript.title)
    except TranscriptError as exc:
        return IngestOutcome(origin, "failed", error=exc.reason, title=transcript.title)
    except Exception as exc:
        kind = ingest_mod.gateway_error_kind(exc)
        if kind is None:
            raise
        status = "deferred" if kind == "budget" and "per-run" not in str(exc) else "failed"
        return IngestOutcome(origin, status, error=f"model extraction failed: {exc}", title=transcript.title)
    if not result.created:  # the same content stored already (its message row is checked)
        _record(store, transcript, result.source_id, origin)
    elif admission.consent != "ok":
        capture.mark(store, result.source_id, admission)  # in a batch, the row is held: the state shows after it
    return IngestOutcome(
        origin,
        "ingested" if result.created else "skipped",
        source_id=result.source_id,
        assertions=result.assertions,
        title=transcript.title,
        rejected_quotes=stats["rejected_quotes"] if stats else None,
    )


def _known(transcript: MailTranscript, owner: list[str]) -> frozenset[str]:
    names = [*transcript.speakers(), *transcript.participants, *owner]
    return frozenset(n for n in (norm_name(x) for x in names if x) if n)


def _use_known_names(transcript: MailTranscript, names_by_addr: dict[str, str]) -> None:
    """A sender whose address memory already knows speaks under that person's name, so
    'Marc' <marc@x> and 'Marc Dupont' <marc@x> are one person whatever the display name."""
    rename = {}
    for label, addr in transcript.emails.items():
        name = names_by_addr.get(norm_name(addr))
        if name and name != label:
            rename[label] = name
    if not rename:
        return
    for u in transcript.utterances:
        if u.speaker in rename:
            u.speaker = rename[u.speaker]
    transcript.participants = list(dict.fromkeys(rename.get(p, p) for p in transcript.participants))
    transcript.emails = {rename.get(k, k): v for k, v in transcript.emails.items()}


def _record(
    store: Store,
    transcript: MailTranscript,
    source_id: str,
    origin: str,
    resolver: SourceResolver | None = None,
    known_aliases: set[tuple[int, str]] | None = None,
) -> None:
    """The message's row, and each address as an alias of the person it belongs to (how
    a calendar invitation's attendee, or an approved message, finds them). With the
    writer's `resolver`, inside the source's own transaction; without, its own (the
    repair of a crash between the source's commit and this row). `known_aliases`: the
    (person, address) aliases `known_message` found, so no second look-up is needed."""
    if resolver is None:
        with store.transaction():
            _record_rows(store, transcript, source_id, origin, None)
    else:
        _record_rows(store, transcript, source_id, origin, resolver, known_aliases)


def _record_rows(
    store: Store,
    transcript: MailTranscript,
    source_id: str,
    origin: str,
    resolver: SourceResolver | None,
    known_aliases: set[tuple[int, str]] | None = None,
) -> None:
    msg = transcript.message
    if msg is None:
        return
    sent = msg.date
    if sent is not None:
        sent = as_naive_utc(sent)
    row = (
        msg.identity(),
        source_id,
        msg.sender.addr if msg.sender else None,
        [a.addr for a in msg.recipients() if a.addr],
        sent,
        msg.subject,
        origin,
        msg.attachments,
        msg.html_only,
        utcnow(),
    )
    if resolver is not None:
        # In the writer's transaction the identity was checked just before: a plain INSERT
        # (DuckDB's ON CONFLICT costs a lookup more), held to a Store.batch()'s commit if in one.
        store.insert_rows(
            "mail_messages",
            [
                "message_id",
                "source_id",
                "sender",
                "recipients",
                "sent_at",
                "subject",
                "origin",
                "attachments",
                "html_only",
                "ingested_at",
            ],
            [row],
            defer=True,
        )
    else:  # the repair path may meet the row
        store.con.execute(
            """INSERT INTO mail_messages (message_id, source_id, sender, recipients, sent_at, subject, origin,
                   attachments, html_only, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (message_id) DO NOTHING""",
            list(row),
        )
    pairs: dict[tuple[int, str], str] = {}
    for label, addr in transcript.emails.items():
        if resolver is not None:
            eid = resolver.speaker_ids.get(label)
            if eid is None and label in transcript.participants:
                eid = resolver.mention(label, "person")  # cached: the writer resolved participants already
        else:
            found = entities.find(store, label, "person")
            eid = found[0].id if len(found) == 1 else None
        if eid is not None and norm_name(addr):
            pairs.setdefault((int(eid), norm_name(addr)), addr)
    if not pairs:
        return
    now = utcnow()
    if known_aliases is None:  # one look-up for every address of the message, one insert for the new ones
        have = set(
            store.con.execute(
                "SELECT entity_id, norm FROM aliases WHERE list_contains(?, norm)", [sorted({n for _e, n in pairs})]
            ).fetchall()
        )
        entities.insert_aliases(
            store, [(e, addr, n, source_id, now) for (e, n), addr in pairs.items() if (e, n) not in have]
        )
        return
    # The addresses were looked up with the Message-ID (known_message): no second look-up.
    # ON CONFLICT still guards an alias added since (by this source's resolver, say).
    new = [(e, addr, n, source_id, now) for (e, n), addr in pairs.items() if (e, n) not in known_aliases]
    if new:
        entities.insert_aliases(store, new, skip_existing=True)

"""Ingest: parse a file, skip it if its content is already stored, extract
assertions (offline rules or the configured model), write it in one transaction."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from backchannel.config import Settings
from backchannel.extraction.formats.transcript import Transcript, TranscriptError
from backchannel.extraction.writer import QuoteMismatch, existing_source, write_source
from backchannel.memory.store import Store

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway
    from backchannel.extraction.resolve.entities import ExtraResolver
    from backchannel.extraction.result import ExtractedAssertion

TRANSCRIPT_SUFFIXES = {".vtt", ".webvtt", ".srt", ".txt", ".text", ".md", ".markdown", ".json"}
_IGNORED_DIRS = {"processed", "failed"}
# Files that travel with transcripts but are not meetings (a corpus's licence, its readme).
_NOT_MEETINGS = {"license", "licence", "copying", "notice", "readme", "changelog", "authors", "index"}


@dataclass
class IngestOutcome:
    path: str
    status: str  # ingested, skipped, failed, deferred (budget spent: retry when it returns)
    source_id: str | None = None
    assertions: int = 0
    error: str | None = None
    title: str | None = None
    rejected_quotes: int | None = None  # model extraction: invented quotes dropped
    meeting_date: str | None = None  # ISO; where it came from in `date_origin` (meeting_date.ORIGIN_RANK)
    date_origin: str | None = None
    file_date: str | None = None  # ISO; the file's mtime when the meeting's date is unknown (origin "mtime")
    redated: dict | None = None  # skipped as a duplicate, but its date moved (redate.redate_source)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class MeetingWhen(TypedDict):
    """An outcome's dates (IngestOutcome's fields of the same names), ISO."""

    meeting_date: str | None
    date_origin: str | None
    file_date: str | None


def not_a_meeting(name: str) -> bool:
    """LICENSE, README.md, INDEX.json, LICENSE_QMSum_MIT.txt, COPYING: files that travel with a corpus."""
    stem = Path(name).stem.lower()
    return stem in _NOT_MEETINGS or re.match(r"(?:%s)[_.-]" % "|".join(sorted(_NOT_MEETINGS)), stem) is not None


def expand_paths(paths: Iterable[str | Path], passed_over: list[Path] | None = None) -> Iterator[Path]:
    """Files as given; folders walked for transcript files (dot and temp files skipped,
    the processed/ and failed/ folders an inbox keeps beside it, and LICENSE, README,
    INDEX and similar files that are not meetings: those are appended to `passed_over`
    so the caller can say it skipped them)."""
    from backchannel.extraction.mail.ingest import MAIL_SUFFIXES, maildir_messages

    for p in paths:
        p = Path(p)
        if p.is_dir():
            yield from maildir_messages(p)  # email: Maildir message files have no suffix
            for f in sorted(p.rglob("*")):
                rel = f.relative_to(p).parts
                if any(part.startswith(".") or part in _IGNORED_DIRS for part in rel):
                    continue
                suffix = f.suffix.lower()
                if (
                    f.is_file()
                    and (suffix in TRANSCRIPT_SUFFIXES or suffix in MAIL_SUFFIXES)
                    and not f.name.endswith(".error.txt")
                ):
                    if not_a_meeting(f.name):
                        if passed_over is not None:
                            passed_over.append(f)
                        continue
                    yield f
        else:
            yield p


def owner_names(settings: Settings) -> list[str]:
    return [settings.owner.name, *settings.owner.aliases]


def ingest_file(
    store: Store,
    settings: Settings,
    path: str | Path,
    *,
    gateway: Gateway | None = None,
    run_id: str | None = None,
    strict: bool = False,
    max_bytes: int | None = None,
    given_date: datetime | None = None,
    given_origin: str = "given",
) -> IngestOutcome:
    """`strict` and `max_bytes` (default: parse.MAX_FILE_BYTES) as for `parse_file`;
    the inbox passes strict=True: a file nobody named is never read through a link.
    `given_date` (`ingest --date`) dates a file whose content and name carry no date.
    Content already stored is skipped, but a better date than the stored one (a dated
    file name where the stored date was the mtime) moves the stored source to it."""
    from backchannel.extraction.formats.parse import MAX_FILE_BYTES, parse_file

    path = Path(path)
    from backchannel.extraction.mail.ingest import ingest_mail_file, is_mail_file

    if is_mail_file(path):  # email: one source per message (an mbox holds many)
        return ingest_mail_file(store, settings, path, gateway=gateway, run_id=run_id, strict=strict)
    try:
        transcript = parse_file(
            path, strict=strict, max_bytes=max_bytes or MAX_FILE_BYTES, given_date=given_date, given_origin=given_origin
        )
    except TranscriptError as exc:
        return IngestOutcome(str(path), "failed", error=exc.reason)
    except OSError as exc:
        return IngestOutcome(str(path), "failed", error=f"cannot read: {exc.strerror or exc}")
    names = owner_names(settings)
    from backchannel.extraction import capture

    try:  # consent and no-capture: what of the meeting may be stored at all, before the hash
        transcript, admission = capture.admit(store, settings, transcript, path, names)
    except TranscriptError as exc:
        return IngestOutcome(str(path), "failed", error=exc.reason)
    content_hash = transcript.content_hash()
    when: MeetingWhen = {
        "meeting_date": transcript.meeting_date.isoformat() if transcript.meeting_date else None,
        "date_origin": transcript.meeting_date_origin,
        "file_date": transcript.file_date.isoformat() if transcript.file_date else None,
    }
    known = existing_source(store, content_hash)
    if known:
        from backchannel.extraction.redate import redate_source

        redated = redate_source(store, known, transcript, owner_names=names)
        return IngestOutcome(
            str(path), "skipped", source_id=known, title=transcript.title, error=None, redated=redated, **when
        )
    try:
        extracted, intros, extractor, stats = extract_assertions(
            transcript, settings, names, gateway=gateway, run_id=run_id
        )
        result = write_source(
            store,
            transcript,
            extracted,
            owner_names=names,
            extractor=extractor,
            self_intros=intros,
            content_hash=content_hash,
            resolve_extra=extra_resolver(settings, gateway, run_id),
        )
    except QuoteMismatch as exc:
        return IngestOutcome(str(path), "failed", error=f"internal extractor error: {exc}")
    except TranscriptError as exc:
        return IngestOutcome(str(path), "failed", error=exc.reason)
    except Exception as exc:
        gateway_error = gateway_error_kind(exc)
        if gateway_error is None:
            raise
        if gateway_error == "budget" and "per-run" in str(exc):
            # Each file is its own run: waiting will not make it fit.
            return IngestOutcome(
                str(path),
                "failed",
                title=transcript.title,
                error=(
                    f"this transcript needs more than the per-run model budget ({exc}); raise "
                    "[models.budget] per_run_tokens / per_run_cost_usd and drop it in the inbox again"
                ),
            )
        if gateway_error == "budget":
            return IngestOutcome(str(path), "deferred", error=f"model budget spent: {exc}", title=transcript.title)
        return IngestOutcome(str(path), "failed", error=f"model extraction failed: {exc}", title=transcript.title)
    status = "ingested" if result.created else "skipped"
    if result.created and transcript.file_date is not None:
        from backchannel.memory import sources

        sources.set_file_date(store, result.source_id, transcript.file_date)
    if result.created:
        capture.mark(store, result.source_id, admission)
    if stats is not None and result.created:
        # What the model proposed and the code dropped (invented quotes, pronouns), for audit.
        store.append_event(
            "model_extraction", {"source_id": result.source_id, **stats}, run_id=run_id, key=f"extract:{content_hash}"
        )
    return IngestOutcome(
        str(path),
        status,
        source_id=result.source_id,
        assertions=result.assertions,
        title=transcript.title,
        rejected_quotes=stats["rejected_quotes"] if stats else None,
        **when,
    )


def ingest_files(
    store: Store,
    settings: Settings,
    paths: Iterable[str | Path],
    *,
    gateway: Gateway | None = None,
    run_id: str | None = None,
    given_date: datetime | None = None,
    file_dates: dict[str, datetime] | None = None,
) -> list[IngestOutcome]:
    """`ingest_file` for each path, outcomes in order (`backchannel ingest`); a run of
    single-message email files (a Maildir's) goes in batches, several messages to a
    transaction (mail_ingest.ingest_mail_files).

    The date given to an undated file is, first, its own in `file_dates` (`ingest --date
    FILE=DATE`, keyed by resolved path), then its line in a dates manifest beside it
    (`dates_manifest.MANIFEST_NAME`), then `given_date` (`ingest --date DATE`)."""
    from backchannel.extraction.formats.dates_manifest import ManifestCache, ManifestError
    from backchannel.extraction.mail.ingest import MBOX_SUFFIXES, ingest_mail_files, is_mail_file
    from backchannel.memory import withdrawal

    # Names newly listed in `[consent] withdrawn`: what memory holds of them goes first, once.
    withdrawal.apply_configured(store, settings.consent.withdrawn)

    out: list[IngestOutcome] = []
    run: list[Path] = []
    manifests = ManifestCache()
    for p in map(Path, paths):
        if is_mail_file(p) and p.suffix.lower() not in MBOX_SUFFIXES:
            run.append(p)
            continue
        out += ingest_mail_files(store, settings, run, gateway=gateway, run_id=run_id)
        run = []
        own, origin = (file_dates or {}).get(str(p.resolve())), "given"
        if own is None:
            try:
                own, origin = manifests.date_for(p), "manifest"
            except ManifestError as exc:
                out.append(IngestOutcome(str(p), "failed", error=str(exc)))
                continue
        if own is None:
            own, origin = given_date, "given"
        out.append(ingest_file(store, settings, p, gateway=gateway, run_id=run_id, given_date=own, given_origin=origin))
    out += ingest_mail_files(store, settings, run, gateway=gateway, run_id=run_id)
    return out


def gateway_error_kind(exc: Exception) -> str | None:
    """'budget' or 'model' for the gateway's errors (imported only when a model ran)."""
    if "backchannel.agent.models" not in sys.modules:  # no model ran, so no gateway error (and no import)
        return None
    from backchannel.agent import models

    if not isinstance(exc, models.GatewayError):
        return None
    return "budget" if isinstance(exc, models.BudgetExhausted) else "model"


def extract_assertions(
    transcript: Transcript, settings: Settings, names: list[str], *, gateway: Gateway | None, run_id: str | None
) -> tuple[list[ExtractedAssertion], dict[str, str], str, dict[str, Any] | None]:
    from backchannel.extraction import offline

    intros = offline.self_introductions(transcript)
    if settings.models.extract == "offline" or gateway is None:
        return offline.extract(transcript, owner_names=names), intros, "offline", None
    from backchannel.extraction import model as model_extract

    result = model_extract.extract_with_model(transcript, gateway=gateway, run_id=run_id, owner_names=names)
    return result.assertions, intros, settings.models.extract, result.stats()


def extra_resolver(settings: Settings, gateway: Gateway | None, run_id: str | None = None) -> ExtraResolver | None:
    """The fuzzy/embedding/model layers, when a model is configured (never offline,
    where exact and alias matching keep ingest fast and predictable)."""
    if settings.models.extract == "offline" or gateway is None:
        return None
    from backchannel.extraction.resolve import layers

    # run_id: resolution calls count against the run's budget and show in its audit.
    return lambda store, name, kind: layers.resolve_extra(store, name, kind, gateway=gateway, run_id=run_id)

"""`backchannel ingest PATH...`."""

from __future__ import annotations

import sys
from typing import Any

import click

from backchannel.cli.common import UserError, echo_json, load_context, plural

_BATCH = 8  # files per `ingest` call: a model may take minutes over each transcript
_MAIL_BATCH = 50  # email message files in a row, offline: written several to a transaction (mail/batch.py)


def chunks(files: list[str], offline: bool) -> list[list[str]]:
    """The paths of each `ingest` call, in order: _BATCH files, or up to _MAIL_BATCH email
    message files in a row (a Maildir's) when extraction is offline, so a batch of messages
    is not cut at 8."""
    from pathlib import Path

    from backchannel.extraction.mail.ingest import MBOX_SUFFIXES, is_mail_file

    out: list[tuple[list[str], bool]] = []  # (paths, whether they are email messages)
    for f in files:
        message = offline and is_mail_file(Path(f)) and Path(f).suffix.lower() not in MBOX_SUFFIXES
        last = out[-1] if out else None
        if last is not None and message and last[1] and len(last[0]) < _MAIL_BATCH:
            last[0].append(f)
        elif last is not None and not message and not last[1] and len(last[0]) < _BATCH:
            last[0].append(f)
        else:
            out.append(([f], message))
    return [c for c, _m in out]


def _date_note(r: dict[str, Any]) -> str:
    """', dated 2018-10-11 (the file name)', or the warning that the date is the file's mtime."""
    from backchannel.extraction.formats.meeting_date import FALLBACK_NOTE, ORIGIN_WORDS, is_fallback

    if not r.get("meeting_date"):
        if r.get("date_origin") == "mtime":
            from backchannel.extraction.formats.meeting_date import unknown_date_words

            return f", {unknown_date_words(r.get('file_date'))}"
        return ", undated"
    day = str(r["meeting_date"])[:10]
    if is_fallback(r.get("date_origin")):
        return f", dated {day} ({FALLBACK_NOTE}: mtime)"
    origin = r.get("date_origin")
    return f", dated {day} ({ORIGIN_WORDS.get(origin, origin) if isinstance(origin, str) else origin})"


def _given_dates(values: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """(the date for every undated file, {resolved path: date}) from the --date options."""
    from pathlib import Path

    from backchannel.extraction.formats.meeting_date import parse_given_date

    every: str | None = None
    own: dict[str, str] = {}
    for value in values:
        name, sep, when = value.rpartition("=")
        try:
            parse_given_date(when)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if not sep:
            if every is not None and every != when:
                raise UserError(f"--date given twice for every file ({every}, {when}): write FILE=DATE for one file")
            every = when
            continue
        path = Path(name).expanduser()
        if not path.is_file():
            raise UserError(f"--date {value!r}: {name!r} is not a file (write --date FILE=YYYY-MM-DD)")
        own[str(path.resolve())] = when
    return every, own


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--json", "json_output", is_flag=True, help='Print {"ingested":N,"skipped":N,"failed":[{"path":...,"error":...}]}.'
)
@click.option(
    "--date",
    "dates",
    metavar="[FILE=]YYYY-MM-DD",
    multiple=True,
    help="The meeting date for files whose content and name carry none: DATE for all of them, "
    "FILE=DATE for one file (repeatable). Without it the date is unknown.",
)
@click.option(
    "--scope",
    metavar="WORD",
    help="The scope of these sources (work, personal, a client's name), instead of [scope] folders/default.",
)
def ingest(paths: tuple[str, ...], json_output: bool, dates: tuple[str, ...], scope: str | None) -> None:
    """Ingest transcript files and folders (VTT, SRT, text, JSON), and email: Maildir
    folders, mbox files and .eml files (one source per message).

    The same content twice is stored once (email: the same Message-ID); ingesting it again under a dated name
    (or with --date) moves a meeting that was dated only by its file's mtime.
    A meeting's date comes from the file's metadata, else its name
    ("2026-03-05 sync.vtt", "20260305", "05.03.2026" read day first), else --date FILE=DATE,
    else a `meeting-dates.toml` beside the files ("name.vtt" = 2026-03-05, one line each),
    else --date DATE; else it is unknown: nothing is computed from it (no overdue, no
    "next Friday", no silence), and the file's mtime is shown only as a file date.
    `sources redate ID DATE` sets it later. Exits non-zero when any file failed.
    """
    from pathlib import Path

    from backchannel.cli.client import call
    from backchannel.extraction.ingest import expand_paths

    ctx = load_context()
    meeting_date, file_dates = _given_dates(dates)
    passed_over: list = []
    files = [str(p.resolve()) for p in expand_paths(paths, passed_over)]
    if not files:
        raise UserError(
            "no transcript files found in "
            + ", ".join(paths)
            + (f" ({len(passed_over)} licence/readme/index files skipped)" if passed_over else "")
        )
    summary: dict[str, Any] = {"ingested": 0, "skipped": 0, "failed": []}
    results: list[dict] = []
    show_bar = len(files) > _BATCH and not json_output and sys.stderr.isatty()
    progress = None
    if show_bar:
        from rich.progress import Progress

        progress = Progress(transient=True)
        progress.start()
        task = progress.add_task("ingesting", total=len(files))
    try:
        for part in chunks(files, ctx.settings.models.extract == "offline"):
            args: dict = {"paths": part}
            if meeting_date:  # only when given: an older daemon's operation takes no date
                args["meeting_date"] = meeting_date
            mine = {f: file_dates[f] for f in part if f in file_dates}
            if mine:
                args["file_dates"] = mine
            if scope:
                args["scope"] = scope
            out = call(ctx, "ingest", args)
            summary["ingested"] += out["ingested"]
            summary["skipped"] += out["skipped"]
            summary["failed"] += out["failed"]
            if out.get("deferred"):
                summary.setdefault("deferred", []).extend(out["deferred"])
            results += out["results"]
            if progress is not None:
                progress.update(task, advance=len(part))
    finally:
        if progress is not None:
            progress.stop()
    redated = sum(1 for r in results if r.get("redated"))
    if redated:  # duplicates that moved a stored meeting to a better date
        summary["redated"] = redated
    if passed_over:
        summary["not_meetings"] = [str(p) for p in passed_over]
    if json_output:
        echo_json(summary)
    else:
        for p in passed_over:
            click.echo(f"skipped   {p.name}: not a meeting (licence, readme or index file)")
        for r in results:
            name = Path(r["path"]).name
            if r["status"] == "ingested":
                click.echo(
                    f"ingested  {name}: {r['source_id']}, {plural(r.get('assertions', 0), 'assertion')}{_date_note(r)}"
                )
            elif r["status"] == "skipped" and r.get("redated"):
                from backchannel.extraction.redate import describe

                click.echo(f"redated   {name}: duplicate of {r['source_id']}; {describe(r['redated'])}")
            elif r["status"] == "skipped":
                click.echo(f"skipped   {name}: duplicate of {r['source_id']}")
            elif r["status"] == "deferred":
                click.echo(f"deferred  {name}: {r['error']}", err=True)
            else:  # the whole path: a tree may hold several files of that name, and this one needs fixing
                click.echo(f"failed    {r['path']}: {r['error']}", err=True)
        skipped = f"{summary['skipped']} skipped" + (f" ({redated} redated)" if redated else "")
        click.echo(f"{summary['ingested']} ingested, {skipped}, {len(summary['failed'])} failed")
        undated = sum(1 for r in results if r["status"] == "ingested" and r.get("date_origin") == "mtime")
        if undated:
            click.echo(
                f"{plural(undated, 'meeting')} with no date (only the file's mtime, which is not the "
                "meeting's): nothing is computed from it (no overdue, no relative dates, no silence). "
                "Set it with --date FILE=DATE, a meeting-dates.toml beside the files, or "
                "`backchannel sources redate ID DATE`",
                err=True,
            )
    if not json_output and summary["ingested"]:
        from backchannel.ops.memory_ops import owner_absent_note

        note = owner_absent_note(call(ctx, "owner_presence", {}))
        if note:
            click.echo(note, err=True)
    if summary["failed"] or summary.get("deferred"):
        sys.exit(1)

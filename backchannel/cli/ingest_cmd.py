"""`backchannel ingest PATH...`."""

from __future__ import annotations

import sys

import click

from backchannel.cli.common import UserError, echo_json, load_context, plural

_BATCH = 8


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--json", "json_output", is_flag=True,
              help='Print {"ingested":N,"skipped":N,"failed":[{"path":...,"error":...}]}.')
def ingest(paths: tuple[str, ...], json_output: bool) -> None:
    """Ingest transcript files and folders (VTT, SRT, text, JSON), and email: Maildir
    folders, mbox files and .eml files (one source per message).

    The same content twice is stored once (email: the same Message-ID). Exits non-zero when any file failed.
    """
    from pathlib import Path

    from backchannel.cli.client import call
    from backchannel.extractors.ingest import expand_paths

    ctx = load_context()
    files = [str(p.resolve()) for p in expand_paths(paths)]
    if not files:
        raise UserError("no transcript files found in " + ", ".join(paths))
    summary = {"ingested": 0, "skipped": 0, "failed": []}
    results: list[dict] = []
    show_bar = len(files) > _BATCH and not json_output and sys.stderr.isatty()
    progress = None
    if show_bar:
        from rich.progress import Progress

        progress = Progress(transient=True)
        progress.start()
        task = progress.add_task("ingesting", total=len(files))
    try:
        for i in range(0, len(files), _BATCH):
            out = call(ctx, "ingest", {"paths": files[i : i + _BATCH]})
            summary["ingested"] += out["ingested"]
            summary["skipped"] += out["skipped"]
            summary["failed"] += out["failed"]
            if out.get("deferred"):
                summary.setdefault("deferred", []).extend(out["deferred"])
            results += out["results"]
            if progress is not None:
                progress.update(task, advance=len(files[i : i + _BATCH]))
    finally:
        if progress is not None:
            progress.stop()
    if json_output:
        echo_json(summary)
    else:
        for r in results:
            name = Path(r["path"]).name
            if r["status"] == "ingested":
                click.echo(f"ingested  {name}: {r['source_id']}, {plural(r.get('assertions', 0), 'assertion')}")
            elif r["status"] == "skipped":
                click.echo(f"skipped   {name}: already stored as {r['source_id']}")
            elif r["status"] == "deferred":
                click.echo(f"deferred  {name}: {r['error']}", err=True)
            else:  # the whole path: a tree may hold several files of that name, and this one needs fixing
                click.echo(f"failed    {r['path']}: {r['error']}", err=True)
        click.echo(f"{summary['ingested']} ingested, {summary['skipped']} skipped, {len(summary['failed'])} failed")
    if summary["failed"] or summary.get("deferred"):
        sys.exit(1)

"""Read-side commands: sources, show, assertions, entities."""

from __future__ import annotations

from typing import Any

import click

from backchannel.cli.common import echo_json, load_context, plural
from backchannel.core.ties import HEARD_OF, link_kind
from backchannel.core.vocabulary import ENTITY_KINDS


def _date(v: Any) -> str:
    # In-process calls return datetimes, the daemon's API ISO strings: print the same day either way.
    return v.date().isoformat() if hasattr(v, "date") and callable(v.date) else (str(v)[:10] if v else "?")


def said_date(a: dict[str, Any], key: str = "said_at") -> str:
    """The day something was said; 'date unknown (file date 2026-11-20)' when only the
    transcript file's mtime dates it."""
    from backchannel.extraction.formats.meeting_date import FALLBACK_NOTE, unknown_date_words

    if a.get("date_origin") == "mtime":
        if a.get(key):  # a row written before dates by mtime became unknown
            return f"{_date(a.get(key))} ({FALLBACK_NOTE})"
        return unknown_date_words(a.get("file_date"))
    return _date(a.get(key))


def _minute(v: Any) -> str:
    """'2025-09-18 08:30' from a datetime or an ISO string (seconds and microseconds are noise here)."""
    return str(v).replace("T", " ")[:16] if v else "?"


def _fact(a: dict[str, Any]) -> str:
    """'Sophie Martin works_at [CIO] Acme 2026-03-01→now', 'Marc committed_to "send the deck" due 2025-05-09'."""
    obj = a.get("object") or (f'"{a["object_literal"]}"' if a.get("object_literal") else "")
    qual = f" [{a['qualifier']}]" if a.get("qualifier") else ""
    span = ""
    start, end = str(a.get("valid_from") or "")[:10], str(a.get("valid_to") or "")[:10]
    if a.get("predicate") == "committed_to" and end and not start:
        span = f" due {end}"  # a promise's end is when it is due
    elif start or end:
        span = f" {start or 'unknown'}→{end or 'now'}"
    to = f" (to {a['recipient']})" if a.get("recipient") else ""
    stance = a.get("stance") or "asserted"
    pred = a["predicate"]
    if link_kind(pred, stance) == HEARD_OF:
        pred, stance = HEARD_OF, "asserted"  # "Tunde knows_of Rafaela": the name, not the person
    how = f" ({stance.replace('_', ' ')})" if stance != "asserted" else ""  # "(rumour)", "(ended)"
    return f"{a['subject']} {pred}{qual} {obj}{to}{span}{how}"


def trust_words(a: dict[str, Any]) -> str:
    """'trust 0.36 (second hand, owner absent)'; '' for rows that carry no trust."""
    from backchannel.memory.trust import describe

    if a.get("trust") is None:
        return ""
    why = describe(a.get("trust_reasons") or [])
    return f"trust {float(a['trust']):.2f}" + (f" ({why})" if why else "")


def render_assertion(a: dict[str, Any]) -> str:
    """The fact and its trust, then its verbatim evidence: who said it, when, where."""
    sup = " (superseded)" if a.get("superseded_at") else ""
    trust = trust_words(a)
    trust = f"  [{trust}]" if trust else ""
    if not a.get("quote"):  # e.g. a CRM line imported without evidence
        return f"#{a['id']} {_fact(a)}{sup}{trust}\n    (no quote recorded)"
    said = f"{a.get('speaker') or '?'}, {said_date(a)}"
    return f"#{a['id']} {_fact(a)}{sup}{trust}\n    “{a['quote']}” — {said}, {a['source_id']}"


def also_lines(also: list[dict[str, Any]], indent: str = "    ") -> list[str]:
    """The same fact said again: one line per other row, its quote, speaker, date and source."""
    out = []
    if also:
        sources = {a.get("source_id") for a in also}
        where = f" in {len(sources)} sources" if len(sources) > 1 else f" in {next(iter(sources))}"
        out.append(f"{indent}also said {plural(len(also), 'more time')}{where}:")
    for a in also:
        out.append(
            f"{indent}  #{a['id']} “{a.get('quote') or ''}” — {a.get('speaker') or '?'}, {said_date(a)}, "
            f"{a.get('source_id')}"
        )
    return out


def render_assertion_line(a: dict[str, Any]) -> str:
    """One line: the fact, then who said it and when."""
    return f"{_fact(a)}  (said by {a.get('speaker') or '?'}, {said_date(a)})"


@click.group(invoke_without_command=True)
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list (see docs/cli-json.md).")
@click.pass_context
def sources(ctx: click.Context, json_output: bool) -> None:
    """List ingested sources (meetings); `sources redate ID DATE` sets a meeting's date.

    \b
    backchannel sources                       list
    backchannel sources redate S1a2b 2026-03-05   set the date of a meeting (id, path or title)
    """
    if ctx.invoked_subcommand is not None:
        return
    from backchannel.cli.client import call

    rows = call(load_context(), "sources", {})
    if json_output:
        echo_json(rows)
        return
    for r in rows:
        if r["meeting_date"] is None and r["meeting_date_origin"] == "mtime":
            from backchannel.extraction.formats.meeting_date import unknown_date_words

            when = f"{unknown_date_words(r.get('file_date'))}: `sources redate {r['id']} DATE`"
        else:
            when = f"{_date(r['meeting_date'])} ({r['meeting_date_origin']})"
        click.echo(
            f"{r['id']}  {when}  {r['title']}  "
            f"{plural(r['utterance_count'], 'utterance')}, {plural(r['assertion_count'], 'assertion')}"
            f"  [scope {r.get('scope') or 'default'}, consent {r.get('consent') or 'ok'}]"
        )
    if not rows:
        click.echo("no sources yet: `backchannel ingest PATH`")


@sources.command()
@click.argument("source")
@click.argument("meeting_date", metavar="YYYY-MM-DD")
@click.option("--json", "json_output", is_flag=True, help="Print what changed as JSON.")
def redate(source: str, meeting_date: str, json_output: bool) -> None:
    """Set the date of SOURCE (id, id prefix, path or title) to YYYY-MM-DD[THH:MM].

    Its assertions' dates move with it, and relative dates ("next Friday", "since March")
    and due dates are computed again against the new date."""
    from backchannel.cli.client import call
    from backchannel.extraction.redate import describe

    out = call(load_context(), "source_redate", {"ref": source, "meeting_date": meeting_date})
    if json_output:
        echo_json(out)
        return
    change = out["changed"]
    if change is None:
        click.echo(f"{out['source_id']} already has that date: nothing changed")
        return
    moved = change.get("relative_dates", 0)
    click.echo(
        f"redated   {out['source_id']} {out['title']}: {describe(change)}; "
        f"{plural(change.get('assertions', 0), 'assertion')}, {plural(moved, 'relative date')} recomputed"
    )


def _date_line(src: dict[str, Any]) -> str:
    """'2025-09-18 08:30 (from the file name)', or why the date is unknown and how to set it."""
    from backchannel.extraction.formats.meeting_date import ORIGIN_WORDS, unknown_date_words

    how = f"set it with `backchannel sources redate {src['id']} YYYY-MM-DD` or `ingest --date FILE=DATE`"
    if src.get("meeting_date") is None:
        if src.get("meeting_date_origin") == "mtime":
            return f"{unknown_date_words(src.get('file_date'))}: the file's mtime is not the meeting's; {how}"
        return f"date unknown; {how}"
    origin = src.get("meeting_date_origin")
    return f"{_minute(src['meeting_date'])} (from {ORIGIN_WORDS.get(origin or '', origin)})"


@click.command()
@click.argument("source")
@click.option("--json", "json_output", is_flag=True, help="Print the source, utterances and assertions as JSON.")
@click.option("--transcript/--no-transcript", default=False, help="Also print the utterances.")
def show(source: str, json_output: bool, transcript: bool) -> None:
    """Show one source (by id, id prefix, path or title) and what was learned from it."""
    from backchannel.cli.client import call

    src = call(load_context(), "source", {"ref": source, "utterances": json_output or transcript})
    if json_output:
        echo_json(src)
        return
    click.echo(f"{src['id']}  {src['title']}")
    click.echo(f"  date: {_date_line(src)}   format: {src['format']}")
    if src.get("participants"):
        click.echo(f"  participants: {', '.join(src['participants'])}")
    if src.get("path"):  # imported sources have none
        from pathlib import Path

        # Inbox files move to processed/ once ingested; the daemon records where they went.
        gone = "" if Path(src["path"]).exists() else "  (no longer there: moved or deleted since)"
        click.echo(f"  file: {src['path']}{gone}")
    if src.get("trust_reasons"):
        from backchannel.memory.trust import describe

        click.echo(f"  reliability: {describe(src['trust_reasons'])}")
    for first, names in (src.get("ambiguous_references") or {}).items():
        click.echo(f"  ambiguous: {first.title()} could be {' or '.join(names)} (its links count for little)")
    if transcript:
        for u in src["utterances"]:
            click.echo(f"  [{u['idx']}] {u['speaker'] or '—'}: {u['text']}")
    click.echo(f"  {plural(len(src['assertions']), 'assertion')}:")
    from backchannel.ops.fact_groups import group_facts

    also_in = src.get("also_in") or {}
    for g in group_facts(src["assertions"]):
        a = g["fact"]
        click.echo("  " + render_assertion(a).replace("\n", "\n  "))
        for line in also_lines(g["also"], indent="      "):
            click.echo(line)
        elsewhere = also_in.get(str(a["id"])) or also_in.get(a["id"])
        if elsewhere:
            click.echo(f"      also said in {plural(len(elsewhere), 'other source')}: {', '.join(elsewhere)}")


@click.command()
@click.option("--about", help="Only assertions whose subject or object is this entity (name or alias).")
@click.option("--predicate", help="Only this predicate (works_at, worked_with, knows, committed_to, ...).")
@click.option("--current", is_flag=True, help="Leave out superseded assertions.")
@click.option(
    "--as-of", "as_of", metavar="DATE", help="Only what held on DATE (YYYY-MM-DD), superseded facts included."
)
@click.option(
    "--min-trust",
    "min_trust",
    type=float,
    metavar="T",
    help="Only assertions trusted at least T (0..1; see docs/extraction.md, 'Trust per assertion').",
)
@click.option("--limit", default=1000, show_default=True)
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list (see docs/cli-json.md).")
def assertions(
    about: str | None,
    predicate: str | None,
    current: bool,
    as_of: str | None,
    limit: int,
    json_output: bool,
    min_trust: float | None,
) -> None:
    """List assertions with their evidence."""
    from backchannel.cli.client import call

    rows = call(
        load_context(),
        "assertions",
        {
            "about": about,
            "predicate": predicate,
            "include_superseded": not current,
            "limit": limit,
            "as_of": as_of,
            "min_trust": min_trust,
        },
    )
    if json_output:
        echo_json(rows)
        return
    from backchannel.ops.fact_groups import group_facts

    for g in group_facts(rows):
        click.echo(render_assertion(g["fact"]))
        for line in also_lines(g["also"]):
            click.echo(line)
    if not rows:
        click.echo("no assertions")


def list_entities(json_output: bool, kind: str | None = None) -> None:
    from backchannel.cli.client import call

    rows = call(load_context(), "entities", {"kind": kind})
    if json_output:
        echo_json(rows)
        return
    for e in rows:
        owner = " (you)" if e["is_owner"] else ""
        others = [a for a in (e["aliases"] or []) if a != e["name"]]
        aka = f"  aka {', '.join(others)}" if others else ""
        click.echo(f"{e['id']:>6}  {e['kind']:<12} {e['name']}{owner}{aka}  [{e['assertion_count']}]")


@click.command()
@click.option("--kind", type=click.Choice(ENTITY_KINDS), help="Only this kind.")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list (see docs/cli-json.md).")
def entities(kind: str | None, json_output: bool) -> None:
    """List people and organisations with their aliases."""
    list_entities(json_output, kind)

"""`ask`, `skills` and `import`: questions answered by code over the graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from backchannel.cli.common import UserError, echo_json, load_context, plural


def _parse_value(raw: str) -> Any:
    """--arg values: JSON when they parse (numbers, lists, true), else the plain string."""
    import json

    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _evidence_lines(c: dict[str, Any]) -> list[str]:
    out, seen = [], set()
    for e in c.get("evidence") or []:
        # Two facts from one sentence ("chair of X and CEO of Y") cite the same words: print them once.
        key = (e.get("quote"), e.get("source_id"))
        if e.get("quote") and key in seen:
            continue
        seen.add(key)
        if not e.get("quote"):  # e.g. a CRM line imported without evidence
            out.append(f"     (assertion #{e.get('assertion_id')}: no quote recorded)")
            continue
        when = (e.get("said_at") or e.get("source_date") or "")[:10] or "undated"
        if e.get("date_origin") == "mtime":
            from backchannel.extraction.formats.meeting_date import FALLBACK_NOTE, UNKNOWN_NOTE

            when = f"{when} ({FALLBACK_NOTE})" if when != "undated" else UNKNOWN_NOTE
        where = f", {e['source_title']}" if e.get("source_title") else ""
        out.append(f"     “{e.get('quote') or ''}” — {e.get('speaker') or '?'}, {when}{where}")
    return out


def _names_asked(out: dict) -> list[str]:
    """The names the question was routed with (a skill's target, people, attendees)."""
    args = (out.get("route") or {}).get("args") or {}
    names: list[str] = []
    for key in ("target", "people", "attendees", "person", "name", "org"):
        value = args.get(key)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v.strip() and v.lower() not in ("me", "i", "you"):
                names.append(v.strip())
    return list(dict.fromkeys(names))


@click.command()
@click.argument("question")
@click.option("--json", "json_output", is_flag=True, help="Print the run, candidates and evidence as JSON.")
@click.option("--show-code", is_flag=True, help="Also print the program that found the candidates.")
def ask(question: str, json_output: bool, show_code: bool) -> None:
    """Answer QUESTION from memory: a program walks the graph (a prepared skill
    offline, or code the sweep model writes), then candidates are drafted with
    their evidence quotes, speakers and dates.

    Example: backchannel ask "who can introduce me to the CIO of Acme?"
    """
    from backchannel.cli.client import call

    out = call(load_context(), "ask", {"question": question, "show_code": show_code})
    if json_output:
        echo_json(out)
        return
    if show_code:
        click.echo(f"# program ({out.get('skill') or 'none'}):")
        click.echo((out.get("code") or "# no program ran").rstrip())
        click.echo("")
    for note in out.get("notes") or []:
        click.echo(f"{note}.")
    cands = out.get("candidates") or []
    for n, c in enumerate(cands, 1):
        click.echo(f"{n}. [{c['kind']} {c['score']:.2f}] {c['title']}")
        click.echo(f"   {c.get('why') or ''}")
        for line in _evidence_lines(c):
            click.echo(line)
        if c.get("message"):
            click.echo("   Draft message:")
            for line in c["message"].splitlines():
                click.echo(f"     {line}")
        click.echo("")
    if not cands and out.get("why_nothing"):
        click.echo(f"Nothing found: {out['why_nothing']}.")
    elif not cands:
        click.echo(
            "Nothing found. (`--show-code` shows what was searched; `backchannel entities` lists "
            "the names memory knows.)"
        )
    if not cands:
        for near in call(load_context(), "suggest_names", {"names": _names_asked(out)}):
            click.echo(f"{near['name']!r}: {near['suggestion']}")
    for err in out.get("errors") or []:
        click.echo(f"note: {err}", err=True)
    click.echo(
        f"run {out['run_id']}: {plural(out['assertions_touched'], 'assertion')} touched, "
        f"{plural(out['excerpts_sent'], 'excerpt')} sent to the drafter "
        f"({out.get('skill') or 'no skill'})",
        err=True,
    )


@click.group(invoke_without_command=True)
@click.option("--json", "json_output", is_flag=True, help="Print the list as JSON.")
@click.pass_context
def skills(ctx: click.Context, json_output: bool) -> None:
    """List skills (prepared traversals), or run one: `skills run NAME --arg key=value`."""
    if ctx.invoked_subcommand is not None:
        return
    from backchannel.cli.client import call

    rows = call(load_context(), "skills", {})
    if json_output:
        echo_json(rows)
        return
    for s in rows:
        origin = "" if s["origin"] == "builtin" else f"  ({s['origin']})"
        if s.get("error"):
            click.echo(f"{s['name']}{origin}\n  BROKEN, not used: {s['error']}")
            continue
        click.echo(f"{s['name']}{origin}\n  {s['doc']}")
        for k, v in s["params"].items():
            many = "; one value or a JSON list" if v.get("list") else ""
            click.echo(f"    --arg {k}=...  {v.get('doc', '')} (default {v.get('default')!r}{many})")
    _echo_agents(call(load_context(), "agents", {}))


def _echo_agents(rows: list[dict[str, Any]]) -> None:
    """Each agent's methods: ordinary Python, completed by a model (which), or offline (by what)."""
    click.echo("\nAgents (a method runs as python, by its model, offline, or in the sandbox):")
    shown = None
    for r in rows:
        if r.get("error"):
            click.echo(f"{r['agent']}  ({r['origin']})\n  BROKEN, not used: {r['error']}")
            continue
        if r["agent"] != shown:
            shown = r["agent"]
            origin = "" if r.get("origin") == "builtin" else f"  ({r['origin']})"
            click.echo(f"{shown}{origin}")
        how = {
            "model": f"model {r['model']}",
            "offline": f"offline ({r['offline'] or 'none: it needs a model'})",
            "agent": f"sub-agent {r['returns']} (role {r['role']}: {r['model']})",
        }
        click.echo(f"  {r['method']}: {how.get(r['runs'], r['runs'])}")


@skills.command("call")
@click.argument("agent")
@click.argument("method")
@click.option("--arg", "args", multiple=True, metavar="KEY=VALUE", help="A parameter of the method (repeatable).")
def skills_call(agent: str, method: str, args: tuple[str, ...]) -> None:
    """Call METHOD of the user agent AGENT (a class in the skills folder); prints the result as JSON."""
    from backchannel.cli.client import call

    parsed: dict[str, Any] = {}
    for a in args:
        if "=" not in a:
            raise UserError(f"--arg {a!r}: expected KEY=VALUE")
        k, v = a.split("=", 1)
        parsed[k.strip()] = _parse_value(v)
    echo_json(call(load_context(), "agent_call", {"name": agent, "method": method, "args": parsed}))


@skills.command("run")
@click.argument("name")
@click.option("--arg", "args", multiple=True, metavar="KEY=VALUE", help="A skill parameter (repeatable).")
@click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")
def skills_run(name: str, args: tuple[str, ...], json_output: bool) -> None:
    """Run skill NAME through the sandbox and print its candidates with evidence."""
    from backchannel.cli.client import call

    parsed: dict[str, Any] = {}
    for a in args:
        if "=" not in a:
            raise UserError(f"--arg {a!r}: expected KEY=VALUE")
        k, v = a.split("=", 1)
        parsed[k.strip()] = _parse_value(v)
    out = call(load_context(), "skill_run", {"name": name, "args": parsed})
    if json_output:
        echo_json(out)
        return
    if not out["ok"]:
        where = "" if out.get("origin") in (None, "builtin") else f" ({out['origin']})"
        raise UserError(f"skill {name}{where} failed: {out['error']}")
    for n, c in enumerate(out["candidates"], 1):
        click.echo(f"{n}. [{c['kind']} {c['score']:.2f}] {c['why']}")
        for line in _evidence_lines(c):
            click.echo(line)
    if not out["candidates"] and out.get("why_nothing"):
        click.echo(f"Nothing found: {out['why_nothing']}.")
    elif not out["candidates"]:
        click.echo("Nothing found. (`backchannel entities` lists the names memory knows.)")
    stats = out.get("stats") or {}
    click.echo(
        f"{stats.get('api_calls', 0)} API calls, {stats.get('assertions_touched', 0)} assertions touched, "
        f"{stats.get('wall_s', 0)} s",
        err=True,
    )


@click.group("import")
def import_group() -> None:
    """Import data from other tools (see docs/import-format.md)."""


@import_group.command("assertions")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "json_output", is_flag=True, help="Print the import report as JSON.")
def import_assertions(file: Path, json_output: bool) -> None:
    """Import entities and assertions with evidence from a JSONL FILE, in one
    transaction. Lines already imported (same id or content) are skipped; any bad
    line fails the whole import, naming each bad line."""
    from backchannel.cli.client import call

    out = call(load_context(), "import_assertions", {"path": str(file.resolve())})
    if json_output:
        echo_json(out)
        return
    click.echo(
        f"{out['assertions_imported']} assertions imported, {out['assertions_skipped']} already there; "
        f"{out['entities_created']} entities created, {out['entities_matched']} matched existing ones."
    )


@import_group.command("all")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "json_output", is_flag=True, help="Print the import report as JSON.")
def import_all(file: Path, json_output: bool) -> None:
    """Import a whole memory written by `backchannel export --all` (its memory.jsonl):
    entities, aliases, assertions with evidence, proposals, feedback and suppressions.
    Importing it twice adds nothing."""
    from backchannel.cli.client import call

    out = call(load_context(), "import_all", {"file": str(file.resolve())})
    if json_output:
        echo_json(out)
        return
    click.echo(
        f"{out['assertions_imported']} assertions, {out['proposals_imported']} proposals, "
        f"{out['feedback_imported']} verdicts, {out['suppressions_imported']} suppressions imported; "
        f"{out['entities_created']} entities created."
    )

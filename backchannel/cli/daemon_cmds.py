"""Commands about the daemon: run, status, proposals, show, trace, wake, service."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import click

from backchannel.cli.common import Context, UserError, echo_json, load_context
from backchannel.core.timeutil import db_now


@click.command()
def run() -> None:
    """Run the daemon in the foreground (what the systemd unit / LaunchAgent starts).

    It watches the inbox, the schedule, the calendars and the signals, and
    proposes only what passes the gate. SIGTERM stops it, SIGHUP reloads the config.
    """
    from backchannel.core import logging as dlog
    from backchannel.daemon.lockfile import AlreadyRunning
    from backchannel.daemon.service import run_daemon
    from backchannel.triggers.checks import problems

    ctx = load_context()
    bad = problems(ctx.settings)
    if bad:
        raise UserError(f"{ctx.paths.config_file} cannot be run with:\n  - " + "\n  - ".join(bad))
    dlog.setup(ctx.settings.logging.level, ctx.settings.logging.json_logs)
    try:
        code = run_daemon(ctx.paths, ctx.settings)
    except AlreadyRunning as exc:
        raise UserError(str(exc)) from None
    sys.exit(code)


def _when(v: Any) -> str:
    return str(v or "?").replace("T", " ")[:19]


def _echo_mail(mail: dict | None) -> None:
    """Email: each IMAP folder's last sync and error, the latest unreadable messages."""
    if not mail or not (mail.get("configured") or mail.get("messages")):
        return
    click.echo(
        f"mail: {mail['messages']} messages stored" + (f", account {mail['account']}" if mail.get("account") else "")
    )
    for f in mail.get("folders") or []:
        click.echo(
            f"  {f['folder']}: last sync {_when(f['last_sync_at']) if f['last_sync_at'] else 'never'}, "
            f"{f['messages']} stored, {f['failed']} unreadable, up to UID {f['last_uid']}"
            + (f"  problem: {f['last_error']}" if f.get("last_error") else "")
        )
    for e in (mail.get("recent_errors") or [])[:5]:
        click.echo(f"  unreadable {e['origin']}: {e['error']}")


@click.command()
@click.option("--json", "json_output", is_flag=True, help="Print the status as JSON.")
def status(json_output: bool) -> None:
    """Uptime, recent wakes, queue length, next scheduled wakes and today's spend."""
    from backchannel.cli.client import call

    st = call(load_context(), "status", {})
    if json_output:
        echo_json(st)
        return
    d = st.get("daemon")
    if d:
        click.echo(
            f"daemon: running, PID {d['pid']}, up {d['uptime_s']:.0f} s, queue {d['queue_length']}"
            + (f", busy with {d['current']['kind']}" if d.get("current") else ", idle")
        )
        if d.get("web"):  # the web app the daemon serves
            click.echo(f"web app: {d['web']} (`backchannel web --open` for a login link)")
    else:
        click.echo("daemon: not running (`backchannel run`, or `backchannel service install`)")
    nxt = (d or {}).get("next_wakes") or st.get("next_wakes") or []
    if nxt:
        click.echo("next wakes:")
        for w in nxt[:5]:
            click.echo(f"  {_when(w['at'])}  {w['kind']}" + (f"  {w['summary']}" if w.get("summary") else ""))
    meetings = st.get("upcoming_meetings") or []
    if meetings:
        click.echo("upcoming meetings:")
        for m in meetings:
            if not m["wakes_at"]:
                wake = "no known attendee: no wake"
            elif m["wakes_at"] <= db_now().isoformat():
                wake = "in its lead window: already considered"
            else:
                wake = f"wakes {_when(m['wakes_at'])}"
            click.echo(f"  {_when(m['starts_at'])}  {m['summary'] or '(untitled)'}  ({wake})")
    click.echo("recent wakes:")
    for r in st["recent_wakes"][:10]:
        click.echo(
            f"  {_when(r['started_at'])}  {r['wake_kind']:<12} {r['status']:<8} {r['id']}"
            + (f"  ({r['reason']})" if r.get("reason") else "")
        )
    if not st["recent_wakes"]:
        click.echo("  none yet")
    else:
        click.echo("  (what a run did and why it stayed silent: backchannel trace RUN_ID)")
        if not (st.get("proposals") or {}):
            _say_if_owner_absent(load_context())  # the scheduled wakes are silent: say why here
    asked = st.get("recent_asks") or []
    if asked:
        click.echo("recent questions (ask):")
        for r in asked:
            q = (r.get("question") or "")[:60]
            click.echo(f'  {_when(r["started_at"])}  {r["status"]:<8} {r["id"]}  "{q}"')
    for p in st.get("config_problems") or []:
        click.echo(f"config problem: {p}")
    trig = (d or {}).get("triggers") or {}
    for err in (trig.get("calendar") or {}).get("errors", [])[:3] + (trig.get("signals") or {}).get("errors", [])[:3]:
        click.echo(f"problem: {err}")
    _echo_mail(st.get("mail"))
    sp = st["spend_today"]
    click.echo(f"today's spend: {sp['calls']} model calls, {sp['tokens']} tokens, ${sp['cost_usd']:.4f}")
    if st["proposals"]:
        click.echo("proposals: " + ", ".join(f"{n} {k}" for k, n in st["proposals"].items()))
    waiting = (st.get("deliveries") or {}).get("waiting") or []
    if waiting:  # a failing channel keeps its deliveries queued: show them and why
        click.echo(f"deliveries not sent yet: {len(waiting)}")
        for w in waiting[:10]:
            click.echo(
                f"  {w['proposal_id']} {w['channel']}: {w['status']}, {w['attempts']} attempt(s)"
                + (" (stuck)" if w.get("stuck") else "")
                + (f", next {_when(w['next_attempt_at'])}" if w["status"] == "queued" else "")
                + (f": {w['last_error']}" if w.get("last_error") else "")
            )


@click.command()
@click.option("--status", "status_filter", help="Only this status (pending, delivered, dismissed, ...).")
@click.option("--limit", default=50, show_default=True)
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list.")
def proposals(status_filter: str | None, limit: int, json_output: bool) -> None:
    """List proposals, newest first."""
    from backchannel.cli.client import call

    rows = call(load_context(), "proposals", {"status": status_filter, "limit": limit})
    if json_output:
        echo_json(rows)
        return
    for r in rows:
        click.echo(f"{r['id']:<6} {r['status']:<10} {r['score']:.2f}  {_when(r['created_at'])}  {r['title']}")
    if not rows:
        click.echo("no proposals yet: the daemon stays silent until something deserves attention")


_PROPOSAL_ID = re.compile(r"^[Pp]-?\d+$")


@click.command()
@click.argument("ref")
@click.option("--json", "json_output", is_flag=True, help="Print as JSON.")
@click.option("--transcript/--no-transcript", default=False, help="For a source: also print the utterances.")
@click.pass_context
def show(cctx: click.Context, ref: str, json_output: bool, transcript: bool) -> None:
    """Show a proposal (P-7) with its evidence, or a source (by id, path or title)."""
    if not _PROPOSAL_ID.match(ref):
        from backchannel.cli import memory_cmds

        cctx.invoke(memory_cmds.show, source=ref, json_output=json_output, transcript=transcript)
        return
    from backchannel.cli.client import call

    pid = "P-" + ref.lstrip("Pp-")
    p = call(load_context(), "proposal", {"id": pid})
    if json_output:
        echo_json(p)
        return
    render_proposal(p)
    click.echo(f"trace: backchannel trace {p['id']}")


def render_proposal(p: dict) -> None:
    """Print a proposal with its evidence (used by `show` and `demo`)."""
    click.echo(f"{p['id']}  {p['title']}  [{p['kind']}, {p['status']}, score {p['score']:.2f}]")
    click.echo("")
    click.echo(p["body"])
    click.echo("")
    if p.get("why") and not (p.get("body") or "").startswith(p["why"]):  # the template body opens with it
        click.echo(f"why: {p['why']}")
    click.echo("evidence:")
    trust = {t["assertion_id"]: t for t in p.get("evidence_trust") or []}
    for e in p["evidence"]:
        t = trust.get(e.get("assertion_id"))
        weight = f"  [trust {float(t['trust']):.2f}" + (f", {t['why']}]" if t.get("why") else "]") if t else ""
        if not e.get("quote"):  # e.g. a CRM line imported without evidence
            click.echo(f"  #{e.get('assertion_id')} (no quote recorded){weight}")
            continue
        when = _when(e.get("said_at"))[:10]
        if e.get("date_origin") == "mtime":
            when = f"{when} (file date, not the meeting's)" if e.get("said_at") else "date unknown"
        click.echo(
            f"  #{e.get('assertion_id')} “{e.get('quote')}” — {e.get('speaker') or '?'}, "
            f"{when}, {e.get('source_id')}{weight}"
        )
    if p.get("action"):
        click.echo("action to approve:")
        click.echo("  " + json.dumps(p["action"], ensure_ascii=False))


def _trigger_words(trig: dict) -> str:
    """'ask: "brief me on Acme"' or 'signal wake signal:…'."""
    question = (trig.get("payload") or {}).get("question")
    if question:
        return f'{trig["kind"]}: "{question}"'
    path = (trig.get("payload") or {}).get("path")
    if trig.get("kind") == "inbox" and path:
        return f"inbox file {path}"
    return f"{trig['kind']} wake {trig['key']}" if trig.get("key") else f"{trig['kind']} wake"


def _render_evidence_trust(rows: list[dict], indent: str) -> None:
    """'#12 trust 0.18 (ambiguous reference): Marc knows Hannah Meyer'."""
    for e in rows:
        why = f" ({e['why']})" if e.get("why") else ""
        click.echo(f"{indent}#{e['assertion_id']} trust {float(e['trust']):.2f}{why}: {e['fact']}")


def _size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"


def _edge_spent(e: dict) -> str:
    sp = e.get("spent") or {}
    parts = []
    if sp.get("api_calls") is not None:
        parts.append(f"{sp['api_calls']} API calls, {sp.get('assertions_touched', 0)} assertions touched")
    if sp.get("calls") is not None:
        parts.append(f"{sp['calls']} call(s)" + (f", ${sp['cost_usd']:.4f}" if sp.get("cost_usd") else ""))
    if sp.get("attempts") is not None:
        parts.append(f"attempt {sp['attempts']}")
    return ", ".join(parts) or "-"


def _edge_evidence(e: dict) -> str:
    ev = e.get("evidence") or {}
    parts = [
        f"{label} {','.join(str(x) for x in ev[k][:6])}" + ("…" if len(ev[k]) > 6 else "")
        for k, label in (("events", "event"), ("model_calls", "model call"), ("outbox", "outbox"), ("runs", "run"))
        if ev.get(k)
    ]
    if ev.get("assertions"):
        parts.append(f"{len(ev['assertions'])} assertion(s)")
    return "; ".join(parts) or "-"


def _render_edges(rows: list) -> None:
    """The edge table: one row per governed edge crossing (docs/privacy.md, "Edges")."""
    click.echo("edges:" + ("" if rows else " none recorded"))
    if not rows:
        return
    from backchannel.config.edges import GRAPH_METHODS

    several = len({e.get("dedupe_key") for e in rows if e.get("dedupe_key")}) > 1  # a run's candidates
    table = [("edge", "actor -> target", "crossed", "spent", "outcome", "evidence")]
    for e in rows:
        crossed = f"{e['excerpts']} excerpts, {_size(int(e['bytes']))}" + (
            f", {e['tokens']} tokens" if e["tokens"] else ""
        )
        outcome = e["outcome"] if e["outcome"] == "ok" else f"{e['outcome'].upper()}: {e.get('reason') or '?'}"
        who = f"{e['actor']} -> {e['target']}" + (f" ({e['dedupe_key']})" if several and e.get("dedupe_key") else "")
        table.append((e["edge"], who, crossed, _edge_spent(e), outcome, _edge_evidence(e)))
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for r in table:
        click.echo("  " + "  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + f"  {r[4]}  [{r[5]}]")
    limited = [e for e in rows if e.get("may_reach")]
    if limited:
        seen = set()
        for e in limited:
            reach = "every graph API method" if set(e["may_reach"]) == set(GRAPH_METHODS) else ", ".join(e["may_reach"])
            line = f"{e['edge']}: {reach}"
            if line not in seen:
                seen.add(line)
                click.echo(f"  could reach ({line})" if len(line) < 200 else f"  could reach ({line[:197]}…)")


def _render_run_trace(t: dict) -> None:
    r, trig = t["run"], t["trigger"]
    click.echo(f"run {r['id']}  {r['status']}" + (f" ({r['reason']})" if r.get("reason") else ""))
    click.echo(f"trigger: {_trigger_words(trig)}")
    ing = t.get("ingest")
    if ing:
        from pathlib import PurePath

        name = PurePath(str(ing.get("path") or "?")).name
        if ing.get("duplicate_of"):
            what = f"skipped: duplicate of {ing['duplicate_of']}"
            if ing.get("redated"):
                from backchannel.extraction.redate import describe

                what += f"; {describe(ing['redated'])}"
        elif ing.get("status") == "ingested":
            what = f"ingested as {ing.get('source_id')}, {ing.get('assertions') or 0} assertion(s)"
        else:
            what = f"{ing.get('status')}: {ing.get('error') or '?'}"
        click.echo(f"file: {name}: {what}")
        if ing.get("moved_to"):
            click.echo(f"  moved to {ing['moved_to']}")
    sw = t.get("sweep")
    if sw:
        click.echo(
            f"sweep: {'skill ' + str(sw['skill']) if sw.get('skill') else 'generated code'}, "
            f"{sw['candidates']} candidate(s)" + (f"; errors: {'; '.join(sw['errors'])}" if sw.get("errors") else "")
        )
        click.echo(
            f"sandbox: {t['sandbox']['assertions_touched']} assertions touched, "
            f"{t['sandbox']['excerpts_sent']} excerpts passed to the drafter"
        )
    click.echo("candidates:" + ("" if t["candidates"] else " none"))
    for c in t["candidates"]:
        score = f", judge {c['judge']['score']:.2f}" if c.get("judge") else ""
        click.echo(f"  {c['dedupe_key']}{score}: {c.get('outcome') or '?'}")
        if c.get("judge") and c["judge"].get("signals"):  # the per-kind features behind the score
            click.echo("    judged on " + ", ".join(f"{k} {v:.2f}" for k, v in c["judge"]["signals"].items()))
        _render_evidence_trust((t.get("evidence_trust") or {}).get(c["dedupe_key"]) or [], "    ")
    sp = t["spend"]
    click.echo(f"model calls: {sp['calls']}, {sp['tokens']} tokens, ${sp['cost_usd']:.4f}")
    _render_edges(t.get("edges") or [])


@click.command()
@click.argument("ref")
@click.option("--json", "json_output", is_flag=True, help="Print the whole trace as JSON.")
def trace(ref: str, json_output: bool) -> None:
    """Why a proposal exists (P-7): trigger, skill or code, sandbox stats, model
    calls, gate decisions and delivery. Given a run id (R..., from `backchannel
    status`), what that run did and why each candidate was or was not proposed."""
    from backchannel.cli.client import call

    t = call(load_context(), "trace", {"id": ref})
    if json_output:
        echo_json(t)
        return
    if "proposal" not in t:
        _render_run_trace(t)
        return
    p, trig, sw, sb = t["proposal"], t["trigger"], t["sweep"], t["sandbox"]
    click.echo(f"{p['id']}  {p['title']}  ({p['status']})")
    click.echo(f"trigger: {_trigger_words(trig)}  run {t['run']['id']} ({t['run']['status']})")
    click.echo(
        f"sweep: {'skill ' + str(sw['skill']) if sw.get('skill') else 'generated code'}, "
        f"{sw.get('attempts') or 1} attempt(s), {sw['candidates']} candidate(s)"
    )
    if sw.get("code") and not sw.get("skill"):
        click.echo("  code:\n    " + str(sw["code"]).replace("\n", "\n    "))
    click.echo(
        f"sandbox: {sb['assertions_touched']} assertions touched, {sb['excerpts_sent']} excerpts passed to the drafter"
        + (f"; {json.dumps(sb['stats'])}" if sb.get("stats") else "")
    )
    j = t.get("judge")
    if j:
        sig = ", ".join(f"{k} {v:.2f}" for k, v in j["signals"].items())
        click.echo(f"judge ({j['model']}): score {j['score']:.2f} from {sig}")
        for r in j.get("reasons", []):
            click.echo(f"  - {r}")
    if t.get("evidence_trust"):
        click.echo("evidence trust:")
        _render_evidence_trust(t["evidence_trust"], "  ")
    click.echo("gate:")
    for g in t["gate"]:
        click.echo(f"  {g['stage']}: {'passed' if g['passed'] else 'SUPPRESSED'} ({g['reason']})")
    others = t.get("other_suppressions_in_run") or []
    if others:
        click.echo(f"other candidates of this run, suppressed ({len(others)}; `backchannel trace {t['run']['id']}`):")
        for g in others[:5]:
            click.echo(f"  {g.get('dedupe_key')}: {g.get('check')} ({g.get('reason')})")
    sp = t["spend"]
    click.echo(f"model calls: {sp['calls']}, {sp['tokens']} tokens, ${sp['cost_usd']:.4f}")
    for c in t["model_calls"]:
        click.echo(f"  {c['role']} {c['model']} {c['outcome']} {c['prompt_tokens']}+{c['completion_tokens']} tokens")
    _render_edges(t.get("edges") or [])
    click.echo("delivery:" + ("" if t["delivery"] else " none (no channel configured)"))
    for d in t["delivery"]:
        click.echo(
            f"  {d['channel']}: {d['status']} after {d['attempts']} attempt(s)"
            + (f" ({d['last_error']})" if d.get("last_error") else "")
        )
    for f in t.get("feedback") or []:
        click.echo(
            f"feedback: {f['verdict']} via {f['via']}"
            + (f" (scope {f['scope']})" if f.get("scope") else "")
            + (f": {f['reason']}" if f.get("reason") else "")
        )
    if t.get("suppressed_since"):
        click.echo("suppressed since:")
        for x in t["suppressed_since"]:
            click.echo(f"  {str(x['at'])[:19]}  run {x['run_id']}  {x['check']}: {x['reason']}")


@click.command()
@click.argument("kind", type=click.Choice(["sweep", "calendar", "signals", "mail"]))
@click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--wait",
    "wait_s",
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="With a running daemon: wait this long for a queued sweep to run, then say what it did "
    "(0: don't; no wait either when the daemon is busy with another wake).",
)
def wake(kind: str, json_output: bool, wait_s: float) -> None:
    """Wake now: a sweep, a calendar refresh, a signal poll, or an IMAP
    sync (mail). With a running
    daemon it is queued there (a sweep is waited for, and what it did is printed);
    otherwise it runs here and reports what it did."""
    from backchannel.cli import wake_report
    from backchannel.cli.client import call

    ctx = load_context()
    busy = None
    if kind == "sweep" and wait_s > 0 and not json_output:
        d = call(ctx, "status", {}).get("daemon") or {}
        busy = (d.get("current") or {}).get("kind") or ("queue" if d.get("queue_length") else None)
    out = call(ctx, "wake", {"kind": kind})
    until = wake_report.quiet_until(ctx.settings)
    if busy and not out.get("ran_in_process"):  # it runs after what is ahead of it: no point waiting here
        click.echo(
            f"queued: {out.get('enqueued')} wake in the running daemon, behind the {busy} wake it is busy with"
            + (f"; proposals are held by quiet hours until {until}" if until else "")
            + " (see `backchannel status`)"
        )
        return
    if not out.get("ran_in_process") and out.get("key") and wait_s > 0 and not json_output:
        click.echo(
            f"queued: {out.get('enqueued')} wake in the running daemon"
            + (f"; proposals are held by quiet hours until {until}" if until else "")
            + "; waiting for it..."
        )
        ran = wake_report.wait_for_run(lambda op, args: call(ctx, op, args), out["key"], wait_s)
        if ran is None:
            click.echo(f"still queued or running after {wait_s:.0f} s: see `backchannel status`")
        else:
            click.echo(wake_report.run_line(ran, until))
            if not ran.get("proposals"):
                _say_if_owner_absent(ctx)
        return
    if json_output:
        echo_json(out)
        return
    if not out.get("ran_in_process"):
        click.echo(
            f"queued: {out.get('enqueued')} wake in the running daemon"
            + (f"; proposals are held by quiet hours until {until}" if until else "")
            + " (see `backchannel status`)"
        )
        return
    for r in out["runs"]:
        click.echo(wake_report.run_line(r, until))
    if not out["runs"]:
        click.echo("nothing to do")
    if kind == "sweep" and not any(r.get("proposals") for r in out["runs"]):
        _say_if_owner_absent(ctx)


def _say_if_owner_absent(ctx: Any) -> None:
    """Why a sweep is quiet when the owner speaks in none of the meetings, and what to do."""
    from backchannel.cli.client import call
    from backchannel.ops.memory_ops import owner_absent_note

    note = owner_absent_note(call(ctx, "owner_presence", {}))
    if note:
        click.echo(note, err=True)


@click.group()
def service() -> None:
    """Install, remove or print the systemd user unit / launchd LaunchAgent."""


def _kind(systemd: bool, launchd: bool) -> str:
    from backchannel.daemon.units import default_kind

    if systemd and launchd:
        raise UserError("choose one of --systemd and --launchd")
    return "systemd" if systemd else "launchd" if launchd else default_kind()


@service.command("print")
@click.option("--systemd", is_flag=True, help="The systemd user unit.")
@click.option("--launchd", is_flag=True, help="The launchd LaunchAgent plist.")
def service_print(systemd: bool, launchd: bool) -> None:
    """Print the unit for this installation (warnings, if any, go to stderr)."""
    from backchannel.daemon import units

    ctx = load_context()
    kind = _kind(systemd, launchd)
    click.echo(units.render(kind, ctx.paths).decode(), nl=False)
    for w in _unit_warnings(kind, ctx):
        click.echo(f"warning: {w}", err=True)


def _unit_warnings(kind: str, ctx: Context) -> list[str]:
    from backchannel.daemon import units

    if kind == "launchd":
        return units.check_macos_folders(ctx.settings, ctx.paths)
    return units.check_private_tmp(ctx.settings, ctx.paths)


@service.command("install")
@click.option("--systemd", is_flag=True)
@click.option("--launchd", is_flag=True)
@click.option("--no-start", is_flag=True, help="Only write the unit file; do not enable or start it.")
def service_install(systemd: bool, launchd: bool, no_start: bool) -> None:
    """Write the unit and enable + start it."""
    from backchannel.daemon import units

    ctx = load_context()
    kind = _kind(systemd, launchd)
    for w in _unit_warnings(kind, ctx):
        click.echo(f"warning: {w}", err=True)
    out = units.install(kind, ctx.paths, activate=not no_start)
    click.echo(f"wrote {out['path']}")
    for s in out["steps"]:
        click.echo(f"  $ {s['command']}  -> {s['rc']}" + (f": {s['output']}" if s["output"] else ""))
    if any(s["rc"] != 0 for s in out["steps"]):
        raise UserError("the unit was written but could not be started; see above")


@service.command("uninstall")
@click.option("--systemd", is_flag=True)
@click.option("--launchd", is_flag=True)
@click.option("--no-stop", is_flag=True, help="Only remove the unit file.")
def service_uninstall(systemd: bool, launchd: bool, no_stop: bool) -> None:
    """Stop, disable and remove the unit."""
    from backchannel.daemon import units

    out = units.uninstall(_kind(systemd, launchd), deactivate=not no_stop)
    click.echo(f"{'removed' if out['removed'] else 'no unit at'} {out['path']}")

"""Feedback commands: dismiss, accept, snooze, approve, stats."""

from __future__ import annotations

from typing import Any

import click

from backchannel.cli.common import UserError, echo_json, load_context, plural


def _call(name: str, args: dict[str, Any]) -> Any:
    from backchannel.cli.client import call

    return call(load_context(), name, args)


@click.command()
@click.argument("proposal_id")
@click.option("--reason", help="Why it is not useful (remembered, and shown when a similar one is suppressed).")
@click.option(
    "--scope",
    type=click.Choice(["this", "entity", "kind"]),
    default="this",
    show_default=True,
    help="this: this proposal; entity: anything about its people/organisations; kind: every proposal of its kind.",
)
@click.option("--entity", help="With --scope entity: only this one of the proposal's entities (id or name).")
@click.option("--until", "until", metavar="DATE", help="Suppress only until this date (YYYY-MM-DD); default: for good.")
def dismiss(proposal_id: str, reason: str | None, scope: str, entity: str | None, until: str | None) -> None:
    """Dismiss a proposal; similar ones are not proposed again."""
    out = _call("dismiss", {"id": proposal_id, "reason": reason, "scope": scope, "until": until, "entity": entity})
    until_txt = f" until {until}" if until else ""
    click.echo(
        f"{out['id']} dismissed (scope {out['scope']}{until_txt})" + (f": {out['reason']}" if out["reason"] else "")
    )


@click.command()
@click.argument("proposal_id")
def accept(proposal_id: str) -> None:
    """Mark a proposal as useful."""
    out = _call("accept", {"id": proposal_id})
    click.echo(f"{out['id']} {out['status']}")


@click.command()
@click.argument("proposal_id")
@click.option("--until", "until", metavar="DATE", required=True, help="When to bring it back (YYYY-MM-DD).")
def snooze(proposal_id: str, until: str) -> None:
    """Put a proposal aside until a date; it is delivered again then."""
    out = _call("snooze", {"id": proposal_id, "until": until})
    click.echo(f"{out['id']} snoozed until {until}")


def _show_draft(action: dict[str, Any], digest: str) -> None:
    click.echo(f"To:      {action['to']}")
    click.echo(f"Subject: {action['subject']}")
    click.echo("")
    click.echo(action["body"].rstrip("\n"))
    click.echo("")
    click.echo(f"sha256 {digest}")


@click.command()
@click.argument("proposal_id")
@click.option("--edit", is_flag=True, help="Open $EDITOR on the draft and approve what you save.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "json_output", is_flag=True, help="Print the result as JSON.")
def approve(proposal_id: str, edit: bool, yes: bool, json_output: bool) -> None:
    """Approve a proposal's drafted message and send it.

    The approval binds to the sha256 of the exact payload shown (or saved from
    the editor); the message goes out with backchannel's own email settings.
    """
    from backchannel.delivery.approval import action_hash, from_editable, problem, to_editable

    info = _call("proposal_action", {"id": proposal_id})
    action = info["action"]
    edited = None
    if edit:
        text = click.edit(to_editable(action), extension=".txt", require_save=True)
        if text is None:
            raise UserError("the draft was not saved; nothing approved")
        try:
            edited = from_editable(text, channel=action.get("channel", "email"))
        except ValueError as exc:
            raise UserError(f"cannot read the edited draft: {exc}; nothing approved") from None
        action = edited
    digest = action_hash(action)
    if not json_output:
        _show_draft(action, digest)
    why_not = problem(action)
    if why_not:  # refuse before asking: there is nothing sendable to confirm
        fix = (
            "run it again and correct the To: line"
            if edited is not None
            else f"run `backchannel approve {info['id']} --edit` and put their address in the To: line"
        )
        raise UserError(f"cannot send this draft: {why_not}; {fix}. Nothing approved.")
    if not yes and not click.confirm(f"Send this to {action['to']}?", default=False):
        raise UserError("nothing approved")
    args: dict[str, Any] = {"id": info["id"], "expected_hash": digest}
    if edited is not None:
        args["action"] = edited
    out = _call("approve", args)
    if json_output:
        echo_json(out)
    elif out.get("sent"):
        click.echo(f"{out['id']} approved and sent to {out['to']}")
    else:
        click.echo(
            f"{out['id']} approved; sending to {out['to']} is queued: {out.get('detail') or 'the daemon sends it'}"
        )


@click.command()
@click.option("--days", default=30, show_default=True, type=click.IntRange(min=1), help="How far back to count.")
@click.option("--json", "json_output", is_flag=True, help="Print the figures as JSON.")
def stats(days: int, json_output: bool) -> None:
    """Proposals per day, acceptance and dismissal rates, suppressions by reason."""
    s = _call("stats", {"days": days})
    if json_output:
        echo_json(s)
        return

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:.0%}"

    click.echo(
        f"last {plural(s['days'], 'day')}: {plural(s['proposals'], 'proposal')}, "
        f"accepted {pct(s['acceptance_rate'])}, dismissed {pct(s['dismissal_rate'])}"
    )
    for d in s["per_day"]:
        click.echo(f"  {d['day']}  {'#' * min(d['proposals'], 40)} {d['proposals']}")
    if s.get("per_kind"):
        click.echo("per kind (precision = accepted / judged):")
        weights = s.get("judge_weights") or {}
        for kind, k in s["per_kind"].items():
            w = weights.get(kind, {})
            how = (
                f"weights fitted on {w['examples']} verdicts"
                if w.get("source") == "fitted"
                else "prior weights"
                if w
                else ""
            )
            click.echo(
                f"  {kind:<13} {k['proposals']:>3} proposed, {k['accepted']} accepted, {k['dismissed']} "
                f"dismissed, precision {pct(k['precision'])}" + (f"; {how}" if how else "")
            )
    if s["suppressed_by_check"]:
        click.echo("suppressed by the gate:")
        for k, n in s["suppressed_by_check"].items():
            click.echo(f"  {k:<12} {n}")
    if s["rejections_by_scope"]:
        click.echo("  rejection memory: " + ", ".join(f"{k} {n}" for k, n in s["rejections_by_scope"].items()))
    if s["dismissal_reasons"]:
        click.echo("dismissal reasons:")
        for r in s["dismissal_reasons"]:
            click.echo(f"  {r['n']:>3}  {r['reason']} ({r['scope']})")

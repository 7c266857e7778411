"""The pages behind the signed feedback links (served by web/feedback_links.py through
the operations `feedback_link_get` and `feedback_link_post`).

GET shows a confirmation page and changes NOTHING: mail scanners and chat link
previews open every GET. Only a POST carrying the signed token in its form body
changes state; since the token is the credential and a cross-site page cannot
read it, the form is CSRF-safe without a cookie. Forged tokens answer 403,
expired ones 410, unknown proposals 404.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.delivery.links import LinkError, read_token
from backchannel.delivery.render import load_proposal, render, view

if TYPE_CHECKING:
    from backchannel.memory.store import Store

# The status a verdict leaves the proposal in: posting it again is a no-op.
DONE_STATUS = {"dismiss": "dismissed", "accept": "accepted", "snooze": "snoozed", "approve": "approved"}
BUTTONS = {"dismiss": "Dismiss", "accept": "Accept", "snooze": "Snooze", "approve": "Approve and send this exact draft"}


def _page(status: int, heading: str, message: str = "", **ctx: Any) -> tuple[int, str]:
    ctx.setdefault("p", None)
    ctx.setdefault("form", False)
    ctx.setdefault("verdict", None)
    return status, render("page.html.j2", heading=heading, message=message, **ctx)


@dataclass(frozen=True)
class _Refused:
    """The page answering a link that names no proposal to act on."""

    page: tuple[int, str]


def _resolve(store: Store, settings: Settings, paths: Paths, token: str) -> tuple[Any, dict[str, Any]] | _Refused:
    try:
        claim = read_token(settings, paths, token)
    except LinkError as exc:
        return _Refused(_page(exc.status, "Link not valid" if exc.status == 403 else "Link expired", str(exc)))
    p = load_proposal(store, claim.proposal_id)
    if p is None:
        return _Refused(_page(404, "Unknown proposal", f"{claim.proposal_id} does not exist (any more)."))
    return claim, p


def _stale_approval(claim: Any, p: dict[str, Any]) -> bool:
    from backchannel.delivery.approval import action_hash

    return claim.verdict == "approve" and (not p["action"] or action_hash(p["action"]) != claim.action_hash)


def handle_get(store: Store, settings: Settings, paths: Paths, token: str) -> tuple[int, str]:
    """The confirmation page for a signed link. Reads only."""
    got = _resolve(store, settings, paths, token)
    if isinstance(got, _Refused):
        return got.page
    claim, p = got
    v = view(settings, paths, p)
    if _stale_approval(claim, p):
        return _page(
            409,
            "The draft changed",
            "This link approved an earlier version of the draft. "
            f"Run `backchannel approve {p['id']}` to see and approve the current one.",
            p=v,
        )
    if p["status"] == DONE_STATUS[claim.verdict] or p["status"] in ("sent", "expired"):
        return _page(200, f"{p['id']} is already {p['status']}", "Nothing to do.", p=v)
    if claim.verdict == "approve" and v["action_problem"]:
        return _page(
            409,
            "This draft cannot be sent as it stands",
            f"{v['action_problem']}. Run `backchannel approve {p['id']} --edit` and put their address in the To: line.",
            p=v,
        )
    return _page(
        200,
        f"{BUTTONS[claim.verdict]}: {p['id']}?",
        "Nothing changes until you confirm.",
        p=v,
        form=True,
        verdict=claim.verdict,
        token=token,
        form_action="",
        button=BUTTONS[claim.verdict],
    )


def handle_post(store: Store, settings: Settings, paths: Paths, form: dict[str, str]) -> tuple[int, str]:
    """Apply the verdict named by the signed token in `form` ("t"), with the form's
    reason/scope/until. Posting the same verdict twice is a no-op."""
    from backchannel.ops import OpEnv, OpError
    from backchannel.ops import feedback_ops as ops  # they land here too: one way to record a verdict

    got = _resolve(store, settings, paths, form.get("t", ""))
    if isinstance(got, _Refused):
        return got.page
    claim, p = got
    if _stale_approval(claim, p):
        return _page(409, "The draft changed", "This link approved an earlier version of the draft; nothing was sent.")
    if p["status"] == DONE_STATUS[claim.verdict]:
        return _page(200, f"{p['id']} is already {p['status']}", "Nothing changed.")
    env = OpEnv(store=store, settings=settings, paths=paths)
    try:
        if claim.verdict == "dismiss":
            scope = form.get("scope") or "this"
            out = ops.dismiss(
                env, p["id"], reason=form.get("reason"), scope=scope, until=form.get("until") or None, via="link"
            )
            msg = f"Dismissed ({scope}). It will not be proposed again" + (
                f" until {form['until']}." if form.get("until") else "."
            )
        elif claim.verdict == "accept":
            out = ops.accept(env, p["id"], via="link")
            msg = "Accepted. Thank you: this teaches backchannel what is worth your time."
        elif claim.verdict == "snooze":
            out = ops.snooze(env, p["id"], until=form.get("until") or None, via="link")
            msg = f"Snoozed until {form.get('until')}."
        else:
            out = ops.approve(env, p["id"], expected_hash=claim.action_hash, via="link")
            msg = (
                f"Approved and sent to {out['to']}."
                if out.get("sent")
                else f"Approved; sending to {out['to']} is queued ({out.get('detail') or 'will retry'})."
            )
    except OpError as exc:
        return _page(400, "Not done", str(exc))
    return _page(200, f"{out['id']}: {out['status']}", msg)

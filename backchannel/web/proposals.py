"""Proposals: the list, one proposal (why now, evidence, the draft), and the verdicts
(accept, dismiss, snooze, approve) through the same operations as the CLI, `via="web"`."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backchannel.ops.daemon_ops import PROPOSAL_STATUSES as STATUSES
from backchannel.ops.feedback_ops import SCOPES
from backchannel.web import graph_view
from backchannel.web.app import call, flash, form, handler, render, see_other
from backchannel.web.bridge import OpFailed


@handler
async def index(request: Request) -> Response:
    return see_other("/proposals")


@handler
async def listing(request: Request) -> Response:
    status = request.query_params.get("status") or None
    rows = await call(request, "proposals", status=status, limit=200, full=True)
    return render(request, "proposals.html", title="Proposals", rows=rows, status=status, statuses=STATUSES)


async def _detail(request: Request, pid: str, status_code: int = 200, **extra: Any) -> Response:
    p = await call(request, "proposal", id=pid)
    draft = await call(request, "proposal_action", id=pid) if p.get("action") else None
    return render(
        request,
        "proposal.html",
        status_code,
        title=f"{p['id']}: {p['title']}",
        p=p,
        draft=draft,
        scopes=SCOPES,
        ties=await graph_view.proposal_path(request, p),
        **extra,
    )


@handler
async def detail(request: Request) -> Response:
    return await _detail(request, request.path_params["pid"])


async def _verdict(request: Request, op: str, **args: Any) -> Response:
    pid = request.path_params["pid"]
    try:
        result = await call(request, op, id=pid, via="web", **args)
    except OpFailed as exc:
        return await _detail(request, pid, 400, error=str(exc))
    flash(request, "ok", _said(op, result))
    return see_other(f"/proposals/{result.get('id', pid)}")


def _said(op: str, result: dict) -> str:
    if op == "approve":
        if result.get("sent"):
            return f"Approved and sent to {result['to']}."
        return f"Approved; queued for {result['to']}: {result.get('detail') or 'it goes out with the next delivery'}."
    if op == "snooze":
        return f"Snoozed until {str(result.get('until'))[:16].replace('T', ' ')} UTC."
    if op == "dismiss":
        return f"Dismissed (scope: {result.get('scope')}); it will not be proposed again."
    return "Accepted."


@handler
async def accept(request: Request) -> Response:
    await form(request)
    return await _verdict(request, "accept")


@handler
async def dismiss(request: Request) -> Response:
    f = await form(request)
    return await _verdict(
        request, "dismiss", reason=f.get("reason") or None, scope=f.get("scope") or "this", until=f.get("until") or None
    )


@handler
async def snooze(request: Request) -> Response:
    f = await form(request)
    return await _verdict(request, "snooze", until=f.get("until") or None)


@handler
async def approve(request: Request) -> Response:
    """Approve the payload whose hash the page showed; an edited one travels whole, and
    `approve` re-checks its hash, so what is sent is exactly what was on screen."""
    f = await form(request)
    action = None
    if f.get("action"):
        try:
            action = json.loads(f["action"])
        except ValueError:
            raise OpFailed("the edited draft could not be read; edit it again") from None
        if not isinstance(action, dict):
            raise OpFailed("the edited draft could not be read; edit it again")
    return await _verdict(request, "approve", expected_hash=f.get("expected_hash") or None, action=action)


@handler
async def edit(request: Request) -> Response:
    """An edited draft is shown back, exactly as it would be sent, with its own hash:
    approving it is a separate, explicit step."""
    from backchannel.delivery.approval import action_hash, from_editable, problem

    pid = request.path_params["pid"]
    f = await form(request)
    text = f"To: {f.get('to', '').strip()}\nSubject: {f.get('subject', '').strip()}\n\n{f.get('body', '')}"
    try:
        action = from_editable(text)
    except ValueError as exc:
        return await _detail(request, pid, 400, error=f"the edited draft cannot be used: {exc}")
    p = await call(request, "proposal", id=pid)
    return render(
        request,
        "approve_review.html",
        title=f"Review {p['id']}",
        p=p,
        action=action,
        action_json=json.dumps(action, ensure_ascii=False),
        hash=action_hash(action),
        problem=problem(action),
    )


def routes() -> list[Route]:
    return [
        Route("/", index, methods=["GET"]),
        Route("/proposals", listing, methods=["GET"]),
        Route("/proposals/{pid}", detail, methods=["GET"]),
        Route("/proposals/{pid}/accept", accept, methods=["POST"]),
        Route("/proposals/{pid}/dismiss", dismiss, methods=["POST"]),
        Route("/proposals/{pid}/snooze", snooze, methods=["POST"]),
        Route("/proposals/{pid}/approve", approve, methods=["POST"]),
        Route("/proposals/{pid}/edit", edit, methods=["POST"]),
    ]

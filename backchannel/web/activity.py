"""What the daemon did: recent wakes and today's spend (status), why a proposal exists
or why a wake stayed silent, step by step (trace), and model usage by day and role."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backchannel.web.app import call, handler, render
from backchannel.web.bridge import OpFailed


@handler
async def activity(request: Request) -> Response:
    st = await call(request, "status")
    return render(request, "activity.html", title="Activity", st=st)


@handler
async def trace(request: Request) -> Response:
    ref = request.path_params["ref"]
    t = await call(request, "trace", id=ref)
    pretty = lambda v: json.dumps(v, indent=2, ensure_ascii=False, sort_keys=True)  # noqa: E731
    if "proposal" in t:
        return render(request, "trace_proposal.html", title=f"Trace {t['proposal']['id']}", t=t, pretty=pretty)
    return render(request, "trace_run.html", title=f"Trace {t['run']['id']}", t=t, pretty=pretty)


@handler
async def usage(request: Request) -> Response:
    try:
        days = int(request.query_params.get("days") or 7)
    except ValueError:
        raise OpFailed("days must be a whole number") from None
    u = await call(request, "usage", days=days)
    return render(request, "usage.html", title="Usage", u=u, days=days)


def routes() -> list[Route]:
    return [
        Route("/activity", activity, methods=["GET"]),
        Route("/trace/{ref}", trace, methods=["GET"]),
        Route("/usage", usage, methods=["GET"]),
    ]

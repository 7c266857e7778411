"""The web app's privacy pages: the sources with their scope and consent state, and
rectification (correct or retract an assertion from an entity's page). The MCP server
offers neither correction nor retraction."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backchannel.web.app import call, flash, form, handler, render, see_other
from backchannel.web.bridge import OpFailed

CORRECTABLE = ("qualifier", "object", "literal", "valid_from", "valid_to")


@handler
async def sources(request: Request) -> Response:
    rows = await call(request, "sources")
    consent = await call(request, "consent_list")
    return render(request, "sources.html", title="Sources", sources=rows, consent=consent)


def _back(f: dict[str, str]) -> str:
    back = f.get("back") or "/memory"
    return back if back.startswith("/memory") else "/memory"  # never a redirect off the site


@handler
async def correct(request: Request) -> Response:
    aid = request.path_params["aid"]
    f = await form(request)
    changes = {k: f[k].strip() for k in CORRECTABLE if (f.get(k) or "").strip()}
    if not changes:
        raise OpFailed("say what is right: a title (qualifier), an object, a literal or dates")
    out = await call(
        request, "correct_assertion", assertion_id=aid, reason=f.get("reason") or None, via="web", **changes
    )
    flash(request, "ok", f"#{aid} corrected: superseded by #{out['new_id']} ({', '.join(out['fields'])}).")
    return see_other(_back(f))


@handler
async def retract(request: Request) -> Response:
    aid = request.path_params["aid"]
    f = await form(request)
    reason = (f.get("reason") or "").strip()
    if not reason:
        raise OpFailed("a retraction needs a reason")
    await call(request, "retract_assertion", assertion_id=aid, reason=reason, via="web")
    flash(request, "ok", f"#{aid} retracted: {reason}")
    return see_other(_back(f))


def routes() -> list[Route]:
    return [
        Route("/sources", sources, methods=["GET"]),
        Route("/assertions/{aid:int}/correct", correct, methods=["POST"]),
        Route("/assertions/{aid:int}/retract", retract, methods=["POST"]),
    ]

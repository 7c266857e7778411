"""The signed feedback links of the mails (`/feedback?t=TOKEN`), on every listener of the
one app (the daemon's loopback port, the web app's), so `[delivery] public_base_url` may
point at either. The pages and verdicts are `ops/feedback_pages.py`'s, through the
operations `feedback_link_get` and `feedback_link_post`. No login: the signed token is
the credential, and GET changes nothing (mail scanners open every link)."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from backchannel.web.app import call, handler

MAX_FORM_BYTES = 64 * 1024  # a feedback form is a few hundred bytes (guards.MAX_FEEDBACK_BODY too)
# No referrer leaks the token, nothing external loads. Its own CSP allows the inline style
# of the mail-sized page; the pages' guard adds none over these.
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}


def _page(result: dict) -> Response:
    return HTMLResponse(result["html"], status_code=int(result["status"]), headers=SECURITY_HEADERS)


@handler
async def feedback_get(request: Request) -> Response:
    return _page(await call(request, "feedback_link_get", token=request.query_params.get("t", "")))


@handler
async def feedback_post(request: Request) -> Response:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        return HTMLResponse("<p>form posts only</p>", status_code=415, headers=SECURITY_HEADERS)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return HTMLResponse("<p>too large</p>", status_code=413, headers=SECURITY_HEADERS)
    form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
    if "t" not in form and request.query_params.get("t"):
        form["t"] = request.query_params["t"]
    return _page(await call(request, "feedback_link_post", form=form))


def routes() -> list[Route]:
    return [Route("/feedback", feedback_get, methods=["GET"]), Route("/feedback", feedback_post, methods=["POST"])]

"""Logging in and out: the one-time link, the token form, the logout button."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backchannel.web.app import (
    cookie_name,
    flash,
    form,
    handler,
    page_auth,
    render,
    see_other,
    session,
    set_session_cookie,
)


async def login_page(request: Request) -> Response:
    """GET /login?t=TOKEN spends a one-time link; GET /login alone shows the token form."""
    auth = page_auth(request)
    token = request.query_params.get("t")
    if token:
        why = auth.check_link(token)
        if why is None:
            return _logged_in(request)
        return _form(request, why, 403)
    current = session(request)
    if current and current.authenticated:
        return see_other("/proposals")
    return _form(request, None, 200)


def _form(request: Request, error: str | None, status: int) -> Response:
    s = session(request) or page_auth(request).new_session(authenticated=False)
    request.state.session = s  # the form's CSRF token
    response = render(request, "login.html", status, error=error)
    set_session_cookie(request, response, s)
    return response


def _logged_in(request: Request) -> Response:
    auth = page_auth(request)
    old = session(request)
    if old is not None:
        auth.end(old)  # a fresh id at login: one planted before it is worthless
    s = auth.new_session(authenticated=True)
    request.state.session = s
    flash(request, "ok", "Logged in.")
    response = see_other("/proposals")  # the token leaves the address bar at once
    set_session_cookie(request, response, s)
    return response


@handler
async def login_post(request: Request) -> Response:
    fields = await form(request)
    if not page_auth(request).check_token(fields.get("token", "")):
        return _form(request, "that is not the API token (see <state dir>/api.token)", 403)
    return _logged_in(request)


@handler
async def logout(request: Request) -> Response:
    await form(request)
    s = session(request)
    if s is not None:
        page_auth(request).end(s)
    response = see_other("/login")
    response.delete_cookie(cookie_name(request), path="/")
    return response


def routes() -> list[Route]:
    return [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login_post, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]

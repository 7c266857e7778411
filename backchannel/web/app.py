"""The one ASGI app of the local server: the local API (`/ops/NAME`, `/health`, bearer
token: `local_api.py`), the signed feedback links (`/feedback`) and the web app's pages
(one module per page group), all behind `guards.ListenerGuard` (Host check on TCP, body
caps and deadline, one request per connection). The pages have a guard of their own
(login, Origin, CSRF, security headers), jinja2 templates with autoescape, and a
stylesheet and scripts served from the package (static/, with the vendored Cytoscape.js);
nothing from another origin.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from backchannel.core.ties import link_words
from backchannel.web.auth import Auth, Session
from backchannel.web.bridge import OpFailed

HERE = Path(__file__).parent
MAX_FORM_BYTES = 256 * 1024  # an edited draft is a few KiB
PUBLIC_PATHS = ("/login", "/static/", "/feedback")  # /feedback: its signed token is the credential
SECURITY_HEADERS = {
    # Scripts and styles only from this app's own static files (no inline script, nothing from
    # another origin); forms post only to this app.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # a login link in the address bar must not leak
    "Cache-Control": "no-store",
}


@dataclass
class WebState:
    ops: Any  # bridge.DaemonOperations | bridge.ThreadedOperations
    auth: Auth | None  # None: no pages served, only the feedback links
    settings: Any
    templates: jinja2.Environment
    allowed_hosts: set[str]


def _short(value: Any, length: int = 16) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' (or a date as is); anything else unchanged."""
    if not value:
        return ""
    text = str(value).replace("T", " ")
    return text[:length]


def said_when(a: dict[str, Any]) -> str:
    """When an assertion was said, with the caveat a file date needs: 'date unknown (file date
    2026-11-20)' when only the transcript file's mtime dates its meeting."""
    if a.get("date_origin") == "mtime":
        if a.get("said_at"):
            return f"{_short(a['said_at'])} (file date, not the meeting's)"
        day = _short(a.get("file_date"), 10)
        return f"date unknown (file date {day})" if day else "date unknown"
    return _short(a.get("said_at")) or "date unknown"


def validity(a: dict[str, Any]) -> str:
    """'valid from 2024-01-01 to now', 'valid from unknown to 2025-06-30', 'due 2025-05-09'; '' when neither end is known."""
    start, end = _short(a.get("valid_from"), 10), _short(a.get("valid_to"), 10)
    if not start and not end:
        return ""
    if a.get("predicate") == "committed_to" and end and not start:
        return f"due {end}"
    return f"valid from {start or 'unknown'} to {end or 'now'}"


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True, trim_blocks=True, lstrip_blocks=True
    )
    env.filters["short"] = _short
    env.filters["day"] = lambda v: _short(v, 10)
    env.filters["said_when"] = said_when
    env.filters["validity"] = validity
    env.filters["link_words"] = lambda a: link_words(a.get("predicate") or "", a.get("stance"))
    return env


def state(request: Request) -> WebState:
    return request.app.state.web


def session(request: Request) -> Session | None:
    return getattr(request.state, "session", None)


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    s = session(request)
    flash = list(s.flash) if s else []
    if s:
        s.flash.clear()
    html = (
        state(request)
        .templates.get_template(template)
        .render(
            request_path=request.url.path,
            csrf=s.csrf if s else "",
            logged_in=bool(s and s.authenticated),
            flash=flash,
            **context,
        )
    )
    return HTMLResponse(html, status_code=status_code)


def flash(request: Request, kind: str, text: str) -> None:
    s = session(request)
    if s is not None:
        s.flash.append((kind, text))


def cookie_name(request: Request) -> str:
    """One cookie per port: browsers do not tell ports apart, and the daemon's app and a
    `backchannel web` may both run on this host."""
    return f"bc_session_{request.url.port or 80}"


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def call(request: Request, name: str, **args: Any) -> Any:
    return await state(request).ops.call(name, args)


class FormRefused(Exception):
    """A POST refused before any operation ran (wrong type, too large, bad CSRF token)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


async def form(request: Request) -> dict[str, str]:
    """The POSTed form (urlencoded only), after its CSRF token was checked; the guard
    has already refused a foreign Origin. Raises FormRefused (`handler` turns it into a page)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        raise FormRefused(415, "forms only (application/x-www-form-urlencoded)")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormRefused(413, "form too large")
    try:
        fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8"), keep_blank_values=True).items()}
    except UnicodeDecodeError:
        raise FormRefused(400, "the form is not UTF-8") from None
    if not Auth.csrf_ok(session(request), fields.pop("csrf", None)):
        raise FormRefused(403, "the form's security token is missing or stale: reload the page and try again")
    return fields


def handler(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Turn an operation's refusal into the page saying why (400), and a refused form into its status."""

    async def wrapped(request: Request) -> Response:
        try:
            return await fn(request)
        except OpFailed as exc:
            return render(request, "error.html", 400, title="Not done", message=str(exc))
        except FormRefused as exc:
            return render(request, "error.html", exc.status, title="Refused", message=str(exc))

    wrapped.__name__ = fn.__name__
    return wrapped


class Guard(BaseHTTPMiddleware):
    """In front of every page: session, login, Origin; security headers on the way out.
    (The Host was checked before, by guards.ListenerGuard, for every route.)"""

    async def dispatch(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        st = state(request)
        request.state.session = (
            st.auth.session_from_cookie(request.cookies.get(cookie_name(request))) if st.auth else None
        )
        public = any(
            request.url.path == p or (p.endswith("/") and request.url.path.startswith(p)) for p in PUBLIC_PATHS
        )
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin and origin != "null" and (urlsplit(origin).hostname or "").lower() not in st.allowed_hosts:
                return self._headers(PlainTextResponse("cross-site form refused", status_code=403))
        elif request.method not in ("GET", "HEAD"):
            return self._headers(PlainTextResponse("method not allowed", status_code=405))
        s = request.state.session
        if st.auth and not public and not (s and s.authenticated):
            if request.method == "POST":
                return self._headers(PlainTextResponse("log in first", status_code=403))
            return self._headers(see_other("/login"))
        return self._headers(await call_next(request))

    @staticmethod
    def _headers(response: Response) -> Response:
        for k, v in SECURITY_HEADERS.items():
            response.headers.setdefault(k, v)
        return response


def page_auth(request: Request) -> Auth:
    """The login state, for the routes that exist only when pages are served (`auth` is set then)."""
    auth = state(request).auth
    if auth is None:
        raise RuntimeError("the web app's pages are not served here: there is no login state")
    return auth


def set_session_cookie(request: Request, response: Response, s: Session) -> None:
    auth = page_auth(request)
    response.set_cookie(
        cookie_name(request),
        auth.cookie_value(s),
        max_age=int(auth.session_s),
        path="/",
        httponly=True,
        samesite="strict",
        secure=False,
    )  # loopback http: no TLS to require


def build_app(ops: Any, settings: Any, paths: Any, api_token: str, *, daemon: Any = None, pages: bool = True) -> Any:
    """The one app. `ops` runs the operations behind the pages and the feedback links;
    `daemon` (with `call_op` and `info`), when given, serves the local API too; `pages`
    adds the web app's pages (without them: the feedback links, and the API)."""
    from backchannel.web import activity, feedback_links, graph_view, login, memory, proposals, rights
    from backchannel.web.guards import ListenerGuard, allowed_hosts
    from backchannel.web.local_api import LocalApi

    auth = (
        Auth(
            paths.state_dir,
            api_token,
            session_hours=settings.web.session_hours,
            link_minutes=settings.web.login_link_minutes,
        )
        if pages
        else None
    )
    routes: list[Any] = [*feedback_links.routes()]
    if pages:
        routes += [
            *login.routes(),
            *proposals.routes(),
            *memory.routes(),
            *graph_view.routes(),
            *activity.routes(),
            *rights.routes(),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]
    site = Starlette(routes=routes, middleware=[Middleware(Guard)])
    hosts = allowed_hosts(settings)
    site.state.web = WebState(ops=ops, auth=auth, settings=settings, templates=_templates(), allowed_hosts=hosts)
    api = LocalApi(daemon, api_token) if daemon is not None else None
    return ListenerGuard(OneApp(api, site), hosts)


class OneApp:
    """/health and /ops/* to the local API (when served), everything else to the site."""

    def __init__(self, api: Any, site: Starlette):
        self.api, self.site = api, site

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        from backchannel.web.guards import send_json
        from backchannel.web.local_api import is_api_path

        if scope["type"] == "http" and is_api_path(scope["path"]):
            if self.api is None:
                return await send_json(send, 404, {"ok": False, "error": f"no such endpoint {scope['path']}"})
            return await self.api(scope, receive, send)
        await self.site(scope, receive, send)

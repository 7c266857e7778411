"""The feedback endpoint behind the signed links.

GET shows a confirmation page and changes NOTHING: mail scanners and chat link
previews open every GET. Only a POST carrying the signed token in its form body
changes state; since the token is the credential and a cross-site page cannot
read it, the form is CSRF-safe without a cookie. Forged tokens answer 403,
expired ones 410, unknown proposals 404.

The daemon mounts `handle_get` / `handle_post` under /feedback on its local API
(exempt from the API token: the signed link is the credential); `serve_feedback`
is a tiny standalone server for tests and for running without the daemon.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from backchannel.config import Paths, Settings
from backchannel.delivery.links import LinkError, read_token
from backchannel.delivery.render import load_proposal, render, view

# Every response carries these: no referrer leaks the token, nothing external loads.
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": ("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'"),
}
MAX_FORM_BYTES = 64 * 1024
# The status a verdict leaves the proposal in: posting it again is a no-op.
DONE_STATUS = {"dismiss": "dismissed", "accept": "accepted", "snooze": "snoozed", "approve": "approved"}
BUTTONS = {"dismiss": "Dismiss", "accept": "Accept", "snooze": "Snooze", "approve": "Approve and send this exact draft"}


def _page(status: int, heading: str, message: str = "", **ctx: Any) -> tuple[int, str]:
    ctx.setdefault("p", None)
    ctx.setdefault("form", False)
    ctx.setdefault("verdict", None)
    return status, render("page.html.j2", heading=heading, message=message, **ctx)


def _resolve(store: Any, settings: Settings, paths: Paths, token: str) -> tuple[Any, dict[str, Any]] | tuple[int, str]:
    try:
        claim = read_token(settings, paths, token)
    except LinkError as exc:
        return _page(exc.status, "Link not valid" if exc.status == 403 else "Link expired", str(exc))
    p = load_proposal(store, claim.proposal_id)
    if p is None:
        return _page(404, "Unknown proposal", f"{claim.proposal_id} does not exist (any more).")
    return claim, p


def _stale_approval(claim: Any, p: dict[str, Any]) -> bool:
    from backchannel.delivery.approval import action_hash

    return claim.verdict == "approve" and (not p["action"] or action_hash(p["action"]) != claim.action_hash)


def handle_get(store: Any, settings: Settings, paths: Paths, token: str) -> tuple[int, str]:
    """The confirmation page for a signed link. Reads only."""
    got = _resolve(store, settings, paths, token)
    if isinstance(got[0], int):
        return got  # type: ignore[return-value]
    claim, p = got
    v = view(settings, paths, p)
    if _stale_approval(claim, p):
        return _page(409, "The draft changed", "This link approved an earlier version of the draft. "
                     f"Run `backchannel approve {p['id']}` to see and approve the current one.", p=v)
    if p["status"] == DONE_STATUS[claim.verdict] or p["status"] in ("sent", "expired"):
        return _page(200, f"{p['id']} is already {p['status']}", "Nothing to do.", p=v)
    if claim.verdict == "approve" and v["action_problem"]:
        return _page(409, "This draft cannot be sent as it stands", f"{v['action_problem']}. Run "
                     f"`backchannel approve {p['id']} --edit` and put their address in the To: line.", p=v)
    return _page(200, f"{BUTTONS[claim.verdict]}: {p['id']}?", "Nothing changes until you confirm.",
                 p=v, form=True, verdict=claim.verdict, token=token, form_action="", button=BUTTONS[claim.verdict])


def handle_post(store: Any, settings: Settings, paths: Paths, form: dict[str, str]) -> tuple[int, str]:
    """Apply the verdict named by the signed token in `form` ("t"), with the form's
    reason/scope/until. Posting the same verdict twice is a no-op."""
    from backchannel.ops import OpEnv, OpError
    from backchannel.ops import feedback_ops as ops

    got = _resolve(store, settings, paths, form.get("t", ""))
    if isinstance(got[0], int):
        return got  # type: ignore[return-value]
    claim, p = got
    if _stale_approval(claim, p):
        return _page(409, "The draft changed", "This link approved an earlier version of the draft; nothing was sent.")
    if p["status"] == DONE_STATUS[claim.verdict]:
        return _page(200, f"{p['id']} is already {p['status']}", "Nothing changed.")
    env = OpEnv(store=store, settings=settings, paths=paths)
    try:
        if claim.verdict == "dismiss":
            scope = form.get("scope") or "this"
            out = ops.dismiss(env, p["id"], reason=form.get("reason"), scope=scope, until=form.get("until") or None,
                              via="link")
            msg = f"Dismissed ({scope}). It will not be proposed again" + (
                f" until {form['until']}." if form.get("until") else ".")
        elif claim.verdict == "accept":
            out = ops.accept(env, p["id"], via="link")
            msg = "Accepted. Thank you: this teaches backchannel what is worth your time."
        elif claim.verdict == "snooze":
            out = ops.snooze(env, p["id"], until=form.get("until") or None, via="link")
            msg = f"Snoozed until {form.get('until')}."
        else:
            out = ops.approve(env, p["id"], expected_hash=claim.action_hash, via="link")
            msg = (f"Approved and sent to {out['to']}." if out.get("sent")
                   else f"Approved; sending to {out['to']} is queued ({out.get('detail') or 'will retry'}).")
    except OpError as exc:
        return _page(400, "Not done", str(exc))
    return _page(200, f"{out['id']}: {out['status']}", msg)


def parse_form(body: bytes) -> dict[str, str]:
    """An application/x-www-form-urlencoded body as {name: first value}."""
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


def serve_feedback(store: Any, settings: Settings, paths: Paths, host: str = "127.0.0.1",
                   port: int = 0) -> tuple[HTTPServer, str]:
    """Serve /feedback on a background thread; returns (server, base URL).
    Requests are handled one at a time (the store's connection is not shared)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # one request at a time: an idle or slow client must not hold the server

        def log_message(self, *args: Any) -> None:  # tokens are in URLs: keep them out of logs
            pass

        def _send(self, status: int, html: str) -> None:
            body = html.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for k, v in SECURITY_HEADERS.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path.rstrip("/") != "/feedback":
                return self._send(404, "<p>not found</p>")
            token = parse_qs(url.query).get("t", [""])[0]
            with lock:
                self._send(*handle_get(store, settings, paths, token))

        def do_POST(self) -> None:
            if urlsplit(self.path).path.rstrip("/") != "/feedback":
                return self._send(404, "<p>not found</p>")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                return self._send(400, "<p>bad Content-Length</p>")
            if length < 0 or length > MAX_FORM_BYTES:  # read(-1) would wait for the client to hang up
                return self._send(413, "<p>too large</p>")
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if ctype != "application/x-www-form-urlencoded":
                return self._send(415, "<p>form posts only</p>")
            form = parse_form(self.rfile.read(length))
            with lock:
                self._send(*handle_post(store, settings, paths, form))

    server = HTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="feedback-http",
                     daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"

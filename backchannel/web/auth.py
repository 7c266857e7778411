"""Who may use the web app: a one-time login link or the API token opens a session.

- The signing key is `<state>/web.secret` (0600), shared by every process of this
  user, so `backchannel web --open` can mint a link that a daemon serving the app
  accepts. A link is signed, expires after `[web] login_link_minutes`, and works
  once (its nonce is remembered by the server until it would have expired).
- The token login takes the API token (`<state>/api.token`, owner-only), for when
  no link is at hand.
- Sessions live in the server's memory; the cookie carries only a signed session id
  (`bc_session_<port>`; HttpOnly, SameSite=Strict, Path=/). Logging in replaces the session, so an id
  planted before login is worthless after it.
- Every POST carries the session's CSRF token; a POST whose Origin is another site
  is refused even before that.
"""

from __future__ import annotations

import hmac
import math
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, Signer, URLSafeTimedSerializer

from backchannel.core.secretfile import create_secret

LOGIN_SALT = "backchannel.web.login"
COOKIE_SALT = "backchannel.web.session"
MAX_ANONYMOUS = 1000  # anonymous sessions (a login form's CSRF token) kept at most


def secret_key(state_dir: Path) -> str:
    """The app's signing key, created (0600) at first use."""
    f = state_dir / "web.secret"
    if f.is_file():
        key = f.read_text().strip()
        if key:
            os.chmod(f, 0o600)
            return key
    f.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    create_secret(f, key + "\n")  # first writer wins: two processes starting together agree on one key
    return f.read_text().strip()


def login_link(base_url: str, state_dir: Path) -> str:
    """A one-time login link for the app at `base_url`."""
    token = URLSafeTimedSerializer(secret_key(state_dir), salt=LOGIN_SALT).dumps({"n": secrets.token_urlsafe(16)})
    return f"{base_url.rstrip('/')}/login?t={token}"


@dataclass
class Session:
    sid: str
    csrf: str
    authenticated: bool
    created: float = field(default_factory=time.monotonic)
    flash: list[tuple[str, str]] = field(default_factory=list)  # (kind, text) shown once on the next page


class Auth:
    def __init__(self, state_dir: Path, api_token: str, *, session_hours: float, link_minutes: float):
        self.key = secret_key(state_dir)
        self.api_token = api_token
        self.session_s = session_hours * 3600
        self.link_s = link_minutes * 60
        self.sessions: dict[str, Session] = {}
        self.used_nonces: dict[str, float] = {}  # nonce -> when it would have expired anyway
        self.signer = Signer(self.key, salt=COOKIE_SALT)

    # -- sessions -----------------------------------------------------------
    def session_from_cookie(self, value: str | None) -> Session | None:
        if not value:
            return None
        try:
            sid = self.signer.unsign(value.encode()).decode()
        except BadSignature:
            return None
        s = self.sessions.get(sid)
        if s is None or time.monotonic() - s.created > self.session_s:
            self.sessions.pop(sid, None)
            return None
        return s

    def new_session(self, authenticated: bool) -> Session:
        self._prune()
        s = Session(secrets.token_urlsafe(24), secrets.token_urlsafe(24), authenticated)
        self.sessions[s.sid] = s
        return s

    def end(self, session: Session) -> None:
        self.sessions.pop(session.sid, None)

    def cookie_value(self, session: Session) -> str:
        return self.signer.sign(session.sid.encode()).decode()

    def _prune(self) -> None:
        now = time.monotonic()
        for sid, s in list(self.sessions.items()):
            if now - s.created > self.session_s:
                del self.sessions[sid]
        anonymous = [s for s in self.sessions.values() if not s.authenticated]
        for s in sorted(anonymous, key=lambda s: s.created)[: max(0, len(anonymous) - MAX_ANONYMOUS)]:
            del self.sessions[s.sid]
        for n, until in list(self.used_nonces.items()):
            if until < now:
                del self.used_nonces[n]

    # -- logging in ---------------------------------------------------------
    def check_link(self, token: str) -> str | None:
        """None when the one-time token is good (and now spent), else why not."""
        try:
            # itsdangerous compares whole-second ages with `>`: the floor expires a link at the same second.
            data: Any = URLSafeTimedSerializer(self.key, salt=LOGIN_SALT).loads(token, max_age=math.floor(self.link_s))
        except SignatureExpired:
            return "this login link has expired; run `backchannel web --open` for a new one"
        except BadSignature:
            return "this login link is not valid; run `backchannel web --open` for a new one"
        nonce = str(data.get("n", "")) if isinstance(data, dict) else ""
        if not nonce or nonce in self.used_nonces:
            return "this login link was already used; run `backchannel web --open` for a new one"
        self.used_nonces[nonce] = time.monotonic() + self.link_s
        return None

    def check_token(self, token: str) -> bool:
        return bool(token) and hmac.compare_digest(token.strip().encode(), self.api_token.encode())

    @staticmethod
    def csrf_ok(session: Session | None, submitted: str | None) -> bool:
        return (
            session is not None
            and bool(submitted)
            and hmac.compare_digest(session.csrf.encode(), str(submitted).encode())
        )

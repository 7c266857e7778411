"""Signed feedback links.

A link carries a token signed (HMAC-SHA256, itsdangerous) with a key generated once and kept in the
data dir (mode 0600). The token names the proposal, the verdict and, for an
approval, the exact payload hash; it expires after `delivery.link_ttl_hours`.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from backchannel.config import Paths, Settings
from backchannel.core.secretfile import create_secret

KEY_FILE = "feedback_link.key"
SALT = "backchannel.feedback.v1"
VERDICTS = ("accept", "dismiss", "snooze", "approve")


class LinkError(Exception):
    """A token that is forged, malformed or expired. `status` is the HTTP code to answer."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class LinkClaim:
    proposal_id: str
    verdict: str
    action_hash: str | None = None


def link_key(paths: Paths) -> bytes:
    """The HMAC key, created on first use with mode 0600 (secretfile.create_secret: two
    racing processes cannot both write one; the loser reads the winner's, whole)."""
    path = Path(paths.data_dir) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        create_secret(path, secrets.token_hex(32))
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise LinkError(f"{path} is truncated; delete it to make a new key (old links stop working)", 500)
    return key


def _serializer(paths: Paths) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(link_key(paths), salt=SALT, signer_kwargs={"digest_method": hashlib.sha256})


def make_token(paths: Paths, proposal_id: str, verdict: str, action_hash: str | None = None) -> str:
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}")
    data: dict[str, Any] = {"p": proposal_id, "v": verdict}
    if action_hash:
        data["h"] = action_hash
    return _serializer(paths).dumps(data)


def read_token(settings: Settings, paths: Paths, token: str) -> LinkClaim:
    """Verify a token; raises LinkError(410) when expired, LinkError(403) when forged."""
    max_age = int(settings.delivery.link_ttl_hours * 3600)
    try:
        data = _serializer(paths).loads(token or "", max_age=max_age)
    except SignatureExpired:
        raise LinkError("this link has expired; use the command line instead", 410) from None
    except BadSignature:
        raise LinkError("this link is not valid", 403) from None
    if not isinstance(data, dict) or data.get("v") not in VERDICTS or not isinstance(data.get("p"), str):
        raise LinkError("this link is not valid", 403)
    return LinkClaim(data["p"], data["v"], data.get("h"))


def base_url(settings: Settings, paths: Paths) -> str:
    """Where the feedback endpoint is reachable: `delivery.public_base_url`, else
    the local API's address (the port file the daemon writes when port = 0)."""
    if settings.delivery.public_base_url:
        return settings.delivery.public_base_url.rstrip("/")
    port = settings.api.port
    if not port:
        port_file = Path(paths.state_dir) / "api.port"
        if port_file.is_file():
            text = port_file.read_text().strip()
            port = int(text) if text.isdigit() else 0
    host = settings.api.host
    return f"http://{host}:{port}" if port else f"http://{host}"


def feedback_url(
    settings: Settings, paths: Paths, proposal_id: str, verdict: str, action_hash: str | None = None
) -> str:
    token = make_token(paths, proposal_id, verdict, action_hash)
    return f"{base_url(settings, paths)}/feedback?t={quote(token)}"


def links_for(settings: Settings, paths: Paths, proposal: dict[str, Any]) -> dict[str, str]:
    """The feedback links a message about `proposal` carries. No approve link for a
    draft that cannot be sent as it stands (its recipient is a name, not an address)."""
    from backchannel.delivery.approval import problem

    links = {v: feedback_url(settings, paths, proposal["id"], v) for v in ("accept", "dismiss", "snooze")}
    if proposal.get("action_hash") and not problem(proposal.get("action")):
        links["approve"] = feedback_url(settings, paths, proposal["id"], "approve", proposal["action_hash"])
    return links

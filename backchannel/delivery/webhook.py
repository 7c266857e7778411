"""A generic JSON webhook, signed.

Headers: `X-Backchannel-Timestamp: <unix seconds>`,
`X-Backchannel-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` with a
key from the secrets dir, and `X-Backchannel-Delivery: <idempotency key>` so the
receiver can drop a duplicate. A receiver checks the signature and rejects a
timestamp outside its tolerance (replay); `verify` does both.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

from backchannel.config import Paths, Settings, read_secret
from backchannel.delivery._http import DeliveryError, post_json

SIG_HEADER = "X-Backchannel-Signature"
TS_HEADER = "X-Backchannel-Timestamp"
ID_HEADER = "X-Backchannel-Delivery"


def sign(key: bytes, timestamp: int, body: bytes) -> str:
    mac = hmac.new(key, str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    key: bytes, body: bytes, timestamp: str, signature: str, *, now: float | None = None, tolerance_s: float = 300.0
) -> bool:
    """True when `signature` signs this body at this timestamp and the timestamp is fresh."""
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    now = time.time() if now is None else now
    if abs(now - ts) > tolerance_s:
        return False
    return hmac.compare_digest(sign(key, ts, body), signature or "")


def payload(v: dict[str, Any], idem_key: str) -> dict[str, Any]:
    return {
        "type": "proposal",
        "delivery": idem_key,
        "proposal": {k: v[k] for k in ("id", "kind", "title", "body", "why", "score", "evidence")},
        "draft": v["action"],
        "links": v["links"],
    }


def send(settings: Settings, paths: Paths, v: dict[str, Any], idem_key: str, *, now: float | None = None) -> str:
    cfg = settings.delivery.webhook
    if not cfg.url:
        raise DeliveryError("webhook is not configured: set delivery.webhook.url")
    key = read_secret(paths, cfg.secret_name)
    if not key:
        raise DeliveryError(f"webhook HMAC key secret {cfg.secret_name!r} not found")
    body = json.dumps(payload(v, idem_key), sort_keys=True, default=str).encode()
    ts = int(time.time() if now is None else now)
    headers = {TS_HEADER: str(ts), SIG_HEADER: sign(key.encode(), ts, body), ID_HEADER: idem_key}
    status = post_json(cfg.url, body, headers)
    return f"webhook HTTP {status}"

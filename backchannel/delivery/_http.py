"""A JSON POST over urllib (no extra dependency); non-2xx raises DeliveryError."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request


class DeliveryError(Exception):
    """A channel could not deliver; the outbox keeps the delivery queued."""


def post_json(url: str, body: bytes, headers: dict[str, str] | None = None, timeout: float = 20.0) -> int:
    # The URL may be the credential (a Slack webhook): no message below may quote it.
    try:
        req = urllib.request.Request(url, data=body, method="POST")
        if req.type not in ("http", "https"):
            raise ValueError("not http(s)")
    except ValueError:
        raise DeliveryError("the endpoint URL is not a valid http(s) URL") from None
    req.add_header("Content-Type", "application/json")
    req.add_header("User-Agent", "backchannel")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        raise DeliveryError(f"HTTP {exc.code} from the endpoint") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DeliveryError(f"cannot reach the endpoint: {type(reason).__name__}: {reason}") from None
    except (http.client.HTTPException, ValueError) as exc:  # InvalidURL quotes the URL's path
        raise DeliveryError(f"the endpoint URL or its reply is not valid ({type(exc).__name__})") from None

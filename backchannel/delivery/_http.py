"""A JSON POST through the one HTTP client (core/http.py); non-2xx raises DeliveryError."""

from __future__ import annotations

import http.client

from backchannel.core import http as client


class DeliveryError(Exception):
    """A channel could not deliver; the outbox keeps the delivery queued."""


MAX_REPLY_BYTES = 1024 * 1024  # a webhook's answer is only read for its status


def post_json(url: str, body: bytes, headers: dict[str, str] | None = None, timeout: float = 20.0) -> int:
    # The URL may be the credential (a Slack webhook): no message below may quote it.
    # Redirects are not followed: a 3xx is an answer the endpoint gave, not a delivery.
    if not url.startswith(("http://", "https://")):
        raise DeliveryError("the endpoint URL is not a valid http(s) URL")
    sent = {"Content-Type": "application/json", "User-Agent": "backchannel", **(headers or {})}
    try:
        resp = client.request("POST", url, body=body, headers=sent, timeout=timeout, max_bytes=MAX_REPLY_BYTES)
    except ValueError:  # not http(s), no host, a port that is not a number
        raise DeliveryError("the endpoint URL is not a valid http(s) URL") from None
    except OSError as exc:
        raise DeliveryError(f"cannot reach the endpoint: {type(exc).__name__}: {exc}") from None
    except client.ResponseTooLarge as exc:
        raise DeliveryError(f"the endpoint's reply is larger than {exc.limit} bytes") from None
    except http.client.HTTPException as exc:  # InvalidURL quotes the URL's path
        raise DeliveryError(f"the endpoint URL or its reply is not valid ({type(exc).__name__})") from None
    if not resp.ok:
        raise DeliveryError(f"HTTP {resp.status} from the endpoint")
    return resp.status

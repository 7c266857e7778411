"""Keep the delivery credentials out of every error text the outbox stores.

The channels already word their errors without the secret, but a library's
exception may quote its input (a URL, a login); every error and detail goes
through `scrub` before it reaches the outbox row, the event log, `status`,
`trace` or a log line.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from backchannel.config import Paths, Settings, read_secret

MASK = "[secret]"
MIN_LEN = 4  # shorter values would mask ordinary words


def secret_values(settings: Settings, paths: Paths) -> list[str]:
    """Every configured delivery secret, and the parts of a secret URL that carry a token."""
    d = settings.delivery
    names = (d.email.password_secret, d.slack.webhook_secret, d.webhook.secret_name, d.apprise_urls_secret)
    values: set[str] = set()
    for name in names:
        try:
            raw = read_secret(paths, name)
        except (OSError, ValueError):
            continue
        for line in (raw or "").splitlines() or [raw or ""]:
            line = line.strip()
            if not line:
                continue
            values.add(line)
            if "://" in line:  # a URL's path, query and userinfo carry its token, alone or re-quoted
                u = urlsplit(line)
                values.update(
                    x
                    for x in (u.path, u.query, u.password or "", u.username or "", u.netloc if "@" in u.netloc else "")
                    if x and x != "/"
                )
                rest = line.split("://", 1)[1]
                values.update(t for t in re.split(r"[/:@?&=#]+", rest) if len(t) >= 8 and t != u.hostname)
    return sorted((v for v in values if len(v) >= MIN_LEN), key=len, reverse=True)


def scrub(settings: Settings, paths: Paths, text: str | None) -> str | None:
    """`text` with every delivery secret replaced by [secret]."""
    if not text:
        return text
    for value in secret_values(settings, paths):
        text = text.replace(value, MASK)
    return text

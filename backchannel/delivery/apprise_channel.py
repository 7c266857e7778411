"""Any apprise URL (Teams, Telegram, Matrix, Discord, ntfy, json://...): one URL
per line in the `apprise_urls` secret, since the URLs carry tokens."""

from __future__ import annotations

from typing import Any

from backchannel.config import Paths, Settings, read_secret
from backchannel.delivery._http import DeliveryError


def urls(settings: Settings, paths: Paths) -> list[str]:
    raw = read_secret(paths, settings.delivery.apprise_urls_secret) or ""
    return [u.strip() for u in raw.splitlines() if u.strip() and not u.strip().startswith("#")]


def send(settings: Settings, paths: Paths, v: dict[str, Any], idem_key: str) -> str:
    import apprise  # imported here: only this channel needs it

    targets = urls(settings, paths)
    if not targets:
        raise DeliveryError(f"apprise secret {settings.delivery.apprise_urls_secret!r} not found or empty")
    ap = apprise.Apprise()
    for u in targets:
        if not ap.add(u):
            raise DeliveryError("an apprise URL in the secret is not valid")
    links = "\n".join(f"{k.capitalize()}: {url}" for k, url in v["links"].items())
    body = f"{v['markdown'].rstrip()}\n\n{links}\n\n({v['id']})"
    # Plain text: markdown from a transcript ("[Approve](https://evil)") must not render as a link.
    if not ap.notify(title=f"{v['id']}: {v['title']}", body=body, body_format=apprise.NotifyFormat.TEXT):
        raise DeliveryError("apprise could not notify at least one target")
    return f"apprise {len(targets)} target(s)"

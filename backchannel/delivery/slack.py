"""Slack incoming webhook with Block Kit. The webhook URL is a secret (it is the
credential), read from the secrets dir and never logged."""

from __future__ import annotations

import json
from typing import Any

from backchannel.config import Paths, Settings, read_secret
from backchannel.delivery._http import DeliveryError, post_json


def _text(s: str, limit: int = 2900) -> str:
    # Block Kit section text is capped at 3000 characters.
    return s if len(s) <= limit else s[: limit - 1] + "…"


def escape(s: str) -> str:
    """Slack mrkdwn control characters: text from a transcript must not become a
    link (`<https://evil|Approve>`) or a mention (`<!channel>`)."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def blocks(v: dict[str, Any]) -> dict[str, Any]:
    """The Block Kit payload for one proposal view (see render.chat_text)."""
    buttons = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": label},
            "url": v["links"][verdict],
            "action_id": f"bc_{verdict}",
        }
        for verdict, label in (
            ("accept", "Accept"),
            ("dismiss", "Dismiss"),
            ("snooze", "Snooze"),
            ("approve", "Approve draft"),
        )
        if verdict in v["links"]
    ]
    out = [
        {"type": "header", "text": {"type": "plain_text", "text": _text(v["title"], 150)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": _text(escape(v["markdown"]))}},
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": escape(f"{v['id']} · {v['kind']} · score {v['score']:.2f}")}],
        },
        {"type": "actions", "elements": buttons},
    ]
    return {"text": escape(f"{v['id']}: {v['title']}"), "blocks": out}


def send(settings: Settings, paths: Paths, v: dict[str, Any], idem_key: str) -> str:
    url = read_secret(paths, settings.delivery.slack.webhook_secret)
    if not url:
        raise DeliveryError(f"Slack webhook secret {settings.delivery.slack.webhook_secret!r} not found")
    status = post_json(url, json.dumps(blocks(v)).encode())
    return f"slack HTTP {status}"

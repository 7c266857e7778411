"""Approval binds to the exact outbound payload: its sha256 over canonical JSON."""

from __future__ import annotations

import hashlib
import json
from typing import Any

ACTION_FIELDS = ("channel", "to", "subject", "body")


def canonical(action: dict[str, Any]) -> bytes:
    return json.dumps(action, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def action_hash(action: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(action)).hexdigest()


def parse_action(raw: Any) -> dict[str, Any] | None:
    """The proposals.action column (JSON text or dict) as a dict, or None."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = json.loads(raw)
    return dict(raw) if raw else None


def validate_action(action: dict[str, Any]) -> None:
    """Refuse payloads the harness cannot send: only email, one recipient."""
    missing = [f for f in ACTION_FIELDS if not isinstance(action.get(f), str)]
    if missing:
        raise ValueError(f"the action lacks {', '.join(missing)}")
    if action["channel"] != "email":
        raise ValueError(f"cannot send an action over {action['channel']!r}; only email is supported")
    to = action["to"].strip()
    if "@" not in to:
        # The drafter only knows an address when a calendar invitation gave one; else "to" is a name.
        raise ValueError(f"the recipient {to!r} is a name, not an email address (none is known for them)")
    if (
        any(c in to for c in ",;\r\n <>\t")
        or not to.isprintable()
        or to.count("@") != 1
        or to.startswith("@")
        or to.endswith("@")
    ):
        raise ValueError(f"the action's recipient must be one plain address, got {to!r}")


def problem(action: dict[str, Any] | None) -> str | None:
    """Why this draft cannot be approved as it stands (None: it can)."""
    if not action:
        return None
    try:
        validate_action(action)
    except ValueError as exc:
        return str(exc)
    return None


def to_editable(action: dict[str, Any]) -> str:
    """The draft as the user edits it: headers, a blank line, the body."""
    return f"To: {action['to']}\nSubject: {action['subject']}\n\n{action['body']}"


def from_editable(text: str, channel: str = "email") -> dict[str, Any]:
    head, sep, body = text.replace("\r\n", "\n").partition("\n\n")
    if not sep:
        raise ValueError("keep the To: and Subject: lines, then a blank line, then the body")
    headers: dict[str, str] = {}
    for line in head.splitlines():
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"not a header line: {line!r}")
        headers[name.strip().lower()] = value.strip()
    if "to" not in headers or "subject" not in headers:
        raise ValueError("the draft needs a To: and a Subject: line")
    extra = sorted(set(headers) - {"to", "subject"})
    if extra:  # a Cc: or Bcc: added here would otherwise be dropped without a word
        raise ValueError(
            f"only To: and Subject: can be set, not {', '.join(h.capitalize() + ':' for h in extra)} "
            "(the message goes to one recipient)"
        )
    return {"channel": channel, "to": headers["to"], "subject": headers["subject"], "body": body.rstrip("\n") + "\n"}

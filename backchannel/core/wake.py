"""The typed `Wake` every trigger enqueues and the daemon's one consumer handles
(DESIGN rule 2). It crosses layers (triggers make it, the engine and the daemon
read it, the run log stores it as JSON), so it lives at the bottom: it imports
nothing of ours.
"""

from __future__ import annotations

import json
from dataclasses import field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import field_validator
from pydantic.dataclasses import dataclass

from backchannel.core.timeutil import as_aware_utc, aware_now

WakeKind = Literal[
    "sweep", "inbox", "meeting_soon", "signal", "calendar", "signals", "ask", "manual", "mail", "retention"
]
WAKE_KINDS: frozenset[str] = frozenset(get_args(WakeKind))


@dataclass(frozen=True)
class Wake:
    """One reason to wake the daemon. `key` is its idempotency key: the daemon
    handles a given key once, across restarts (e.g. "sweep:2026-11-29T08:00",
    "inbox:<sha256>", "meeting_soon:<uid>:<start iso>", "signal:<id>")."""

    kind: WakeKind
    key: str
    payload: dict[str, Any] = field(default_factory=dict)
    created_at: datetime = field(default_factory=aware_now)

    # pydantic checks the types; these say what is wrong in the words a trigger's author needs.
    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, kind: Any) -> Any:
        if kind not in WAKE_KINDS:
            raise ValueError(f"unknown wake kind {kind!r}; expected one of {sorted(WAKE_KINDS)}")
        return kind

    @field_validator("key")
    @classmethod
    def _has_key(cls, key: str) -> str:
        if not key:
            raise ValueError("a wake needs a non-empty idempotency key")
        return key

    @field_validator("created_at")
    @classmethod
    def _aware_utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("Wake.created_at must be timezone-aware")
        return value.astimezone(UTC)

    def __post_init__(self) -> None:
        # Fail at the trigger, not later in the consumer, when a payload is not JSON-able.
        json.dumps(self.payload)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "payload": self.payload,
            "created_at": self.created_at.isoformat(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Wake:
        created = data.get("created_at")
        return cls(
            kind=data["kind"],
            key=data["key"],
            payload=dict(data.get("payload") or {}),
            created_at=as_aware_utc(datetime.fromisoformat(created)) if created else aware_now(),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Wake:
        return cls.from_dict(json.loads(text))

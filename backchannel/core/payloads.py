"""The typed payloads of the wakes that carry data from a trigger to the engine:
a `Signal` (a `signal` wake), a `CalendarEvent` (a `meeting_soon` wake, and each
event of a `calendar` wake's `CalendarRefresh`).

A trigger builds the model and stores `to_dict()` in `Wake.payload` (JSON: the
run log keeps it); the engine validates the payload back with `from_payload`.
A payload that does not fit (a run log from an older release, a `wake` made by
hand) raises `PayloadError` naming the field, which the run records as its
failure. Like `Wake`, these live at the bottom: they import nothing of ours above
core.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, field
from datetime import datetime
from typing import Any, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError, field_validator, model_validator
from pydantic.dataclasses import dataclass

from backchannel.core.timeutil import as_aware_utc

# Unknown keys are ignored: a payload from a newer or older release may carry more.
_CONFIG = ConfigDict(extra="ignore")

T = TypeVar("T")


class PayloadError(ValueError):
    """A wake's payload is not the shape its kind needs."""


def _validated(cls: type[T], kind: str, data: Any) -> T:
    try:
        return TypeAdapter(cls).validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'payload'}: {e['msg']}" for e in exc.errors()[:5])
        raise PayloadError(f"malformed {kind} wake payload: {problems}") from None


def signal_id(source: str, ident: str) -> str:
    """A signal's id: its source and what tells it apart there (guid, link or title)."""
    return hashlib.sha256(f"{source}\0{ident}".encode()).hexdigest()


def _aware(value: datetime | None) -> datetime | None:
    return as_aware_utc(value) if value is not None else None


@dataclass(frozen=True, config=_CONFIG)
class Signal:
    """An external signal ("Acme publishes a tender"); times aware, UTC."""

    id: str  # sha256 of source + guid/link/title
    source: str
    title: str
    summary: str = ""
    url: str | None = None
    published_at: datetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        # What the engine has always filled in for a hand-made payload: the source,
        # and an id made as the triggers make it.
        if isinstance(data, dict):
            data = dict(data)
            data["source"] = str(data.get("source") or "unknown")
            if not data.get("id"):
                ident = data.get("guid") or data.get("url") or data.get("title") or ""
                data["id"] = signal_id(data["source"], str(ident))
            data["summary"] = data.get("summary") or ""
            data["url"] = data.get("url") or None
            data["published_at"] = data.get("published_at") or None
        return data

    @field_validator("published_at")
    @classmethod
    def _published_utc(cls, value: datetime | None) -> datetime | None:
        return _aware(value)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["published_at"] = self.published_at.isoformat() if self.published_at else None
        return d

    @classmethod
    def from_payload(cls, payload: Any) -> Signal:
        return _validated(cls, "signal", payload)

    from_dict = from_payload  # the name the other round-tripped types use

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.summary}"


@dataclass(frozen=True, config=_CONFIG)
class CalendarEvent:
    """One occurrence of a meeting; times aware, UTC."""

    uid: str
    starts_at: datetime
    ends_at: datetime | None
    summary: str = ""
    location: str = ""
    attendees: list[str] = field(default_factory=list)  # CN names, else emails; organizer included
    calendar: str = ""  # the source it came from
    all_day: bool = False
    # Attendees the invite marks as opted out (`X-BACKCHANNEL-CONSENT`): the calendar wake
    # withdraws them as `consent withdraw` does; they are never attendees.
    withdrawn: list[str] = field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        # Payloads made by hand or by older releases: "start" for starts_at, nulls for blanks.
        if isinstance(data, dict):
            data = dict(data)
            if data.get("starts_at") is None and "start" in data:
                data["starts_at"] = data["start"]
            data["ends_at"] = data.get("ends_at") or None
            for key in ("summary", "location", "calendar"):
                data[key] = data.get(key) or ""
            data["attendees"] = data.get("attendees") or []
            data["withdrawn"] = data.get("withdrawn") or []
            data["all_day"] = bool(data.get("all_day"))
        return data

    @field_validator("starts_at", "ends_at")
    @classmethod
    def _times_utc(cls, value: datetime | None) -> datetime | None:
        return _aware(value)

    @property
    def key(self) -> str:
        return f"{self.uid}:{self.starts_at.isoformat()}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["starts_at"] = self.starts_at.isoformat()
        d["ends_at"] = self.ends_at.isoformat() if self.ends_at else None
        return d

    @classmethod
    def from_payload(cls, payload: Any) -> CalendarEvent:
        """A `meeting_soon` payload: the event itself (or, from older releases, under "event")."""
        if isinstance(payload, dict) and isinstance(payload.get("event"), dict):
            payload = payload["event"]
        return _validated(cls, "meeting_soon", payload)

    from_dict = from_payload


@dataclass(frozen=True, config=_CONFIG)
class CalendarRefresh:
    """A `calendar` wake's payload: the upcoming occurrences of every source,
    what could not be read, and the window they cover."""

    events: list[CalendarEvent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    window: list[str] = field(default_factory=list)  # [from, to], ISO
    calendar: str | None = None  # one source's name for every event (hand-made payloads)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {
                **data,
                "events": data.get("events") or [],
                "errors": data.get("errors") or [],
                "calendar": data.get("calendar") or data.get("source") or None,
            }
        return data

    def to_dict(self) -> dict[str, Any]:
        return {
            "events": [e.to_dict() for e in self.events],
            "errors": list(self.errors),
            "sources": list(self.sources),
            "window": list(self.window),
        }

    @classmethod
    def from_payload(cls, payload: Any) -> CalendarRefresh:
        return _validated(cls, "calendar", payload)

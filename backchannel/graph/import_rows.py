"""The lines of an import file (docs/import-format.md) as pydantic models: each line is
validated into an `EntityRow` or an `AssertionRow` at the edge, so the writer reads
typed, normalised values (ISO dates, UTC times) and every problem is named with its
line and field. What needs the whole file (references to entity ids, ids used twice)
is checked by the importer, after every line has its model.

Unknown fields are kept, not refused: a CRM export may carry more than we read, and a
line without an "id" is keyed by the hash of all its content (`content()`), as before.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from backchannel.core.vocabulary import ENTITY_KINDS as KINDS
from backchannel.core.vocabulary import LITERAL_PREDICATES, MODALITIES, PREDICATES
from backchannel.memory.text import norm_name

OWNER_REF = "me"

Ref = str | int  # an entity id of the file (or "me"); compared as text


def _problem(message: str, **ctx: Any) -> PydanticCustomError:
    """An error whose message is the whole problem, worded for the user."""
    return PydanticCustomError("import_row", message, ctx)


def _one_of(what: str, value: Any, choices: Any) -> Any:
    if not isinstance(value, str) or value not in choices:  # a list is not even hashable
        raise _problem(
            "{what} {value} is not one of {choices}", what=what, value=repr(value), choices=", ".join(choices)
        )
    return value


def _iso(value: Any, what: str, *, with_time: bool) -> str | None:
    """An ISO date ('2025-04-02'), or with `with_time` a naive-UTC date-time text."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise _problem("{what} must be an ISO date string", what=what)
    try:
        if with_time:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if dt.tzinfo is not None:  # stored as naive UTC, like every TIMESTAMP column
                dt = dt.astimezone(UTC).replace(tzinfo=None)
            return dt.isoformat(sep=" ")
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        raise _problem("{what} {value} is not an ISO date", what=what, value=repr(value)) from None


class Row(BaseModel):
    model_config = ConfigDict(extra="allow", strict=False)


class EvidenceRow(Row):
    quote: str | None = None
    text: str | None = None
    speaker: Ref | None = None
    said_at: str | None = None  # naive UTC after validation
    source: str | None = None
    source_date: str | None = None  # ISO date(-time)

    @field_validator("said_at", "source_date", mode="before")
    @classmethod
    def _when(cls, v: Any, info: ValidationInfo) -> str | None:
        return _iso(v, f"evidence {info.field_name}", with_time=True)

    @field_validator("quote")
    @classmethod
    def _quote(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise _problem("evidence quote must be a non-empty string")
        return v

    @model_validator(mode="after")
    def _quote_in_text(self) -> EvidenceRow:
        if self.text is not None and self.quote is not None and self.quote not in self.text:
            raise _problem("evidence quote does not occur verbatim in evidence text")
        return self


class EntityRow(Row):
    type: Literal["entity"]
    id: Ref
    name: str
    kind: str = "person"
    aliases: list[str] = Field(default_factory=list)
    is_owner: bool = False

    @field_validator("id")
    @classmethod
    def _id(cls, v: Ref) -> Ref:
        if str(v) == "":
            raise _problem('entity needs an "id" (a reference used by assertion lines)')
        if str(v) == OWNER_REF:
            raise _problem("entity id {ref} is reserved for the owner", ref=repr(OWNER_REF))
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not norm_name(v):
            raise _problem('entity needs a "name"')
        return v

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, v: Any) -> str:
        return _one_of("entity kind", v, KINDS)

    @property
    def ref(self) -> str:
        return str(self.id)


class AssertionRow(Row):
    type: Literal["assertion"]
    id: Ref | None = None
    subject: Ref
    predicate: str
    object: Ref | None = None
    object_literal: str | None = None
    qualifier: str | None = None
    valid_from: str | None = None  # ISO date after validation
    valid_to: str | None = None
    confidence: float = Field(0.7, ge=0, le=1)
    modality: str | None = None  # default: commitment for committed_to, else stated
    date_phrase: str | None = None
    evidence: EvidenceRow | None = None
    # Written by `export --all` so a whole memory round-trips: when the fact stopped being
    # current (a later holder, a correction, a retraction) and who produced it.
    superseded_at: str | None = None
    extractor: str | None = None

    @field_validator("predicate", mode="before")
    @classmethod
    def _predicate(cls, v: Any) -> str:
        return _one_of("predicate", v, PREDICATES)

    @field_validator("modality", mode="before")
    @classmethod
    def _modality(cls, v: Any) -> str | None:
        return None if v is None else _one_of("modality", v, MODALITIES)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float)):  # true is not 1.0 here
            raise _problem("confidence must be a number from 0 to 1")
        return v

    @field_validator("superseded_at", mode="before")
    @classmethod
    def _superseded(cls, v: Any) -> str | None:
        return _iso(v, "superseded_at", with_time=True)

    @field_validator("valid_from", "valid_to", mode="before")
    @classmethod
    def _dates(cls, v: Any, info: ValidationInfo) -> str | None:
        return _iso(v, str(info.field_name), with_time=False)

    @model_validator(mode="after")
    def _object(self) -> AssertionRow:
        if self.predicate in LITERAL_PREDICATES:
            if not (self.object_literal or "").strip():
                raise _problem('{predicate} needs "object_literal" (a string)', predicate=self.predicate)
        elif self.object is None:
            raise _problem('assertion needs "object"')
        return self

    def refs(self) -> dict[str, Ref]:
        """The entity references of the line, by field ("speaker": the evidence's)."""
        out: dict[str, Ref] = {"subject": self.subject}
        if self.predicate not in LITERAL_PREDICATES and self.object is not None:
            out["object"] = self.object
        if self.evidence is not None and self.evidence.speaker is not None:
            out["speaker"] = self.evidence.speaker
        return out

    def stated_modality(self) -> str:
        return self.modality or ("commitment" if self.predicate == "committed_to" else "stated")


def content(raw: dict[str, Any], row: AssertionRow) -> dict[str, Any]:
    """The line as the idempotency hash reads it: as written, with its dates normalised
    (the same form as before the models, so a file imported by an earlier release is
    still recognised line by line)."""
    out = {**raw, "valid_from": row.valid_from, "valid_to": row.valid_to}
    ev = raw.get("evidence")
    if isinstance(ev, dict) and ev and row.evidence is not None:
        out["evidence"] = {**ev, "said_at": row.evidence.said_at, "source_date": row.evidence.source_date}
    return out


_MISSING = {
    ("entity", "id"): 'entity needs an "id" (a reference used by assertion lines)',
    ("entity", "name"): 'entity needs a "name"',
}


def _where(loc: tuple[Any, ...]) -> str:
    """('evidence', 'quote') -> 'evidence.quote'; ('aliases', 1) -> 'aliases[1]'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def problems_of(exc: ValidationError, line: int, kind: str) -> list[str]:
    """'line 9: predicate 'employs' is not one of ...' for each error of one line's model."""
    out = []
    for err in exc.errors(include_url=False):
        field = _where(err["loc"])
        if err["type"] == "import_row":
            out.append(f"line {line}: {err['msg']}")
        elif err["type"] == "missing":
            needs = _MISSING.get((kind, field)) or f'{kind} needs "{field}"'
            out.append(f"line {line}: {needs}")
        elif err["type"] in ("model_type", "dict_type"):
            out.append(f'line {line}: "{field}" must be an object')
        else:
            out.append(f"line {line}: {field}: {err['msg']}")
    return out

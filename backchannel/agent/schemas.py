"""Pydantic models for every structured model output. The gateway sends their
JSON schema where the provider supports it and always validates locally."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backchannel.core.vocabulary import ENTITY_KINDS, MODALITIES, PREDICATES, STANCES

if TYPE_CHECKING:  # the vocabularies are tuples known at run time; to mypy they are strings
    Predicate = str
    Modality = str
    Kind = str
    Stance = str
else:
    Predicate = Literal[tuple(PREDICATES)]
    Modality = Literal[MODALITIES]
    Kind = Literal[ENTITY_KINDS]
    Stance = Literal[STANCES]


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelAssertion(Output):
    """One assertion as the extraction model states it. Names are as said,
    relative to the speaker: "I"/"me" is the speaker of the utterance."""

    utterance: int = Field(description="the [index] of the utterance the quote is taken from")
    quote: str = Field(min_length=3, description="verbatim words from that utterance supporting the assertion")
    subject: str = Field(min_length=1, description='who it is about; "I" for the speaker')
    subject_kind: Kind = "person"
    predicate: Predicate
    object: str | None = Field(default=None, description="the other entity, if any")
    object_kind: Kind | None = None
    object_literal: str | None = Field(default=None, description="a literal value (a title, a promise)")
    qualifier: str | None = Field(default=None, description="works_at: the title; worked_with: where")
    date_phrase: str | None = Field(default=None, description="the words that date it, verbatim, if any")
    modality: Modality = "stated"
    stance: Stance = Field(default="asserted", description="how the words hold the fact: " + ", ".join(STANCES))
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)

    @field_validator("object", "object_literal", "qualifier", "date_phrase", "object_kind", mode="before")
    @classmethod
    def _blank_is_none(cls, v: Any) -> Any:  # `object` here is the field above, not the builtin
        return None if isinstance(v, str) and not v.strip() else v


class ExtractionAnswer(Output):
    assertions: list[ModelAssertion]


class ResolutionAnswer(Output):
    """Which candidate entity a surface name refers to, or null for none of them."""

    match_id: int | None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    reason: str | None = None

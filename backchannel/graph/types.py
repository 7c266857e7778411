"""Typed results of the graph API and of programs run against it.

Everything here converts to and from plain JSON dicts: that is the only form
that crosses the sandbox boundary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import (
    ConfigDict,
    SkipValidation,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic_core import ArgsKwargs


class CandidateError(ValueError):
    """A program returned something that is not a list of candidates."""


def _ids(value: Any, what: str) -> list[int]:
    if value is None:
        return []
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise CandidateError(f"{what} must be a list of ids, got {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, dict):  # an entity or assertion dict: take its id
            v = v.get("id", v.get("assertion_id"))
        try:
            out.append(int(v))
        except (TypeError, ValueError):
            raise CandidateError(f"{what}: {v!r} is not an id") from None
    return out


@dataclass
class Evidence:
    """One assertion backing a candidate, with what the user reads."""

    assertion_id: int
    quote: str | None = None
    speaker_id: int | None = None
    speaker: str | None = None
    said_at: str | None = None
    source_id: str | None = None
    source_title: str | None = None
    source_date: str | None = None
    date_origin: str | None = None  # where the date came from; "mtime": the file's date, not the meeting's

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evidence:
        known: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
        known["assertion_id"] = int(d.get("assertion_id", d.get("id")))  # type: ignore[arg-type]  # a missing id is the caller's TypeError
        return cls(**known)


@pydantic_dataclass(config=ConfigDict(extra="ignore"))
class Candidate:
    """A proposal-to-be: kind, the entities it is about, the path that connects
    them (entity ids, owner first for introductions), the evidence assertion ids
    (with quotes and dates once filled in by the parent), a base score in [0, 1]
    and one sentence saying why.

    A pydantic dataclass whose validators (`mode="before"`) read what programs
    return as leniently as ever: evidence as ids or dicts, ids as dicts or
    strings, a score to clamp (NaN is 0). What cannot be read raises
    CandidateError naming the fault (pydantic's wrapping is undone in
    `from_dict`); a TypeError from a malformed evidence dict is the caller's."""

    kind: str
    entities: list[int]
    score: float
    why: str = ""
    path: list[int] = field(default_factory=list)
    evidence_ids: list[int] = field(default_factory=list)
    # Built as Evidence by `_read_program_output`: not validated again.
    evidence: SkipValidation[list[Evidence]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _read_program_output(cls, d: Any) -> Any:
        """A dict as a program returned it: the defaults, the clamped score, and
        `evidence` split into Evidence (dicts with a quote) and ids."""
        if isinstance(d, ArgsKwargs):
            return d  # built in Python, field by field
        if not isinstance(d, dict):
            raise CandidateError(f"a candidate must be a dict, got {type(d).__name__}")
        try:
            score = float(d.get("score", 0.5))
        except (TypeError, ValueError):
            raise CandidateError(f"score {d.get('score')!r} is not a number") from None
        raw_ev = d.get("evidence", d.get("evidence_ids")) or []
        if not isinstance(raw_ev, (list, tuple)):
            raw_ev = [raw_ev]
        evidence, ev_ids = [], []
        for e in raw_ev:
            if isinstance(e, dict) and e.get("quote") is not None:
                ev = Evidence.from_dict(e)
                evidence.append(ev)
                ev_ids.append(ev.assertion_id)
            else:
                ev_ids.extend(_ids([e], "evidence"))
        for extra_id in _ids(d.get("evidence_ids"), "evidence_ids"):
            if extra_id not in ev_ids:
                ev_ids.append(extra_id)
        return {
            "kind": d.get("kind"),
            "entities": d.get("entities"),
            "score": score,
            "why": d.get("why"),
            "path": d.get("path"),
            "evidence_ids": list(dict.fromkeys(ev_ids)),
            "evidence": evidence,
            "extra": d.get("extra"),
        }

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> str:
        return str(value or "other")

    @field_validator("why", mode="before")
    @classmethod
    def _why(cls, value: Any) -> str:
        return str(value or "")

    @field_validator("entities", "path", mode="before")
    @classmethod
    def _id_list(cls, value: Any, info: ValidationInfo) -> list[int]:
        return _ids(value, str(info.field_name))

    @field_validator("score", mode="before")
    @classmethod
    def _clamped(cls, value: Any) -> float:
        score = float(value)
        return min(1.0, max(0.0, score)) if score == score else 0.0  # NaN != NaN

    @field_validator("extra", mode="before")
    @classmethod
    def _extra(cls, value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["evidence"] = [e.to_dict() for e in self.evidence]
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Candidate:
        """Validate one candidate dict as a program returned it. `evidence` may be
        assertion ids or evidence dicts; `score` is clamped to [0, 1]."""
        try:
            return _CANDIDATE.validate_python(d)
        except ValidationError as exc:
            # A validator's CandidateError comes back wrapped: raise it as it was raised.
            for problem in exc.errors():
                cause = (problem.get("ctx") or {}).get("error")
                if isinstance(cause, CandidateError):
                    raise cause from None
            raise CandidateError(f"not a candidate: {exc.errors()[0]['msg']}") from None

    def dedupe_key(self) -> str:
        return self.kind + ":" + ",".join(str(i) for i in sorted(set(self.entities)))


_CANDIDATE: TypeAdapter[Candidate] = TypeAdapter(Candidate)


def candidates_from_result(result: Any) -> list[Candidate]:
    """A program's `result` as candidates: a list of candidate dicts, or a dict
    with a "candidates" list. Raises CandidateError naming what is wrong."""
    if result is None:
        return []
    if isinstance(result, dict) and "candidates" in result:
        result = result["candidates"]
    elif isinstance(result, dict):
        result = [result]
    if not isinstance(result, list):
        raise CandidateError(f"result must be a list of candidates, got {type(result).__name__}")
    out = [Candidate.from_dict(d) for d in result]
    out.sort(key=lambda c: -c.score)
    return out


@dataclass
class PathResult:
    """A simple path: entity ids in order, and per edge the assertion ids that
    connect consecutive entities (most recent first)."""

    nodes: list[int]
    edges: list[list[int]]

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "edges": self.edges, "hops": len(self.nodes) - 1}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PathResult:
        return cls(nodes=[int(n) for n in d["nodes"]], edges=[[int(a) for a in e] for e in d["edges"]])

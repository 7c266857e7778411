"""The typed stubs the sweeper model reads, generated from the real GraphAPI
methods (signatures and docstrings via inspect), so they cannot drift from
what the sandbox serves."""

from __future__ import annotations

import inspect
from dataclasses import fields

from backchannel.core.vocabulary import CANDIDATE_KINDS
from backchannel.graph.api import API_METHODS, GraphAPI
from backchannel.graph.types import Candidate

HEADER = """# The program runs in a sandbox. Globals: `api` (the graph API below; every call is
# a read-only query of the user's memory), `context` (a dict: the question or wake),
# and `Candidate`. Assign the answer to `result`: a list of candidates, each
# Candidate(kind=..., entities=[ids], path=[ids], evidence=[assertion ids], score=0..1, why="...")
# or the equivalent dict. Entity and assertion ids are ints. Calls take whole lists:
# pass every id of a frontier in one call rather than calling once per id.
"""


def method_signature(name: str) -> str:
    fn = getattr(GraphAPI, name)
    sig = inspect.signature(fn)
    parts = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        text = p.name if p.annotation is p.empty else f"{p.name}: {p.annotation}"
        if p.default is not p.empty:
            text += f" = {p.default!r}"
        parts.append(text)
    return f"def {name}({', '.join(parts)}) -> {sig.return_annotation}:"


def method_stub(name: str) -> str:
    doc = inspect.getdoc(getattr(GraphAPI, name)) or ""
    body = "\n".join("    " + line if line else "" for line in doc.splitlines())
    return f'{method_signature(name)}\n    """{body.strip()}"""'


def candidate_stub() -> str:
    doc = inspect.getdoc(Candidate) or ""
    names = [f.name for f in fields(Candidate) if f.name not in ("evidence", "extra", "evidence_ids")]
    return (
        f"# Candidate fields: {', '.join(names)}, evidence (assertion ids).\n"
        f"# kind is one of {', '.join(CANDIDATE_KINDS)}. {' '.join(doc.split())}"
    )


def api_stubs(methods: tuple[str, ...] | list[str] | None = None) -> str:
    """Stubs text for the given methods (default: all served methods)."""
    chosen = [m for m in (methods or API_METHODS) if m in API_METHODS]
    parts = [HEADER, "class api:"]
    for m in chosen:
        parts.append("\n".join("    " + line if line else "" for line in method_stub(m).splitlines()))
        parts.append("")
    parts.append(candidate_stub())
    return "\n".join(parts) + "\n"


if __name__ == "__main__":  # python -m backchannel.graph.stubs: print what the model reads
    print(api_stubs(), end="")

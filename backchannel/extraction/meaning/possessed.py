"""A title said as an organisation's ("Leon Marsh, their COO", "Priya Raman, Globex's head of data"):
the person holds it there. The rules and the head read the title; the possessive, resolved by the
mentions stage ("their" to the one organisation named before; a name the meeting uses as an
organisation), says where, so the claim carries an employment at that organisation."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from backchannel.extraction.mentions.names import NAME_RX, STOP
from backchannel.extraction.mentions.stage import PronounRef
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.memory.text import norm_name

# What stands right before a title: a possessive pronoun, or a name with "'s", and the words a title
# takes before it ("their new COO", "Globex's interim head of data").
_POSSESSOR = re.compile(
    r"(?:\b(?P<pron>[Tt]heir|[Ii]ts)|(?P<org>[A-Z][\w&-]*(?:\s+[A-Z][\w&-]*){0,3})['’]s?)"
    r"\s+(?:(?:new|current|interim|acting|former|then)\s+)?$"
)


def employment_of_titles(
    claims: Sequence[ExtractedAssertion],
    texts: dict[int, str],
    refs: dict[int, list[PronounRef]],
    organisations: Iterable[str],
) -> list[ExtractedAssertion]:
    """A works_at for each has_title whose title an organisation possesses, unless a claim already
    places the person there."""
    orgs = {norm_name(o) for o in organisations}
    placed = {
        (norm_name(a.subject.name), norm_name(a.object.name))
        for a in claims
        if a.predicate in ("works_at", "left") and a.object is not None
    }
    out: list[ExtractedAssertion] = []
    for a in claims:
        if a.predicate != "has_title" or not a.object_literal or a.quote_in_label or a.subject.kind != "person":
            continue
        text = texts.get(a.utterance_idx, "")
        at = _title_at(text, a)
        if at is None:
            continue
        m = _POSSESSOR.search(text, max(0, at - 60), at)
        if m is None:
            continue
        org = _possessor(m, refs.get(a.utterance_idx, ()), orgs)
        if org is not None and m.group("pron") and _another_name_before(text, m.start(), org, a.subject.name):
            continue  # "We met Northwind and Contoso. Their CFO, ...": whose CFO is not said
        if org is None or (norm_name(a.subject.name), norm_name(org)) in placed:
            continue
        placed.add((norm_name(a.subject.name), norm_name(org)))
        out.append(
            replace(
                a,
                predicate="works_at",
                object=Mention(name=org, kind="organisation"),
                object_literal=None,
                qualifier=a.object_literal,
            )
        )
    return out


def _title_at(text: str, a: ExtractedAssertion) -> int | None:
    """Where the claim's title is said inside its quote, case aside."""
    lo = text.lower().find((a.object_literal or "").lower(), a.span_start, a.span_end + 1)
    return lo if lo >= 0 else None


def _another_name_before(text: str, at: int, org: str, person: str) -> bool:
    """Whether the turn, before the pronoun, names something capitalised that is neither the
    organisation it resolves to nor the person (another organisation "their" could be)."""
    known = set(norm_name(org).split()) | set(norm_name(person).split())
    return any(
        w not in known and w not in STOP for m in NAME_RX.finditer(text, 0, at) for w in norm_name(m.group(0)).split()
    )


def _possessor(m: re.Match, refs: Sequence[PronounRef], orgs: set[str]) -> str | None:
    if m.group("pron"):
        ref = next((r for r in refs if r.start == m.start("pron")), None)
        return ref.refers_to if ref is not None and ref.kind == "organisation" else None
    name = m.group("org")
    return name if norm_name(name) in orgs else None

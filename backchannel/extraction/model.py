"""Assertion extraction by a language model, with the code keeping it honest.

The transcript is cut into overlapping chunks of whole utterances (one model
call each, plus at most one repair). The model proposes assertions with a
verbatim quote, speaker-relative names, a predicate from the shared vocabulary
and the words that date it. Code then
- finds the quote in the cited utterance (whitespace-normalised), or in another
  utterance of the chunk, and maps it back to the exact span; a quote found
  nowhere is dropped and counted as rejected (hallucinated);
- attributes the assertion to that utterance's speaker ("I" is the speaker);
- resolves the date phrase against the meeting date (`dates.resolve_phrase`),
  ignoring a phrase that is not in the utterance;
- then runs the passes the offline extractor's output goes through (`shared_passes`):
  the model's stance (asserted, negated, hypothetical, rumour, reported, joke,
  exercise, ended, knows_of: stance_effects.py), the claim pass over the words
  around the quote (rules/claims.py) and the recipients of promises; the writer
  then resolves names and sets trust exactly as for the offline path.

Failure contract with the writer: `extract_with_model` either returns every
assertion for the whole transcript or raises (`BudgetExhausted`, `ModelError`,
`InvalidOutput` from the gateway), before anything is written; the ingest
pipeline calls it before opening the source's transaction, so a budget stop or
a malformed answer writes nothing for that source. With `strict=False` a chunk
whose answer stays invalid is skipped and counted instead (benches); a budget
stop always raises.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Any

from backchannel.agent.models import BudgetExhausted, Gateway, InvalidOutput, ModelError
from backchannel.agent.schemas import ExtractionAnswer, ModelAssertion
from backchannel.core.vocabulary import LITERAL_PREDICATES, PREDICATES
from backchannel.extraction.chunking import Chunk, chunk_utterances
from backchannel.extraction.dates.en import resolve_phrase
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.addressee import resolve_recipients
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.memory.text import norm_name

ANSWER_MAX_TOKENS = 4096
# English, French and Japanese: a model answering in the transcript's language may write "je" or "私".
FIRST_PERSON = {
    "i",
    "me",
    "myself",
    "my",
    "mine",
    "speaker",
    "the speaker",
    "je",
    "moi",
    "j'",
    "私",
    "僕",
    "俺",
    "わたし",
    "ぼく",
    "わたくし",
}
UNRESOLVABLE = {
    "we",
    "us",
    "you",
    "he",
    "him",
    "she",
    "her",
    "they",
    "them",
    "it",
    "someone",
    "somebody",
    "nous",
    "vous",
    "tu",
    "il",
    "elle",
    "ils",
    "elles",
    "on",
    "quelqu'un",
    "私たち",
    "我々",
    "あなた",
    "彼",
    "彼女",
    "彼ら",
    "誰か",
}
# Facts that hold from a date on: only the start of a dated phrase is theirs.
START_ONLY = {"works_at", "has_title"}
# Facts whose date phrase says when they end (a departure, a due date).
END_ONLY = {"left", "committed_to"}


@dataclass
class ModelExtraction:
    assertions: list[ExtractedAssertion]
    chunks: int
    calls: int  # recorded model call attempts (retries and repairs included)
    rejected_quotes: int  # quotes found in no utterance of their chunk: dropped
    failed_chunks: int = 0  # strict=False only: chunks whose answer stayed invalid
    unresolved: int = 0  # dropped: a pronoun subject/object, or a missing object
    stance_dropped: int = 0  # dropped: a stance that does not hold the fact (negated, hypothetical, joke, ...)
    claim_dropped: int = 0  # dropped by the claim pass over the words around the quote
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)  # what was dropped and why

    def stats(self, max_rejected: int = 50) -> dict[str, Any]:
        """The counts (and the first dropped items) as JSON, for the event log."""
        return {
            "chunks": self.chunks,
            "calls": self.calls,
            "assertions": len(self.assertions),
            "rejected_quotes": self.rejected_quotes,
            "unresolved": self.unresolved,
            "stance_dropped": self.stance_dropped,
            "claim_dropped": self.claim_dropped,
            "failed_chunks": self.failed_chunks,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "rejected": self.rejected[:max_rejected],
        }


@functools.cache
def load_prompt(name: str) -> Template:
    text = (resources.files("backchannel.extraction") / "prompts" / name).read_text(encoding="utf-8")
    return Template(text)


def build_messages(transcript: Transcript, chunk: Chunk, parts: int, owner_names: Sequence[str]) -> list[dict]:
    vocab = "\n".join(f"- {p}: {doc}" for p, doc in PREDICATES.items())
    system = load_prompt("extract_system.md").substitute(predicates=vocab)
    when = transcript.meeting_date.date().isoformat() if transcript.meeting_date else "unknown"
    user = load_prompt("extract_user.md").substitute(
        title=transcript.title or "(untitled)",
        meeting_date=when,
        participants=", ".join(transcript.participants or transcript.speakers()) or "unknown",
        owner=", ".join(owner_names) or "unknown",
        part=chunk.number + 1,
        parts=parts,
        utterances=chunk.render(),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- quotes -------------------------------------------------------------
_PUNCT_AFTER_SPACE = set(".,;:?!'")
_EDGE = " \t\n\"'“”‘’…."


def _normalise(text: str) -> tuple[str, list[int]]:
    """Collapse whitespace runs to one space and drop a space before punctuation
    ("Right . Yeah" ~ "Right. Yeah"); returns the text and, for each of its
    characters, the index it came from."""
    out: list[str] = []
    idx: list[int] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            j = i
            while j < n and text[j].isspace():
                j += 1
            if out and j < n and text[j] not in _PUNCT_AFTER_SPACE:
                out.append(" ")
                idx.append(i)
            i = j
            continue
        out.append(c)
        idx.append(i)
        i += 1
    return "".join(out), idx


def locate_quote(quote: str, text: str) -> tuple[int, int] | None:
    """The span of `quote` in `text`, exact or whitespace-normalised, else None."""
    q = quote.strip()
    if not q:
        return None
    pos = text.find(q)
    if pos >= 0:
        return pos, pos + len(q)
    nq, _ = _normalise(q.strip(_EDGE) or q)
    if len(nq) < 3:
        return None
    nt, index = _normalise(text)
    pos = nt.find(nq)
    if pos < 0:
        return None
    return index[pos], index[pos + len(nq) - 1] + 1


def _phrase_in(phrase: str, text: str) -> bool:
    p, _ = _normalise(phrase.casefold())
    t, _ = _normalise(text.casefold())
    return bool(p) and p in t


# -- one assertion --------------------------------------------------------
def _mention(name: str | None, kind: str | None, u: Utterance) -> Mention | None:
    if not name:
        return None
    n = norm_name(name)
    if n in FIRST_PERSON or (u.speaker and n == norm_name(u.speaker)):
        return Mention(u.speaker or name, "person", is_speaker=True)
    if n in UNRESOLVABLE or not n:
        return None
    return Mention(name.strip(), kind or "person")


def phrase_validity(predicate: str, phrase: str | None, anchor: Any) -> tuple[Any, Any]:
    if not phrase:
        return None, None
    rng = resolve_phrase(phrase, anchor)
    if predicate in END_ONLY:
        return None, rng.point
    if predicate in START_ONLY:
        return rng.start, None
    return rng.start, rng.end


class _Checker:
    """Turns the model's items for one chunk into verified ExtractedAssertions."""

    def __init__(self, transcript: Transcript, out: ModelExtraction):
        self.transcript = transcript
        self.out = out
        self.seen: set[tuple] = set()

    def _reject(self, why: str, item: ModelAssertion) -> None:
        self.out.rejected.append(
            {"why": why, "utterance": item.utterance, "quote": item.quote, "predicate": item.predicate}
        )

    def add(self, item: ModelAssertion, chunk: Chunk) -> None:
        by_idx = {u.idx: u for u in chunk.utterances}
        order = ([by_idx[item.utterance]] if item.utterance in by_idx else []) + [
            u for u in chunk.utterances if u.idx != item.utterance
        ]
        found = None
        for u in order:
            span = locate_quote(item.quote, u.text)
            if span is not None:
                found = (u, span)
                break
        if found is None:
            self.out.rejected_quotes += 1
            self._reject("quote not in source", item)
            return
        u, (start, end) = found
        subject = _mention(item.subject, item.subject_kind, u)
        obj = _mention(item.object, item.object_kind, u) if item.object else None
        literal = item.object_literal
        if item.predicate in LITERAL_PREDICATES:
            literal = literal or item.object
            obj = None
        if (
            subject is None
            or (item.predicate not in LITERAL_PREDICATES and obj is None)
            or (item.predicate in LITERAL_PREDICATES and not literal)
        ):
            self.out.unresolved += 1
            self._reject("unresolvable subject or object", item)
            return
        phrase = item.date_phrase if item.date_phrase and _phrase_in(item.date_phrase, u.text) else None
        valid_from, valid_to = phrase_validity(item.predicate, phrase, self.transcript.meeting_date)
        key = (
            u.idx,
            start,
            end,
            item.predicate,
            norm_name(subject.name),
            obj and norm_name(obj.name),
            literal,
            item.qualifier,
        )
        if key in self.seen:  # the same fact from two overlapping chunks
            return
        self.seen.add(key)
        self.out.assertions.append(
            ExtractedAssertion(
                subject=subject,
                predicate=item.predicate,
                utterance_idx=u.idx,
                span_start=start,
                span_end=end,
                quote=u.text[start:end],
                object=obj,
                object_literal=literal if obj is None else None,
                qualifier=item.qualifier,
                valid_from=valid_from,
                valid_to=valid_to,
                date_phrase=phrase,
                modality=item.modality,
                confidence=item.confidence,
                stance=item.stance,
            )
        )


def extract_with_model(
    transcript: Transcript,
    *,
    gateway: Gateway,
    run_id: str | None,
    owner_names: Sequence[str] = (),
    strict: bool = True,
) -> ModelExtraction:
    """Every verified assertion the extract model finds in `transcript` (see the module docstring)."""
    ms = gateway.settings.models
    chunks = chunk_utterances(transcript.utterances, ms.chunk_tokens, ms.chunk_overlap_utterances)
    out = ModelExtraction([], len(chunks), 0, 0)
    checker = _Checker(transcript, out)
    before = gateway.last_call_id()
    try:
        for chunk in chunks:
            messages = build_messages(transcript, chunk, len(chunks), owner_names)
            try:
                c = gateway.complete(
                    "extract", messages, run_id=run_id, response_model=ExtractionAnswer, max_tokens=ANSWER_MAX_TOKENS
                )
            except BudgetExhausted:
                raise
            except (InvalidOutput, ModelError):
                if strict:
                    raise
                out.failed_chunks += 1
                continue
            out.prompt_tokens += c.prompt_tokens or 0
            out.completion_tokens += c.completion_tokens or 0
            answer = c.parsed
            assert isinstance(answer, ExtractionAnswer)  # the gateway parses to the response_model it is given
            for item in answer.assertions:
                checker.add(item, chunk)
    finally:
        out.calls = gateway.calls_since(before)
    out.assertions = shared_passes(transcript, out, owner_names)
    return out


def shared_passes(transcript: Transcript, out: ModelExtraction, owner_names: Sequence[str]) -> list[ExtractedAssertion]:
    """The passes the offline extractor's output goes through, on the model's: its stance
    (stance_effects.py), then the claim pass over the words around each quote (negation,
    hypotheticals, retraction, hedges, quoted speech: rules/claims.py), then whom each
    promise was made to (addressee.py). What a pass drops is counted and listed."""
    from backchannel.extraction.rules.claims import qualify_claims
    from backchannel.extraction.stance_effects import apply_stance

    kept: list[ExtractedAssertion] = []
    for a in out.assertions:
        b = apply_stance(a)
        if b is None:
            out.stance_dropped += 1
            out.rejected.append(
                {"why": f"stance {a.stance}", "utterance": a.utterance_idx, "quote": a.quote, "predicate": a.predicate}
            )
        else:
            kept.append(b)
    known = frozenset(
        n for n in (norm_name(x) for x in (*transcript.speakers(), *transcript.participants, *owner_names) if x) if n
    )
    qualified = qualify_claims(transcript, kept, known)
    survivors = {id(a) for a in qualified}
    for a in kept:
        if id(a) not in survivors and not any(
            q.utterance_idx == a.utterance_idx and q.span_start == a.span_start and q.predicate == a.predicate
            for q in qualified
        ):
            out.claim_dropped += 1
            out.rejected.append(
                {
                    "why": "claim pass (negation, condition, retraction or unattributable quote)",
                    "utterance": a.utterance_idx,
                    "quote": a.quote,
                    "predicate": a.predicate,
                }
            )
    # Whom each promise was made to, from the meeting around it (as for the offline rules).
    return resolve_recipients(transcript, qualified, owner_names)


def quote_is_verbatim(a: ExtractedAssertion, utterances: dict[int, Utterance]) -> bool:
    """The writer's invariant, for tests and audits."""
    u = utterances.get(a.utterance_idx)
    return u is not None and u.text[a.span_start : a.span_end] == a.quote and bool(re.sub(r"\W", "", a.quote))

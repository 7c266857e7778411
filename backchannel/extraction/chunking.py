"""Split a transcript into chunks of whole utterances that fit a token budget,
overlapping by a few utterances so that context across a boundary is not lost.

Tokens are estimated at four characters each (plus a few for the speaker label
and index): close enough for English to budget a prompt, and it needs no
tokenizer download.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backchannel.extraction.formats.transcript import Utterance

LINE_OVERHEAD_TOKENS = 6  # "[123] Speaker: " and the newline


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def utterance_tokens(u: Utterance) -> int:
    return estimate_tokens(u.text) + estimate_tokens(u.speaker or "") + LINE_OVERHEAD_TOKENS


def format_utterance(u: Utterance) -> str:
    return f"[{u.idx}] {u.speaker or 'Unknown'}: {' '.join(u.text.split())}"


@dataclass
class Chunk:
    number: int  # 0-based position among the chunks
    utterances: list[Utterance]
    tokens: int

    @property
    def first_idx(self) -> int:
        return self.utterances[0].idx

    @property
    def last_idx(self) -> int:
        return self.utterances[-1].idx

    def render(self) -> str:
        return "\n".join(format_utterance(u) for u in self.utterances)


def chunk_utterances(utterances: Sequence[Utterance], max_tokens: int, overlap: int = 2) -> list[Chunk]:
    """Greedy chunks of consecutive utterances within `max_tokens` each.

    The next chunk starts `overlap` utterances before the previous one ended
    (always at least one utterance further on, so it terminates). An utterance
    larger than the budget gets a chunk of its own: quotes must stay verbatim,
    so it is never cut.
    """
    if max_tokens <= 0:
        raise ValueError("max_tokens must be positive")
    items = [u for u in utterances if u.text.strip()]
    costs = [utterance_tokens(u) for u in items]
    chunks: list[Chunk] = []
    start = 0
    while start < len(items):
        end, total = start, 0
        while end < len(items) and (end == start or total + costs[end] <= max_tokens):
            total += costs[end]
            end += 1
        chunks.append(Chunk(len(chunks), items[start:end], total))
        if end >= len(items):
            break
        start = max(start + 1, end - max(0, overlap))
    return chunks

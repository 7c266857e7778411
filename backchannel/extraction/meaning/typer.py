"""Which lone capitalised words a meeting uses as an organisation, read from the words around them.

The mentions stage knows an organisation by evidence: a head word ("Acme Bank"), a place of work
("joined X", "at X"), an acronym spelled out. A one-word brand said any other way ("he's headed to
Cigna?", "the same Deloitte bootcamp", "the credit union, Bellco") has none, and a lone capitalised
word is a person only when known as one, so the sentence lost its organisation and its fact. The
typer reads such a word by meaning: the model's last-layer states of the word's pieces, which carry
its sentence, scored by a logistic regression trained on the bank's sentences filled with names
(typer_train.py; its check on unseen names and sentences is in typer.json).

Which words it reads: capitalised, alone (no capitalised neighbour: a run of capitals is the mentions
stage's), somewhere other than at a sentence's start (where a capital says nothing), never said after an
article anywhere in the meeting (a brand said as a thing: "the JavaBayes program", "an Amtrak"), not a
word the
meeting also writes in lower case, not a first name of the lexicon or of a
full name said in the meeting, not a known person, a place, a title, a month, a weekday or a platform
people use (_MEDIA). A word said
several times is read at up to OCCURRENCES of its places, and kept when the mean p(organisation)
reaches BAR: one sentence that reads like a workplace is not enough for a word said as a person's
name elsewhere.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from backchannel.extraction.mentions.names import STOP, TITLE_HEADS
from backchannel.extraction.mentions.places import is_place
from backchannel.extraction.mentions.stage import gender_of
from backchannel.memory.text import norm_name

HERE = Path(__file__).resolve().parent
BAR = 0.9
OCCURRENCES = 3
MAX_SENTENCES = 120  # per meeting: the words of a long meeting are read in their first sentences
# A one-word name: capitalised, or with capitals inside ("WeWork", "JPMorgan"), not all capitals (an
# acronym is the acronym module's: "QBR", "KPI" are words of the trade as often as employers).
WORD = re.compile(r"(?<![\w'’&.-])([A-Z][a-z]+(?:[A-Z][a-z]*)*|[A-Z]{1,3}[a-z]+[A-Za-z]*)(?:['’]s)?(?![\w&-])")
# "Habitat for Humanity", "Bank of England", "Marks and Spencer", "Banco de Chile": a word beside one
# of these and a capitalised word is a piece of a longer name.
_NAME_JOINS = frozenset("for of and & de du des la le von van y e".split())
_CALENDAR = frozenset(
    "january february march april may june july august september october november december monday tuesday"
    " wednesday thursday friday saturday sunday".split()
)

# Platforms people say they use far more often than where someone works ("I only know him from LinkedIn",
# "we spoke on Zoom"): the typer is right that they are companies, and wrong that they are a workplace here.
_MEDIA = frozenset(
    "linkedin twitter facebook instagram tiktok youtube substack reddit zoom teams slack whatsapp telegram"
    " signal discord medium threads bluesky snapchat wechat".split()
)

SpanVectors = Callable[[Sequence[str], Sequence[Sequence[tuple[int, int]]]], np.ndarray]


@functools.lru_cache(maxsize=1)
def _weights() -> tuple[np.ndarray, float]:
    with np.load(HERE / "typer.npz") as z:
        return np.asarray(z["w"], dtype=np.float32), float(z["b"])


def p_organisation(vectors: np.ndarray) -> np.ndarray:
    w, b = _weights()
    return 1.0 / (1.0 + np.exp(-(vectors @ w + b)))


def _alone(text: str, start: int, end: int) -> bool:
    """No capitalised word right before or after (a run of capitals is a full name or a long one), and
    no piece of a longer name ("Humanity" of "Habitat for Humanity")."""
    before = text[max(0, start - 40) : start].split() if text[start - 1 : start].isspace() else []
    after = text[end : end + 40].split() if text[end : end + 1].isspace() else []
    if before and before[-1][0].isupper() or after and after[0][0].isupper():
        return False
    joined_before = len(before) > 1 and before[-1] in _NAME_JOINS and before[-2][0].isupper()
    joined_after = len(after) > 1 and after[0] in _NAME_JOINS and after[1][0].isupper()
    return not (joined_before or joined_after)


# A brand said as a thing, not as a name: after an article or a determiner ("switch to the JavaBayes
# program", "been on an Amtrak", "the old Notepad", "the Rivian careers link"). An organisation's name is
# said bare ("at Deloitte", "headed to Cigna", "Bellco").
_THING_BEFORE = re.compile(
    r"\b(?:a|an|the|this|that|these|those|our|my|your|his|its|old|new|same)\s+(?:\w+\s+)?$", re.I
)


def _said_as_a_thing(text: str, start: int) -> bool:
    return _THING_BEFORE.search(text[max(0, start - 24) : start]) is not None


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence, where a capital says nothing about a name
    ("Speculation mounts that ...", "Asking for a friend")."""
    before = text[:start].rstrip(" \"“'‘(")
    return not before or before[-1] in ".?!…"


def candidates(
    texts: Sequence[str],
    *,
    excluded: Callable[[str], bool],
    lowercase: frozenset[str],
) -> dict[str, list[tuple[int, int, int]]]:
    """{normalised word: [(text index, start, end), ...]} of the lone capitalised words worth typing."""
    out: dict[str, list[tuple[int, int, int]]] = {}
    things: set[str] = set()
    for i, text in enumerate(texts):
        for m in WORD.finditer(text):
            word = m.group(1)
            key = norm_name(word)
            low = word.lower()
            if (
                len(word) < 3
                or low in lowercase
                or low in STOP
                or low in TITLE_HEADS
                or low in _CALENDAR
                or low in _MEDIA
                or gender_of(word) is not None
                or is_place(word)
                or excluded(key)
                or not _alone(text, m.start(1), m.end(1))
                or _opens_sentence(text, m.start(1))
            ):
                continue
            if _said_as_a_thing(text, m.start(1)):
                things.add(key)  # the meeting uses the word for a thing somewhere: not typed anywhere
                continue
            places = out.setdefault(key, [])
            if len(places) < OCCURRENCES:
                places.append((i, m.start(1), m.end(1)))
    return {key: places for key, places in out.items() if key not in things}


def organisations(
    texts: Sequence[str],
    *,
    excluded: Callable[[str], bool],
    lowercase: frozenset[str],
    span_vectors: SpanVectors | None = None,
) -> set[str]:
    """Normalised lone words the meeting uses as organisations, by the typer's reading (BAR)."""
    found = candidates(texts, excluded=excluded, lowercase=lowercase)
    if not found:
        return set()
    if span_vectors is None:
        from backchannel import embedding

        span_vectors = embedding.span_vectors
    by_text: dict[int, list[tuple[int, int, str]]] = {}
    for key, places in found.items():
        for i, a, b in places:
            by_text.setdefault(i, []).append((a, b, key))
    order = sorted(by_text)[:MAX_SENTENCES]
    vecs = span_vectors([texts[i] for i in order], [[(a, b) for a, b, _ in by_text[i]] for i in order])
    keys = [key for i in order for _, _, key in by_text[i]]
    p = p_organisation(vecs)
    scores: dict[str, list[float]] = {}
    for key, v, q in zip(keys, vecs, p):
        if v.any():
            scores.setdefault(key, []).append(float(q))
    return {key for key, qs in scores.items() if sum(qs) / len(qs) >= BAR}

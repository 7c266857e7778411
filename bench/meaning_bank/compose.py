"""Write the labelled bank of the meaning classifier from the hand-written lists here.

    python bench/meaning_bank/compose.py

Each `*.txt` holds blocks "## RELATION STANCE" of hand-written sentences, entity slots
masked ({P}, {P2}: people; {O}: an organisation; I/me/we: the speaker). Every sentence is
written once by hand; this script adds a few seeded variants of each (a filler or a false
start as people speak, an opening or closing word, no final punctuation) so the head sees
disfluent speech, and writes backchannel/extraction/meaning/bank/RELATION.jsonl. A variant
keeps its sentence's `base` id: cross-validation folds by it, so no sentence is scored on
variants of itself.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
BANK = HERE.parent.parent / "backchannel" / "extraction" / "meaning" / "bank"
SEED = 18
OPENERS = [
    "So ",
    "Yeah, ",
    "Honestly, ",
    "Right, so ",
    "Okay, so ",
    "Well, ",
    "Actually, ",
    "Oh, ",
    "And ",
    "I mean, ",
    "Look, ",
    "Basically ",
    "See, ",
    "Um, ",
]
CLOSERS = [
    ", to be honest",
    ", yeah",
    ", if that makes sense",
    ", you know",
    " as well",
    ", basically",
    ", right",
    " actually",
    ", anyway",
]
FILLERS = ["uh", "um", "like", "you know", "er", "sort of", "I mean"]


def variants(text: str, rng: random.Random) -> list[str]:
    words = text.split()
    out = []
    # a filler after the first or second word: "I, uh, did a stint with ..."
    k = rng.choice([1, 2]) if len(words) > 3 else 1
    out.append(" ".join(words[:k]) + ", " + rng.choice(FILLERS) + ", " + " ".join(words[k:]))
    # a false start: "I, I did ..." / "we were, we were colleagues"
    if len(words) > 4:
        n = rng.choice([1, 2])
        out.append(" ".join(words[:n]) + ", " + " ".join(words))
    # an opening or a closing word
    lead = rng.choice(OPENERS)
    first = (
        words[0] if words[0] in ("I", "I'm", "I'll", "I've", "I'd") or words[0].startswith("{") else words[0].lower()
    )
    out.append(lead + " ".join([first, *words[1:]]) + rng.choice(["", "", rng.choice(CLOSERS)]))
    rng.shuffle(out)
    return out[:2]


def finish(text: str, rng: random.Random) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if text[-1] not in ".?!":
        text += rng.choice([".", ".", ".", ""])
    return text[0].upper() + text[1:] if text[0].islower() else text


def bank_rows(sources: list[Path], rng: random.Random) -> Iterator[dict]:
    """Each sentence of the bank files `sources` and its variants, as rows of the bank (finished)."""
    for src in sources:
        relation = stance = None
        for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("## "):
                relation, stance = line[3:].split()
                continue
            assert relation and stance, f"{src.name}:{n}: a sentence before any '## RELATION STANCE'"
            base = f"{src.stem}:{n}"
            yield {"text": finish(line, rng), "relation": relation, "stance": stance, "base": base}
            for v in variants(line, rng):
                yield {"text": finish(v, rng), "relation": relation, "stance": stance, "base": base}


def main() -> None:
    by_relation: dict[str, list[dict]] = {}
    for row in bank_rows(sorted(HERE.glob("*.txt")), random.Random(SEED)):
        by_relation.setdefault(row["relation"], []).append(row)
    BANK.mkdir(parents=True, exist_ok=True)
    for old in BANK.glob("*.jsonl"):
        old.unlink()
    for relation, rows in sorted(by_relation.items()):
        with (BANK / f"{relation}.jsonl").open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    total = sum(len(r) for r in by_relation.values())
    print(
        json.dumps(
            {
                "examples": total,
                "sentences": total // 3,
                "per_relation": {k: len(v) for k, v in sorted(by_relation.items())},
            }
        )
    )


if __name__ == "__main__":
    main()

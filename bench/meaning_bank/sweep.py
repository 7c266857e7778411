"""Sweep the meaning stage's per-relation bars on a DEV split of the evaluation set. Prints JSON lines.

    python bench/meaning_bank/sweep.py [--split dev|dev2] [--relations knows,worked_with] [--bars '{"knows": 0.9}']

For each relation, the bar is set in turn to 0.55, 0.60, ... 0.95 with the others as they are
(stage._MIN, or --bars over it) and bench/meaning_eval.py's sentence score is taken on the dev
split: overall precision, recall and false positives, and that relation's found and false
positives. The bar to keep is read off these lines (the highest that loses no dev recall, never
below 0.55). Dev splits only (dev, or dev2): the test split must stay unread. Every sentence is embedded once
per process (a memo in front of backchannel.embedding.embed), so a sweep takes seconds after
the first pass.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

BARS = [round(0.55 + 0.05 * i, 2) for i in range(9)]
RELATIONS = ("knows", "worked_with", "works_at", "has_title", "left", "committed_to")


def _memoised_embedding() -> None:
    import backchannel.embedding as embedding

    real = embedding.embed
    memo: dict[str, np.ndarray] = {}

    def embed(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            memo.update(zip(missing, real(missing)))
        return np.stack([memo[t] for t in texts])

    embedding.embed = embed  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relations", default=",".join(RELATIONS))
    ap.add_argument("--bars", default="{}", help="JSON: bars to start from, over the stage's own")
    ap.add_argument("--split", default="dev", choices=("dev", "dev2"), help="a dev split (the test split stays unread)")
    a = ap.parse_args(argv)
    _memoised_embedding()
    import meaning_eval

    from backchannel.extraction.meaning import stage

    start = {**stage._MIN, **json.loads(a.bars)}

    def score(bars: dict[str, float]) -> dict:
        stage._MIN.clear()
        stage._MIN.update(bars)
        with contextlib.redirect_stderr(io.StringIO()):
            out, _ = meaning_eval.run_sentences(a.split, "backchannel.extraction.offline:extract")
        return out

    o = score(start)
    print(json.dumps({"bars": start, "precision": o["precision"], "recall": o["recall"], "fp": o["false_positives"]}))
    for rel in a.relations.split(","):
        for bar in BARS:
            o = score({**start, rel: bar})
            pp = o["per_predicate"][rel]
            row = {"relation": rel, "bar": bar, "precision": o["precision"], "recall": o["recall"]}
            row |= {"fp": o["false_positives"], "found": pp["found"], "relation_fp": pp["false_positives"]}
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

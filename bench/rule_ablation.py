"""What each English phrase rule of the offline extractor still adds beside the meaning stage.

    python bench/rule_ablation.py                      # every rule group, one at a time
    python bench/rule_ablation.py --only rule_knows,rule_my_ties --skip stories
    python bench/rule_ablation.py --off rule_a,rule_b  # one run with these rules off together

Each run switches rules off through the extractor's own switch (offline.RULES_OFF_ENV, read on
every call: the story pipeline reads it too) and measures, in this one process (the extractor,
the model and the head load once, and each sentence is embedded once: embedding.remember), the three benches the rules answer to:

- "sentences": bench/meaning_eval.py's dev split (the test split is never read here);
- "devset": bench/offline_extract.py's parts "all" and "real_exhaustive", and the QMSum count;
- "stories": the story suite (bench/quality.py: tests/scenarios/stories).

A run is compared with the run with every rule on: per bench, the labelled facts it no longer finds
("lost"), the false positives it no longer makes ("fp_gone") and those it now makes ("fp_new"), and
the figures (precision, recall, QMSum count, stories passed). One JSON object per run is printed
as it finishes (a line each), the run with every rule on first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "scenarios"))

import meaning_eval  # noqa: E402
import offline_extract  # noqa: E402

from backchannel import embedding  # noqa: E402
from backchannel.extraction import offline  # noqa: E402

# Ablated one at a time by default: every English rule function offline.py calls, and its passes.
GROUPS = (
    "rule_copula",
    "rule_appositive",
    "rule_employ",
    "rule_worked_with",
    "rule_knows",
    "rule_my_ties",
    "rule_commitment",
    "rule_pledge",
    "rule_reported_commitment",
    "rule_self_intro",
    "rule_from_org",
    "rule_moves",
    "rule_possessive_title",
    "rule_i_lead",
    "rule_named_title",
    "our_people",
    "pronoun_facts",
    "qualify_claims",
)
BENCHES = ("sentences", "devset", "stories")


def _fact(d: dict[str, Any]) -> str:
    obj = d.get("object") or d.get("literal") or ""
    return f"{d.get('subject')} {d.get('predicate')} {obj}"


def sentences() -> dict[str, Any]:
    figures, errors = meaning_eval.run_sentences("dev", "backchannel.extraction.offline:extract")
    missed = sorted({f"{e['id']}: {_fact(e['missed'])}" for e in errors if "missed" in e})
    fps = sorted({f"{e['id']}: {_fact(e['false_positive'])}" for e in errors if "false_positive" in e})
    # a labelled not-to-store fact (negated, hypothetical, ...) stored anyway also counts against precision
    fps += sorted({f"{e['id']}: stored {e['stored_a']}: {_fact(e['fact'])}" for e in errors if "stored_a" in e})
    per = {p: v["found"] for p, v in figures["per_predicate"].items()}
    return {
        "figures": {"P": figures["precision"], "R": figures["recall"], "found": figures["found"], "found_per": per},
        "missed": missed,
        "fps": fps,
    }


def devset(state: dict[str, Any]) -> dict[str, Any]:
    ox = offline_extract
    if "files" not in state:
        files, gold, _ = ox.load()
        segments = [s for s in ox.load_segments() if s["file"] in files]
        transcripts = {s["file"]: ox.parse_file(ox.resolve_path(s["file"])).utterances for s in segments}
        state.update(files=files, gold=gold, segments=segments, transcripts=transcripts)
    files, gold, segments, transcripts = state["files"], state["gold"], state["segments"], state["transcripts"]
    preds = ox.all_predictions(files)
    out: dict[str, Any] = {"figures": {}, "missed": [], "fps": []}
    for name, (pfiles, recall_gold, filt) in ox.parts(files, gold, segments).items():
        if name not in ("all", "real_exhaustive"):
            continue

        def keep(ref: str, p: dict) -> bool:
            return ox.in_segment(segments, transcripts, ref, p)

        res = ox.score(
            pfiles, preds, recall_gold, [r for r in gold if r["file"] in pfiles], keep if filt == "segments" else None
        )
        o = res["overall"]
        out["figures"][name] = {"P": o["precision"], "R": o["recall"], "found": o["found"]}
        out["missed"] += sorted({f"{name}: {r['file']}: {_fact(r)}" for r in res["missed"]})
        out["fps"] += sorted({f"{name}: {e['file']}: {_fact(e)}" for e in res["errors"]})
    out["figures"]["qmsum"] = ox.qmsum_count(files, preds)["assertions"]
    return out


def stories() -> dict[str, Any]:
    import harness

    results = []
    with tempfile.TemporaryDirectory(prefix="bc-ablation-") as tmp:
        for s in harness.load_stories():
            results.append(harness.run_story(s, Path(tmp) / s.name))
    failed = [r.summary() for r in results if not r.ok]
    return {
        "figures": {"passed": sum(r.ok for r in results), "stories": len(results)},
        "missed": sorted(f"{d['story']}: {m}" for d in failed for m in d["missed"]),
        "fps": sorted(f"{d['story']}: {m}" for d in failed for m in d["false_alarms"]),
    }


def measure(off: str, benches: tuple[str, ...], state: dict[str, Any]) -> dict[str, Any]:
    os.environ[offline.RULES_OFF_ENV] = off
    try:
        t0 = time.perf_counter()
        got: dict[str, Any] = {}
        if "sentences" in benches:
            got["sentences"] = sentences()
        if "devset" in benches:
            got["devset"] = devset(state)
        if "stories" in benches:
            got["stories"] = stories()
        got["seconds"] = round(time.perf_counter() - t0, 1)
        return got
    finally:
        os.environ.pop(offline.RULES_OFF_ENV, None)


def compare(off: str, base: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"off": off or "(none)", "seconds": run["seconds"]}
    for b in BENCHES:
        if b not in run:
            continue
        was, now = base[b], run[b]
        row[b] = {
            "figures": now["figures"],
            "lost": sorted(set(now["missed"]) - set(was["missed"])),
            "gained": sorted(set(was["missed"]) - set(now["missed"])),
            "fp_new": sorted(set(now["fps"]) - set(was["fps"])),
            "fp_gone": sorted(set(was["fps"]) - set(now["fps"])),
        }
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated groups to ablate one at a time (default: all)")
    ap.add_argument("--off", default="", help="one run with these comma-separated rules off together")
    ap.add_argument("--skip", default="", help="comma-separated benches to skip: " + ", ".join(BENCHES))
    a = ap.parse_args()
    if os.environ.get(offline.RULES_OFF_ENV):
        ap.error(f"{offline.RULES_OFF_ENV} is set: the reference run must have every rule on")
    skip = {x for x in a.skip.split(",") if x}
    benches = tuple(b for b in BENCHES if b not in skip)
    runs = [a.off] if a.off else [g for g in (a.only.split(",") if a.only else GROUPS) if g]
    state: dict[str, Any] = {}
    embedding.remember(True)  # each run embeds mostly the same masked sentences: once each
    base = measure("", benches, state)
    print(json.dumps(compare("", base, base), ensure_ascii=False), flush=True)
    for off in runs:
        print(json.dumps(compare(off, base, measure(off, benches, state)), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()

"""Whose fault is a missed fact: the meaning head's or the stage around it? Prints one JSON object.

    python bench/meaning_bank/diagnose.py [--split dev] [--show]
    python bench/meaning_bank/diagnose.py --items bench/meaning_bank/probe.jsonl [--show]

`--items` reads other items in the evaluation set's format instead: probe.jsonl here holds
fresh sentences written for this diagnosis (in no bank file, never trained on).

For every fact of the evaluation set's sentences (bench/evalset, dev split only: the test split
must stay unread) that should be stored and that the offline extractor misses, the target turn
is read the way meaning/stage.py reads it (its candidates, mentions and the shipped heads) and
the miss is put in one bucket:

- `stage:not_english`: a French or Japanese sentence (the rules' alone, no head reads it);
- `stage:no_candidate`: no sentence of the turn is a candidate (no mention, or the filter);
- `stage:no_mention`: candidates, but none has a slot for the fact's object (its subject for a
  promise or a title), so the head never sees the relation between the right parties;
- `head:relation`: the candidate naming the party is read as another relation (a worked_with
  read where a past works_at is labelled counts as right: the evaluation finds one with the other);
- `head:confidence`: read as the right relation below the stage's threshold;
- `head:stance`: the right relation, dropped for a stance the label does not have;
- `stage:policy`: the right relation and the labelled stance, dropped by the stage's policy
  (it drops a worked_with read as knowing *of* someone; a knows it keeps, with that stance);
- `head:dropped_rule_claim`: the rules alone find it and the head's stance took it away;
- `stage:filling`: the head read it right and surely; the slots were not filled (subject,
  object, a promise's verb, a title) or a rule's claim covered it.

Only counts and, with --show, the masked candidate and reading of each miss (dev only).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import meaning_eval as ev  # noqa: E402

from backchannel.core.vocabulary import NOT_FACT_STANCES  # noqa: E402
from backchannel.extraction import offline  # noqa: E402
from backchannel.extraction.meaning import stage  # noqa: E402
from backchannel.extraction.meaning.classifier import classify  # noqa: E402
from backchannel.extraction.meaning.promises import PROMISE_CUE  # noqa: E402
from backchannel.extraction.meaning.slots import fill  # noqa: E402
from backchannel.extraction.mentions import sentence as mentions  # noqa: E402
from backchannel.extraction.rules.fr.relations import looks_french  # noqa: E402
from backchannel.extraction.rules.ja.relations import is_japanese  # noqa: E402


def _missed(item: dict, extract_kwargs: dict) -> list[dict]:
    preds = ev.predict(lambda t, owner_names: offline.extract(t, owner_names=owner_names, **extract_kwargs), item)
    t, reg = ev.Tally(), ev.Tally()
    ev.score_item(item, preds, t, reg)
    return [e["missed"] for e in t.errors if "missed" in e]


def _party(f: dict) -> tuple[str, str]:
    """(kind, name) of the party a candidate must name for the fact to be read."""
    if f["predicate"] in ev.PERSON_OBJECT:
        return "person", f["object"]
    if f["predicate"] in ev.ORG_OBJECT:
        return "organisation", f["object"]
    return "subject", f["subject"]


def _names(slot: mentions.Slot, kind: str, name: str, speaker: str | None) -> bool:
    if kind == "organisation":
        return slot.kind == "organisation" and ev.same_org(slot.name, name)
    return slot.kind == "person" and ev.same_person(slot.name, name, speaker)


def _same_relation(read: str, want: str) -> bool:
    # a past works_at at X is implied by a worked_with "at X" (the evaluation counts it found with it)
    return (
        read == want
        or {read, want} == {"works_at", "left"}
        or (want == "has_title" and read == "works_at")
        or (want in ("works_at", "left") and read == "worked_with")
    )


def bucket(item: dict, f: dict) -> tuple[str, dict]:
    transcript = ev.build_transcript(item)
    target = transcript.utterances[-1]
    text = target.text
    if is_japanese(text) or looks_french(text):
        return "stage:not_english", {}
    known = offline._known_people(transcript, ev.OWNER_NAMES)
    orgs = stage.meeting_organisations(transcript, known)
    cands = [c for c in stage.candidates(transcript, known, orgs) if c.utt_idx == target.idx]
    if not cands:
        return "stage:no_candidate", {}
    kind, name = _party(f)
    speaker = item["speaker"]
    if kind == "subject":
        first = ev.same_person(name, speaker or "", None) if speaker else False
        hits = [c for c in cands if first or any(_names(s, "person", name, speaker) for s in c.slots)]
    else:
        hits = [c for c in cands if any(_names(s, kind, name, speaker) for s in c.slots)]
    if f["predicate"] == "committed_to" and not hits:
        hits = [c for c in cands if PROMISE_CUE.search(c.text, c.w0, c.w1)]
    if not hits:
        return "stage:no_mention", {"candidates": [c.masked for c in cands]}
    readings = classify([fill(c.masked) for c in hits])
    shown = [
        {
            "masked": c.masked,
            "relation": r.relation,
            "p": round(r.relation_p, 2),
            "stance": r.stance,
            "stance_p": round(r.stance_p, 2),
        }
        for c, r in zip(hits, readings)
    ]
    right = [r for r in readings if _same_relation(r.relation, f["predicate"])]
    if not right:
        return "head:relation", {"read": shown}
    sure = [r for r in right if r.relation_p >= stage._MIN.get(r.relation, stage.RELATION_MIN)]
    if not sure:
        return "head:confidence", {"read": shown}
    kept = [
        r
        for r in sure
        if not (
            r.stance_p >= stage.STANCE_MIN
            and (r.stance in NOT_FACT_STANCES or (r.stance == "knows_of" and r.relation == "worked_with"))
        )
    ]
    if not kept:
        # the head read the labelled stance and the stage's policy dropped it (a worked_with known *of*)
        right_stance = any(r.stance == f["stance"] for r in sure)
        return ("stage:policy" if right_stance else "head:stance"), {"read": shown}
    return "stage:filling", {"read": shown}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--split", default="dev", choices=("dev", "dev2"), help="dev splits only: the test split stays unread"
    )
    ap.add_argument("--items", type=Path, default=None, help="items in the evaluation set's format, instead of a split")
    ap.add_argument("--show", action="store_true", help="each miss with its masked candidates and readings")
    a = ap.parse_args(argv)
    if a.items is not None:
        lines = a.items.read_text(encoding="utf-8").splitlines()
        items = [ev.validate_item(json.loads(x), f"{a.items.name}:{n}") for n, x in enumerate(lines, 1) if x.strip()]
    else:
        items = ev.load_sentences(a.split)
    to_store = sum(1 for item in items for f in item["facts"] if f["stance"] in ev.STORED)
    counts: Counter[str] = Counter()
    per_predicate: dict[str, Counter[str]] = {}
    shown = []
    for item in items:
        missed = _missed(item, {})
        if not missed:
            continue
        rules_only = {json.dumps(f, sort_keys=True) for f in _missed(item, {"meaning": False})}
        for f in missed:
            if json.dumps(f, sort_keys=True) not in rules_only:
                b, info = "head:dropped_rule_claim", {}
            else:
                b, info = bucket(item, f)
            counts[b] += 1
            per_predicate.setdefault(f["predicate"], Counter())[b] += 1
            if a.show:
                shown.append(
                    {
                        "id": item["id"],
                        "fact": {k: f[k] for k in ("predicate", "subject", "stance")},
                        "bucket": b,
                        **info,
                    }
                )
    total = sum(counts.values())
    stage_share = sum(v for k, v in counts.items() if k.startswith("stage:")) / total if total else None
    out = {
        "split": str(a.items) if a.items else a.split,
        "facts_to_store": to_store,
        "missed": total,
        "buckets": dict(counts.most_common()),
        "stage_share": round(stage_share, 3) if stage_share is not None else None,
        "per_predicate": {p: dict(c.most_common()) for p, c in sorted(per_predicate.items())},
    }
    if a.show:
        out["misses"] = shown
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

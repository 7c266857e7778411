"""Why the offline extractor misses a fact of the real meetings. Prints one JSON object.

    python bench/devset_diagnose.py [--show]

For every fact of bench/devset's exhaustively labelled QMSum segments (labels with `segment`,
bench/devset/README.md) that `bench/offline_extract.py` does not find, the utterance that says it
(found by the label's quote) is read the way meaning/stage.py reads it and the miss is put in one
of the buckets of bench/meaning_bank/diagnose.py (its docstring says what each means), plus:

- `other:alias`: an acronym beside its long form (mentions/acronyms.py, no head reads it);
- `other:no_utterance`: the quote is in no utterance of the segment (a label across turns).

A promise the head reads right and the stage does not fill (`stage:filling`) says why with --show
(the promise cue the candidate has, if any). Only counts, and with --show each miss.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "meaning_bank"))

import diagnose as dg  # noqa: E402
import meaning_eval as ev  # noqa: E402
import offline_extract as oe  # noqa: E402

from backchannel.extraction import offline  # noqa: E402
from backchannel.extraction.formats.parse import parse_file  # noqa: E402
from backchannel.extraction.meaning import stage  # noqa: E402
from backchannel.extraction.meaning.classifier import classify  # noqa: E402
from backchannel.extraction.meaning.promises import PROMISE_CUE  # noqa: E402
from backchannel.extraction.meaning.slots import fill  # noqa: E402
from backchannel.extraction.mentions import sentence as mentions  # noqa: E402
from backchannel.extraction.mentions.pronouns import pronoun_refs  # noqa: E402


def _rows(preds: list, transcript) -> list[dict]:
    intros = offline.self_introductions(transcript)
    out = []
    for a in preds:
        subj = intros.get(a.subject.name, a.subject.name) if a.subject.is_speaker else a.subject.name
        obj = a.object.name if a.object is not None else (a.object_literal or "")
        if a.object is not None and a.object.is_speaker:
            obj = intros.get(obj, obj)
        out.append({"subject": subj, "predicate": a.predicate, "object": obj, "valid_to": a.valid_to})
    return out


def _utterance(transcript, seg: dict, quote: str) -> int | None:
    q = " ".join(quote.split())
    for u in transcript.utterances:
        if seg["first"] <= u.idx <= seg["last"] and q and q in " ".join((u.text or "").split()):
            return u.idx
    return None


def bucket(transcript, idx: int, row: dict) -> tuple[str, dict]:
    """diagnose.bucket's reading of one labelled fact, on the utterance of a real meeting."""
    known = offline._known_people(transcript, ())
    orgs = stage.meeting_organisations(transcript, known)
    refs = pronoun_refs(transcript, known, orgs)
    cands = [c for c in stage.candidates(transcript, known, orgs, refs) if c.utt_idx == idx]
    if not cands:
        return "stage:no_candidate", {}
    kind, name = dg._party({"predicate": row["predicate"], "object": row.get("object"), "subject": row["subject"]})
    speaker = row.get("speaker")
    if kind == "subject":
        first = bool(speaker) and ev.same_person(name, speaker or "", None)
        hits = [c for c in cands if first or any(dg._names(s, "person", name, speaker) for s in c.slots)]
    else:
        hits = [c for c in cands if any(dg._names(s, kind, name, speaker) for s in c.slots)]
    if row["predicate"] == "committed_to":
        cued = [c for c in hits if PROMISE_CUE.search(c.text, c.w0, c.w1)]
        hits = cued or hits
    if not hits:
        return "stage:no_mention", {"candidates": [c.masked for c in cands]}
    readings = classify([mentions.fluent(fill(c.masked)) for c in hits])
    shown = [
        {
            "masked": c.masked,
            "relation": r.relation,
            "p": round(r.relation_p, 2),
            "stance": r.stance,
            "stance_p": round(r.stance_p, 2),
            "cue": bool(PROMISE_CUE.search(c.text, c.w0, c.w1)),
        }
        for c, r in zip(hits, readings)
    ]
    right = [r for r in readings if dg._same_relation(r.relation, row["predicate"])]
    if not right:
        return "head:relation", {"read": shown}
    sure = [r for r in right if r.relation_p >= stage._MIN.get(r.relation, stage.RELATION_MIN)]
    if not sure:
        return "head:confidence", {"read": shown}
    kept = [r for r in sure if not (r.stance_p >= stage.STANCE_MIN and r.stance in stage.NOT_FACTS)]
    if not kept:
        return "head:stance", {"read": shown}
    return "stage:filling", {"read": shown}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="each miss with its candidates and readings")
    a = ap.parse_args(argv)
    files, gold, _ = oe.load()
    segments = [s for s in oe.load_segments() if s["file"] in files]
    labels = [r for r in gold if r.get("segment")]
    counts: Counter[str] = Counter()
    per_predicate: dict[str, Counter[str]] = {}
    per_genre: dict[str, Counter[str]] = {}
    shown = []
    for ref in sorted({s["file"] for s in segments}):
        transcript = parse_file(oe.resolve_path(ref))
        now = _rows(offline.extract(transcript), transcript)
        rules = _rows(offline.extract(transcript, meaning=False), transcript)
        now += [
            {"subject": k, "predicate": "alias", "object": v}
            for k, v in offline.organisation_aliases(transcript).items()
        ]
        for row in (r for r in labels if r["file"] == ref):
            if any(oe.row_matches(p, row) for p in now):
                continue
            seg = next(s for s in segments if s["id"] == row["segment"])
            idx = _utterance(transcript, seg, row.get("quote") or "")
            info: dict = {}
            if row["predicate"] == "alias":
                b = "other:alias"
            elif any(oe.row_matches(p, row) for p in rules):
                b = "head:dropped_rule_claim"
            elif idx is None:
                b = "other:no_utterance"
            else:
                b, info = bucket(transcript, idx, row)
            counts[b] += 1
            per_predicate.setdefault(row["predicate"], Counter())[b] += 1
            per_genre.setdefault(seg["genre"], Counter())[b] += 1
            if a.show:
                fact = {k: row.get(k) for k in ("speaker", "subject", "predicate", "object", "literal") if row.get(k)}
                shown.append(
                    {
                        "file": ref.rsplit("/", 1)[-1],
                        "utt": idx,
                        "fact": fact,
                        "quote": row.get("quote"),
                        "bucket": b,
                        **info,
                    }
                )
    out: dict = {
        "labelled": len(labels),
        "missed": sum(counts.values()),
        "buckets": dict(counts.most_common()),
        "per_genre": {g: dict(c.most_common()) for g, c in sorted(per_genre.items())},
        "per_predicate": {p: dict(c.most_common()) for p, c in sorted(per_predicate.items())},
    }
    if a.show:
        out["misses"] = shown
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

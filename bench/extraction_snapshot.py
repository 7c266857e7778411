"""What ingest stores, as a canonical JSON snapshot, so a change meant to be only faster can be
shown to change no result: run it on the code before and after, then compare the two files.

The snapshot holds, for a fixed set of inputs: every stored assertion (names, not ids: subject,
predicate, object, literal, qualifier, speaker, dates, confidence, modality, stance, trust and its
reasons, the utterance, span and quote), every entity with its kind, merge target and aliases, and
the meaning stage's reading of every sentence it embeds (relation and stance probabilities, which
show how far the embeddings moved: the assertions only show whether a threshold was crossed).

Inputs: the generated 8k-word meetings of bench/ingest.py (same seed), the transcripts of
bench/devset (our own and, when ../shared/corpora is there, the QMSum meetings) and the evalset's
dev sentences (never the test split), each through the real parser or the eval's transcript
builder and `ingest_file` / the offline extractor, as ingest does.

    PYTHONPATH=OLD_TREE python bench/extraction_snapshot.py --out /tmp/before.json
    PYTHONPATH=$PWD     python bench/extraction_snapshot.py --out /tmp/after.json
    python bench/extraction_snapshot.py --compare /tmp/before.json /tmp/after.json

`--compare` prints JSON: the count of differing assertions, entities and readings (with the
first few differences), and the largest change of a head probability; it exits 1 if any
assertion or entity differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))  # bench/ingest.py's meeting generator, bench/meaning_eval.py's builder


def _value(x: Any) -> Any:
    if x is None or isinstance(x, str | int | bool):
        return x
    if isinstance(x, float):
        return round(x, 6)
    if isinstance(x, list | tuple):
        return [_value(v) for v in x]
    return str(x)


def _inputs(work: Path, meetings: int, words: int) -> list[tuple[str, Path]]:
    import ingest as ingest_bench

    rng = random.Random(7)
    out = []
    for i in range(meetings):
        f = work / f"meeting-{i:04d}.txt"
        f.write_text(ingest_bench.meeting(rng, words, i), encoding="utf-8")
        out.append((f"generated:{i}", f))
    corpora = Path(os.environ.get("BACKCHANNEL_CORPORA") or BENCH.parent.parent / "shared" / "corpora")
    for line in (BENCH / "devset" / "files.txt").read_text(encoding="utf-8").splitlines():
        ref = line.split("#")[0].strip()
        if not ref:
            continue
        kind, _, rel = ref.partition(":")
        path = corpora / rel if kind == "corpora" else BENCH / "devset" / "transcripts" / rel
        if path.exists():
            out.append((ref, path))
    return out


def _store_rows(store: Any) -> dict[str, Any]:
    assertions = store.con.execute("""
        SELECT s.path, a.predicate, subj.name, obj.name, a.object_literal, a.qualifier, spk.name, a.said_at,
               a.valid_from, a.valid_to, a.confidence, a.modality, a.utterance_idx, a.span_start, a.span_end,
               a.quote, a.date_phrase, a.extractor, a.trust, a.trust_reasons, rec.name, a.stance,
               a.superseded_at IS NOT NULL
        FROM assertions a JOIN sources s ON s.id = a.source_id
        LEFT JOIN entities subj ON subj.id = a.subject_id LEFT JOIN entities obj ON obj.id = a.object_id
        LEFT JOIN entities spk ON spk.id = a.speaker_id LEFT JOIN entities rec ON rec.id = a.recipient_id
    """).fetchall()
    entities = store.con.execute("""
        SELECT e.kind, e.name, e.norm, e.is_owner, m.name, list(al.norm ORDER BY al.norm)
        FROM entities e LEFT JOIN entities m ON m.id = e.merged_into LEFT JOIN aliases al ON al.entity_id = e.id
        GROUP BY ALL
    """).fetchall()
    utterances = store.con.execute("SELECT count(*) FROM utterances").fetchone()[0]
    # A source by its file's name: the generated meetings lie in a fresh temporary folder per run.
    assertions = [(Path(r[0]).name if r[0] else None, *r[1:]) for r in assertions]
    return {
        "assertions": sorted((_value(list(r)) for r in assertions), key=json.dumps),
        "entities": sorted((_value(list(r)) for r in entities), key=json.dumps),
        "utterances": utterances,
    }


def _readings(transcripts: list[tuple[str, Any]]) -> list[list[Any]]:
    """The head's reading of every sentence the meaning stage embeds, per input."""
    from backchannel.extraction.meaning import stage
    from backchannel.extraction.meaning.classifier import classify
    from backchannel.extraction.meaning.slots import fill

    out = []
    for ref, t in transcripts:
        orgs = stage.meeting_organisations(t, frozenset())
        cands = stage.candidates(t, frozenset(), orgs)
        texts = [fill(c.masked) for c in cands]
        for c, text, r in zip(cands, texts, classify(texts)):
            out.append(
                [
                    ref,
                    c.utt_idx,
                    c.s0,
                    text,
                    r.relation,
                    round(r.relation_p, 7),
                    r.stance,
                    {k: round(v, 7) for k, v in sorted(r.stance_probs.items())},
                ]
            )
    return out


def snapshot(meetings: int, words: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-snapshot-"))
    os.environ["BACKCHANNEL_HOME"] = str(work / "home")
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction import offline
    from backchannel.extraction.formats.parse import parse_file
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory import Store

    (work / "corpus").mkdir()
    inputs = _inputs(work / "corpus", meetings, words)
    paths = resolve_paths().ensure()
    settings = load_settings(paths)
    store = Store.open(paths.db_file)
    statuses = {}
    for ref, f in inputs:
        out = ingest_file(store, settings, f)
        statuses[ref] = [out.status, out.assertions, out.error]
    stored = _store_rows(store)
    store.close()
    transcripts = [(ref, parse_file(f)) for ref, f in inputs]

    import meaning_eval

    sentences = []
    for item in meaning_eval.load_sentences("dev"):
        t = meaning_eval.build_transcript(item)
        transcripts.append((f"evalset-dev:{item['id']}", t))
        for a in offline.extract(t, owner_names=[]):
            sentences.append(
                [
                    item["id"],
                    _value(
                        [
                            a.predicate,
                            a.subject.name,
                            a.subject.is_speaker,
                            a.object and a.object.name,
                            a.object_literal,
                            a.qualifier,
                            a.utterance_idx,
                            a.span_start,
                            a.span_end,
                            a.quote,
                            a.valid_from,
                            a.valid_to,
                            a.confidence,
                            a.modality,
                            a.stance,
                            list(a.trust_reasons),
                        ]
                    ),
                ]
            )
    import backchannel

    return {
        "code": str(Path(backchannel.__file__).parent),
        "inputs": statuses,
        **stored,
        "evalset_dev_sentences": sentences,
        "readings": _readings(transcripts),
    }


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    failed = False
    out["code"] = [a.get("code"), b.get("code")]
    for key in ("inputs", "assertions", "entities", "utterances", "evalset_dev_sentences"):
        x, y = a[key], b[key]
        if isinstance(x, list):
            xs, ys = {json.dumps(v) for v in x}, {json.dumps(v) for v in y}
            only_a, only_b = sorted(xs - ys), sorted(ys - xs)
            out[key] = {
                "before": len(x),
                "after": len(y),
                "only_before": len(only_a),
                "only_after": len(only_b),
                "examples": [*only_a[:3], *only_b[:3]],
            }
            failed |= bool(only_a or only_b) or len(x) != len(y)
        else:
            out[key] = {"same": x == y}
            failed |= x != y
    ra = {(r[0], r[1], r[2]): r for r in a["readings"]}
    rb = {(r[0], r[1], r[2]): r for r in b["readings"]}
    worst, changed = 0.0, 0
    for k in ra.keys() & rb.keys():
        x, y = ra[k], rb[k]
        diff = max([abs(x[5] - y[5]), *(abs(x[7][c] - y[7][c]) for c in x[7])])
        worst = max(worst, diff)
        changed += (x[3], x[4], x[6]) != (y[3], y[4], y[6])
    out["readings"] = {
        "before": len(ra),
        "after": len(rb),
        "same_keys": ra.keys() == rb.keys(),
        "label_changes": changed,
        "max_probability_change": worst,
    }
    out["identical"] = not failed and changed == 0 and ra.keys() == rb.keys()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--meetings", type=int, default=6)
    ap.add_argument("--words", type=int, default=8000)
    args = ap.parse_args()
    if args.compare:
        result = compare(*(json.loads(p.read_text(encoding="utf-8")) for p in args.compare))
        print(json.dumps(result, indent=2, ensure_ascii=False))
        sys.exit(0 if result["identical"] else 1)
    if args.out is None:
        ap.error("--out FILE or --compare BEFORE AFTER")
    args.out.write_text(json.dumps(snapshot(args.meetings, args.words), ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()

"""Quality of the offline extractor on the labelled development set: precision and
recall per predicate, and overall. Prints one JSON object.

    python bench/offline_extract.py [--baseline REV] [--no-baseline] [--show-errors] [--show-missed]

Every figure is printed twice, for the code in this tree ("now") and for the
extractor at a baseline commit ("baseline", default 4d6e7c0: the code before
the recall rules), run on the same files in the same run: the baseline tree is
unpacked with `git archive` into a cache folder and run in a child process.
"ratio" is now's recall over the baseline's.

Parts (bench/devset/README.md): "real" is the third-party transcripts under
$BACKCHANNEL_CORPORA; within it "real_exhaustive" is the meeting segments read
in full and labelled exhaustively before any extractor ran on them
(bench/devset/segments.txt; only predictions from those utterances count for
its precision) and "real_searched" the earlier labels found by searching;
"written" is our own transcripts (split into "devset" and "heldout").

The set (bench/devset/README.md): `bench/devset/files.txt` lists the transcripts
(our own in bench/devset/transcripts/, third-party ones by path under
$BACKCHANNEL_CORPORA, default ../shared/corpora), `bench/devset/labels.jsonl` the
facts a careful reader finds in them. Each file goes through the real parser
(backchannel.extraction.formats.parse) and the offline extractor, as ingest does.

Scoring. A predicted fact is (subject, predicate, object or literal). Names are
normalised (case, accents, honorifics such as "Hon."/"Dr", post-nominals such as
"AM"/"MS", a trailing "(riding, party)" or ", title" in a speaker label); a first
person resolves to the speaker label, then to the name the speaker gave themself.
A prediction matches a labelled fact of the same file when the predicate is the
same, the subjects are the same person (equal, or one is the other's first
name), and the objects match: organisations and people by normalised name (or a
listed alternative, `also`), titles by canonical form, promises by their content
words (at least half shared). A has_title that repeats the title of a labelled
works_at/left counts as correct but earns no recall. Facts are counted once per
corpus (the same fact said in four meetings is one fact), except facts about a
seat label ("Speaker 2", "Project Manager"), which are per meeting. Every
prediction that matches no label counts as an error: when one is in fact true,
the fix is to add it to labels.jsonl, never to drop it from the count.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The child process that runs the baseline imports the baseline's package instead of this tree's.
sys.path.insert(0, os.environ.get("BENCH_CODE_ROOT") or str(ROOT))

try:
    from backchannel.extraction import offline
    from backchannel.extraction.formats.parse import parse_file
    from backchannel.extraction.mentions.names import canonical_title
except ImportError:  # a baseline from before the stages were laid out as packages (backchannel/extractors)
    from backchannel.extractors import offline  # type: ignore[no-redef]
    from backchannel.extractors.offline_names import canonical_title  # type: ignore[no-redef]
    from backchannel.extractors.parse import parse_file  # type: ignore[no-redef]
from backchannel.memory.text import norm_name  # noqa: E402

DEVSET = ROOT / "bench" / "devset"
BASELINE = "4d6e7c0"  # the code before the recall rules (the commit that added the dev set)
_HONORIFIC = re.compile(r"^(?:(?:the\s+)?(?:right\s+)?hon\.?|mr|mrs|ms|miss|mx|dr|prof|professor|sir|dame)\.?\s+", re.I)
_POSTNOMINAL = re.compile(r"\s+(?:AM|MS|MP|MSP|MLA|MEP|OBE|MBE|CBE|QC|KC)$")
_SEAT = re.compile(
    r"^(?:speaker|caller|participant|intervenant|agent|host|interviewer|chair|the chair|cfo|"
    r"grad|phd|postdoc|professor|project manager|marketing|user interface|industrial designer)"
    r"(?:\s+\w{1,3})?$",
    re.I,
)
_STOP = set(
    "the a an to you your our my us we i me of for with on in at by and this that those these some "
    "le la les un une de des du à au pour".split()
)


def corpora_dir() -> Path:
    return Path(os.environ.get("BACKCHANNEL_CORPORA") or ROOT.parent / "shared" / "corpora")


def resolve_path(ref: str) -> Path:
    kind, _, rel = ref.partition(":")
    return (corpora_dir() / rel) if kind == "corpora" else (DEVSET / "transcripts" / rel)


def person_key(name: str) -> str:
    """'Hon. Patty Hajdu (Minister of Health)' -> 'patty hajdu'; 'Kirsty Williams AM, Cabinet Secretary' ->
    'kirsty williams'."""
    s = name.strip()
    inner = re.match(r"^the\s+(?:acting\s+)?chair\s*\((.*)\)\s*$", s, re.I)
    if inner:
        s = inner.group(1)
    s = re.sub(r"\s*\(.*\)\s*$", "", s)
    s = s.split(",")[0]
    for _ in range(2):
        s = _HONORIFIC.sub("", s.strip())
    s = _POSTNOMINAL.sub("", s.strip())
    return norm_name(s)


def org_key(name: str) -> str:
    n = norm_name(name)
    return n[4:] if n.startswith("the ") else n


def title_key(t: str) -> str:
    words = norm_name(t).split()
    while words and words[0] in ("the", "a", "an", "our", "their"):
        words = words[1:]
    return canonical_title(" ".join(words)).lower()


def content_words(s: str) -> set[str]:
    return {w for w in re.findall(r"[\w'’-]+", norm_name(s)) if w not in _STOP}


def row_matches(p: dict, row: dict) -> bool:
    """A prediction says the labelled fact: same predicate (or a works_at that ended for a 'left'),
    same subject (or the seat label of the labelled speaker, when nobody learned their name), same object."""
    pred_ok = row["predicate"] == p["predicate"] or (
        row["predicate"] == "left" and p["predicate"] == "works_at" and p.get("valid_to") is not None
    )
    subj_ok = same_subject(p["subject"], row["subject"]) or (
        is_seat(p["subject"]) and p["subject"] == row.get("speaker")
    )
    return pred_ok and subj_ok and object_matches(p["object"], row)


def same_subject(pred: str, gold: str) -> bool:
    a, b = person_key(pred), person_key(gold)
    if not a or not b:
        return False
    if a == b:
        return True
    ta, tb = a.split(), b.split()
    return len(ta) == 1 and tb[0] == ta[0] or len(tb) == 1 and ta[0] == tb[0]


def object_matches(pred_obj: str, row: dict) -> bool:
    pred_ = row["predicate"]
    golds = [row.get("object") or row.get("literal") or "", *row.get("also", ())]
    for g in golds:
        if pred_ == "has_title" and re.match(
            rf"{re.escape(title_key(g))}(?:$| (?:for|of|at|in) )", title_key(pred_obj)
        ):
            return True  # "product manager for Atlas" says "product manager"
        if pred_ == "committed_to":
            pw, gw = content_words(pred_obj), content_words(g)
            first = re.findall(r"[\w'’-]+", norm_name(pred_obj))[:1] == re.findall(r"[\w'’-]+", norm_name(g))[:1]
            if gw and first and len(pw & gw) * 3 >= len(gw) * 2:
                return True  # the same verb, and most of the promise's words
        if pred_ in ("knows", "worked_with", "introduced") and same_subject(pred_obj, g):
            return True
        if pred_ in ("works_at", "left", "mentioned_with", "alias") and org_key(pred_obj) == org_key(g):
            return True
    return False


def is_seat(name: str) -> bool:
    return bool(_SEAT.match(name.strip()))


def fact_key(file: str, subject: str, predicate: str, obj: str) -> tuple:
    """Corpus-wide identity of a fact; facts about a seat label stay per meeting."""
    scope = file if is_seat(subject) else ""
    return scope, person_key(subject), predicate, obj.casefold()


def predictions(path: Path) -> list[dict]:
    """What the offline extractor says about one transcript, as (subject, predicate, object) rows."""
    t = parse_file(path)
    intros = offline.self_introductions(t)
    out = []
    for a in offline.extract(t):
        subj = intros.get(a.subject.name, a.subject.name) if a.subject.is_speaker else a.subject.name
        if a.object is not None:
            obj = intros.get(a.object.name, a.object.name) if a.object.is_speaker else a.object.name
        else:
            obj = a.object_literal or ""
        out.append(
            {
                "subject": subj,
                "predicate": a.predicate,
                "object": obj,
                "qualifier": a.qualifier,
                "valid_to": str(a.valid_to) if a.valid_to else None,
                "quote": a.quote,
                "utterance_idx": a.utterance_idx,
            }
        )
    aliases = getattr(offline, "organisation_aliases", None)  # long form -> acronym, when the extractor has it
    if aliases is not None:
        for long_form, short in aliases(t).items():
            out.append(
                {
                    "subject": long_form,
                    "predicate": "alias",
                    "object": short,
                    "qualifier": None,
                    "quote": short,
                    "utterance_idx": None,
                }
            )
    return out


def label_key(r: dict) -> tuple:
    return fact_key(r["file"], r["subject"], r["predicate"], r.get("object") or r.get("literal") or "")


def score(
    files: list[str],
    preds: dict[str, list[dict]],
    recall_gold: list[dict],
    match_gold: list[dict] | None = None,
    keep=None,
) -> dict:
    """Recall over `recall_gold`; a prediction is correct when it says any labelled fact of its file
    (`match_gold`, default the same labels); only predictions `keep(ref, p)` accepts are counted."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    for row in match_gold if match_gold is not None else recall_gold:
        by_file[row["file"]].append(row)
    gold_keys = {label_key(r): r for r in recall_gold}
    found: set[tuple] = set()
    correct: dict[tuple, str] = {}  # prediction key -> predicate
    wrong: dict[tuple, dict] = {}
    for ref in files:
        for p in preds.get(ref, ()):
            if keep is not None and not keep(ref, p):
                continue
            hits = [r for r in by_file[ref] if row_matches(p, r)]
            if hits:
                found.update(label_key(r) for r in hits)
                correct[label_key(hits[0])] = p["predicate"]
                continue
            k = fact_key(ref, p["subject"], p["predicate"], p["object"])
            support = p["predicate"] == "has_title" and any(
                r["predicate"] in ("works_at", "left")
                and r.get("title")
                and same_subject(p["subject"], r["subject"])
                and title_key(r["title"]) == title_key(p["object"])
                for r in by_file[ref]
            )
            if support:
                correct[k] = p["predicate"]
            elif k not in correct:
                wrong[k] = {"file": ref, **p}
    found &= set(gold_keys)
    wrong = {k: v for k, v in wrong.items() if k not in correct}
    per: dict[str, dict] = {}
    preds_seen = sorted({k[2] for k in gold_keys} | set(correct.values()) | {v["predicate"] for v in wrong.values()})
    n_gold = Counter(k[2] for k in gold_keys)
    n_found = Counter(k[2] for k in found)
    n_ok = Counter(correct.values())
    n_bad = Counter(v["predicate"] for v in wrong.values())
    for pr in preds_seen:
        per[pr] = _figures(n_gold[pr], n_found[pr], n_ok[pr], n_bad[pr])
    overall = _figures(len(gold_keys), len(found), len(correct), len(wrong))
    missed = [r for k, r in gold_keys.items() if k not in found]
    return {"overall": overall, "per_predicate": per, "errors": list(wrong.values()), "missed": missed}


def _figures(gold: int, found: int, ok: int, bad: int) -> dict:
    return {
        "labelled": gold,
        "found": found,
        "recall": round(found / gold, 3) if gold else None,
        "predicted": ok + bad,
        "correct": ok,
        "precision": round(ok / (ok + bad), 3) if ok + bad else None,
    }


def load() -> tuple[list[str], list[dict], list[str]]:
    files, skipped = [], []
    for line in (DEVSET / "files.txt").read_text(encoding="utf-8").splitlines():
        ref = line.split("#")[0].strip()
        if not ref:
            continue
        (files if resolve_path(ref).is_file() else skipped).append(ref)
    gold = [json.loads(x) for x in (DEVSET / "labels.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    gold = [r for r in gold if r["file"] in files]
    return files, gold, skipped


def load_segments() -> list[dict]:
    """bench/devset/segments.txt: the utterance ranges read in full and labelled exhaustively."""
    out = []
    for line in (DEVSET / "segments.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            ref, span, genre, ident = line.split()
            first, last = (int(x) for x in span.split("-"))
            out.append({"file": ref, "first": first, "last": last, "genre": genre, "id": ident})
    return out


def in_segment(segments: list[dict], transcripts: dict[str, list], ref: str, p: dict) -> bool:
    """Whether a prediction comes from an exhaustively labelled segment. The utterance is found by the
    prediction's quote in this tree's parse of the file (the baseline's parser may number utterances
    differently); a quote that is a speaker label belongs where that speaker speaks."""
    spans = [(s["first"], s["last"]) for s in segments if s["file"] == ref]
    if not spans:
        return False
    if all(first == 0 and last >= len(transcripts[ref]) - 1 for first, last in spans):
        return True  # the whole meeting
    quote = " ".join((p.get("quote") or "").split())
    idxs = [
        u.idx for u in transcripts[ref] if quote and (quote in " ".join(u.text.split()) or quote in (u.speaker or ""))
    ]
    if not idxs and p.get("utterance_idx") is not None:
        idxs = [p["utterance_idx"]]
    return any(first <= i <= last for i in idxs for first, last in spans)


def all_predictions(files: list[str]) -> dict[str, list[dict]]:
    return {ref: predictions(resolve_path(ref)) for ref in files}


def baseline_predictions(rev: str, files: list[str]) -> dict[str, list[dict]]:
    """The extractor at commit `rev`, run on the same files in a child process (its own package
    unpacked from git into a cache folder, so this tree's code never mixes in)."""
    cache = Path(tempfile.gettempdir()) / f"backchannel-bench-{rev}"
    if not (cache / "backchannel").is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "backchannel"], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
            tar.extractall(cache)
    env = {**os.environ, "PYTHONPATH": str(cache), "BENCH_CODE_ROOT": str(cache)}
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--predict-only", *files],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout)


def qmsum_count(files: list[str], preds: dict[str, list[dict]]) -> dict:
    """How many assertions the 20 QMSum meetings give (aliases apart: they are not facts about
    people), the figure the extraction issue asks to double; its precision is parts.real's."""
    q = [f for f in files if "/qmsum/" in f]
    counts = Counter(p["predicate"] for f in q for p in preds.get(f, []) if p["predicate"] != "alias")
    return {"meetings": len(q), "assertions": sum(counts.values()), "by_predicate": dict(sorted(counts.items()))}


def parts(files: list[str], gold: list[dict], segments: list[dict]) -> dict[str, tuple]:
    """name -> (files, labels whose recall counts, prediction filter or None)."""
    real = [f for f in files if f.startswith("corpora:")]
    seg_files = sorted({s["file"] for s in segments} & set(real))
    written = [f for f in files if f.startswith("devset:")]
    out = {
        "all": (files, gold, None),
        "real": (real, [r for r in gold if r["file"] in real], None),
        "real_exhaustive": (seg_files, [r for r in gold if r.get("segment")], "segments"),
        "real_searched": (real, [r for r in gold if r["file"] in real and not r.get("segment")], None),
        "written": (written, [r for r in gold if r["file"] in written], None),
        "devset": (
            [f for f in written if not f.startswith("devset:heldout_")],
            [r for r in gold if r["file"].startswith("devset:") and not r["file"].startswith("devset:heldout_")],
            None,
        ),
        # written and labelled after the rules, never used to tune them
        "heldout": (
            [f for f in written if f.startswith("devset:heldout_")],
            [r for r in gold if r["file"].startswith("devset:heldout_")],
            None,
        ),
    }
    for genre in sorted({s["genre"] for s in segments}):
        ids = {s["id"] for s in segments if s["genre"] == genre}
        gfiles = sorted({s["file"] for s in segments if s["genre"] == genre} & set(real))
        out[f"real_exhaustive_{genre}"] = (gfiles, [r for r in gold if r.get("segment") in ids], "segments")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help="commit whose extractor is the baseline (default %(default)s)")
    ap.add_argument("--no-baseline", action="store_true", help="score this tree only")
    ap.add_argument("--part", default=None, help="with --show-errors/--show-missed: list only this part's")
    ap.add_argument("--show-errors", action="store_true", help="list predictions that match no labelled fact")
    ap.add_argument("--show-missed", action="store_true", help="list labelled facts not found")
    ap.add_argument("--predict-only", nargs="*", help=argparse.SUPPRESS)  # child process: print predictions
    args = ap.parse_args()
    if args.predict_only is not None:
        print(json.dumps(all_predictions(args.predict_only), ensure_ascii=False))
        return
    files, gold, skipped = load()
    segments = [s for s in load_segments() if s["file"] in files]
    transcripts = {s["file"]: parse_file(resolve_path(s["file"])).utterances for s in segments}
    runs = {"now": all_predictions(files)}
    if not args.no_baseline:
        runs["baseline"] = baseline_predictions(args.baseline, files)
    out: dict = {
        "files": len(files),
        "files_skipped": skipped,
        "baseline": None if args.no_baseline else args.baseline,
        "labelled_facts": len({label_key(r) for r in gold}),
        "parts": {},
    }
    # The figures earlier runs printed: the set before the exhaustive segments (our transcripts and the
    # QMSum facts found by searching), scored on this tree; parts.all has the whole set.
    earlier = [r for r in gold if not r.get("segment")]
    res = score(files, runs["now"], earlier, gold)
    out["overall"], out["per_predicate"] = res["overall"], res["per_predicate"]
    for name, (pfiles, recall_gold, filt) in parts(files, gold, segments).items():
        if not recall_gold:
            continue
        keep = (lambda ref, p: in_segment(segments, transcripts, ref, p)) if filt == "segments" else None
        block: dict = {}
        for run, preds in runs.items():
            res = score(pfiles, preds, recall_gold, [r for r in gold if r["file"] in pfiles], keep)
            block[run] = {"overall": res["overall"], "per_predicate": res["per_predicate"]}
            if run == "now" and (args.part in (None, name)) and (args.show_errors or args.show_missed):
                if args.show_errors and (args.part or name == "all"):
                    block["errors"] = res["errors"]
                if args.show_missed and (args.part or name == "all"):
                    block["missed"] = res["missed"]
        if "baseline" in block:
            b, n = block["baseline"]["overall"]["recall"], block["now"]["overall"]["recall"]
            block["ratio"] = round(n / b, 2) if b else None
        out["parts"][name] = block
    out["qmsum"] = {run: qmsum_count(files, preds) for run, preds in runs.items()}
    print(json.dumps(out, ensure_ascii=False, indent=1 if (args.show_errors or args.show_missed) else None))


if __name__ == "__main__":
    main()

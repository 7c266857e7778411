"""Score extraction on the evaluation set of bench/evalset/ (README there): labelled sentences
and stories in registers the story suite lacks. Prints one JSON object.

    python bench/meaning_eval.py [--split dev|test] [--part sentences|stories|all] [--show-errors]
    python bench/meaning_eval.py --split dev3 --part stories [--show-errors]

Sentences. Each item becomes a real `Transcript` (its context turns, then the target turn,
dated `meeting_date`; a news item is one turn with no speaker) and goes through the configured
offline extractor (`backchannel.extraction.offline.extract`, or `--extractor module:function`
with the same signature). Only predictions from the target turn's text count (not facts read
from a speaker label such as "Hon. X (Chair)"). A prediction matches a labelled fact of its item
when the predicate is the same (a "left" and a past works_at say the same ended employment) and
the names agree leniently: case,
accents, honorifics and a "(Chair)" tail folded; a single surface name (first or last) matches
the labelled full name; the speaker label stands for the speaker; organisations match when
one's words run inside the other's ("Goldman" / "Goldman Sachs"); titles by their words; a
promise by its content words (or as the only promise of that person in the item).

Per predicate: recall over the labelled facts that should be stored (stance asserted, reported,
rumour, ended, knows_of); a prediction that matches one is correct. A prediction of a fact
labelled negated, hypothetical, joke or exercise is a false positive unless it carries that
stance (then it is counted as neither). A has_title repeating the title of a labelled
works_at, or a second prediction of a fact already found, is neither. Any other prediction is
a false positive. A labelled fact that a found one already says is found with it: "left X" and
a past works_at at X; a past works_at at X of either person of a worked_with predicted with X
as the organisation where.

Stance accuracy over the labelled facts: a found fact is right when the prediction's stance
equals the label's. The prediction's stance is `stance` when the extractor sets it, else it is
read from today's fields: modality "reported" or trust reason "second_hand" -> reported,
"hedged" -> rumour, otherwise asserted. A labelled negated/hypothetical/joke/exercise fact with
no prediction is right (nothing was stored). `stance_accuracy` leaves out the facts to store
that were not found (recall counts those); `stance_accuracy_all` counts them as wrong.

Stories run through tests/scenarios/harness.py (`run_story`, `figures`) from
bench/evalset/stories/<split>/, each on a scratch home.

Only aggregate figures are printed; `--show-errors` lists the items missed and the false
positives, and is refused on the held-out splits, test, fresh, fresh2, fresh3 and fresh4 (they must not
be read while tuning). `fresh`, `fresh2`, `fresh3` and `fresh4` have stories only. `dev3`, `dev4` (promises) and `dev5` have stories only
too, but they are tunable splits like dev: per-item output is allowed on them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EVALSET = ROOT / "bench" / "evalset"
SPLITS = ("dev", "test")
# Sentences only, to tune on like dev: written by a helper session that read no code (README, "A second dev split").
SENTENCE_SPLITS = (*SPLITS, "dev2")
# Stories only, held out like test: written in a later session, run once before and once after its
# changes (bench/evalset/README.md, "fresh"); fresh2, fresh3 and fresh4 by helper sessions that read no
# extraction code. dev3: stories only, to tune on like dev (README, "The third dev stories"), by a helper
# that read no extraction code; dev4 (promises only) likewise, by a helper that read no extraction or
# judging code (README, "The fourth dev stories"); dev5 likewise, all four kinds (README, "The fifth dev stories").
STORY_SPLITS = (*SPLITS, "dev3", "dev4", "dev5", "fresh", "fresh2", "fresh3", "fresh4")
HELD_OUT = ("test", "fresh", "fresh2", "fresh3", "fresh4")
PREDICATES = ("worked_with", "knows", "works_at", "has_title", "left", "committed_to")
PERSON_OBJECT = frozenset({"worked_with", "knows"})
ORG_OBJECT = frozenset({"works_at", "left"})
LITERAL = frozenset({"has_title", "committed_to"})
STORED = ("asserted", "reported", "rumour", "ended", "knows_of")
NOT_STORED = ("negated", "hypothetical", "joke", "exercise")
STANCES = STORED + NOT_STORED
OWNER_NAMES = ("Alex Moreau", "Alex")
_ITEM_KEYS = {
    "id": str,
    "register": str,
    "meeting_date": str,
    "speakers": list,
    "context": list,
    "text": str,
    "facts": list,
}
_FACT_KEYS = {
    "subject",
    "predicate",
    "object",
    "literal",
    "stance",
    "valid_from",
    "valid_to",
    "due",
    "recipient",
    "title",
    "where",
    "past",
}
_HONORIFIC = re.compile(
    r"^(?:the\s+)?(?:right\s+)?(?:hon|mr|mrs|ms|miss|mx|dr|prof|professor|sir|dame|lord|lady|"
    r"baroness|senator|chairman|chairwoman|chair)\.?\s+",
    re.I,
)
_POSTNOMINAL = re.compile(r"\s+(?:am|ms|mp|msp|mla|mep|obe|mbe|cbe|qc|kc)$")
_JA_SUFFIX = re.compile(r"(?:さん|様|さま|氏|くん|君|ちゃん|先生)$")
_FIRST_PERSON = frozenset({"i", "me", "myself", "je", "moi", "私", "僕", "俺"})
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_STOP = set(
    "the a an to you your our my us we i me of for with on in at by and this that those these some it "
    "over back get send share have will i'll le la les un une de des du à au pour vous te toi".split()
)


class EvalsetError(Exception):
    """An evaluation file that cannot be read as written."""


# ---- the files ---------------------------------------------------------------------------------------------------


def _check_date(where: str, key: str, value: Any) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}(?:-\d{2}(?:-\d{2})?)?", value):
        raise EvalsetError(f"{where}: {key} must be an ISO date (YYYY, YYYY-MM or YYYY-MM-DD), got {value!r}")
    if len(value) == 10:
        date.fromisoformat(value)


def validate_item(item: Any, where: str) -> dict[str, Any]:
    """The item itself, or EvalsetError saying what is wrong with it."""
    if not isinstance(item, dict):
        raise EvalsetError(f"{where}: not a JSON object")
    for key, kind in _ITEM_KEYS.items():
        if not isinstance(item.get(key), kind):
            raise EvalsetError(f"{where}: {key!r} missing or not a {kind.__name__}")
    if "speaker" not in item or not (item["speaker"] is None or isinstance(item["speaker"], str)):
        raise EvalsetError(f"{where}: 'speaker' missing (null only for a news item)")
    if item["speaker"] is None and item["register"] != "news":
        raise EvalsetError(f"{where}: only a news item has no speaker")
    _check_date(where, "meeting_date", item["meeting_date"])
    for turn in item["context"]:
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), str) or "speaker" not in turn:
            raise EvalsetError(f"{where}: a context turn needs 'speaker' and 'text'")
    for i, f in enumerate(item["facts"]):
        at = f"{where} fact {i}"
        if not isinstance(f, dict):
            raise EvalsetError(f"{at}: not an object")
        unknown = set(f) - _FACT_KEYS
        if unknown:
            raise EvalsetError(f"{at}: unknown keys {sorted(unknown)}")
        if f.get("predicate") not in PREDICATES:
            raise EvalsetError(f"{at}: predicate {f.get('predicate')!r} is not one of {PREDICATES}")
        if f.get("stance") not in STANCES:
            raise EvalsetError(f"{at}: stance {f.get('stance')!r} is not one of {STANCES}")
        if not isinstance(f.get("subject"), str) or not f["subject"]:
            raise EvalsetError(f"{at}: subject missing")
        want = "literal" if f["predicate"] in LITERAL else "object"
        if not isinstance(f.get(want), str) or not f[want]:
            raise EvalsetError(f"{at}: {f['predicate']} needs {want!r}")
        for key in ("valid_from", "valid_to", "due"):
            if key in f:
                _check_date(at, key, f[key])
    return item


def load_sentences(split: str) -> list[dict[str, Any]]:
    path = EVALSET / "sentences" / f"{split}.jsonl"
    if not path.is_file():
        raise EvalsetError(f"{path}: no such file")
    items, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalsetError(f"{where}: not valid JSON: {exc}") from None
        item = validate_item(raw, where)
        if item["id"] in seen:
            raise EvalsetError(f"{where}: duplicate id {item['id']!r}")
        seen.add(item["id"])
        items.append(item)
    return items


def story_dir(split: str) -> Path:
    return EVALSET / "stories" / split


def harness_module() -> Any:
    sys.path.insert(0, str(ROOT / "tests" / "scenarios"))
    return importlib.import_module("harness")


# ---- names -------------------------------------------------------------------------------------------------------


def fold(s: str) -> str:
    decomposed = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    s = re.sub(r"[’`]", "'", s)
    return re.sub(r"\s+", " ", s).strip(" .,;:'\"()[]")


def person_key(name: str) -> str:
    """'Hon. Claire Tremblay (Chair)' -> 'claire tremblay'; '田中さん' -> '田中'."""
    s = re.sub(r"\s*\(.*\)\s*$", "", name.strip()).split(",")[0]
    s = fold(s)
    for _ in range(3):
        s = _HONORIFIC.sub("", s)
    s = _POSTNOMINAL.sub("", s).strip()
    return _JA_SUFFIX.sub("", s).strip()


def same_person(pred: str | None, gold: str, speaker: str | None = None) -> bool:
    if not pred:
        return False
    if speaker and fold(pred) in _FIRST_PERSON:  # an extractor that leaves "I" unresolved: the speaker
        pred = speaker
    a, b = person_key(pred), person_key(gold)
    if not a or not b:
        return False
    if a == b:
        return True
    ta, tb = a.split(), b.split()
    if (len(ta) == 1 and ta[0] in (tb[0], tb[-1])) or (len(tb) == 1 and tb[0] in (ta[0], ta[-1])):
        return True
    if _CJK.search(a) or _CJK.search(b):  # Japanese: spaces optional, a surname alone names the person
        a2, b2 = a.replace(" ", ""), b.replace(" ", "")
        return a2 == b2 or (len(a2) >= 2 and b2.startswith(a2)) or (len(b2) >= 2 and a2.startswith(b2))
    return False


def _words(s: str) -> list[str]:
    return re.findall(r"[\w'&-]+", fold(s))


def same_org(pred: str | None, gold: str) -> bool:
    if not pred:
        return False
    a, b = [w for w in _words(pred) if w != "the"], [w for w in _words(gold) if w != "the"]
    if not a or not b:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return any(long_[i : i + len(short)] == short for i in range(len(long_) - len(short) + 1)) or (
        bool(_CJK.search(pred)) and (fold(pred) in fold(gold) or fold(gold) in fold(pred))
    )


def _stem(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") else w


def same_literal(pred: str | None, gold: str) -> bool:
    if not pred:
        return False
    a, b = fold(pred), fold(gold)
    if a in b or b in a:
        return True
    pw = {_stem(w) for w in _words(pred) if w not in _STOP}
    gw = {_stem(w) for w in _words(gold) if w not in _STOP}
    return bool(gw) and len(pw & gw) * 2 >= len(gw)


# ---- predictions -------------------------------------------------------------------------------------------------


def _name(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, str):
        return x
    n = getattr(x, "name", None)
    return n if isinstance(n, str) else str(x)


def _iso(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, datetime):
        return x.date().isoformat()
    if isinstance(x, date):
        return x.isoformat()
    return str(x)


def stance_of(a: Any) -> str:
    """The prediction's stance: its own `stance` when it has one, else read from today's fields."""
    s = getattr(a, "stance", None)
    if isinstance(s, str) and s:
        return s
    reasons = tuple(getattr(a, "trust_reasons", ()) or ())
    if getattr(a, "modality", None) == "reported" or "second_hand" in reasons:
        return "reported"
    if "hedged" in reasons:
        return "rumour"
    return "asserted"


@dataclass
class Prediction:
    subject: str | None
    predicate: str
    obj: str | None
    qualifier: str | None  # works_at: the title; worked_with: the organisation where
    stance: str
    valid_from: str | None
    valid_to: str | None
    recipient: str | None
    quote: str | None


def to_prediction(a: Any, speaker: str | None) -> Prediction:
    subj_m = getattr(a, "subject", None)
    subject = _name(subj_m)
    if getattr(subj_m, "is_speaker", False) and speaker:
        subject = speaker
    obj_m = getattr(a, "object", None)
    obj = _name(obj_m)
    if getattr(obj_m, "is_speaker", False) and speaker:
        obj = speaker
    if obj is None:
        obj = getattr(a, "object_literal", None) or getattr(a, "literal", None)
    qual = getattr(a, "qualifier", None) or getattr(a, "title", None) or getattr(a, "where", None)
    return Prediction(
        subject,
        str(getattr(a, "predicate", "")),
        obj,
        qual if isinstance(qual, str) else None,
        stance_of(a),
        _iso(getattr(a, "valid_from", None)),
        _iso(getattr(a, "valid_to", None)),
        _name(getattr(a, "recipient", None)),
        getattr(a, "quote", None),
    )


def build_transcript(item: dict[str, Any]) -> Any:
    from backchannel.extraction.formats.transcript import Transcript, Utterance

    turns = [*item["context"], {"speaker": item["speaker"], "text": item["text"]}]
    utterances = [Utterance(idx=i, speaker=t["speaker"], text=t["text"]) for i, t in enumerate(turns)]
    when = datetime.fromisoformat(item["meeting_date"]).replace(hour=10)
    return Transcript(
        utterances=utterances,
        format="text",
        title=None,
        meeting_date=when,
        meeting_date_origin="given",
        participants=list(item["speakers"]),
    )


def load_extractor(spec: str) -> Callable[..., Any]:
    module, _, func = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module), func or "extract", None)
    except ImportError as exc:
        raise EvalsetError(f"--extractor {spec}: {exc}") from None
    if not callable(fn):
        raise EvalsetError(f"--extractor {spec}: no such function")
    return fn


def predict(extract: Callable[..., Any], item: dict[str, Any]) -> list[Prediction]:
    transcript = build_transcript(item)
    target = len(transcript.utterances) - 1
    out = []
    for a in extract(transcript, owner_names=OWNER_NAMES):
        # Facts of the target turn's text only: the labels say what the words say, not the speaker label.
        if getattr(a, "utterance_idx", target) != target or getattr(a, "quote_in_label", False):
            continue
        out.append(to_prediction(a, item["speaker"]))
    return out


# ---- matching ----------------------------------------------------------------------------------------------------


def same_predicate(p: Prediction, f: dict[str, Any]) -> bool:
    """Equal, or the same ended employment said two ways: a 'left' and a past works_at."""
    if p.predicate == f["predicate"]:
        return True
    if f["predicate"] == "left" and p.predicate == "works_at":
        return p.valid_to is not None
    return f["predicate"] == "works_at" and p.predicate == "left" and bool(f.get("past") or f.get("valid_to"))


def fact_matches(p: Prediction, f: dict[str, Any], speaker: str | None) -> bool:
    if not same_predicate(p, f):
        return False
    if not same_person(p.subject, f["subject"], speaker):
        return False
    pred = f["predicate"]
    if pred in PERSON_OBJECT:
        return same_person(p.obj, f["object"], speaker)
    if pred in ORG_OBJECT:
        return same_org(p.obj, f["object"])
    return same_literal(p.obj, f["literal"])


def _title_of(f: dict[str, Any]) -> str | None:
    return f.get("title") if f["predicate"] == "works_at" else None


@dataclass
class Tally:
    gold: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)
    correct: Counter[str] = field(default_factory=Counter)
    wrong: Counter[str] = field(default_factory=Counter)
    flagged: Counter[str] = field(default_factory=Counter)  # not-to-store facts predicted with their stance
    stance_right: Counter[str] = field(default_factory=Counter)  # by labelled stance
    stance_seen: Counter[str] = field(default_factory=Counter)
    stance_missed: Counter[str] = field(default_factory=Counter)  # to store, not found
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    due_right: int = 0
    due_seen: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)


def score_item(item: dict[str, Any], preds: list[Prediction], t: Tally, register: Tally) -> None:
    facts, speaker = item["facts"], item["speaker"]
    matched: dict[int, Prediction] = {}
    for p in preds:
        if p.predicate not in PREDICATES:
            continue  # introduced, mentioned_with, ...: not labelled in this set
        hit = _first_match(p, facts, speaker, matched)
        if hit is None and p.predicate == "committed_to":  # the only promise of that person in the item
            own = [
                i
                for i, f in enumerate(facts)
                if f["predicate"] == "committed_to" and same_person(p.subject, f["subject"], speaker)
            ]
            hit = own[0] if len(own) == 1 and own[0] not in matched else None
        if hit is None:
            dup = next((i for i, f in matched.items() if fact_matches(p, facts[i], speaker)), None)
            if dup is not None or _repeats_title(p, facts, speaker):
                continue
            for tl in (t, register):
                tl.wrong[p.predicate] += 1
            t.errors.append({"id": item["id"], "false_positive": _show(p)})
            continue
        matched[hit] = p
        f = facts[hit]
        if f["stance"] in NOT_STORED:
            for tl in (t, register):
                if p.stance == f["stance"]:
                    tl.flagged[f["predicate"]] += 1
                else:
                    tl.wrong[f["predicate"]] += 1
            if p.stance != f["stance"]:
                t.errors.append({"id": item["id"], "stored_a": f["stance"], "fact": f, "as": _show(p)})
        else:
            for tl in (t, register):
                tl.correct[f["predicate"]] += 1
                tl.found[f["predicate"]] += 1
    for i, f in enumerate(facts):  # the same fact labelled twice, or implied by a found one
        twin = next((j for j in matched if _implied(f, facts[j], matched[j])), None) if i not in matched else None
        if twin is not None and f["stance"] in STORED and facts[twin]["stance"] == f["stance"]:
            matched[i] = matched[twin]
            for tl in (t, register):
                tl.found[f["predicate"]] += 1
    for i, f in enumerate(facts):
        st = f["stance"]
        for tl in (t, register):
            if st in STORED:
                tl.gold[f["predicate"]] += 1
        found_as = matched.get(i)
        if found_as is None:
            if st in NOT_STORED:
                t.stance_seen[st] += 1
                t.stance_right[st] += 1
            else:
                t.stance_missed[st] += 1
                t.errors.append({"id": item["id"], "missed": f})
            continue
        t.stance_seen[st] += 1
        t.confusion[(st, found_as.stance)] += 1
        if found_as.stance == st:
            t.stance_right[st] += 1
        if f["predicate"] == "committed_to" and f.get("due"):
            t.due_seen += 1
            t.due_right += int(found_as.valid_to == f["due"])


def _first_match(
    p: Prediction, facts: list[dict[str, Any]], speaker: str | None, matched: dict[int, Prediction]
) -> int | None:
    exact = [
        i
        for i, f in enumerate(facts)
        if i not in matched and f["predicate"] == p.predicate and fact_matches(p, f, speaker)
    ]
    if exact:
        return exact[0]
    loose = [i for i, f in enumerate(facts) if i not in matched and fact_matches(p, f, speaker)]
    return loose[0] if loose else None


def _implied(f: dict[str, Any], found: dict[str, Any], p: Prediction) -> bool:
    """Label `f` says nothing the found label `found` (predicted as `p`) does not: "left X" and
    "worked at X, in the past"; or a past works_at of either person of a worked_with found with
    the organisation where ("worked with B at X": both were at X)."""
    past = f["predicate"] == "works_at" and bool(f.get("past") or f.get("valid_to"))
    if {f["predicate"], found["predicate"]} == {"left", "works_at"}:
        at = f if f["predicate"] == "works_at" else found
        return (
            bool(at.get("past") or at.get("valid_to"))
            and same_person(f["subject"], found["subject"])
            and same_org(f["object"], found["object"])
        )
    if past and found["predicate"] == "worked_with" and p.qualifier and same_org(p.qualifier, f["object"]):
        return same_person(f["subject"], found["subject"]) or same_person(f["subject"], found["object"])
    return False


def _repeats_title(p: Prediction, facts: list[dict[str, Any]], speaker: str | None) -> bool:
    """A has_title that says the title of a labelled works_at of the same person."""
    if p.predicate != "has_title":
        return False
    return any(
        _title_of(f) and same_person(p.subject, f["subject"], speaker) and same_literal(p.obj, _title_of(f) or "")
        for f in facts
    )


def _show(p: Prediction) -> dict[str, Any]:
    return {k: v for k, v in p.__dict__.items() if v is not None}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def figures(t: Tally) -> dict[str, Any]:
    per = {}
    for pred in PREDICATES:
        proposed = t.correct[pred] + t.wrong[pred]
        per[pred] = {
            "labelled": t.gold[pred],
            "found": t.found[pred],
            "predicted": proposed,
            "false_positives": t.wrong[pred],
            "flagged_not_stored": t.flagged[pred],
            "precision": _ratio(t.correct[pred], proposed),
            "recall": _ratio(t.found[pred], t.gold[pred]),
        }
    correct, wrong = sum(t.correct.values()), sum(t.wrong.values())
    right, seen, missed = sum(t.stance_right.values()), sum(t.stance_seen.values()), sum(t.stance_missed.values())
    return {
        "precision": _ratio(correct, correct + wrong),
        "recall": _ratio(sum(t.found.values()), sum(t.gold.values())),
        "labelled": sum(t.gold.values()),
        "found": sum(t.found.values()),
        "false_positives": wrong,
        "per_predicate": per,
        "stance_accuracy": _ratio(right, seen),
        "stance_accuracy_all": _ratio(right, seen + missed),
        "stance_per_label": {
            s: {
                "facts": t.stance_seen[s] + t.stance_missed[s],
                "judged": t.stance_seen[s],
                "right": t.stance_right[s],
                "accuracy": _ratio(t.stance_right[s], t.stance_seen[s]),
            }
            for s in STANCES
        },
        "stance_confusion": {f"{g}->{p}": n for (g, p), n in sorted(t.confusion.items()) if g != p},
        "due_date_accuracy": _ratio(t.due_right, t.due_seen),
        "due_dates_judged": t.due_seen,
    }


def run_sentences(split: str, extractor: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    extract = load_extractor(extractor)
    items = load_sentences(split)
    total = Tally()
    by_register: dict[str, Tally] = defaultdict(Tally)
    failures: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for item in items:
        try:
            preds = predict(extract, item)
        except Exception as exc:  # one bad item must not hide the figures of the rest
            failures.append({"id": item["id"], "error": f"{type(exc).__name__}: {exc}"})
            preds = []
        score_item(item, preds, total, by_register[item["register"]])
    out = figures(total)
    out["items"] = len(items)
    out["items_with_no_fact"] = sum(1 for i in items if not i["facts"])
    out["extractor_failures"] = len(failures)
    out["per_register"] = {
        r: {k: v for k, v in figures(t).items() if k in ("precision", "recall", "labelled")}
        for r, t in sorted(by_register.items())
    }
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out, [*failures, *total.errors]


def run_stories(split: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    harness = harness_module()
    stories = harness.load_stories(story_dir(split))
    results = []
    with tempfile.TemporaryDirectory(prefix="meaning-eval-") as tmp:
        for s in stories:
            results.append(harness.run_story(s, Path(tmp) / s.name))
    return harness.figures(results), [r.summary() for r in results if not r.ok]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=(*STORY_SPLITS, "dev2"), default="dev")
    ap.add_argument("--part", choices=("sentences", "stories", "all"), default="all")
    ap.add_argument(
        "--extractor",
        default="backchannel.extraction.offline:extract",
        help="module:function taking (transcript, owner_names=...) (default: the offline extractor)",
    )
    ap.add_argument("--show-errors", action="store_true", help="list misses and false positives (dev split only)")
    args = ap.parse_args(argv)
    if args.show_errors and args.split in HELD_OUT:
        print(
            f"meaning_eval: --show-errors is refused on the {args.split} split: it must not be read while tuning",
            file=sys.stderr,
        )
        return 2
    if args.split not in SENTENCE_SPLITS and args.part != "stories":
        print(f"meaning_eval: the {args.split} split has stories only: use --part stories", file=sys.stderr)
        return 2
    if args.split not in STORY_SPLITS and args.part != "sentences":
        print(f"meaning_eval: the {args.split} split has sentences only: use --part sentences", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"split": args.split, "extractor": args.extractor}
    errors: dict[str, Any] = {}
    try:
        if args.part in ("sentences", "all"):
            report["sentences"], errors["sentences"] = run_sentences(args.split, args.extractor)
        if args.part in ("stories", "all"):
            report["stories"], errors["stories"] = run_stories(args.split)
    except EvalsetError as exc:
        print(f"meaning_eval: {exc}", file=sys.stderr)
        return 2
    if args.show_errors:
        report["errors"] = errors
    print(json.dumps(report, ensure_ascii=False, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Speed of the offline extractor alone (no parsing, no storage): ms per 8k words.

Runs extract() + self_introductions() over generated 8k-word meetings (a mix of
chatter and fact-bearing sentences) and, when ../shared/corpora is present, the
20 real QMSum meetings scaled to 8k words. Prints one JSON object.

    python bench/offline_speed.py [--meetings 30]

(Quality, precision and recall on the labelled development set: bench/offline_extract.py.)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backchannel.extraction.formats.transcript import Transcript, Utterance  # noqa: E402
from backchannel.extraction.offline import extract, self_introductions  # noqa: E402

FIRST = ["Sophie", "Marc", "Paul", "Anna", "Élodie", "Tom", "Kirsty", "Nick", "Sarah", "Jean-Pierre"]
LAST = ["Martin", "Dupont", "Williams", "Davies", "Baker", "de la Fontaine", "Evans", "Hughes"]
ORGS = ["Acme", "Globex Corp", "Initech", "Hooli", "the Bank of England", "Cardiff and Vale College"]
FACTS = [
    "{p} is the CIO of {o}.",
    "I worked with {p} at {o} from 2016 to 2021.",
    "{p} left {o} last year.",
    "I'll send you the pricing by Friday.",
    "I know {p} well.",
    "{p} introduced me to {q}.",
    "{p}, the CTO at {o}, will join next week.",
    "We'll get back to you by the 15th.",
]
CHATTER = [
    "Okay, so I think we should look at the numbers again before we decide anything.",
    "Yeah, that makes sense, and the budget is probably the main constraint here.",
    "Can you go back to the previous slide for a second?",
    "I'm not sure that the customers will care about the colour that much.",
    "Right, we have about ten minutes left, so let's move on to the next item.",
    "The prototype should be ready by the end of the month if nothing slips.",
    "Um, I agree, but we also need to think about the cost of the battery.",
    "So the main point is that people want something simple and robust.",
]


def generated(seed: int, words: int = 8000) -> Transcript:
    rnd = random.Random(seed)
    speakers = [f"{rnd.choice(FIRST)} {rnd.choice(LAST)}" for _ in range(4)]
    utts, n = [], 0
    while n < words:
        sents = []
        for _ in range(rnd.randint(1, 5)):
            if rnd.random() < 0.08:
                s = rnd.choice(FACTS).format(
                    p=f"{rnd.choice(FIRST)} {rnd.choice(LAST)}",
                    q=f"{rnd.choice(FIRST)} {rnd.choice(LAST)}",
                    o=rnd.choice(ORGS),
                )
            else:
                s = rnd.choice(CHATTER)
            sents.append(s)
        text = " ".join(sents)
        n += len(text.split())
        utts.append(Utterance(len(utts), rnd.choice(speakers), text))
    return Transcript(utts, "text", meeting_date=datetime(2026, 3, 10))


def qmsum_scaled(words: int = 8000) -> list[Transcript]:
    folder = ROOT.parent / "shared" / "corpora" / "meetings" / "qmsum"
    out = []
    for p in sorted(folder.glob("*.json")):
        if p.name == "INDEX.json":
            continue
        raw = json.loads(p.read_text(encoding="utf-8"))["meeting_transcripts"]
        utts, n, i = [], 0, 0
        while n < words:  # repeat short meetings, cut long ones, to exactly ~8k words
            u = raw[i % len(raw)]
            text = re.sub(r"\s+", " ", re.sub(r"\{[^}]*\}", "", u["content"])).strip()
            utts.append(Utterance(len(utts), u["speaker"], text))
            n += len(text.split())
            i += 1
        out.append(Transcript(utts, "json", meeting_date=datetime(2026, 3, 10)))
    return out


def timed(ts: list[Transcript]) -> tuple[list[float], list[float], int]:
    """(CPU ms, wall ms) per meeting, and the assertions found. CPU time is the
    figure to trust on a shared machine; wall time includes waiting for a core."""
    cpu, wall, found = [], [], 0
    for t in ts:
        c0, w0 = time.process_time(), time.perf_counter()
        found += len(extract(t))
        self_introductions(t)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return cpu, wall, found


def _figures(ts: list[Transcript]) -> dict:
    cpu, wall, found = timed(ts)
    return {
        "meetings": len(ts),
        "cpu_ms_per_8k_words_p50": round(statistics.median(cpu), 1),
        "cpu_ms_per_8k_words_max": round(max(cpu), 1),
        "wall_ms_p50": round(statistics.median(wall), 1),
        "assertions": found,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meetings", type=int, default=30, help="generated 8k-word meetings")
    args = ap.parse_args()
    gen = [generated(i) for i in range(args.meetings)]
    timed(gen[:2])  # warm-up: regex compilation, imports
    result = {"generated": _figures(gen)}
    real = qmsum_scaled()
    if real:
        result["qmsum_8k"] = _figures(real)
    worst = max(result[k]["cpu_ms_per_8k_words_p50"] for k in result)
    result["extract_meetings_per_min_one_core"] = round(60000 / worst)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

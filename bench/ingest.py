"""Ingest + offline extraction throughput on generated 8k-word meetings.

Prints JSON: meetings/min, p50/p95 seconds per meeting, words/s, assertions, peak RSS, and the
CPU seconds per meeting beside the wall seconds: this machine is shared, and under load the wall
figures grow with the other processes' work while the CPU seconds stay near this code's own.
`--corpus DIR` ingests the transcripts of DIR instead (e.g. ../shared/corpora/meetings/qmsum):
real meetings, of their own lengths, so the figures are per 8k words too.

Usage: python bench/ingest.py [--meetings 40] [--words 8000] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

FIRST = [
    "Marc",
    "Sophie",
    "Julie",
    "Tom",
    "Priya",
    "Nadia",
    "Paul",
    "Karl",
    "Laura",
    "Omar",
    "Ines",
    "Lucas",
    "Chloe",
    "Hugo",
    "Emma",
    "Noah",
    "Lea",
    "Arthur",
    "Jade",
    "Louis",
]
LAST = [
    "Dupont",
    "Martin",
    "Bernard",
    "Becker",
    "Shah",
    "Haddad",
    "Girard",
    "Weber",
    "Chen",
    "Khan",
    "Costa",
    "Moreau",
    "Laurent",
    "Simon",
    "Michel",
    "Lefebvre",
    "Garcia",
    "Roux",
    "Fournier",
    "Blanc",
]
ORGS = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella Corp",
    "Hooli",
    "Stark Industries",
    "Wayne Enterprises",
    "Soylent",
    "Vandelay Industries",
    "Cyberdyne",
]
TITLES = ["CIO", "CTO", "CFO", "head of procurement", "VP of Engineering", "chief executive"]
FILLER = [
    "I think we should look at the numbers again before we decide anything.",
    "The rollout went fine in the first region but the second one is behind schedule.",
    "Can everyone see my screen? Let me share the deck from last week.",
    "We had some issues with the vendor, mostly around support response times.",
    "Honestly the budget is tight this quarter, so let's prioritise the essentials.",
    "That makes sense to me, as long as the timeline holds.",
    "Let's park that and come back to it at the end of the meeting.",
    "The customer feedback was mostly positive, with a few complaints about onboarding.",
    "We need a clearer owner for the migration work, otherwise it will slip.",
    "Right, and the security review is still pending on their side.",
]


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def fact(rng: random.Random) -> str:
    p, q, org = person(rng), person(rng), rng.choice(ORGS)
    return rng.choice(
        [
            f"{p} is the {rng.choice(TITLES)} of {org}.",
            f"{p} and I worked together at {org} from {rng.randint(2008, 2016)} to {rng.randint(2017, 2024)}.",
            f"I know {p} well, we met years ago.",
            f"{p} introduced me to {q} last year.",
            "I'll send you the pricing by Friday.",
            f"{p} joined {org} {rng.randint(2, 20)} months ago.",
        ]
    )


def meeting(rng: random.Random, words: int, i: int) -> str:
    speakers = [person(rng) for _ in range(4)]
    lines, count, t = [], 0, 0
    while count < words:
        sentences = [fact(rng) if rng.random() < 0.08 else rng.choice(FILLER) for _ in range(rng.randint(1, 4))]
        text = " ".join(sentences)
        t += rng.randint(5, 40)
        lines.append(f"[{t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d}] {rng.choice(speakers)}: {text}")
        count += len(text.split())
    day = f"2026-{1 + i % 12:02d}-{1 + i % 27:02d}"
    head = f"---\ntitle: Meeting {i}\ndate: {day} 10:00\nparticipants: [{', '.join(speakers)}]\n---\n"
    return head + "\n".join(lines) + "\n"


def worker_peak_rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--meetings", type=int, default=40)
    ap.add_argument("--words", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corpus", type=Path, help="ingest these transcripts instead of generated meetings")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    os.environ["BACKCHANNEL_HOME"] = str(work / "home")
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import expand_paths, ingest_file
    from backchannel.memory import Store

    files = []
    if args.corpus is not None:
        files = list(expand_paths([args.corpus]))
    else:
        rng = random.Random(args.seed)
        corpus = work / "corpus"
        corpus.mkdir()
        for i in range(args.meetings):
            f = corpus / f"meeting-{i:04d}.txt"
            f.write_text(meeting(rng, args.words, i), encoding="utf-8")
            files.append(f)

    paths = resolve_paths().ensure()
    settings = load_settings(paths)
    store = Store.open(paths.db_file)
    per, per_cpu, assertions, words = [], [], 0, 0
    started, started_cpu = time.perf_counter(), time.process_time()
    for f in files:
        t0, c0 = time.perf_counter(), time.process_time()
        out = ingest_file(store, settings, f)
        per.append(time.perf_counter() - t0)
        per_cpu.append(time.process_time() - c0)
        if out.status != "ingested":
            print(json.dumps({"error": f"{f}: {out.status} {out.error}"}), file=sys.stderr)
            sys.exit(1)
        assertions += out.assertions
    total, total_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    if args.corpus is not None:
        words = int(store.scalar("SELECT sum(len(string_split(text, ' '))) FROM utterances") or 0)
    n, words = len(files), words or args.meetings * args.words
    from backchannel import embedding

    model = embedding.stats()  # in process, or a worker (BACKCHANNEL_EMBEDDER=worker): its own peak RSS
    model["worker_peak_rss_mb"] = worker_peak_rss_mb(model["worker_pid"])
    # Idempotency pass: the same files again must all be skipped, and cheaply.
    t0 = time.perf_counter()
    skipped = sum(ingest_file(store, settings, f).status == "skipped" for f in files)
    reingest = time.perf_counter() - t0
    store.close()
    per.sort()
    per_cpu.sort()
    print(
        json.dumps(
            {
                "bench": "ingest+offline-extraction",
                "corpus": str(args.corpus) if args.corpus is not None else "generated",
                "meetings": n,
                "words_per_meeting": round(words / n) if n else 0,
                "meetings_per_min": round(n / total * 60, 1),
                "target_meetings_per_min": 60,
                "p50_s": round(statistics.median(per), 3),
                "p95_s": round(per[int(0.95 * (len(per) - 1))], 3),
                "cpu_s_per_meeting": round(total_cpu / n, 3),
                "cpu_p50_s": round(statistics.median(per_cpu), 3),
                "cpu_p95_s": round(per_cpu[int(0.95 * (len(per_cpu) - 1))], 3),
                "s_per_8k_words": round(total / words * 8000, 3),
                "cpu_s_per_8k_words": round(total_cpu / words * 8000, 3),
                "words_per_s": round(words / total),
                "assertions": assertions,
                "reingest_skipped": skipped,
                "reingest_s_per_meeting": round(reingest / n, 4),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "embedding": model,
                "loadavg_1m": round(os.getloadavg()[0], 2),
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

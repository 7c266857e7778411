"""What reading a signal costs: `read_signal` (the news item as a source, offline) and
`link_discussed` (its organisations looked for in the other sources), per signal, on a
store holding the demo corpus and N earlier news items; and the re-evaluation's cheap
test (`may_be_discussed`) over N recent signals after an ingest. Prints JSON.

    PYTHONPATH=$PWD python bench/signal_reading.py --signals 300
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

_ORGS = ["Mirai Bank", "Pinecrest Bank", "Northwind", "Globex", "Initech", "Hooli", "Acme", "Lumen Health"]
_PEOPLE = ["Kenji Sato", "Laura Chen", "Dana Whitfield", "Tom Baker", "Priya Raman", "Grace Liu"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--signals", type=int, default=300)
    a = ap.parse_args()
    os.environ["BACKCHANNEL_HOME"] = tempfile.mkdtemp(prefix="bc-sigbench-")
    from backchannel.config import Settings, resolve_paths
    from backchannel.engine import signal_reading
    from backchannel.extraction.ingest import ingest_files
    from backchannel.memory import Store

    paths = resolve_paths().ensure()
    store = Store.open(paths.db_file)
    settings = Settings()
    corpus = HERE.parent / "backchannel" / "demo" / "corpus"
    ingest_files(store, settings, sorted(p for p in corpus.rglob("*") if p.is_file()))
    sigs = [
        {
            "id": f"s{i}",
            "title": f"{_PEOPLE[i % 6]} appointed CFO at {_ORGS[i % 8]}",
            "summary": f"{_ORGS[(i + 3) % 8]} tenders its platform {i}.",
            "published_at": None,
            "org_ids": [],
        }
        for i in range(a.signals)
    ]
    t0 = time.perf_counter()
    for s in sigs:
        signal_reading.read_signal(store, settings, s)
    t1 = time.perf_counter()
    for s in sigs:
        store.con.execute(
            "INSERT INTO signals (id, source, title, summary, org_ids, seen_at) VALUES (?, 'b', ?, ?, [], now())",
            [s["id"], s["title"], s["summary"]],
        )
        signal_reading.link_discussed(store, s)
    t2 = time.perf_counter()
    text = "\n".join(r[0] for r in store.con.execute("SELECT text FROM utterances LIMIT 400").fetchall())
    hits = sum(signal_reading.may_be_discussed(s, text) for s in sigs)
    t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "signals": a.signals,
                "read_ms_per_signal": round((t1 - t0) * 1000 / a.signals, 2),
                "link_ms_per_signal": round((t2 - t1) * 1000 / a.signals, 2),
                "prefilter_ms_all_signals": round((t3 - t2) * 1000, 2),
                "prefilter_hits": hits,
                "news_sources": store.scalar("SELECT count(*) FROM sources WHERE format = 'news'"),
                "news_assertions": store.scalar(
                    "SELECT count(*) FROM assertions a JOIN sources s ON s.id = a.source_id WHERE s.format = 'news'"
                ),
            }
        )
    )
    store.close()


if __name__ == "__main__":
    main()

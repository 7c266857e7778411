"""How `ask` routes plain questions offline, as JSON: which skill each held-out question
reaches (not the wordings of tests/agent/test_ask_paraphrases.py, nor the exemplars), by which
method (rule, keywords, embedding), and what routing costs.

    python bench/ask_routing.py

Figures: accuracy overall and per method, the embedding model's cold load, and the
routing latency per question on the rule path and the embedding path (warm).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BRIEF, COMMIT, INTRO, STALE = "pre_meeting_brief", "open_commitments", "introductions", "stale_relationships"
HELD_OUT = [
    ("Where's Sharon Davies employed these days?", BRIEF),
    ("who employs Liz Williams?", BRIEF),
    ("what outfit is Paul Girard part of?", BRIEF),
    ("what's Barry Hughes' job title?", BRIEF),
    ("remind me what Kay Martin does", BRIEF),
    ("any background on Iwan Jenkins?", BRIEF),
    ("give me the lowdown on Sophie Martin", BRIEF),
    ("which firm does Laura Chen belong to?", BRIEF),
    ("who heads the education directorate?", BRIEF),
    ("who's in charge of procurement?", BRIEF),
    ("who is the deputy director for curriculum?", BRIEF),
    ("name the chair of ColegauCymru", BRIEF),
    ("who represents Samaritans?", BRIEF),
    ("who do I know at Hooli?", BRIEF),
    ("anyone from Mind Cymru?", BRIEF),
    ("get me ready for my next call", BRIEF),
    ("what's outstanding from last week?", COMMIT),
    ("what did Nadia say she'd do?", COMMIT),
    ("is anyone waiting on something from me?", COMMIT),
    ("what have people promised to send?", COMMIT),
    ("which action items are still open?", COMMIT),
    ("did Marc ever send the case study?", COMMIT),
    ("what am I on the hook for?", COMMIT),
    ("list pending deliverables", COMMIT),
    ("how could I get introduced to Karl Weber?", INTRO),
    ("who's my best route to Acme?", INTRO),
    ("can anybody connect me to the CFO of Initech?", INTRO),
    ("who might know Laura Chen?", INTRO),
    ("I need a warm intro to Hooli", INTRO),
    ("who could vouch for me with Sophie Martin?", INTRO),
    ("who have I neglected lately?", STALE),
    ("which old contacts should I ping?", STALE),
    ("who haven't I spoken with since spring?", STALE),
    ("whose relationships am I letting slip?", STALE),
    ("which contacts did I lose?", STALE),
    ("who should I check in with?", STALE),
    # off-topic: no prepared skill answers these, and none should be picked
    ("what is the weather", None),
    ("write me a poem", None),
    ("how tall is mount everest", None),
    ("what is 2+2", None),
    ("translate hello into French", None),
    ("what was decided about the budget?", None),
]


def main() -> None:
    from backchannel.agent import routing

    t0 = time.perf_counter()
    routing.EXEMPLAR_INDEX.nearest("warm up")  # model load + exemplar matrix
    cold_s = time.perf_counter() - t0
    rows, lat = [], {"rule": [], "keywords": [], "embedding": [], "user_keywords": [], "none": []}
    for q, want in HELD_OUT:
        t = time.perf_counter()
        r = routing.route(q)
        lat[r.method].append(time.perf_counter() - t)
        got = r.skill.name if r.skill else None
        rows.append(
            {
                "question": q,
                "want": want,
                "got": got,
                "method": r.method,
                "ok": got == want,
                "intent": r.intent,
                "score": None if r.score is None else round(r.score, 3),
            }
        )
    by_method = {}
    for m in lat:
        mine = [x for x in rows if x["method"] == m]
        if mine:
            by_method[m] = {
                "questions": len(mine),
                "correct": sum(x["ok"] for x in mine),
                "median_ms": round(statistics.median(lat[m]) * 1000, 2),
            }
    print(
        json.dumps(
            {
                "questions": len(rows),
                "correct": sum(x["ok"] for x in rows),
                "accuracy": round(sum(x["ok"] for x in rows) / len(rows), 3),
                "embedding_cold_load_s": round(cold_s, 2),
                "by_method": by_method,
                "off_topic_routed": sum(1 for x in rows if x["want"] is None and x["got"] is not None),
                "min_cosine": routing.MIN_COSINE,
                "misses": [x for x in rows if not x["ok"]],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

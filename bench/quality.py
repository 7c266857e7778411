"""Proposal quality on the story suite (tests/scenarios/stories), as JSON.

    python bench/quality.py                 # every story: precision, recall, false alarms per kind
    python bench/quality.py --only intro    # stories whose file name contains "intro"
    python bench/quality.py --stories       # and one line per story (what was proposed, missed, wrongly proposed)
    python bench/quality.py --silences      # and every suppressed candidate with its reason, as `trace` shows it

Each story runs through the daemon's real wake pipeline (inbox, calendar and
signal triggers, sweep, gate, judge, draft) in-process on a fresh scratch home
with the offline model and rate limits off; see tests/scenarios/harness.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests" / "scenarios"))


def main() -> None:
    import harness

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=None, help="run the stories whose file name contains this")
    ap.add_argument("--stories", action="store_true", help="one line per story")
    ap.add_argument("--silences", action="store_true", help="every suppressed candidate and why")
    a = ap.parse_args()
    stories = [s for s in harness.load_stories() if not a.only or a.only in s.name]
    results = []
    with tempfile.TemporaryDirectory(prefix="bc-stories-") as tmp:
        for s in stories:
            results.append(harness.run_story(s, Path(tmp) / s.name))
    out = harness.figures(results)
    if a.stories or a.silences:
        out["stories_detail"] = []
        for r in results:
            d = r.summary()
            if a.silences:
                d["silences"] = [f"{x['dedupe_key']}: {x['outcome']}" for x in r.silences]
            out["stories_detail"].append(d)
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""The news register (extraction/news.py) on headlines written apart from its patterns
(bench/devset/news_headlines.json): precision and recall of works_at (with its title) and
left, as JSON. `--show` lists every miss and every fact not wanted.

    PYTHONPATH=$PWD python bench/news_headlines.py
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main() -> None:
    from backchannel.extraction.news import extract_news, news_transcript

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args()
    items = json.loads((HERE / "devset" / "news_headlines.json").read_text(encoding="utf-8"))["items"]
    wanted = got = hit = 0
    errors = []
    for item in items:
        t = news_transcript(item["title"], None, published=datetime(2026, 11, 1), path=None)
        found = {
            (x.subject.name, x.predicate, x.object.name if x.object else None, x.qualifier) for x in extract_news(t)
        }
        want = {tuple(f) for f in item["facts"]}
        wanted, got, hit = wanted + len(want), got + len(found), hit + len(found & want)
        for f in sorted(want - found, key=str):
            errors.append({"title": item["title"], "missed": f})
        for f in sorted(found - want, key=str):
            errors.append({"title": item["title"], "not_wanted": f})
    out = {
        "items": len(items),
        "wanted": wanted,
        "found": got,
        "correct": hit,
        "precision": round(hit / got, 3) if got else None,
        "recall": round(hit / wanted, 3) if wanted else None,
    }
    if a.show:
        out["errors"] = errors
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

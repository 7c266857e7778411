"""How long `entities duplicates` (ops/duplicates.py) takes on a large memory: N people and
N/2 organisations with made-up names, some acronyms and titled variants. Prints JSON.

    python bench/duplicates.py [N]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path


def main(n: int) -> dict:
    from backchannel.memory import Store
    from backchannel.ops.duplicates import find_duplicates

    rng = random.Random(7)
    first = ["Ada", "Marc", "Nina", "Omar", "Sophie", "Karl", "Lena", "Tom", "Iris", "Paul", "Elena", "Hugo"]
    last = ["Dupont", "Roy", "Haddad", "Martin", "Weber", "Hart", "May", "Stone", "Evans", "Lloyd", "Pugh"]
    words = ["National", "Welsh", "Regional", "Health", "Education", "Transport", "Energy", "Water", "Digital"]
    heads = ["Agency", "Council", "Association", "Service", "Board", "Authority"]
    with tempfile.TemporaryDirectory() as d:
        st = Store.open(Path(d) / "b.duckdb")
        rows = []
        for i in range(n):
            name = f"{rng.choice(first)} {rng.choice('ABCDEFGHJKLMNPRSTVW')}. {rng.choice(last)}"
            rows.append((i + 1, "person", ("Ms. " if i % 50 == 0 else "") + name, name.casefold()))
        for j in range(n // 2):
            name = " ".join(rng.sample(words, 3)) + f" {rng.choice(heads)}"
            rows.append((n + j + 1, "organisation", name, name.casefold()))
        for k in range(n // 20):  # acronyms of some of them, as separate entities
            long = rows[n + k][2].split()[:4]
            short = "".join(w[0] for w in long)
            rows.append((n + n // 2 + k + 1, "organisation", short, short.casefold()))
        st.insert_rows("entities", ["id", "kind", "name", "norm"], rows)
        t0 = time.perf_counter()
        pairs = find_duplicates(st, limit=100000)
        took = time.perf_counter() - t0
        st.close()
    return {
        "entities": len(rows),
        "pairs": len(pairs),
        "seconds": round(took, 2),
        "by_reason": {w: sum(p["why"] == w for p in pairs) for w in ("acronym", "honorific", "spelling")},
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)))

"""The retention sweep and the file rewrite at scale, as JSON: seconds and peak RSS of
each phase on a memory of N assertions (default 1,000,000).

    python bench/retention.py [--assertions N]

The memory is synthetic but shaped like ingested meetings: N/40 sources of 20
utterances; every other utterance backs four assertions (two sentences: one quoted,
one never quoted), the others back none,
N/10 people and organisations, meetings spread over the last two years (half older than `assertions_days` = 365).
Phases, each in its own process so its peak RSS is its own:
- build: the database (not measured as a figure of the product);
- sweep: the durable retention run (`utterances_days = 0`, keep_quotes, assertions_days),
  through the same pipeline the daemon runs (engine/retention_run.py);
- rewrite: `COPY FROM DATABASE` into a fresh file and the swap (memory/erasure.py).
It also checks that the never-quoted sentences left the file: their bytes must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

UNQUOTED = "zq unquoted chatter"  # the marker in every never-quoted sentence


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def build(db: Path, n: int) -> dict:
    from backchannel.memory import Store

    t0 = time.perf_counter()
    n_src, per_src = max(1, n // 40), 20
    n_ent = max(10, n // 10)
    with Store.open(db) as store:
        con = store.con
        con.execute("BEGIN")
        con.execute(
            "INSERT INTO entities (id, kind, name, norm) SELECT i, CASE WHEN i % 5 = 0 THEN 'organisation' "
            "ELSE 'person' END, 'Entity ' || i, 'entity ' || i FROM range(1, ?) t(i)",
            [n_ent + 1],
        )
        con.execute(
            """INSERT INTO sources (id, content_hash, title, format, meeting_date, ingested_at, participants,
                                            scope, consent)
            SELECT 'S' || lpad(i::VARCHAR, 12, '0'), md5(i::VARCHAR), 'Meeting ' || i, 'text',
                   now()::TIMESTAMP - to_days(CAST(730 - i * 730 // ? AS INTEGER)),
                   now()::TIMESTAMP - to_days(CAST(730 - i * 730 // ? AS INTEGER)), [], 'default', 'ok'
            FROM range(?) t(i)""",
            [n_src, n_src, n_src],
        )
        # Utterance text: a quoted sentence then an unquoted one.
        con.execute(
            f"""INSERT INTO utterances (source_id, idx, speaker, speaker_id, text)
            SELECT 'S' || lpad(s::VARCHAR, 12, '0'), u, 'Entity ' || ((s * 7 + u) % ? + 1), (s * 7 + u) % ? + 1,
                   'Entity ' || ((s * 3 + u) % ? + 1) || ' works at Entity ' || (((s + u) % (? // 5)) * 5 + 5)
                   || ' as head of unit ' || u || '. And {UNQUOTED} number ' || s || '-' || u || ' about the weather.'
            FROM range(?) a(s), range(?) b(u)""",
            [n_ent, n_ent, n_ent, n_ent, n_src, per_src],
        )
        con.execute(
            """INSERT INTO assertions (subject_id, predicate, object_id, qualifier, speaker_id, said_at,
                                               confidence, modality, source_id, utterance_idx, span_start, span_end,
                                               quote, extractor, trust, trust_reasons)
            SELECT u.speaker_id, CASE WHEN k = 0 THEN 'works_at' ELSE 'knows' END, u.speaker_id % ? + 1, NULL,
                   u.speaker_id, s.meeting_date, 0.7, 'stated', u.source_id, u.idx, 0,
                   strpos(u.text, '. And') , substring(u.text, 1, strpos(u.text, '. And')), 'offline', 0.7, []
            FROM utterances u JOIN sources s ON s.id = u.source_id, range(4) c(k)
            WHERE u.idx % 2 = 0""",
            [n_ent],
        )
        con.execute("COMMIT")
        counts = {t: int(store.scalar(f"SELECT count(*) FROM {t}")) for t in ("assertions", "utterances", "sources")}
    return {
        "build_s": round(time.perf_counter() - t0, 2),
        **counts,
        "db_mb": round(db.stat().st_size / 2**20, 1),
        "peak_rss_mb": _rss_mb(),
    }


def sweep(db: Path) -> dict:
    from backchannel.config import Settings
    from backchannel.config.paths import resolve_paths
    from backchannel.core.timeutil import aware_now
    from backchannel.core.wake import Wake
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.memory import Store

    settings = Settings(retention={"utterances_days": 0, "assertions_days": 365, "keep_quotes": True})
    paths = resolve_paths({"BACKCHANNEL_HOME": str(db.parent.parent)})
    t_open = time.perf_counter()
    store = Store.open(db)
    opened = time.perf_counter() - t_open
    t0 = time.perf_counter()
    now = aware_now()
    out = run_wake_once(
        store, settings, paths, Wake("retention", key=f"retention:{now.isoformat()}", created_at=now), gateway=False
    )
    took = time.perf_counter() - t0
    store.close()
    return {
        "open_s": round(opened, 2),
        "sweep_s": round(took, 2),
        "status": out.status,
        "reason": out.reason,
        "counts": out.detail.get("retention", {}).get("counts"),
        "peak_rss_mb": _rss_mb(),
    }


def rewrite(db: Path) -> dict:
    from backchannel.memory.erasure import complete_pending_rewrite

    before = db.stat().st_size
    t0 = time.perf_counter()
    done = complete_pending_rewrite(db)
    took = time.perf_counter() - t0
    raw = db.read_bytes()
    wal = Path(str(db) + ".wal")
    if wal.exists():
        raw += wal.read_bytes()
    return {
        "rewritten": done,
        "rewrite_s": round(took, 2),
        "db_mb_before": round(before / 2**20, 1),
        "db_mb_after": round(db.stat().st_size / 2**20, 1),
        "unquoted_bytes_left": raw.count(UNQUOTED.encode()),
        "peak_rss_mb": _rss_mb(),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--assertions", type=int, default=1_000_000)
    ap.add_argument("--phase", choices=["build", "sweep", "rewrite"])
    ap.add_argument("--db", type=Path)
    a = ap.parse_args()
    if a.phase:
        print(
            json.dumps(
                {
                    "build": lambda: build(a.db, a.assertions),
                    "sweep": lambda: sweep(a.db),
                    "rewrite": lambda: rewrite(a.db),
                }[a.phase]()
            )
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "home" / "data" / "backchannel.duckdb"
        db.parent.mkdir(parents=True)
        result: dict = {"assertions_target": a.assertions}
        env = {**os.environ, "BACKCHANNEL_HOME": str(db.parent.parent)}
        for phase in ("build", "sweep", "rewrite"):
            t0 = time.perf_counter()
            r = subprocess.run(
                [sys.executable, __file__, "--phase", phase, "--db", str(db), "--assertions", str(a.assertions)],
                capture_output=True,
                text=True,
                env=env,
            )
            if r.returncode != 0:
                raise SystemExit(f"{phase} failed:\n{r.stderr[-3000:]}")
            result[phase] = {
                **json.loads(r.stdout.strip().splitlines()[-1]),
                "wall_s": round(time.perf_counter() - t0, 2),
            }
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

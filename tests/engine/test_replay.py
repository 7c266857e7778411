"""`backchannel replay RUN_ID`: a past wake run again on memory as it was known when the
run started, offline, writing nothing; what differs from what the run recorded.

Real parts: a DuckDB file, the demo transcripts ingested by the real extractor, a signal
wake through the real pipeline (sandboxed skills, gate, judge, drafter), then more ingest,
a dismissal and a retraction after the run; the replay runs through the CLI as a user would."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from backchannel.config import load_settings, resolve_paths
from backchannel.memory import Store, entities

CORPUS = Path(__file__).resolve().parents[2] / "backchannel" / "demo" / "corpus"
CONFIG = '[owner]\nname = "Alex Moreau"\n[gate]\nquiet_hours = "off"\n'
LATER_MEETING = """---
title: Partner dinner
date: 2026-10-20 19:00
participants: [Alex Moreau, Nadia Petit]
---
[00:00:03] Alex Moreau: Nadia, how do you know the people at Acme?
[00:00:09] Nadia Petit: I worked with Sophie Martin at Initech for six years.
[00:00:15] Nadia Petit: I know Sophie Martin very well, we still talk every week.
"""


def _files_digest(db: Path) -> dict[str, str]:
    """The store's bytes: the database file and its WAL, if any."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (db, db.with_name(db.name + ".wal")) if p.exists()
    }


def _signal(n: int) -> dict:
    sig = {
        "id": f"t{n}",
        "source": "drop",
        "title": "Acme publishes a tender",
        "published_at": datetime.now(UTC).isoformat(),
    }
    return {"kind": "signal", "key": f"signal:t{n}", "payload": sig}


def _replay(run_id: str) -> dict:
    from backchannel.cli.main import cli

    res = CliRunner().invoke(cli, ["replay", run_id, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture
def story(home, tmp_path):
    """A signal wake that proposed an introduction, then, after it: a new meeting ingested,
    the proposal dismissed, one of its evidence assertions retracted, and another wake."""
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory.calendar import upsert_events
    from backchannel.ops import OpEnv, invoke

    paths = resolve_paths().ensure()
    paths.config_file.write_text(CONFIG)
    s = load_settings(paths)
    files = sorted(CORPUS.iterdir())
    with Store.open(paths.db_file) as store:
        entities.ensure_owner(store, s.owner.name)
        for f in files:
            ingest_file(store, s, f)
        upsert_events(
            store,
            [
                {
                    "uid": "m",
                    "starts_at": (datetime.now(UTC) + timedelta(hours=30)).isoformat(),
                    "summary": "Coffee with Marc",
                    "attendees": ["Marc Dupont"],
                }
            ],
        )
        first = run_wake_once(store, s, paths, _signal(1))
        assert first.status == "done" and len(first.proposals) == 1, first.to_dict()
        [pid] = first.proposals
        evidence = json.loads(store.scalar("SELECT evidence FROM proposals WHERE id = ?", [pid]))
        # After the run: more memory, the owner's verdict, a correction of the record.
        later = tmp_path / "2026-10-20 partner dinner.txt"
        later.write_text(LATER_MEETING)
        assert ingest_file(store, s, later).status == "ingested"
        env = OpEnv(store=store, settings=s, paths=paths)
        invoke(env, "dismiss", {"id": pid, "reason": "not now", "scope": "entity"})
        invoke(env, "retract_assertion", {"assertion_id": evidence[0]["assertion_id"], "reason": "misheard"})
        second = run_wake_once(store, s, paths, _signal(2))
        assert pid not in second.proposals
        recorded = {
            "title": store.scalar("SELECT title FROM proposals WHERE id = ?", [pid]),
            "body": store.scalar("SELECT body FROM proposals WHERE id = ?", [pid]),
        }
    return {"paths": paths, "first": first, "second": second, "proposal": pid, "recorded": recorded}


def test_replay_shows_the_earlier_result_unchanged_and_writes_nothing(story):
    db = story["paths"].db_file
    before = _files_digest(db)
    r = _replay(story["first"].run_id)
    assert _files_digest(db) == before  # the store's file is byte-identical
    assert r["same"] and r["differences"] == [], r["differences"]
    assert r["settings_changed"] == {} and r["limits"] == []
    [proposed] = [c for c in r["replayed"]["candidates"] if c["decision"] == "proposed"]
    assert proposed["title"] == story["recorded"]["title"] and proposed["body"] == story["recorded"]["body"]
    [was] = [c for c in r["recorded"]["candidates"] if c.get("proposal") == story["proposal"]]
    assert proposed["judge_score"] == was["judge_score"] and proposed["evidence"] == was["evidence"]
    assert proposed["gate_before_judge"] == "passed"  # the later dismissal was not known then
    # The later run, replayed, still sees the dismissal and the retraction it ran after.
    later = _replay(story["second"].run_id)
    assert later["same"], later["differences"]
    assert _files_digest(db) == before
    # A run recorded before runs kept their clock and settings: replayed at its start, said so.
    with Store.open(db) as store:
        store.con.execute("UPDATE runs SET clock_at = NULL, decided_by = NULL WHERE id = ?", [story["first"].run_id])
    old = _replay(story["first"].run_id)
    assert old["same"] and old["settings_changed"] is None, old["differences"]
    assert old["limits"] == ["the run predates the record of its clock: replayed at its start time"]


def test_a_changed_threshold_shows_as_a_difference(story):
    paths = story["paths"]
    paths.config_file.write_text(CONFIG + "score_threshold = 0.99\n")
    from backchannel.cli.main import cli

    res = CliRunner().invoke(cli, ["replay", story["first"].run_id])
    assert res.exit_code == 0, res.output
    assert "gate.score_threshold 0.6 -> 0.99" in res.output
    r = _replay(story["first"].run_id)
    assert not r["same"] and r["settings_changed"] == {"gate.score_threshold": {"then": 0.6, "today": 0.99}}
    [d] = [d for d in r["differences"] if "fields" in d]
    assert d["fields"]["decision"]["recorded"] == "proposed"
    assert d["fields"]["decision"]["replayed"].startswith("suppressed (threshold")
    assert d["fields"]["gate_after_judge"]["replayed"].startswith("threshold")
    assert d["fields"]["title"]["replayed"] is None  # no draft: nothing would have been proposed


def test_replay_refuses_what_it_cannot_replay(home):
    from backchannel.cli.main import cli
    from backchannel.engine import runs

    paths = resolve_paths().ensure()
    with Store.open(paths.db_file) as store:
        rid = runs.start(store, runs.WakeRecord("inbox", None, {"path": "/nowhere.txt"}))
        runs.finish(store, rid, "done")
    res = CliRunner().invoke(cli, ["replay", rid])
    assert res.exit_code != 0 and "only runs that sweep can be replayed" in str(res.exception)
    res = CliRunner().invoke(cli, ["replay", "R0000"])
    assert res.exit_code != 0 and "no run 'R0000'" in str(res.exception)

"""Consent, no-capture, retention, rectification, the access record and portability
(docs/privacy.md), through the real CLI on real files and a real DuckDB file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from backchannel.demo import corpus_files

ROOT = Path(__file__).resolve().parents[2]


def bc(*args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [sys.executable, "-m", "backchannel", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )
    if check and r.returncode != 0:
        raise AssertionError(f"backchannel {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def raw_db(home: Path) -> bytes:
    data = home / "data" / "backchannel.duckdb"
    wal = Path(str(data) + ".wal")
    return data.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def rows(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(home / "data" / "backchannel.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def add_config(home: Path, text: str) -> None:
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n" + text.strip() + "\n")


@pytest.fixture
def demo_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "demo"
    monkeypatch.setenv("BACKCHANNEL_HOME", str(home))
    bc("demo", "--home", str(home))
    return home


@pytest.fixture
def story_home(tmp_path, monkeypatch) -> Path:
    """The demo's meetings, calendar and signal, ingested but with no wake run yet."""
    from backchannel.demo.scenario import prepare_home

    home = tmp_path / "story"
    home.mkdir()
    monkeypatch.setenv("BACKCHANNEL_HOME", str(home))
    prepare_home(home)
    bc("ingest", *map(str, corpus_files()))
    return home


def source_id(title_part: str) -> str:
    [sid] = [
        s["id"] for s in json.loads(bc("sources", "--json").stdout) if title_part.lower() in (s["title"] or "").lower()
    ]
    return sid


def all_text(home: Path) -> str:
    """Every assertion, utterance, proposal, event and source field, as text."""
    parts = []
    for sql in (
        "SELECT CAST(columns(*) AS VARCHAR) FROM assertions",
        "SELECT CAST(columns(*) AS VARCHAR) FROM utterances",
        "SELECT CAST(columns(*) AS VARCHAR) FROM proposals",
        "SELECT CAST(columns(*) AS VARCHAR) FROM events",
        "SELECT CAST(columns(*) AS VARCHAR) FROM sources",
        "SELECT CAST(columns(*) AS VARCHAR) FROM runs",
        "SELECT CAST(columns(*) AS VARCHAR) FROM entities",
        "SELECT CAST(columns(*) AS VARCHAR) FROM aliases",
    ):
        parts += [str(v) for r in rows(home, sql) for v in r]
    return "\n".join(parts)


MEETING_WITH_MARC = """\
Alex Moreau: Marc Dupont, thanks for joining. Marc Dupont told me last time he knows the CFO of Initech.
Marc Dupont: Yes, I know Karl Weber well. My address is marc@example.org if you need it.
Marc: And Karl Weber is the CFO of Initech since March.
Julie Bernard: I worked with Hannah Kraus at Globex for years.
Hannah Kraus: Karl Weber joined Initech in March. You can reach me at hannah@example.org.
Julie Bernard: Sophie Martin is the CIO of Acme now.
"""


def test_a_withdrawn_person_leaves_no_byte_after_the_next_ingest(demo_home, tmp_path):
    assert b"Marc Dupont" in raw_db(demo_home)
    out = json.loads(bc("consent", "withdraw", "Marc Dupont", "--yes", "--json").stdout)
    # 7: the demo's facts Marc said or is in, with the two jobs his shared stint at Globex implies
    # ("Sophie Martin and I worked together at Globex from 2016 to 2021": both worked there then).
    assert out["was_in_memory"] and out["counts"]["assertions"] == 7 and out["label"] == "M. D."
    add_config(demo_home, '[consent]\nwithdrawn = ["Hannah Kraus", "hannah@example.org"]')
    listed = json.loads(bc("consent", "list", "--json").stdout)
    assert [w["label"] for w in listed["withdrawn"]] == ["M. D."] and listed["configured"] == [
        "Hannah Kraus",
        "hannah@example.org",
    ]

    meeting = tmp_path / "2026-11-25 partners.txt"
    meeting.write_text(MEETING_WITH_MARC, encoding="utf-8")
    r = json.loads(bc("ingest", str(meeting), "--json").stdout)
    assert r["ingested"] == 1
    bc("wake", "sweep")
    text = all_text(demo_home)
    raw = raw_db(demo_home)
    for secret in ("Marc Dupont", "marc@example.org", "Hannah Kraus", "hannah@example.org"):
        assert secret not in text, secret
        assert secret.encode() not in raw, secret
    assert "Marc:" not in text and "Karl Weber" in text  # their words are gone, the others' stay
    # Nothing is asserted about them, from any source: the others' facts stand.
    facts = json.loads(bc("assertions", "--json").stdout)
    sid = source_id("partners")
    assert any(a["subject"] == "Sophie Martin" and a["qualifier"] == "CIO" and a["source_id"] == sid for a in facts)
    assert not any("Hannah" in (a["subject"] or "") + (a["object"] or "") for a in facts)
    src = next(s for s in json.loads(bc("sources", "--json").stdout) if s["id"] == sid)
    assert src["consent"] == "redacted" and src["scope"] == "default"
    assert "consent redacted" in bc("sources").stdout
    # The same file again is recognised (the hash is over what was kept): nothing new.
    assert json.loads(bc("ingest", str(meeting), "--json").stdout)["skipped"] == 1
    # The owner cannot withdraw; a withdrawal needs the daemon stopped, like forget.
    r2 = bc("consent", "withdraw", "Alex Moreau", "--yes", check=False)
    assert r2.returncode == 1 and "that is you" in r2.stderr


NO_CAPTURE = """\
---
title: Board prep
date: 2026-11-20
capture: no
---
Alex Moreau: I will send the board deck on Friday.
Julie Bernard: Sophie Martin is leaving Acme next month, keep it quiet.
"""


def _start_daemon(home: Path) -> tuple[subprocess.Popen, Path]:
    log_path = home / "daemon.log"
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "run"],
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL,
        stderr=log_path.open("w"),
    )
    deadline = time.monotonic() + 40
    while "daemon ready" not in log_path.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-3000:]
        time.sleep(0.05)
    return proc, log_path


def _stop(proc: subprocess.Popen, log_path: Path) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0, log_path.read_text()[-3000:]


def test_a_no_capture_meeting_is_refused_into_failed_with_its_reason(demo_home):
    add_config(demo_home, "[inbox]\nquiet_period_s = 0.1\npoll_interval_s = 0.1\nforce_polling = true")
    inbox = demo_home / "data" / "inbox"
    proc, log_path = _start_daemon(demo_home)
    try:
        inbox.mkdir(parents=True, exist_ok=True)
        (inbox / "board-prep.md").write_text(NO_CAPTURE, encoding="utf-8")
        (inbox / "2026-11-21 no-capture chat.txt").write_text(
            "Julie Bernard: Karl Weber joined Globex.\n", encoding="utf-8"
        )
        failed = inbox.parent / "failed"
        deadline = time.monotonic() + 60
        while len(list(failed.glob("*.error.txt"))) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, log_path.read_text()[-3000:]
            time.sleep(0.1)
    finally:
        _stop(proc, log_path)
    reasons = {p.name: p.read_text() for p in failed.glob("*.error.txt")}
    assert "front matter says capture: no" in reasons["board-prep.md.error.txt"]
    assert "file name" in reasons["2026-11-21 no-capture chat.txt.error.txt"]
    assert (failed / "board-prep.md").exists()
    raw = raw_db(demo_home)
    assert b"keep it quiet" not in raw and b"board deck" not in raw
    # By config, only the owner's own turns are kept.
    add_config(demo_home, '[consent]\nno_capture = "owner_only"')
    again = demo_home / "board-prep again.md"
    again.write_text(NO_CAPTURE, encoding="utf-8")
    out = json.loads(bc("ingest", str(again), "--json").stdout)
    assert out["ingested"] == 1
    src = json.loads(bc("show", source_id("Board prep"), "--json").stdout)
    assert [u["speaker"] for u in src["utterances"]] == ["Alex Moreau"]
    assert b"keep it quiet" not in raw_db(demo_home)
    assert "owner_only" in bc("sources").stdout


CANARY = "The canary in the basement sings only on Tuesdays."


def _canary_home(home: Path, tmp_path: Path) -> str:
    meeting = tmp_path / "2026-11-02 canary.txt"
    meeting.write_text(
        f"Julie Bernard: Karl Weber is the CTO of Initech. {CANARY}\nAlex Moreau: Good to know, thanks.\n",
        encoding="utf-8",
    )
    bc("ingest", str(meeting))
    sid = source_id("canary")
    add_config(home, "[retention]\nutterances_days = 0")
    assert CANARY.encode() in raw_db(home)
    return sid


def _quotes_are_slices(home: Path) -> int:
    """Every quote is still the verbatim slice of its (kept) utterance that its span names."""
    found = rows(
        home,
        """SELECT a.id, a.quote, a.span_start, a.span_end, u.text FROM assertions a
                          JOIN utterances u ON u.source_id = a.source_id AND u.idx = a.utterance_idx
                          WHERE a.quote IS NOT NULL""",
    )
    for aid, quote, start, end, text in found:
        assert text[start:end] == quote, (aid, quote, text)
    return len(found)


def test_a_retention_sweep_leaves_no_byte_of_the_canary_and_ask_still_answers(demo_home, tmp_path):
    sid = _canary_home(demo_home, tmp_path)
    before = json.loads(bc("ask", "who can introduce me to the CIO of Acme?", "--json").stdout)
    out = json.loads(bc("retention", "sweep", "--json").stdout)
    assert out["status"] == "done" and out["rewritten"]
    counts = out["detail"]["retention"]["counts"]
    assert counts["sources_trimmed"] == 5 and counts["utterances_deleted"] > 0
    assert CANARY.encode() not in raw_db(demo_home) and b"Good to know" not in raw_db(demo_home)
    assert not (demo_home / "data" / "backchannel.duckdb.wal").exists() or CANARY.encode() not in raw_db(demo_home)
    src = json.loads(bc("show", sid, "--json").stdout)
    assert [u["text"] for u in src["utterances"]] == ["Karl Weber is the CTO of Initech."]
    after = json.loads(bc("ask", "who can introduce me to the CIO of Acme?", "--json").stdout)
    assert [c["title"] for c in after["candidates"]] == [c["title"] for c in before["candidates"]]
    assert after["candidates"] and all(e["quote"] for c in after["candidates"] for e in c["evidence"])
    assert _quotes_are_slices(demo_home) > 10
    # A second sweep has nothing left to erase.
    again = json.loads(bc("retention", "sweep", "--json").stdout)
    assert again["detail"]["retention"]["counts"]["sources_trimmed"] == 0 and not again["rewritten"]
    # Without the quotes, when so configured: the facts stay, their words go.
    add_config(demo_home, "keep_quotes = false")  # appended under [retention]
    new = tmp_path / "2026-11-03 later.txt"
    new.write_text("Julie Bernard: Karl Weber joined Globex in May.\n", encoding="utf-8")
    bc("ingest", str(new))
    bc("retention", "sweep")
    assert b"Karl Weber joined Globex in May" not in raw_db(demo_home)
    assert any(
        a["predicate"] == "works_at" and a["object"] == "Globex" and a["quote"] is None
        for a in json.loads(bc("assertions", "--about", "Karl Weber", "--json").stdout)
    )


@pytest.mark.parametrize("point", ["retention.before_commit", "retention.after_erase"])
def test_kill_9_during_the_retention_sweep_loses_nothing_and_erases_nothing_twice(demo_home, tmp_path, point):
    sid = _canary_home(demo_home, tmp_path)
    facts_before = sorted((a["id"], a["quote"]) for a in json.loads(bc("assertions", "--json").stdout))
    marker = tmp_path / "crashed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "retention", "sweep", "--json"],
        env={**os.environ, "BACKCHANNEL_TEST_CRASH_AT": point, "BACKCHANNEL_TEST_CRASH_FILE": str(marker)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    [(run_id, status)] = rows(demo_home, "SELECT id, status FROM runs WHERE wake_kind = 'retention'")
    assert status == "running"
    erased = rows(demo_home, f"SELECT count(*) FROM events WHERE key = '{run_id}:retention.erased'")[0][0]
    assert erased == (1 if point == "retention.after_erase" else 0)
    if point == "retention.before_commit":  # nothing of the erasure committed
        assert CANARY in json.dumps(json.loads(bc("show", sid, "--json").stdout))

    out = json.loads(bc("retention", "sweep", "--json").stdout)
    assert out["resumed_run"] == run_id and out["run_id"] == run_id and out["status"] == "done"
    assert out["detail"]["retention"]["resumed"] == (point == "retention.after_erase")
    assert out["detail"]["retention"]["counts"]["sources_trimmed"] == 5
    assert rows(demo_home, f"SELECT count(*) FROM events WHERE key = '{run_id}:retention.erased'")[0][0] == 1
    assert CANARY.encode() not in raw_db(demo_home)
    assert not (demo_home / "data" / "backchannel.duckdb.rewrite-pending").exists()
    # Nothing lost: every assertion is still there with its quote, each a slice of what was kept.
    facts_after = sorted((a["id"], a["quote"]) for a in json.loads(bc("assertions", "--json").stdout))
    assert facts_after == facts_before
    _quotes_are_slices(demo_home)


def test_a_correction_changes_the_next_proposal_and_ask(story_home):
    cio = next(
        a
        for a in json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout)
        if a["predicate"] == "works_at" and a["qualifier"] == "CIO"
    )
    out = json.loads(
        bc("correct", str(cio["id"]), "--qualifier", "CTO", "--reason", "she told me herself", "--json").stdout
    )
    new_id = out["new_id"]
    facts = {a["id"]: a for a in json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout)}
    assert facts[cio["id"]]["superseded_at"] and facts[new_id]["qualifier"] == "CTO"
    assert facts[new_id]["speaker"] == "Alex Moreau" and facts[new_id]["extractor"] == "owner"
    # ask reads the correction
    cto = json.loads(bc("ask", "who can introduce me to the CTO of Acme?", "--json").stdout)
    assert any("Sophie Martin" in c["title"] for c in cto["candidates"])
    cio_ask = json.loads(bc("ask", "who can introduce me to the CIO of Acme?", "--json").stdout)
    assert not cio_ask["candidates"]
    # the next proposal (the tender signal) reads it too
    bc("wake", "calendar")  # the demo's order: Marc on Thursday, then Acme's tender
    bc("wake", "signals")
    [p] = [p for p in json.loads(bc("proposals", "--json").stdout) if p["kind"] == "introduction"]
    shown = json.loads(bc("show", p["id"], "--json").stdout)
    body = shown.get("body") or shown.get("proposal", {}).get("body", "")
    assert "CTO" in body and "CIO" not in body
    # A retraction: history keeps who changed what, when and why.
    bc("retract", str(new_id), "--reason", "she left")
    with pytest.raises(AssertionError, match="already superseded"):
        bc("retract", str(new_id), "--reason", "twice")
    r = bc("retract", str(cio["id"]), "--reason", "", check=False)
    assert r.returncode == 1
    from backchannel.config import load_settings, resolve_paths
    from backchannel.memory import Store
    from backchannel.ops import OpEnv, invoke

    paths = resolve_paths({"BACKCHANNEL_HOME": str(story_home)})
    with Store.open(paths.db_file) as store:
        hist = invoke(
            OpEnv(store=store, settings=load_settings(paths), paths=paths),
            "assertion_history",
            {"assertion_id": cio["id"]},
        )["changes"]
    assert [(h["action"], h["changed_by"], h["reason"]) for h in hist] == [
        ("correct", "Alex Moreau", "she told me herself"),
        ("retract", "Alex Moreau", "she left"),
    ]
    assert hist[0]["before"]["qualifier"] == "CIO"


def test_the_mcp_server_offers_no_rectification():
    from backchannel.web import mcp_server

    source = Path(mcp_server.__file__).read_text()
    assert "correct_assertion" not in source and "retract_assertion" not in source


def test_audit_lists_a_model_call_that_read_the_persons_facts(story_home, tmp_path):
    scripts = tmp_path / "scripts.json"
    scripts.write_text(
        json.dumps(
            {
                "draft-audit": [
                    {
                        "content": {
                            "title": "Ask Marc about Sophie",
                            "body": "Marc worked with Sophie at Globex.",
                            "message": "Hi Marc, could you introduce me to Sophie?",
                        },
                        "repeat": True,
                    }
                ]
            }
        )
    )
    add_config(story_home, "")
    cfg = (story_home / "config.toml").read_text().replace('draft = "offline"', 'draft = "scripted/draft-audit"')
    (story_home / "config.toml").write_text(cfg)
    env = {
        "BACKCHANNEL_PLUGINS": str(ROOT / "tests" / "support" / "scripted_models.py"),
        "BACKCHANNEL_SCRIPTED_MODELS": str(scripts),
    }
    asked = json.loads(bc("ask", "who can introduce me to the CIO of Acme?", "--json", env=env).stdout)
    assert asked["excerpts_sent"] > 0
    bc("export", "Sophie Martin", "-o", str(tmp_path / "sophie.json"))
    out = json.loads(bc("audit", "Sophie Martin", "--json").stdout)
    run = next(r for r in out["runs"] if r["run_id"] == asked["run_id"])
    drafts = [c for c in run["model_calls"] if c["role"] == "draft"]
    assert len(drafts) == len(asked["candidates"]) and {c["model"] for c in drafts} == {"scripted/draft-audit"}
    # Each candidate is an introduction to Sophie: every call was shown excerpts about her, and no
    # more than the run sent in all.
    assert all(c["excerpts_about_them"] > 0 for c in drafts)
    assert run["excerpts_to_model"] == sum(c["excerpts_about_them"] for c in drafts) <= asked["excerpts_sent"]
    assert "introductions" in run["programs"]
    assert any(a["kind"] == "export" for a in out["access"])
    text = bc("audit", "Sophie Martin").stdout
    assert "scripted/draft-audit" in text and "excerpt" in text


def _snapshot(home: Path) -> dict[str, list]:
    """Every table that matters, by names and values rather than ids."""
    names = dict(rows(home, "SELECT id, kind || ':' || name FROM entities"))
    return {
        "entities": sorted(names.values()),
        "aliases": sorted((names[e], a) for e, a in rows(home, "SELECT entity_id, alias FROM aliases")),
        "assertions": sorted(
            (
                names[s],
                p,
                names.get(o),
                lit,
                q,
                str(vf),
                str(vt),
                str(said),
                mod,
                round(conf, 6),
                quote,
                names.get(spk),
                sup is not None,
                ext if ext == "owner" else "x",
            )
            for s, p, o, lit, q, vf, vt, said, mod, conf, quote, spk, sup, ext in rows(
                home,
                """
                SELECT subject_id, predicate, object_id, object_literal, qualifier, valid_from, valid_to, said_at,
                       modality, confidence, quote, speaker_id, superseded_at, extractor FROM assertions""",
            )
        ),
        "evidence_text": sorted(
            rows(
                home,
                "SELECT a.quote, u.text FROM assertions a JOIN utterances u "
                "ON u.source_id = a.source_id AND u.idx = a.utterance_idx",
            )
        ),
        "sources": sorted(
            str(t)
            for (t,) in rows(home, "SELECT DISTINCT s.title FROM sources s JOIN assertions a ON a.source_id = s.id")
        ),
        "proposals": sorted(
            (k, t, b, st, tuple(sorted(names[i] for i in ids)))
            for k, t, b, st, ids in rows(home, "SELECT kind, title, body, status, entity_ids FROM proposals")
        ),
        "feedback": sorted(
            rows(
                home,
                "SELECT p.title, f.verdict, f.reason, f.scope FROM feedback f JOIN proposals p ON p.id = f.proposal_id",
            )
        ),
        "suppressions": sorted(
            (sc, k, r, tuple(sorted(names[i] for i in ids)))
            for sc, k, r, ids in rows(home, "SELECT scope, kind, reason, entity_ids FROM suppressions")
        ),
    }


def test_export_all_and_import_round_trip_into_a_fresh_home(demo_home, tmp_path):
    cio = next(
        a for a in json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout) if a["qualifier"] == "CIO"
    )
    bc("correct", str(cio["id"]), "--qualifier", "CTO")
    bc("dismiss", "P-1", "--reason", "not this quarter", "--scope", "entity")
    out_dir = tmp_path / "export"
    assert "Parquet" in bc("export", "--all", "-o", str(out_dir)).stdout
    lines = [json.loads(x) for x in (out_dir / "memory.jsonl").read_text().splitlines()]
    assert {x["type"] for x in lines} == {"entity", "assertion", "proposal", "feedback", "suppression"}
    assert oct((out_dir / "memory.jsonl").stat().st_mode & 0o777) == "0o600"
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM '{out_dir / 'parquet' / 'assertions.parquet'}'").fetchone()[0]
    assert n == rows(demo_home, "SELECT count(*) FROM assertions")[0][0]

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "config.toml").write_text((demo_home / "config.toml").read_text())
    env = {"BACKCHANNEL_HOME": str(fresh)}
    report = json.loads(bc("import", "all", str(out_dir / "memory.jsonl"), "--json", env=env).stdout)
    assert report["proposals_imported"] == 1 and report["feedback_imported"] == 1
    assert _snapshot(fresh) == _snapshot(demo_home)
    again = json.loads(bc("import", "all", str(out_dir / "memory.jsonl"), "--json", env=env).stdout)
    assert again["assertions_imported"] == 0 and again["proposals_imported"] == 0
    assert _snapshot(fresh) == _snapshot(demo_home)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "proposal", "id": "P-9", "kind": "brief", "entities": ["person:Nobody"]}\n')
    r = bc("import", "all", str(bad), env=env, check=False)
    assert r.returncode == 1 and "nothing imported" in r.stderr and "Traceback" not in r.stderr


def test_scopes_limit_what_ask_exports_and_channels_read(story_home, tmp_path):
    clients = tmp_path / "inbox" / "acme-client"
    clients.mkdir(parents=True)
    acme = clients / "2026-11-10 acme steering.txt"
    acme.write_text("Julie Bernard: I know Nadia Haddad well, she is the CTO of Hooli since June.\n", encoding="utf-8")
    personal = tmp_path / "2026-11-11 dinner.txt"
    personal.write_text(
        "Julie Bernard: I know Omar Farouk well, he is the CTO of Umbrella since May.\n", encoding="utf-8"
    )
    add_config(
        story_home,
        '[scope]\nfolders = { "acme-client" = "acme" }\nask = ["default", "personal"]\n'
        'export = ["default"]\nchannels = { email = ["work"] }\n'
        '[delivery]\nchannels = ["email"]\n[delivery.email]\nhost = "127.0.0.1"\nport = 2525\n'
        'sender = "bc@example.org"\nto = "alex@example.org"',
    )
    bc("ingest", str(acme))
    bc("ingest", "--scope", "personal", str(personal))
    by_title = {s["title"]: s["scope"] for s in json.loads(bc("sources", "--json").stdout)}
    assert by_title["Acme steering"] == "acme" and by_title["Dinner"] == "personal"
    assert set(by_title.values()) == {"default", "acme", "personal"}
    # ask reads default and personal only: the acme meeting's CFO is not reachable.
    hooli = json.loads(bc("ask", "who can introduce me to the CTO of Hooli?", "--json").stdout)
    assert not hooli["candidates"]
    umbrella = json.loads(bc("ask", "who can introduce me to the CTO of Umbrella?", "--json").stdout)
    assert umbrella["candidates"] and all(
        e["source_title"] == "Dinner" for c in umbrella["candidates"] for e in c["evidence"] if e.get("quote")
    )
    # exports read default only.
    other = {s["id"] for s in json.loads(bc("sources", "--json").stdout) if s["scope"] != "default"}
    assert any(
        a["source_id"] in other for a in json.loads(bc("assertions", "--about", "Nadia Haddad", "--json").stdout)
    )
    julie = json.loads(bc("export", "Julie Bernard").stdout)
    assert julie["assertions"] and not any(a["source_id"] in other for a in julie["assertions"])
    assert not any(u["source_id"] in other for u in julie["utterances"])
    # The email channel may carry only "work" evidence: the demo's proposal (default scope) is
    # made, but no email is queued for it.
    bc("wake", "calendar")
    bc("wake", "signals")
    props = json.loads(bc("proposals", "--json").stdout)
    assert props
    assert rows(story_home, "SELECT count(*) FROM outbox")[0][0] == 0
    made = [json.loads(d) for (d,) in rows(story_home, "SELECT data FROM events WHERE kind = 'proposal.created'")]
    assert made and all(m["channels"] == [] and m["withheld_by_scope"] == ["email"] for m in made)


def test_the_daemon_runs_the_retention_sweep_and_rewrites_its_own_file(demo_home, tmp_path):
    _canary_home(demo_home, tmp_path)
    proc, log_path = _start_daemon(demo_home)
    try:
        out = json.loads(bc("retention", "sweep", "--json").stdout)
        assert out["enqueued"] == "retention"
        deadline = time.monotonic() + 60
        while "database file rewritten after an erasure" not in log_path.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log_path.read_text()[-3000:]
            time.sleep(0.1)
        assert CANARY.encode() not in raw_db(demo_home)
        # The daemon goes on serving from the rewritten file.
        facts = json.loads(bc("assertions", "--about", "Karl Weber", "--json").stdout)
        assert any(a["qualifier"] == "CTO" for a in facts)
    finally:
        _stop(proc, log_path)
    [(status,)] = rows(demo_home, "SELECT status FROM runs WHERE wake_kind = 'retention'")
    assert status == "done"


def test_the_retention_schedule_enqueues_one_keyed_wake_per_scheduled_time():
    import asyncio
    from datetime import UTC, datetime

    from backchannel.config.privacy import RetentionSettings
    from backchannel.triggers.retention import RetentionTrigger, configured

    assert not configured(RetentionSettings())
    queue: asyncio.Queue = asyncio.Queue()
    trig = RetentionTrigger(RetentionSettings(utterances_days=0, schedule="30 3 * * *"), queue, timezone="Europe/Paris")
    when = trig.next_fire(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))
    assert when == datetime(2026, 12, 2, 2, 30, tzinfo=UTC)  # 03:30 in Paris
    wake = trig.fire(when)
    assert wake.kind == "retention" and wake.key == "retention:2026-12-02T02:30" and queue.get_nowait() == wake
    with pytest.raises(ValueError):
        RetentionTrigger(RetentionSettings(schedule="not a cron line"), queue)


def test_the_readme_privacy_commands_pass(demo_home):
    """The two privacy lines of the README's "Using it", run as written."""
    readme = (ROOT / "README.md").read_text()
    lines = [
        line.split("#")[0].strip()
        for line in readme.splitlines()
        if line.startswith(("backchannel consent withdraw", "backchannel retention sweep"))
    ]
    assert len(lines) == 2
    import shlex

    for line in lines:
        bc(*shlex.split(line)[1:])
    assert (ROOT / "docs" / "privacy.md").exists()
    assert "K. W." in bc("consent", "list").stdout


def test_the_web_app_shows_consent_state_and_corrects_and_retracts(demo_home):
    import re

    sys.path.insert(0, str(ROOT))
    from tests.support.web_support import Browserless, WebProc

    bc("consent", "withdraw", "Paul Girard", "--yes")
    web = WebProc(demo_home)
    try:
        b = Browserless(web.base)
        assert b.get(web.link)[0] == 200
        status, page = b.get("/sources")
        assert status == 200 and "scope" in page and "P. G." in page and "kept as hashes" in page
        cio = next(
            a
            for a in json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout)
            if a["qualifier"] == "CIO"
        )
        _, listing = b.get("/memory")
        ids = dict((name, int(i)) for i, name in re.findall(r'href="/memory/(\d+)">([^<]+)</a>', listing))
        where = f"/memory/{ids['Sophie Martin']}"
        status, page = b.post(
            f"/assertions/{cio['id']}/correct", {"qualifier": "CTO", "reason": "web", "back": where}, csrf_from=where
        )
        assert status == 200 and f"#{cio['id']} corrected" in page and "(CTO)" in page
        new_id = int(re.search(r"superseded by #(\d+)", page).group(1))
        status, page = b.post(f"/assertions/{new_id}/retract", {"reason": "", "back": where}, csrf_from=where)
        assert status == 400 and "needs a reason" in page
        status, page = b.post(f"/assertions/{new_id}/retract", {"reason": "left Acme", "back": where}, csrf_from=where)
        assert status == 200 and "retracted: left Acme" in page
    finally:
        web.stop()
    changes = rows(demo_home, "SELECT action, via FROM assertion_changes ORDER BY id")
    assert changes == [("correct", "web"), ("retract", "web")]


MAIL = """\
From: {sender}
To: Alex Moreau <alex@example.org>, {cc}
Subject: {subject}
Date: Tue, 24 Nov 2026 10:00:00 +0000
Message-ID: <{mid}@example.org>
{extra}
{body}
"""


def test_a_mail_header_withdraws_its_sender_and_withdrawn_recipients_are_cut_out(demo_home, tmp_path):
    optout = tmp_path / "optout.eml"
    optout.write_text(
        MAIL.format(
            sender="Lena Fischer <lena@example.org>",
            cc="julie@example.org",
            subject="Please leave me out",
            mid="m1",
            extra="X-Backchannel-Consent: withdrawn",
            body="Lena Fischer is the CTO of Hooli. Please do not record me.",
        )
    )
    r = bc("ingest", str(optout), "--json", check=False)
    assert r.returncode == 1 and "withdrew consent" in json.loads(r.stdout)["failed"][0]["error"]
    assert [w["via"] for w in json.loads(bc("consent", "list", "--json").stdout)["withdrawn"]] == ["mail_header"]
    later = tmp_path / "later.eml"
    later.write_text(
        MAIL.format(
            sender="Julie Bernard <julie@example.org>",
            cc="Lena Fischer <lena@example.org>",
            subject="Lena Fischer and the Hooli deal",
            mid="m2",
            extra="",
            body="Lena Fischer joined Hooli as CTO. Karl Weber is the CFO of Initech.",
        )
    )
    assert json.loads(bc("ingest", str(later), "--json").stdout)["ingested"] == 1
    nocap = tmp_path / "nocap.eml"
    nocap.write_text(
        MAIL.format(
            sender="Julie Bernard <julie@example.org>",
            cc="alex@example.org",
            subject="between us",
            mid="m3",
            extra="X-No-Capture: yes",
            body="Karl Weber is leaving Initech, keep it quiet.",
        )
    )
    r = bc("ingest", str(nocap), "--json", check=False)
    assert r.returncode == 1 and "no-capture message" in json.loads(r.stdout)["failed"][0]["error"]
    raw = raw_db(demo_home)
    for secret in (b"Lena Fischer", b"lena@example.org", b"Please do not record me", b"keep it quiet"):
        assert secret not in raw, secret
    assert any(a["subject"] == "Karl Weber" for a in json.loads(bc("assertions", "--json").stdout))


def test_a_scoped_export_all_holds_only_its_scopes(story_home, tmp_path):
    secret = tmp_path / "2026-11-12 private.txt"
    secret.write_text("Julie Bernard: I know Omar Farouk well, he is the CTO of Umbrella since May.\n")
    bc("ingest", "--scope", "personal", str(secret))
    add_config(story_home, '[scope]\nexport = ["default"]')
    out_dir = tmp_path / "scoped"
    bc("export", "--all", "-o", str(out_dir))
    text = (out_dir / "memory.jsonl").read_text()
    assert "Omar Farouk is" not in text and "Sophie Martin" in text
    parquet = out_dir / "parquet"
    assert not (parquet / "events.parquet").exists() and not (parquet / "proposals.parquet").exists()
    con = duckdb.connect()
    for table in ("utterances", "assertions", "sources"):
        dump = con.execute(f"SELECT CAST(columns(*) AS VARCHAR) FROM '{parquet / (table + '.parquet')}'").fetchall()
        assert not any("Omar Farouk" in str(v) or "Private" in str(v) for r in dump for v in r), table
    assert oct(out_dir.stat().st_mode & 0o777) == "0o700"


def test_forget_takes_the_correction_history_of_their_facts_with_them(demo_home):
    cio = next(
        a for a in json.loads(bc("assertions", "--about", "Sophie Martin", "--json").stdout) if a["qualifier"] == "CIO"
    )
    bc("correct", str(cio["id"]), "--qualifier", "CTO", "--reason", "Sophie Martin said so at lunch")
    marc = next(
        a
        for a in json.loads(bc("assertions", "--about", "Marc Dupont", "--json").stdout)
        if a["predicate"] == "works_at" and a["object"] == "Initech"
    )
    bc("retract", str(marc["id"]), "--reason", "Julie mixed it up with Sophie Martin")
    assert rows(demo_home, "SELECT count(*) FROM assertion_changes")[0][0] == 2
    bc("forget", "Sophie Martin", "--yes")
    assert rows(demo_home, "SELECT reason FROM assertion_changes") == [("Julie mixed it up with [forgotten]",)]
    assert b"Sophie Martin" not in raw_db(demo_home)

"""Trust as the user sees it: `assertions` (a column and --json), `show SOURCE`, and `trace`
(each evidence assertion's trust and reasons), through the real CLI in a temp home."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.memory.test_trust import vtt


def bc(*args: str, env: dict | None = None) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "backchannel", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert r.returncode == 0, f"backchannel {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_assertions_and_show_carry_trust_and_its_reasons(home, tmp_path):
    bc("init", "--name", "Alex Moreau", "--alias", "Alex")
    f = tmp_path / "2026-05-04 offsite debrief.vtt"
    f.write_text(
        vtt(
            "2026-05-04 10:00",
            ("Nadia Haddad", "How was the offsite?"),
            ("Marc Dupont", "Paul Girard told the whole room: I worked with Sophie Martin at Globex."),
            ("Marc Dupont", "And I know Karl Weber well."),
        ),
        encoding="utf-8",
    )
    bc("ingest", str(f))

    rows = json.loads(bc("assertions", "--json"))
    by_obj = {r["object"]: r for r in rows}
    quoted, own = by_obj["Sophie Martin"], by_obj["Karl Weber"]
    assert quoted["subject"] == "Paul Girard" and quoted["trust_reasons"] == ["second_hand", "owner_absent"]
    assert own["subject"] == "Marc Dupont" and own["trust_reasons"] == ["owner_absent"]
    assert 0 < quoted["trust"] < own["trust"] < own["confidence"] <= 1
    assert "recipient" in quoted and "recipient_id" in quoted

    trusted = json.loads(bc("assertions", "--min-trust", f"{(quoted['trust'] + own['trust']) / 2:.3f}", "--json"))
    assert [r["object"] for r in trusted] == ["Karl Weber"]
    bad = subprocess.run(
        [sys.executable, "-m", "backchannel", "assertions", "--min-trust", "7"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "0 to 1" in (bad.stderr + bad.stdout)
    text = bc("assertions", "--about", "Sophie Martin")
    assert f"trust {quoted['trust']:.2f} (second hand, owner absent)" in text

    shown = bc("show", quoted["source_id"])
    assert "reliability: owner absent" in shown
    assert f"trust {own['trust']:.2f} (owner absent)" in shown
    src = json.loads(bc("show", quoted["source_id"], "--json"))
    assert src["trust_reasons"] == ["owner_absent"]
    assert {a["trust"] for a in src["assertions"]} == {quoted["trust"], own["trust"]}


def test_show_says_which_names_were_ambiguous(home, tmp_path):
    bc("init", "--name", "Alex Moreau")
    meetings = [
        ("2026-01-10 a.vtt", [("Alex Moreau", "Hi."), ("Marc Dupont", "Hannah Meyer works at Globex.")]),
        ("2026-01-11 b.vtt", [("Alex Moreau", "Hi."), ("Marc Dupont", "Hannah Schulz is the CTO of Hooli.")]),
        ("2026-01-12 c.vtt", [("Alex Moreau", "Hi."), ("Marc Dupont", "I worked with Hannah at Initech.")]),
    ]
    for name, cues in meetings:
        (tmp_path / name).write_text(vtt(name[:10] + " 09:00", *cues), encoding="utf-8")
        bc("ingest", str(tmp_path / name))
    (link,) = json.loads(bc("assertions", "--predicate", "worked_with", "--json"))
    assert link["trust_reasons"] == ["ambiguous_reference"]
    src = json.loads(bc("show", link["source_id"], "--json"))
    assert src["ambiguous_references"] == {"hannah": ["Hannah Meyer", "Hannah Schulz"]}
    shown = bc("show", link["source_id"])
    assert "ambiguous: Hannah could be Hannah Meyer or Hannah Schulz" in shown
    assert "(ambiguous reference)" in shown


def test_trace_shows_the_trust_of_each_evidence_assertion(tmp_path, monkeypatch):
    monkeypatch.delenv("BACKCHANNEL_HOME", raising=False)
    report = json.loads(bc("demo", "--home", str(tmp_path / "demo"), "--json"))
    env = {"BACKCHANNEL_HOME": report["home"]}
    (p,) = report["proposals"]
    t = json.loads(bc("trace", p["id"], "--json", env=env))
    ids = [e["assertion_id"] for e in p["evidence"]]
    assert [e["assertion_id"] for e in t["evidence_trust"]] == ids
    for e in t["evidence_trust"]:
        assert 0 < e["trust"] <= 1 and isinstance(e["trust_reasons"], list)
    text = bc("trace", p["id"], env=env)
    assert "evidence trust:" in text
    first = t["evidence_trust"][0]
    assert f"#{first['assertion_id']} trust {first['trust']:.2f}" in text
    shown = bc("show", p["id"], env=env)
    assert f"[trust {first['trust']:.2f}" in shown
    run = json.loads(bc("trace", t["run"]["id"], "--json", env=env))
    assert any(rows for rows in run["evidence_trust"].values())
    assert "trust " in bc("trace", t["run"]["id"], env=env)

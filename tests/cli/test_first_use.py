"""First use, as a new user meets it: a memory where the owner never speaks says why it
is quiet and what to do; a name that matches nothing gets the near names, seat labels and
aliases memory holds. All through the CLI, on real files in a real store."""

from __future__ import annotations

from click.testing import CliRunner

from backchannel.cli.main import cli

COMMITTEE = (
    "Kirsty Williams: Thank you, Chair. I'll write to the committee with the figures next week.\n"
    "Lynne Neagle: Thank you, Minister. Barry Hughes, you wanted to add something?\n"
    "Barry Hughes: I met with Julie Morgan a few months ago to discuss the implications.\n"
)
SEATS = (
    "Project Manager: Right, let's start. I'm Ada, the project manager.\n"
    "Marketing: I'll send the market survey tomorrow.\n"
)
COFFEE = "Alex Moreau: Thanks for coming, Marc.\nMarc Dupont: I'll send you the Globex case study next Friday.\n"


def _run(*args):
    return CliRunner().invoke(cli, list(args))


def _said(res):
    return res.output + (str(res.exception) if res.exception else "")


def test_owner_absent_is_said_at_ingest_and_wake_with_what_to_do(home, tmp_path):
    assert _run("init", "--name", "Alex Moreau").exit_code == 0
    (tmp_path / "2020-01-20 committee.txt").write_text(COMMITTEE, encoding="utf-8")
    res = _run("ingest", str(tmp_path / "2020-01-20 committee.txt"))
    assert res.exit_code == 0, res.output
    assert "note: you (Alex Moreau) speak in none of the 1 meetings, so nothing is proposed" in res.stderr
    assert '`backchannel entities merge "Alex Moreau" "' in res.stderr and "[owner] aliases in" in res.stderr
    res = _run("wake", "sweep")
    assert res.exit_code == 0 and "speak in none of the 1 meetings" in res.stderr, res.output
    res = _run("status")  # where the scheduled wakes' silence is looked into
    assert res.exit_code == 0 and "speak in none of the 1 meetings" in res.stderr, res.output

    # once the owner speaks in one, nothing more is said
    (tmp_path / "2020-01-21 coffee.txt").write_text(COFFEE, encoding="utf-8")
    res = _run("ingest", str(tmp_path / "2020-01-21 coffee.txt"))
    assert res.exit_code == 0 and "speak in none" not in res.stderr, res.stderr
    assert "speak in none" not in _run("wake", "sweep").stderr


def test_names_that_match_nothing_get_suggestions(home, tmp_path):
    _run("init", "--name", "Alex Moreau")
    (tmp_path / "2020-01-20 committee.txt").write_text(COMMITTEE, encoding="utf-8")
    (tmp_path / "2020-01-22 kickoff.txt").write_text(SEATS, encoding="utf-8")
    assert _run("ingest", str(tmp_path)).exit_code == 0

    res = _run("assertions", "--about", "Kirsty Wiliams")
    assert res.exit_code != 0 and 'did you mean "Kirsty Williams"?' in _said(res)
    res = _run("forget", "Kirsty Wiliams", "--dry-run")
    assert 'did you mean "Kirsty Williams"?' in _said(res)
    res = _run("export", "Barry Hughs")
    assert 'did you mean "Barry Hughes"?' in _said(res)
    res = _run("show", "Kirsty Wiliams")
    assert "'Kirsty Williams' is in memory as a person or organisation: `backchannel assertions --about" in _said(res)
    res = _run("show", "comittee")
    assert 'did you mean the meeting "Committee"?' in _said(res)
    res = _run("ask", "what did Kirsty Wiliams promise?")
    assert "'Kirsty Wiliams': did you mean \"Kirsty Williams\"?" in res.stdout, res.output
    # a seat label: the speaker known only by role, and said to be one
    res = _run("assertions", "--about", "Project Manager")
    said = _said(res)
    assert '"Project Manager" is a seat label' in said or 'seat label "Project Manager' in said, said
    # nothing near: no invented suggestion
    res = _run("assertions", "--about", "Zebedee Quux")
    assert "did you mean" not in _said(res) and "no entity named 'Zebedee Quux'" in _said(res)


def test_a_clock_set_back_never_gives_a_negative_gap(store):
    """The gate's "last proposal N min ago" (shown in traces, CLI and web) with the newest
    proposal stamped ahead of this wake's clock: 0 min, never -1."""
    from datetime import datetime, timedelta

    from backchannel.config import Settings
    from backchannel.engine.gate import check_rate
    from backchannel.memory import proposals

    made = datetime(2026, 3, 5, 12, 0)
    proposals.insert_pending(
        store,
        "P-1",
        run_id="R1",
        dedupe_key="k",
        kind="reconnect",
        entity_ids=[1],
        title="t",
        body="b",
        score=0.9,
        why="w",
        evidence_json="[]",
        action_json=None,
        action_hash=None,
        now=made,
    )
    settings = Settings(gate={"quiet_hours": None, "min_gap_minutes": 60})
    decision = check_rate(store, settings, made - timedelta(seconds=30))
    assert decision.check == "min_gap" and "last proposal 0 min ago" in decision.reason, decision
    assert "last proposal 10 min ago" in check_rate(store, settings, made + timedelta(minutes=10)).reason

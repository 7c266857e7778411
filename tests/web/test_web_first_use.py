"""The web app as a new user meets it, over real HTTP (`backchannel web`, a real store):
validity spans in words, the file-date caveat, one fact from several meetings shown once
with its sources, a long entity page in pages, merges named, possible duplicates proposed
(and merged only on a click), the trace's attempts as the CLI counts them."""

from __future__ import annotations

import html
import os
import re
from datetime import datetime

from click.testing import CliRunner

from backchannel.cli.main import cli
from tests.support.web_support import Browserless, WebProc

MTIME = datetime(2026, 11, 20, 9, 0).timestamp()


def _meetings(folder):
    folder.mkdir()
    for month in ("03", "04", "05"):
        (folder / f"2025-{month}-01 board.txt").write_text(
            "Alex Moreau: Good to see you again, Marc.\nMarc Dupont: I work at Globex as head of sales.\n"
            f"Alex Moreau: Meeting number {month} then.\n",
            encoding="utf-8",
        )
    coffee = folder / "coffee.txt"
    coffee.write_text(
        "Alex Moreau: Hello Marc.\nMarc Dupont: I'll send you the deck by 30 June 2025.\n"
        "Marc Dupont: I joined Initech in January 2024.\n",
        encoding="utf-8",
    )
    os.utime(coffee, (MTIME, MTIME))
    reports = ["Alex Moreau: Thanks for the list, Nina."]
    reports += [f"Nina Roy: I'll send you the report on topic {i} tomorrow." for i in range(1, 61)]
    (folder / "2025-06-02 reports.txt").write_text("\n".join(reports) + "\n", encoding="utf-8")
    (folder / "2025-06-03 hearing.txt").write_text(
        "Alex Moreau: Welcome.\nMs. Elizabeth May: Thank you. I work at the Welsh Local Government Association.\n",
        encoding="utf-8",
    )
    (folder / "2025-06-04 hearing.txt").write_text(
        "Alex Moreau: Welcome back.\nElizabeth May: I met Sophie Martin at WLGA last year.\nTom Hart: I work at WLGA.\n",
        encoding="utf-8",
    )


def _text(page: str) -> str:
    """The page's words, as a reader sees them (tags dropped, spaces collapsed)."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _entity_id(name: str) -> int:
    import json

    rows = json.loads(CliRunner().invoke(cli, ["entities", "--json"]).stdout)
    return next(e["id"] for e in rows if e["name"] == name)


def test_memory_pages_as_a_new_user_reads_them(home, tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--name", "Alex Moreau"]).exit_code == 0
    _meetings(tmp_path / "m")
    assert runner.invoke(cli, ["ingest", str(tmp_path / "m")]).exit_code == 0
    marc, nina = _entity_id("Marc Dupont"), _entity_id("Nina Roy")
    web = WebProc(home)
    try:
        b = Browserless(web.base)
        assert b.get(web.link)[0] == 200
        status, page = b.get(f"/memory/{marc}")
        text = _text(page)
        assert status == 200 and "true ?" not in text and " – " not in text
        assert "due 2025-06-30" in text  # a promise's end is its due date
        assert "valid from 2024-01-01 to now" in text
        # the undated meeting: said when is unknown, and the file's date is shown as such
        assert "date unknown (file date 2026-11-20)" in text
        # one fact from three meetings: once, with its sources
        current, timeline = text.split("Current facts")[1].split("Timeline")
        assert current.count("works at Globex") == 1 and "Also said 2 more times; 3 sources in all" in current
        assert current.count("“I work at Globex as head of sales.”") == 3  # every source's words, under the one fact
        # the list under the chart groups it too (the chart draws each statement at its own date)
        listed = timeline.split("Hover a row for its quote.")[1]
        assert listed.count("works at Globex") == 1 and "in 3 sources" in listed
        # the same caveat on an answer's evidence
        status, answer = b.post("/ask", {"question": "what did Marc promise?"}, csrf_from="/ask")
        said = _text(answer)
        assert status == 200 and "send you the deck" in said and "Marc Dupont, date unknown in “Coffee”" in said, said
        # 60 facts: 50 on the first page, then a link to the rest
        status, first = b.get(f"/memory/{nina}")
        quotes = "“I'll send you the report on topic"
        assert status == 200 and _text(first).split("Timeline")[0].count(quotes) == 50
        assert 'href="?page=2"' in first and "Page 1 of 2" in _text(first)
        status, second = b.get(f"/memory/{nina}?page=2")
        assert status == 200 and _text(second).split("Timeline")[0].count(quotes) == 10 and 'href="?page=1"' in second
        assert b.get(f"/memory/{nina}?page=x")[0] == 400

        # possible duplicates: proposed, merged only when asked, and the merge names the person
        status, listing = b.get("/memory")
        listed = _text(listing)
        assert "Possible duplicates" in listed
        assert "Elizabeth May and Ms. Elizabeth May" in listed or "Ms. Elizabeth May and Elizabeth May" in listed
        assert '"WLGA" spells the initials of "Welsh Local Government Association"' in listed
        keep, other = _entity_id("Elizabeth May"), _entity_id("Ms. Elizabeth May")
        status, merged = b.post(
            f"/memory/{keep}/merge", {"other": str(other), "reason": "honorific"}, csrf_from="/memory"
        )
        said = _text(merged)
        assert status == 200 and "Merged Ms. Elizabeth May into this entity" in said, said
        assert re.search(r"M\d+: Ms\. Elizabeth May merged in", said) and f"#{other}" not in said
        assert "Elizabeth May and" not in _text(b.get("/memory")[1]).split("Possible duplicates")[-1]
    finally:
        web.stop()


def test_trace_counts_attempts_as_the_cli_does(home, tmp_path):
    import json

    runner = CliRunner()
    runner.invoke(cli, ["init", "--name", "Alex Moreau"])
    _meetings(tmp_path / "m")
    runner.invoke(cli, ["ingest", str(tmp_path / "m")])
    asked = json.loads(runner.invoke(cli, ["ask", "--json", "what did Nina promise?"]).stdout)
    traced = json.loads(runner.invoke(cli, ["trace", "--json", asked["run_id"]]).stdout)
    # a prepared skill runs once: the CLI counts it as 1 attempt (`trace P-n`: "attempts or 1")
    attempts = traced["sweep"].get("attempts") or 1
    web = WebProc(home)
    try:
        b = Browserless(web.base)
        b.get(web.link)
        status, page = b.get(f"/trace/{asked['run_id']}")
        assert status == 200 and f"{attempts} attempt(s)" in _text(page) and "0 attempt(s)" not in _text(page)
    finally:
        web.stop()

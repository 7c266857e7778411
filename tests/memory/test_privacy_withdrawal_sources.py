"""Withdrawals that do not come from `consent withdraw`: an attendee a calendar invite
marks as opted out, and a name newly listed in `[consent] withdrawn`. Each erases what
memory held about the person, once, and is recorded (docs/privacy.md section 3). Real
files, the real CLI, the real DuckDB file."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from backchannel.triggers.calendar import parse_calendar
from tests.memory.test_privacy_rights import (
    _start_daemon,
    _stop,
    add_config,
    all_text,
    bc,
    demo_home,  # noqa: F401 - the fixture
    raw_db,
    rows,
)

INVITE = """\
BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//consent//EN
BEGIN:VEVENT
UID:consent-{n}@test
DTSTAMP:20260101T000000Z
DTSTART:{start}
DTEND:{end}
SUMMARY:Quarterly review
ORGANIZER;CN={organizer}:mailto:{organizer_mail}
{event_flag}ATTENDEE;CN=Julie Bernard:mailto:julie@example.org
ATTENDEE;CN=Marc Dupont;X-BACKCHANNEL-CONSENT=withdrawn:mailto:marc@example.org
END:VEVENT
END:VCALENDAR
"""


def _invite(
    n: int, organizer: str = "Alex Moreau", organizer_mail: str = "alex@example.org", event_flag: str = ""
) -> str:
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    fmt = "%Y%m%dT%H%M%SZ"
    return INVITE.format(
        n=n,
        start=start.strftime(fmt),
        end=(start + timedelta(hours=1)).strftime(fmt),
        organizer=organizer,
        organizer_mail=organizer_mail,
        event_flag=event_flag,
    )


def test_an_invite_marks_an_attendee_or_its_organizer_as_opted_out():
    now = datetime.now(UTC)
    one = parse_calendar(_invite(1).encode(), "a.ics", now, 14, ZoneInfo("UTC")).events[0]
    assert one.withdrawn == ["Marc Dupont <marc@example.org>"]
    assert (
        "Marc Dupont <marc@example.org>" not in one.attendees and "Julie Bernard <julie@example.org>" in one.attendees
    )
    flagged = _invite(
        2, organizer="Lena Fischer", organizer_mail="lena@example.org", event_flag="X-BACKCHANNEL-CONSENT:withdrawn\n"
    )
    two = parse_calendar(flagged.encode(), "a.ics", now, 14, ZoneInfo("UTC")).events[0]
    assert two.withdrawn == ["Lena Fischer <lena@example.org>", "Marc Dupont <marc@example.org>"]
    assert two.attendees == ["Julie Bernard <julie@example.org>"]


def test_an_attendee_opted_out_in_an_invite_is_withdrawn_and_erased(demo_home):  # noqa: F811
    assert b"Marc Dupont" in raw_db(demo_home)
    (demo_home / "demo" / "calendar.ics").write_text(_invite(3), encoding="utf-8")
    out = json.loads(bc("wake", "calendar", "--json").stdout)
    assert json.dumps(out).count("consent_withdrawn") >= 1, out
    listed = json.loads(bc("consent", "list", "--json").stdout)["withdrawn"]
    assert [(w["label"], w["via"]) for w in listed] == [("M. D.", "calendar")]
    bc("wake", "sweep")  # a writer opens the file: the pending rewrite is done first
    raw = raw_db(demo_home)
    for secret in ("Marc Dupont", "marc@example.org"):
        assert secret not in all_text(demo_home), secret
        assert secret.encode() not in raw, secret
    # The other attendee is still a calendar attendee; the opted-out one never is.
    [(attendees,)] = rows(demo_home, "SELECT attendees FROM calendar_events WHERE uid = 'consent-3@test'")
    assert attendees == ["Alex Moreau", "Julie Bernard"]
    # The same invite again records nothing twice, and brings no name back.
    bc("wake", "calendar")
    assert "Marc Dupont" not in all_text(demo_home) and "marc@example.org" not in all_text(demo_home)
    assert len(rows(demo_home, "SELECT * FROM consent_withdrawals WHERE via = 'calendar' AND NOT speaker_only")) == len(
        rows(
            demo_home, "SELECT DISTINCT name_hash FROM consent_withdrawals WHERE via = 'calendar' AND NOT speaker_only"
        )
    )
    assert len({r[0] for r in rows(demo_home, "SELECT person FROM consent_withdrawals")}) == 1


def test_a_name_listed_in_config_has_its_existing_data_erased_once(demo_home, tmp_path):  # noqa: F811
    assert b"Marc Dupont" in raw_db(demo_home)
    add_config(demo_home, '[consent]\nwithdrawn = ["Marc Dupont"]')
    # The next ingest erases what exists (even of a file that has nothing about them).
    meeting = tmp_path / "2026-11-26 standup.txt"
    meeting.write_text("Alex Moreau: Julie Bernard is the COO of Globex now.\n", encoding="utf-8")
    assert json.loads(bc("ingest", str(meeting), "--json").stdout)["ingested"] == 1
    bc("wake", "sweep")
    assert "Marc Dupont" not in all_text(demo_home)
    assert raw_db(demo_home).count(b"Marc Dupont") == 0
    assert raw_db(demo_home).count(b"marc@example.org") == 0
    events = rows(demo_home, "SELECT count(*) FROM events WHERE kind = 'consent.withdrawn'")
    assert events == [(1,)]
    via = rows(demo_home, "SELECT DISTINCT via FROM consent_withdrawals")
    assert via == [("config",)]
    # Idempotent: another ingest and a wake do not erase or record again.
    again = tmp_path / "2026-11-27 standup.txt"
    again.write_text("Julie Bernard: Alex Moreau will send the deck on Monday.\n", encoding="utf-8")
    bc("ingest", str(again))
    bc("wake", "sweep")
    assert rows(demo_home, "SELECT count(*) FROM events WHERE kind = 'consent.withdrawn'") == [(1,)]


def test_the_daemon_erases_a_configured_name_at_start(demo_home):  # noqa: F811
    assert b"Marc Dupont" in raw_db(demo_home)
    add_config(demo_home, '[consent]\nwithdrawn = ["marc@example.org", "Marc Dupont"]')
    proc, log_path = _start_daemon(demo_home)
    # The calendar is read at start and still invites him: that read must not bring him back.
    deadline = time.monotonic() + 40
    while '"wake_kind": "calendar"' not in log_path.read_text() or "run finished" not in log_path.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-3000:]
        time.sleep(0.05)
    _stop(proc, log_path)
    raw = raw_db(demo_home)
    assert raw.count(b"Marc Dupont") == 0 and raw.count(b"marc@example.org") == 0
    [(attendees,)] = rows(demo_home, "SELECT attendees FROM calendar_events WHERE uid = 'demo-coffee-marc@backchannel'")
    assert attendees == ["Alex Moreau"]
    # Two entries, one person: erased once (the second entry was already recorded with the first).
    assert rows(demo_home, "SELECT count(*) FROM events WHERE kind = 'consent.withdrawn'") == [(1,)]
    assert Path(str(demo_home / "data" / "backchannel.duckdb") + ".rewrite-pending").exists() is False


@pytest.mark.parametrize("sweep_scopes", [None, ["work"]])
def test_no_proposal_cites_evidence_from_a_scope_the_sweep_may_not_read(tmp_path, monkeypatch, sweep_scopes):
    """The demo's story lives in scope `default`; a sweep allowed only `work` must make no
    proposal citing it, whichever wake (calendar brief, signal, sweep) raises it. Unscoped,
    the same story does raise proposals citing it (the control)."""
    from backchannel.demo import corpus_files
    from backchannel.demo.scenario import prepare_home

    home = tmp_path / "story"
    home.mkdir()
    monkeypatch.setenv("BACKCHANNEL_HOME", str(home))
    prepare_home(home)
    if sweep_scopes is not None:
        add_config(home, f"[scope]\nsweep = {json.dumps(sweep_scopes)}")
    bc("ingest", *map(str, corpus_files()))
    work = tmp_path / "work"
    work.mkdir()
    (work / "2026-11-12 ops.txt").write_text(
        "Julie Bernard: Alex Moreau will send the budget on Friday.\n", encoding="utf-8"
    )
    bc("ingest", "--scope", "work", str(work / "2026-11-12 ops.txt"))
    for kind in ("calendar", "signals", "sweep"):
        bc("wake", kind)
    allowed = {r[0] for r in rows(home, "SELECT id FROM sources WHERE scope = 'work'")}
    cited = [
        e.get("source_id")
        for (ev,) in rows(home, "SELECT CAST(evidence AS VARCHAR) FROM proposals")
        for e in json.loads(ev or "[]")
        if isinstance(e, dict)
    ]
    outside = [s for s in cited if s is not None and s not in allowed]
    if sweep_scopes is None:
        assert outside, "the control raised no proposal citing the story"
    else:
        assert not outside, outside


def test_the_judges_per_wake_reads_count_only_the_sweeps_scopes(demo_home, tmp_path):  # noqa: F811
    """Ties, conversations, open promises and meetings spoken in, as the judge reads them
    (engine/judge_facts.py): a meeting in a scope the sweep may not read adds nothing."""
    from backchannel.engine.judge_facts import WakeFacts
    from backchannel.memory import entities
    from backchannel.memory.store import Store

    meeting = tmp_path / "2026-11-28 acme.txt"
    meeting.write_text(
        "Alex Moreau: Julie Bernard, I will send you the Acme budget by Friday.\n"
        "Julie Bernard: Thanks Alex, I know Alex Moreau well.\n",
        encoding="utf-8",
    )
    bc("ingest", "--scope", "acme", str(meeting))
    store = Store.open(demo_home / "data" / "backchannel.duckdb", read_only=True)
    try:
        [julie] = entities.find(store, "Julie Bernard")
        [acme] = [r[0] for r in store.con.execute("SELECT id FROM sources WHERE scope = 'acme'").fetchall()]
        now = datetime(2026, 11, 29)
        every, default_only = WakeFacts(store, now), WakeFacts(store, now, ["default"])
        assert every.spoken(julie.id)[0] is not None and every.spoken(julie.id)[0].date().isoformat() == "2026-11-28"
        assert (
            default_only.spoken(julie.id)[0] is None
            or default_only.spoken(julie.id)[0].date().isoformat() < "2026-11-28"
        )
        day = datetime(2026, 11, 28)
        assert day in every.talks(julie.id) and day not in default_only.talks(julie.id)
        assert default_only.talks(julie.id)  # her default-scope meetings still count
        promises = [
            p
            for p in every.open_promises(julie.id)
            if store.scalar("SELECT source_id FROM assertions WHERE id = ?", [p[0]]) == acme
        ]
        assert promises, every.open_promises(julie.id)
        assert not [
            p
            for p in default_only.open_promises(julie.id)
            if store.scalar("SELECT source_id FROM assertions WHERE id = ?", [p[0]]) == acme
        ]
        # The graph API's reads of utterances (conversations, addressed_as) are scoped the same way.
        from backchannel.graph.api import GraphAPI

        def sources_of(api: GraphAPI) -> set[str]:
            got = api.conversations([julie.id], days=3650, limit=50)
            return {str(c.get("source_id")) for c in got}

        assert acme in sources_of(GraphAPI(store, now=now))
        assert acme not in sources_of(GraphAPI(store, now=now, scopes=["default"]))
    finally:
        store.close()


def test_an_inbox_file_named_after_a_withdrawn_person_is_still_read(tmp_path, monkeypatch):
    """The wake's payload is scrubbed of withdrawn people (consent.scrub), never its file's path:
    a path redacted to "[withdrawn]" would leave the file unread in the inbox for good."""
    from backchannel.config import Settings, resolve_paths
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.memory.store import Store

    monkeypatch.setenv("BACKCHANNEL_HOME", str(tmp_path / "home"))
    paths = resolve_paths().ensure()
    settings = Settings()
    settings.owner = settings.owner.model_copy(update={"name": "Alex Moreau"})
    settings.consent = settings.consent.model_copy(update={"withdrawn": ["Sophie Martin"]})
    inbox = paths.data_dir / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    src = inbox / "2025-09-18 Sophie Martin call.txt"
    src.write_text("Alex Moreau: I worked with Paul Leroy at Acme.\nPaul Leroy: Yes, for years.\n", encoding="utf-8")
    store = Store.open(paths.db_file)
    try:
        out = run_wake_once(store, settings, paths, {"kind": "inbox", "key": "inbox:s", "payload": {"path": str(src)}})
        assert out.status == "done" and out.detail["ingest"]["status"] == "ingested", (out.status, out.reason)
        assert not src.exists()
        assert "Sophie Martin" not in str(store.query("SELECT title FROM sources"))
    finally:
        store.close()

"""The demo story, run in-process on a scratch home with the offline model:

1. ingest four meetings (one, 14 months back, where Marc says he worked with
   Sophie Martin at Globex; one where Julie says Sophie is now CIO of Acme);
2. a calendar wake: the owner sees Marc on Thursday;
3. a signal wake: Acme publishes a tender;
4. the daemon's pipeline sweeps, gates, judges and drafts: one proposal, with
   its evidence, ready to approve.

The same pipeline functions the daemon runs are called here one wake at a time,
so the demo exercises the real loop without starting a service.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from backchannel.core.timeutil import aware_now
from backchannel.demo import OWNER, corpus_files

CONFIG = """\
[owner]
name = "{owner}"
aliases = ["Alex"]
email = "alex@example.org"

[models]
extract = "offline"
sweep = "offline"
draft = "offline"

[calendar]
sources = ["{calendar}"]
# The demo's meeting is on a Thursday 3 to 11 days ahead.
lead_hours = 264
horizon_days = 30

[signals]
drop_dir = "{signals}"

[gate]
quiet_hours = ""
"""

ICS = """\
BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//backchannel//demo//EN
BEGIN:VEVENT
UID:demo-coffee-marc@backchannel
DTSTAMP:{stamp}
DTSTART:{start}
DTEND:{end}
SUMMARY:Coffee with Marc
LOCATION:Café des Arts
ORGANIZER;CN={owner}:mailto:alex@example.org
ATTENDEE;CN=Marc Dupont:mailto:marc@example.org
ATTENDEE;CN={owner}:mailto:alex@example.org
END:VEVENT
END:VCALENDAR
"""


@dataclass
class DemoReport:
    home: Path
    ingested: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    proposals: list[dict[str, Any]] = field(default_factory=list)
    assertions: int = 0
    learned: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "home": str(self.home),
            "ingested": self.ingested,
            "runs": self.runs,
            "proposals": self.proposals,
            "assertions": self.assertions,
            "learned": self.learned,
        }


def next_thursday(now: datetime) -> datetime:
    """The first Thursday at 09:30 UTC more than 80 hours ahead: the story is the introduction
    a tender makes worth asking for, not the brief the judge proposes the day before a
    meeting (docs/judging.md)."""
    days = (3 - now.weekday()) % 7
    day = (now + timedelta(days=days)).date()
    when = datetime.combine(day, time(9, 30), tzinfo=UTC)
    return when if when > now + timedelta(hours=80) else when + timedelta(days=7)


def prepare_home(home: Path) -> None:
    """Config, calendar and signal drop folder for the story, relative to today."""
    now = aware_now()
    start = next_thursday(now)
    fmt = "%Y%m%dT%H%M%SZ"
    (home / "demo").mkdir(parents=True, exist_ok=True)
    calendar = home / "demo" / "calendar.ics"
    calendar.write_text(
        ICS.format(
            stamp=now.strftime(fmt),
            start=start.strftime(fmt),
            end=(start + timedelta(hours=1)).strftime(fmt),
            owner=OWNER,
        ),
        encoding="utf-8",
    )
    signals = home / "demo" / "signals"
    signals.mkdir(exist_ok=True)
    (signals / "acme-tender.json").write_text(
        json.dumps(
            {
                "title": "Acme publishes a tender for a data platform modernisation",
                "summary": "Acme's IT department invites bids to modernise its data platform; responses due in six weeks.",
                "url": "https://tenders.example.org/acme/2026-114",
                "published_at": now.replace(microsecond=0).isoformat(),
                "source": "demo tender feed",
            }
        ),
        encoding="utf-8",
    )
    config = home / "config.toml"
    if not config.exists():
        config.write_text(CONFIG.format(owner=OWNER, calendar=calendar, signals=signals), encoding="utf-8")


def run_demo(home: Path) -> DemoReport:
    from backchannel.config import load_settings, resolve_paths
    from backchannel.engine.pipeline import collect_wakes, run_wake_once
    from backchannel.extraction.ingest import ingest_file
    from backchannel.memory import Store
    from backchannel.memory import entities as entity_repo
    from backchannel.ops import OpEnv
    from backchannel.ops.daemon_ops import proposal, proposals
    from backchannel.ops.memory_ops import assertions

    prepare_home(home)
    paths = resolve_paths({"BACKCHANNEL_HOME": str(home)}).ensure()
    settings = load_settings(paths)
    report = DemoReport(home)
    store = Store.open(paths.db_file)
    try:
        entity_repo.ensure_owner(store, settings.owner.name, settings.owner.aliases)
        report.ingested = [ingest_file(store, settings, f).to_dict() for f in corpus_files()]
        report.learned = assertions(OpEnv(store=store, settings=settings, paths=paths))
        wakes = collect_wakes(settings, paths, "calendar") + collect_wakes(settings, paths, "signals")
        for wake in wakes:
            out = run_wake_once(store, settings, paths, wake)
            report.runs.append(
                {
                    "run_id": out.run_id,
                    "wake": wake.kind,
                    "status": out.status,
                    "reason": out.reason,
                    "proposals": out.proposals,
                }
            )
        env = OpEnv(store=store, settings=settings, paths=paths)
        report.proposals = [proposal(env, p["id"]) for p in proposals(env)]
        report.assertions = store.scalar("SELECT count(*) FROM assertions")
    finally:
        store.close()
    return report

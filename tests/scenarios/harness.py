"""The story suite's engine: one TOML file per story, run through the daemon's
real wake pipeline in-process on a fresh home, scored against its expectations.

A story file holds (all times relative to the moment the story runs):

    title = "..."                      # what the story is about
    about = "introduction"             # the kind or the trap it exercises (for reports)
    steps = ["meetings", "calendar", "signals", "sweep"]   # the default order
    lead_hours = 72                    # [calendar] lead_hours for this story (default 72)

    [[meetings]]
    file = "coffee with Marc.vtt"      # the extension picks the format (vtt, srt, txt, json)
    days_ago = 420                     # the meeting's date, written into the file name
    text = '''...'''                   # `{{date}}`: the meeting's ISO date-time; `{{day:+N}}` /
                                       # `{{jour:+N}}`: N days from now ("December 4" / "4 décembre")

    [[calendar]]                       # written as one ICS file, read by the calendar trigger
    summary = "Coffee with Marc"
    in_hours = 30
    attendees = ["Marc Dupont <marc@example.org>"]

    [[signals]]                        # dropped as JSON in the signal folder
    title = "Acme publishes a tender"
    days_ago = 0

    [[expect]]                         # the proposals wanted; none listed means silence
    kind = "introduction"
    entities = ["Marc Dupont", "Sophie Martin"]   # main entities, by name or alias

Steps: "meetings" ingests every meeting not yet ingested (each an inbox wake),
"meeting:N" only the N-th (0-based); "calendar" and "signals" run what the
triggers would enqueue now; "sweep" is a manual sweep wake. A proposal matches
an expectation when the kinds are equal and every expected name is one of the
proposal's entities; each proposal matches at most one expectation.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

STORIES = Path(__file__).resolve().parent / "stories"
OWNER = "Alex Moreau"
KINDS = ("brief", "commitment", "reconnect", "introduction")
STEPS = ("meetings", "calendar", "signals", "sweep")

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
sources = [{calendar}]
lead_hours = {lead_hours}

[signals]
drop_dir = "{signals}"

[gate]
quiet_hours = "off"
min_gap_minutes = 0
max_per_day = 1000
max_per_week = 1000
"""

ICS_EVENT = """\
BEGIN:VEVENT
UID:{uid}
DTSTAMP:{stamp}
DTSTART:{start}
DTEND:{end}
SUMMARY:{summary}
ORGANIZER;CN={owner}:mailto:alex@example.org
{attendees}
END:VEVENT
"""


_DAY = re.compile(r"\{\{day:([+-]?\d+)\}\}")
_JOUR = re.compile(r"\{\{jour:([+-]?\d+)\}\}")
_MOIS = (
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
)


class StoryError(Exception):
    """A story file that cannot be run as written."""


@dataclass
class Story:
    name: str
    title: str
    about: str
    data: dict[str, Any]

    @property
    def expect(self) -> list[dict[str, Any]]:
        return list(self.data.get("expect") or [])


@dataclass
class StoryResult:
    story: Story
    proposals: list[dict[str, Any]] = field(default_factory=list)  # {"id", "kind", "entities": [names]}
    matched: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)  # (expect, proposal)
    missed: list[dict[str, Any]] = field(default_factory=list)
    false_alarms: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    silences: list[dict[str, Any]] = field(default_factory=list)  # suppressed candidates, with their trace outcome
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.missed and not self.false_alarms

    def summary(self) -> dict[str, Any]:
        return {
            "story": self.story.name,
            "about": self.story.about,
            "ok": self.ok,
            "proposals": [f"{p['kind']}: {', '.join(p['entities'])}" for p in self.proposals],
            "missed": [f"{e['kind']}: {', '.join(e.get('entities') or [])}" for e in self.missed],
            "false_alarms": [f"{p['kind']}: {', '.join(p['entities'])}" for p in self.false_alarms],
            "seconds": round(self.seconds, 2),
        }


def load_stories(folder: Path = STORIES) -> list[Story]:
    out = []
    for f in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise StoryError(f"{f.name}: not valid TOML: {exc}") from None
        for e in data.get("expect") or []:
            if e.get("kind") not in KINDS:
                raise StoryError(f"{f.name}: expected kind {e.get('kind')!r} is not one of {KINDS}")
        for s in data.get("steps") or []:
            if s not in STEPS and not s.startswith("meeting:"):
                raise StoryError(f"{f.name}: unknown step {s!r}")
        out.append(Story(f.stem, str(data.get("title") or f.stem), str(data.get("about") or "?"), data))
    return out


def _ics(story: Story, now: datetime) -> str:
    fmt = "%Y%m%dT%H%M%SZ"
    events = []
    for i, ev in enumerate(story.data.get("calendar") or []):
        start = (now + timedelta(hours=float(ev["in_hours"]))).replace(second=0, microsecond=0)
        attendees = []
        for a in ev.get("attendees") or []:
            name, _, email = a.partition("<")
            email = email.rstrip(">").strip() or f"{'.'.join(name.lower().split())}@example.org"
            cn = name.strip() or email
            attendees.append(f"ATTENDEE;CN={cn}:mailto:{email}" if name.strip() else f"ATTENDEE:mailto:{email}")
        events.append(
            ICS_EVENT.format(
                uid=f"{story.name}-{i}@stories",
                stamp=now.strftime(fmt),
                start=start.strftime(fmt),
                end=(start + timedelta(hours=1)).strftime(fmt),
                summary=ev.get("summary") or "Meeting",
                owner=OWNER,
                attendees="\n".join(attendees),
            )
        )
    return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//backchannel//stories//EN\n" + "".join(events) + "END:VCALENDAR\n"


def prepare_home(story: Story, home: Path, now: datetime) -> dict[str, Path]:
    """Config, calendar file and signal folder for the story (nothing ingested yet)."""
    home.mkdir(parents=True, exist_ok=True)
    calendar = home / "story.ics"
    signals = home / "signals-drop"
    staged = home / "staged"
    staged.mkdir(exist_ok=True)
    has_cal = bool(story.data.get("calendar"))
    if has_cal:
        calendar.write_text(_ics(story, now), encoding="utf-8")
    (home / "config.toml").write_text(
        CONFIG.format(
            owner=OWNER,
            calendar=json.dumps(str(calendar)) if has_cal else "",
            signals=signals,
            lead_hours=float(story.data.get("lead_hours", 72)),
        ),
        encoding="utf-8",
    )
    return {"calendar": calendar, "signals": signals, "staged": staged}


def _meeting_file(story: Story, i: int, m: dict[str, Any], now: datetime, staged: Path) -> Path:
    when = (now - timedelta(days=float(m.get("days_ago", 1)))).replace(second=0, microsecond=0)
    name = f"{when:%Y-%m-%d %H%M} {m['file']}"
    text = str(m["text"]).replace("{{date}}", when.isoformat(timespec="minutes"))
    # {{day:+N}}: the day N days from now, written as people say it ("December 4").
    text = _DAY.sub(lambda d: f"{now + timedelta(days=int(d[1])):%B} {(now + timedelta(days=int(d[1]))).day}", text)
    # {{jour:+N}}: the same in French ("4 décembre").
    text = _JOUR.sub(
        lambda d: f"{(now + timedelta(days=int(d[1]))).day} {_MOIS[(now + timedelta(days=int(d[1]))).month - 1]}", text
    )
    if not text.endswith("\n"):
        text += "\n"
    path = staged / f"{i:02d}" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _drop_signals(story: Story, now: datetime, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, s in enumerate(story.data.get("signals") or []):
        at = now - timedelta(days=float(s.get("days_ago", 0)))
        doc = {
            "title": s["title"],
            "summary": s.get("summary", ""),
            "source": "story feed",
            "url": f"https://news.example.org/{story.name}/{i}",
            "published_at": at.isoformat(),
        }
        (folder / f"{i:02d}.json").write_text(json.dumps(doc), encoding="utf-8")


def run_story(story: Story, home: Path) -> StoryResult:
    """Run one story end to end on a fresh `home` and score it."""
    import time

    from backchannel.config import load_settings, resolve_paths
    from backchannel.engine.pipeline import collect_wakes, run_wake_once
    from backchannel.memory import Store
    from backchannel.memory import entities as entity_repo

    t0 = time.perf_counter()
    now = datetime.now(UTC)
    files = prepare_home(story, home, now)
    paths = resolve_paths({"BACKCHANNEL_HOME": str(home)}).ensure()
    settings = load_settings(paths)
    result = StoryResult(story)
    store = Store.open(paths.db_file)
    try:
        entity_repo.ensure_owner(store, settings.owner.name, settings.owner.aliases)
        inbox = paths.data_dir / "inbox"
        inbox.mkdir(parents=True, exist_ok=True)
        meetings = list(story.data.get("meetings") or [])
        pending = list(range(len(meetings)))
        signals_dropped = False
        for step in story.data.get("steps") or STEPS:
            wakes: list[Any] = []
            if step == "meetings" or step.startswith("meeting:"):
                chosen = pending if step == "meetings" else [int(step.split(":", 1)[1])]
                for i in list(chosen):
                    src = _meeting_file(story, i, meetings[i], now, files["staged"])
                    dest = inbox / src.name
                    dest.write_bytes(src.read_bytes())
                    wakes.append({"kind": "inbox", "key": f"inbox:{story.name}:{i}", "payload": {"path": str(dest)}})
                    pending.remove(i)
            elif step == "calendar":
                wakes = collect_wakes(settings, paths, "calendar") if settings.calendar.sources else []
            elif step == "signals":
                if not signals_dropped:
                    _drop_signals(story, now, files["signals"])
                    signals_dropped = True
                wakes = collect_wakes(settings, paths, "signals")
            elif step == "sweep":
                wakes = collect_wakes(settings, paths, "sweep")
            for w in wakes:
                out = run_wake_once(store, settings, paths, w)
                result.runs.append(
                    {
                        "step": step,
                        "wake": out.kind,
                        "run_id": out.run_id,
                        "status": out.status,
                        "reason": out.reason,
                        "proposals": list(out.proposals),
                        "suppressed": len(out.suppressed),
                        "candidates": out.candidates,
                    }
                )
                if out.status == "failed":
                    raise StoryError(f"{story.name}: {out.kind} wake failed: {out.reason}")
        result.proposals = _proposals(store)
        result.silences = _silences(store, settings, paths, result.runs)
    finally:
        store.close()
    score(result)
    result.seconds = time.perf_counter() - t0
    return result


def _proposals(store: Any) -> list[dict[str, Any]]:
    rows = store.query("SELECT id, kind, entity_ids FROM proposals ORDER BY created_at, id")
    out = []
    for r in rows:
        ids = [int(i) for i in (r["entity_ids"] or [])]
        names = store.query(
            """SELECT e.id, e.name, list(a.alias) FILTER (WHERE a.alias IS NOT NULL) AS aliases
               FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
               WHERE list_contains(?, e.id) GROUP BY e.id, e.name ORDER BY e.name""",
            [ids or [-1]],
        )
        out.append(
            {
                "id": r["id"],
                "kind": r["kind"],
                "entities": [n["name"] for n in names],
                "names": {n["name"].casefold() for n in names}
                | {str(a).casefold() for n in names for a in (n["aliases"] or [])},
            }
        )
    return out


def _silences(store: Any, settings: Any, paths: Any, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every candidate that did not become a proposal, as `trace RUN_ID` shows it."""
    from backchannel.ops import OpEnv, invoke

    env = OpEnv(store=store, settings=settings, paths=paths)
    out = []
    for r in runs:
        if not r["run_id"] or not r["candidates"]:
            continue
        t = invoke(env, "trace", {"id": r["run_id"]})
        for c in t["candidates"]:
            if not c.get("proposal"):
                out.append({"run_id": r["run_id"], "dedupe_key": c["dedupe_key"], "outcome": c.get("outcome")})
    return out


def score(result: StoryResult) -> None:
    """Match proposals to expectations (kind equal, expected names among the proposal's entities)."""
    left = list(result.proposals)
    for e in result.story.expect:
        want = {n.casefold() for n in e.get("entities") or []}
        hit = next((p for p in left if p["kind"] == e["kind"] and want <= p["names"]), None)
        if hit is None:
            result.missed.append(e)
        else:
            result.matched.append((e, hit))
            left.remove(hit)
    result.false_alarms = left


def figures(results: list[StoryResult]) -> dict[str, Any]:
    """Precision, recall and false alarms, overall and per kind."""

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    per_kind = {}
    for k in KINDS:
        expected = sum(1 for r in results for e in r.story.expect if e["kind"] == k)
        found = sum(1 for r in results for e, _ in r.matched if e["kind"] == k)
        proposed = sum(1 for r in results for p in r.proposals if p["kind"] == k)
        alarms = sum(1 for r in results for p in r.false_alarms if p["kind"] == k)
        per_kind[k] = {
            "expected": expected,
            "found": found,
            "proposed": proposed,
            "false_alarms": alarms,
            "precision": ratio(proposed - alarms, proposed),
            "recall": ratio(found, expected),
        }
    other = sorted({p["kind"] for r in results for p in r.proposals} - set(KINDS))
    for k in other:
        n = sum(1 for r in results for p in r.proposals if p["kind"] == k)
        per_kind[k] = {"expected": 0, "found": 0, "proposed": n, "false_alarms": n, "precision": 0.0, "recall": None}
    proposed = sum(len(r.proposals) for r in results)
    alarms = sum(len(r.false_alarms) for r in results)
    expected = sum(len(r.story.expect) for r in results)
    found = sum(len(r.matched) for r in results)
    silent = [r for r in results if not r.story.expect]
    return {
        "stories": len(results),
        "stories_ok": sum(r.ok for r in results),
        "precision": ratio(proposed - alarms, proposed),
        "recall": ratio(found, expected),
        "expected": expected,
        "found": found,
        "proposed": proposed,
        "false_alarms": alarms,
        "silent_stories": len(silent),
        "silent_stories_with_a_proposal": sum(1 for r in silent if r.proposals),
        "per_kind": per_kind,
        "seconds": round(sum(r.seconds for r in results), 2),
    }

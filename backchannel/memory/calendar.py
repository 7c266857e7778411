"""The calendar_events table, its one writer: events upserted by the calendar wake
with their attendees resolved to people, attendees re-matched after each ingest
(engine/reevaluate.py), and the plain reads of upcoming meetings. Erasure
(memory/erasure.py) redacts here too, inside its own one transaction."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from backchannel.core.timeutil import parse_naive_utc
from backchannel.memory import entities
from backchannel.memory.store import Store, utcnow
from backchannel.memory.text import norm_name


def _attendee_name_email(a: Any) -> tuple[str, str | None]:
    if isinstance(a, dict):
        email = (a.get("email") or "").removeprefix("mailto:").removeprefix("MAILTO:") or None
        return (a.get("name") or a.get("cn") or email or "").strip(), email
    s = str(a).strip()
    if "<" in s and s.endswith(">"):
        name, email = s[:-1].split("<", 1)
        return name.strip().strip('"'), email.strip()
    s = s.removeprefix("mailto:").removeprefix("MAILTO:")
    return s, (s if "@" in s else None)


attendee_name_email = _attendee_name_email  # ('Name', 'email' or None) of an attendee as stored


def resolve_attendee(store: Store, attendee: Any, owner_id: int | None = None) -> int | None:
    """A person entity for a calendar attendee: exact name or alias, then the e-mail's
    local part ('marc.dupont@x' -> 'marc dupont'), then a unique first-name match."""
    name, email = _attendee_name_email(attendee)
    tries = [name] if name and "@" not in name else []
    if email:
        tries.insert(0, email)  # an address email taught memory (an alias) names the person exactly
        tries.append(email.split("@", 1)[0].replace(".", " ").replace("_", " "))
    for t in tries:
        found = [e for e in entities.find(store, t, "person") if e.id != owner_id]
        if len(found) == 1:
            return found[0].id
    for t in tries:
        first = t.split()[0] if t.split() else ""
        if first and first != t:
            found = [e for e in entities.find(store, first, "person") if e.id != owner_id]
            if len(found) == 1:
                return found[0].id
    for t in tries:
        # 'Marc' on the invitation, 'Marc Dupont' in memory: a unique person with that first name.
        n = norm_name(t)
        if n and " " not in n:
            rows = store.con.execute(
                """SELECT DISTINCT e.id FROM entities e LEFT JOIN aliases a ON a.entity_id = e.id
                   WHERE e.kind = 'person' AND e.merged_into IS NULL AND e.id IS DISTINCT FROM ?
                     AND (starts_with(e.norm, ?) OR starts_with(a.norm, ?))""",
                [owner_id, n + " ", n + " "],
            ).fetchall()
            if len(rows) == 1:
                return int(rows[0][0])
    return None


def upsert_events(store: Store, events: list[dict[str, Any]], calendar: str | None = None) -> list[dict[str, Any]]:
    """Write upcoming meetings to calendar_events; returns them with attendee_ids."""
    me = entities.owner(store)
    owner_id = me.id if me else None
    out = []
    resolved: dict[str, int | None] = {}  # the same people recur across a calendar's events

    def resolve(a: Any) -> int | None:
        k = json.dumps(a, sort_keys=True, default=str)
        if k not in resolved:
            resolved[k] = resolve_attendee(store, a, owner_id)
        return resolved[k]

    with store.transaction():
        for ev in events:
            attendees = list(ev.get("attendees") or [])
            names = [_attendee_name_email(a)[0] or str(a) for a in attendees]
            ids = sorted({i for i in (resolve(a) for a in attendees) if i is not None})
            for a in attendees:
                email, person = _attendee_name_email(a)[1], resolve(a)
                if email and person is not None:
                    entities.add_alias(store, person, email)  # how an approved message reaches them
            row = {
                "uid": str(ev.get("uid")),
                "starts_at": parse_naive_utc(ev.get("starts_at") or ev.get("start")),
                "ends_at": parse_naive_utc(ev.get("ends_at") or ev.get("end")),
                "summary": ev.get("summary"),
                "location": ev.get("location"),
                "attendees": names,
                "attendee_ids": ids,
                "calendar": ev.get("calendar") or calendar,
            }
            if row["starts_at"] is None:
                continue
            store.con.execute(
                """INSERT INTO calendar_events (uid, starts_at, ends_at, summary, location, attendees, attendee_ids,
                       calendar, seen_at, first_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (uid, starts_at) DO UPDATE SET ends_at = excluded.ends_at, summary = excluded.summary,
                       location = excluded.location, attendees = excluded.attendees,
                       attendee_ids = excluded.attendee_ids, calendar = excluded.calendar, seen_at = excluded.seen_at""",
                [
                    row["uid"],
                    row["starts_at"],
                    row["ends_at"],
                    row["summary"],
                    row["location"],
                    names,
                    ids,
                    row["calendar"],
                    utcnow(),
                    utcnow(),
                ],
            )
            out.append(row)
    return out


def set_attendee_ids(store: Store, uid: str, starts_at: datetime, ids: list[int]) -> None:
    """Attendees matched again (engine/reevaluate.py): the caller's transaction, if any."""
    store.con.execute(
        "UPDATE calendar_events SET attendee_ids = ? WHERE uid = ? AND starts_at = ?", [ids, uid, starts_at]
    )


def attendee_ids_of(store: Store, uid: str, starts_at: datetime) -> list[int] | None:
    """The stored attendee ids of one event, or None when it is not stored."""
    row = store.query("SELECT attendee_ids FROM calendar_events WHERE uid = ? AND starts_at = ?", [uid, starts_at])
    return [int(i) for i in row[0]["attendee_ids"]] if row else None


def between(store: Store, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Events starting in [start, end], soonest first."""
    return store.query(
        """SELECT uid, starts_at, ends_at, summary, location, attendees, attendee_ids FROM calendar_events
           WHERE starts_at >= ? AND starts_at <= ? ORDER BY starts_at""",
        [start, end],
    )


def imminent_attendees(store: Store, now: datetime, lead_hours: float) -> list[int]:
    """Known attendees (not the owner) of meetings starting within `lead_hours`."""
    me = entities.owner(store)
    rows = store.con.execute(
        """SELECT DISTINCT unnest(attendee_ids) FROM calendar_events
           WHERE starts_at >= ? AND starts_at <= ? + to_microseconds(CAST(? * 3600000000 AS BIGINT))""",
        [now, now, float(lead_hours)],
    ).fetchall()
    return sorted({int(r[0]) for r in rows if r[0] is not None and (me is None or int(r[0]) != me.id)})

"""What the judge reads from the store once per wake, not once per candidate.

A sweep's candidates share the wake's moment, the owner, the calendar and the recent
news, and the gate/judge loop writes none of them (it writes proposals and the event
log). Asked per candidate, each of these was a query of ~2-6 ms at 1M assertions, four
or five per candidate; here each is one query per wake, read on first use and answered
in Python after. What differs per candidate (a promise's later turns, a person's
meetings and name) is read in one query for every candidate the wake registered with
`expect`, and singly for one it did not (a judge called on its own, as tests do).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from backchannel.memory.store import Store

SIGNAL_WINDOW_D = 14.0  # judge.SIGNAL_ZERO_D: news older than this no longer counts
LATER_TURNS = 200  # a promise's later turns read, in meeting order, to find it kept
_UNREAD = object()


def promise_of(evidence: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The promise a commitment candidate is about: its first `committed_to` evidence."""
    promises = [e for e in evidence if e.get("predicate") == "committed_to"] or evidence
    return promises[0] if promises else None


def promise_key(promise: dict[str, Any]) -> tuple[int, datetime] | None:
    """(promiser, when said): what the promise's later turns are looked up by."""
    subject, said = promise.get("subject_id"), promise.get("said_at")
    if subject is None or not said:
        return None
    return int(subject), datetime.fromisoformat(said) if isinstance(said, str) else said


class WakeFacts:
    """The store as the judge sees it during one wake at `now` (naive UTC)."""

    def __init__(self, store: Store, now: datetime) -> None:
        self.store, self.now = store, now
        self._owner: Any = _UNREAD
        self._meetings: list[tuple[str, datetime, str | None, list[int]]] | None = None
        self._signals: list[tuple[str, str, datetime, set[int], str]] | None = None
        self._names: dict[int, str | None] = {}
        self._turns: dict[tuple[int, datetime], list[tuple[str, datetime]]] = {}
        self._spoken: dict[int, tuple[datetime | None, int]] = {}
        self._want_people: set[int] = set()
        self._want_names: set[int] = set()
        self._want_promises: set[tuple[int, datetime]] = set()

    def expect(self, kind: str, entity_ids: list[int], evidence: list[dict[str, Any]]) -> None:
        """Register a candidate the judge will score, so that its per-candidate facts are
        read with those of the others (entity_ids sorted, as the judge receives them)."""
        self._want_names.update(int(i) for i in entity_ids)
        if kind == "commitment":
            p = promise_of(evidence)
            key = promise_key(p) if p else None
            if key:
                self._want_promises.add(key)
        elif kind == "reconnect" and entity_ids:
            self._want_people.add(int(entity_ids[0]))

    # -- shared by every candidate -------------------------------------------------

    def owner(self) -> int | None:
        if self._owner is _UNREAD:
            row = self.store.con.execute(
                "SELECT id FROM entities WHERE is_owner AND merged_into IS NULL LIMIT 1").fetchone()
            self._owner = int(row[0]) if row else None
        return self._owner

    def meeting(self, ids: list[int], days: float) -> tuple[str, datetime, str | None, list[int]] | None:
        """(uid, starts_at, summary, attendee_ids) of the first meeting with any of `ids`
        starting from now to `days` ahead."""
        if not ids:
            return None
        if self._meetings is None:
            self._meetings = [(r[0], r[1], r[2], [int(a) for a in (r[3] or []) if a is not None])
                              for r in self.store.con.execute(
                                  """SELECT uid, starts_at, summary, attendee_ids FROM calendar_events
                                     WHERE starts_at >= ? ORDER BY starts_at, uid""", [self.now]).fetchall()]
        want = {int(i) for i in ids}
        until = self.now + timedelta(days=days)
        for m in self._meetings:
            if m[1] > until:
                return None
            if want.intersection(m[3]):
                return m
        return None

    def next_meeting(self, ids: list[int], days: float) -> tuple[float, str] | None:
        """(hours until, summary) of the next meeting with any of `ids` within `days`."""
        m = self.meeting(ids, days)
        return ((m[1] - self.now).total_seconds() / 3600, m[2] or "a meeting") if m else None

    def latest_signal(self, orgs: list[int], person: str | None = None) -> tuple[str, str, datetime] | None:
        """(id, title, when) of the freshest signal within the window about one of `orgs`,
        or whose title or summary names `person` (compared lower-cased)."""
        if self._signals is None:
            self._signals = [(r[0], r[1], r[2], {int(o) for o in (r[3] or []) if o is not None}, r[4])
                             for r in self.store.con.execute(
                                 """SELECT id, title, coalesce(published_at, seen_at) AS seen, org_ids,
                                           lower(title || ' ' || coalesce(summary, ''))
                                    FROM signals WHERE coalesce(published_at, seen_at) >= ?
                                    ORDER BY seen DESC, id""",
                                 [self.now - timedelta(days=SIGNAL_WINDOW_D)]).fetchall()]
        want = {int(o) for o in orgs} or {-1}
        needle = person.lower() if person is not None else None
        for sid, title, seen, about, text in self._signals:
            if not want.isdisjoint(about) or (needle is not None and needle in text):
                return sid, title, seen
        return None

    # -- per candidate, read for all the wake's candidates at once -----------------

    def names(self, ids: list[int]) -> dict[int, str]:
        """id -> name of those of `ids` that exist (merged ones included)."""
        wanted = {int(i) for i in ids}
        missing = wanted - self._names.keys()
        if missing:
            missing |= self._want_names - self._names.keys()
            got = dict(self.store.con.execute("SELECT id, name FROM entities WHERE id = ANY(?::BIGINT[])",
                                              [sorted(missing)]).fetchall())
            self._names.update({i: got.get(i) for i in missing})
        return {i: n for i in wanted if (n := self._names[i]) is not None}

    def later_turns(self, promiser: int, said: datetime) -> list[tuple[str, datetime]]:
        """(text, meeting date) of the promiser's turns in meetings after `said`, the first
        LATER_TURNS in meeting order."""
        key = (int(promiser), said)
        if key not in self._turns:
            keys = [key, *(self._want_promises - self._turns.keys() - {key})]
            for k in keys:
                self._turns[k] = []
            rows = self.store.con.execute(
                f"""WITH p AS (SELECT unnest(?::BIGINT[]) AS k, unnest(?::BIGINT[]) AS speaker,
                                      unnest(?::TIMESTAMP[]) AS said)
                    SELECT p.k, u.text, s.meeting_date
                    FROM p JOIN utterances u ON u.speaker_id = p.speaker JOIN sources s ON s.id = u.source_id
                    WHERE s.meeting_date > p.said
                    QUALIFY row_number() OVER (PARTITION BY p.k
                                               ORDER BY s.meeting_date, u.source_id, u.idx) <= {LATER_TURNS}
                    ORDER BY p.k, s.meeting_date, u.source_id, u.idx""",
                [list(range(len(keys))), [k[0] for k in keys], [k[1] for k in keys]]).fetchall()
            for k, text, date in rows:
                self._turns[keys[int(k)]].append((text, date))
        return self._turns[key]

    def spoken(self, person: int) -> tuple[datetime | None, int]:
        """(date of the last meeting they spoke in, meetings where the owner spoke too)."""
        person = int(person)
        if person not in self._spoken:
            people = sorted({person} | (self._want_people - self._spoken.keys()))
            owner = self.owner()
            got = {int(r[0]): (r[1], int(r[2] or 0)) for r in self.store.con.execute(
                """SELECT u.speaker_id, max(s.meeting_date), count(DISTINCT u.source_id) FILTER (WHERE u.source_id IN
                          (SELECT source_id FROM utterances WHERE speaker_id = $o))
                   FROM utterances u JOIN sources s ON s.id = u.source_id
                   WHERE u.speaker_id = ANY($p::BIGINT[]) GROUP BY u.speaker_id""",
                {"p": people, "o": owner if owner is not None else -1}).fetchall()}
            for p in people:
                self._spoken[p] = got.get(p, (None, 0))
        return self._spoken[person]

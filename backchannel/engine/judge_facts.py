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

from backchannel.core.ties import live_tie_sql
from backchannel.graph import kept
from backchannel.memory.store import Store

SIGNAL_WINDOW_D = 14.0  # judge.SIGNAL_ZERO_D: news older than this no longer counts
RECENT_TALK_D = 90  # conversations with a person older than this do not enter a brief's judgement
OPEN_PROMISE_D = 90  # a promise between the owner and a person without a due date stays open this long
_UNREAD = object()


def promise_of(evidence: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The promise a commitment candidate is about: its first `committed_to` evidence."""
    promises = [e for e in evidence if e.get("predicate") == "committed_to"] or evidence
    return promises[0] if promises else None


def promise_key(promise: dict[str, Any]) -> tuple[int, datetime, int] | None:
    """(promiser, when said, recipient or -1): what the promise's later turns are looked up by."""
    subject, said = promise.get("subject_id"), promise.get("said_at")
    if subject is None or not said:
        return None
    recipient = promise.get("recipient_id")
    return (
        int(subject),
        datetime.fromisoformat(said) if isinstance(said, str) else said,
        int(recipient) if recipient is not None else -1,
    )


class WakeFacts:
    """The store as the judge sees it during one wake at `now` (naive UTC)."""

    def __init__(self, store: Store, now: datetime, scopes: list[str] | None = None) -> None:
        self.store, self.now = store, now
        # `[scope] sweep`: the assertions and turns counted for ties, talks, promises and
        # meetings spoken in come only from sources of these scopes (None: every scope), so
        # no count or reason (a promise's words) comes from a scope the sweep may not read.
        self.scopes = None if scopes is None else list(scopes)
        self._owner: Any = _UNREAD
        self._meetings: list[tuple[str, datetime, str | None, list[int]]] | None = None
        self._signals: list[tuple[str, str, datetime, set[int], str]] | None = None
        self._names: dict[int, str | None] = {}
        self._turns: dict[tuple[int, datetime, int], list[tuple[str, datetime, int | None]]] = {}
        self._ties: dict[int, tuple[int, int, datetime | None]] = {}
        self._talks: dict[int, list[datetime]] = {}
        self._want_ties: set[int] = set()
        self._spoken: dict[int, tuple[datetime | None, int]] = {}
        self._want_people: set[int] = set()
        self._want_names: set[int] = set()
        self._want_promises: set[tuple[int, datetime, int]] = set()

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
        elif kind in ("introduction", "brief"):
            self._want_ties.update(int(i) for i in entity_ids)

    # -- shared by every candidate -------------------------------------------------

    def owner(self) -> int | None:
        if self._owner is _UNREAD:
            row = self.store.con.execute(
                "SELECT id FROM entities WHERE is_owner AND merged_into IS NULL LIMIT 1"
            ).fetchone()
            self._owner = int(row[0]) if row else None
        return self._owner

    def meeting(self, ids: list[int], days: float) -> tuple[str, datetime, str | None, list[int]] | None:
        """(uid, starts_at, summary, attendee_ids) of the first meeting with any of `ids`
        starting from now to `days` ahead."""
        if not ids:
            return None
        if self._meetings is None:
            self._meetings = [
                (r[0], r[1], r[2], [int(a) for a in (r[3] or []) if a is not None])
                for r in self.store.con.execute(
                    """SELECT uid, starts_at, summary, attendee_ids FROM calendar_events
                                     WHERE starts_at >= ? ORDER BY starts_at, uid""",
                    [self.now],
                ).fetchall()
            ]
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
            self._signals = [
                (r[0], r[1], r[2], {int(o) for o in (r[3] or []) if o is not None}, r[4])
                for r in self.store.con.execute(
                    """SELECT id, title, seen, org_ids, text FROM (
                                        SELECT id, title, org_ids, lower(title || ' ' || coalesce(summary, '')) AS text,
                                               -- a publication date ahead of now is a wrong date: no fresh news
                                               CASE WHEN published_at > $ahead THEN NULL
                                                    ELSE coalesce(published_at, seen_at) END AS seen
                                        FROM signals)
                                    WHERE seen >= $since AND seen <= $ahead
                                    ORDER BY seen DESC, id""",
                    {"since": self.now - timedelta(days=SIGNAL_WINDOW_D), "ahead": self.now + timedelta(days=1)},
                ).fetchall()
            ]
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
            got = dict(
                self.store.con.execute(
                    "SELECT id, name FROM entities WHERE id = ANY(?::BIGINT[])", [sorted(missing)]
                ).fetchall()
            )
            self._names.update({i: got.get(i) for i in missing})
        return {i: n for i in wanted if (n := self._names[i]) is not None}

    def later_turns(self, promiser: int, said: datetime, recipient: int = -1) -> list[tuple[str, datetime, int | None]]:
        """(text, meeting date, speaker) of every turn, whoever speaks, in the meetings after
        `said` where the promiser or the recipient spoke (graph/kept.py): the maker saying it
        is done and the recipient thanking them for it are both there."""
        key = (int(promiser), said, int(recipient))
        if key not in self._turns:
            keys = [key, *(self._want_promises - self._turns.keys() - {key})]
            self._turns.update(kept.later_turns(self.store, keys))
        return self._turns[key]

    def tie(self, person: int) -> tuple[int, int, datetime | None]:
        """(live social links between the owner and `person` — knows, worked with, introduced —,
        meetings both spoke in, date of the last of those) for a direct tie."""
        person = int(person)
        if person not in self._ties:
            people = sorted({person} | (self._want_ties - self._ties.keys()))
            owner = self.owner()
            for p in people:
                self._ties[p] = (0, 0, None)
            if owner is not None:
                links = dict(
                    self.store.con.execute(
                        f"""SELECT CASE WHEN a.subject_id = $o THEN a.object_id ELSE a.subject_id END, count(*)
                       FROM assertions a WHERE {live_tie_sql("a")}
                         AND ((a.subject_id = $o AND a.object_id = ANY($p::BIGINT[]))
                              OR (a.object_id = $o AND a.subject_id = ANY($p::BIGINT[])))
                         AND (a.source_id IS NULL OR $sc::VARCHAR[] IS NULL OR a.source_id IN (SELECT id FROM sources WHERE list_contains($sc::VARCHAR[], coalesce(scope, 'default'))))
                       GROUP BY 1""",
                        {"o": owner, "p": people, "sc": self.scopes},
                    ).fetchall()
                )
                met = {
                    int(r[0]): (int(r[1]), r[2])
                    for r in self.store.con.execute(
                        """SELECT u.speaker_id, count(DISTINCT u.source_id), max(s.meeting_date)
                       FROM utterances u JOIN sources s ON s.id = u.source_id
                       WHERE u.speaker_id = ANY($p::BIGINT[]) AND ($sc::VARCHAR[] IS NULL OR list_contains($sc::VARCHAR[], coalesce(s.scope, 'default')))
                         AND u.source_id IN (SELECT source_id FROM utterances WHERE speaker_id = $o)
                       GROUP BY 1""",
                        {"o": owner, "p": people, "sc": self.scopes},
                    ).fetchall()
                }
                for p in people:
                    n, last = met.get(p, (0, None))
                    self._ties[p] = (int(links.get(p, 0)), n, last)
        return self._ties[person]

    def talks(self, person: int) -> list[datetime]:
        """Dates of the meetings in the last RECENT_TALK_D days (up to now) where both the
        owner and `person` spoke, newest first: what the two said to each other lately."""
        person = int(person)
        if person not in self._talks:
            people = sorted({person} | (self._want_ties - self._talks.keys()))
            owner = self.owner()
            for p in people:
                self._talks[p] = []
            if owner is not None:
                for p, when in self.store.con.execute(
                    """SELECT DISTINCT u.speaker_id, s.meeting_date FROM utterances u
                           JOIN sources s ON s.id = u.source_id
                           WHERE u.speaker_id = ANY($p::BIGINT[]) AND s.meeting_date <= $now
                             AND s.meeting_date >= $since AND ($sc::VARCHAR[] IS NULL OR list_contains($sc::VARCHAR[], coalesce(s.scope, 'default')))
                             AND u.source_id IN (SELECT source_id FROM utterances WHERE speaker_id = $o)
                           ORDER BY 2 DESC""",
                    {
                        "o": owner,
                        "p": people,
                        "now": self.now,
                        "sc": self.scopes,
                        "since": self.now - timedelta(days=RECENT_TALK_D),
                    },
                ).fetchall():
                    self._talks[int(p)].append(when)
        return self._talks[person]

    def open_promises(self, person: int) -> list[tuple[int, str, int, datetime]]:
        """Promises between the owner and `person`, either way, still open at now: due today
        or later, or without a due date and said within OPEN_PROMISE_D days, and not kept
        since (graph/kept.py).
        [(assertion id, what, maker, said_at)]."""
        owner = self.owner()
        if owner is None:
            return []
        rows = [
            (int(r[0]), str(r[1] or ""), int(r[2]), r[3])
            for r in self.store.con.execute(
                """SELECT id, object_literal, subject_id, said_at FROM assertions
               WHERE superseded_at IS NULL AND predicate = 'committed_to' AND said_at <= $now
                 AND ((subject_id = $o AND recipient_id = $p) OR (subject_id = $p AND recipient_id = $o))
                 AND (CASE WHEN valid_to IS NOT NULL THEN valid_to >= $today
                           ELSE said_at >= $since END)
                 AND (source_id IS NULL OR $sc::VARCHAR[] IS NULL OR source_id IN
                      (SELECT id FROM sources WHERE list_contains($sc::VARCHAR[], coalesce(scope, 'default'))))
               ORDER BY said_at DESC""",
                {
                    "o": owner,
                    "p": int(person),
                    "now": self.now,
                    "today": self.now.date(),
                    "sc": self.scopes,
                    "since": self.now - timedelta(days=OPEN_PROMISE_D),
                },
            ).fetchall()
        ]
        done = kept.kept_promises(self.store, [r[0] for r in rows]) if rows else {}
        return [r for r in rows if r[0] not in done]

    def spoken(self, person: int) -> tuple[datetime | None, int]:
        """(date of the last meeting they spoke in, meetings where the owner spoke too)."""
        person = int(person)
        if person not in self._spoken:
            people = sorted({person} | (self._want_people - self._spoken.keys()))
            owner = self.owner()
            got = {
                int(r[0]): (r[1], int(r[2] or 0))
                for r in self.store.con.execute(
                    """SELECT u.speaker_id, max(s.meeting_date), count(DISTINCT u.source_id) FILTER (WHERE u.source_id IN
                          (SELECT source_id FROM utterances WHERE speaker_id = $o))
                   FROM utterances u JOIN sources s ON s.id = u.source_id
                   WHERE u.speaker_id = ANY($p::BIGINT[]) AND ($sc::VARCHAR[] IS NULL OR list_contains($sc::VARCHAR[], coalesce(s.scope, 'default'))) GROUP BY u.speaker_id""",
                    {"p": people, "o": owner if owner is not None else -1, "sc": self.scopes},
                ).fetchall()
            }
            for p in people:
                self._spoken[p] = got.get(p, (None, 0))
        return self._spoken[person]

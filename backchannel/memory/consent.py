"""Consent: people who asked not to be captured.

They are kept only as hashes of their normalised names, aliases and addresses, so
the database file never holds the name of someone who asked not to be in it. A
`Matcher` built from those hashes (and the names listed in `[consent] withdrawn`)
recognises them as a speaker label and finds their names inside other people's
words, comparing hashes of word sequences, never the names themselves.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from backchannel.memory.store import Store, utcnow
from backchannel.memory.text import norm_name

REDACTED = "[withdrawn]"
_SALT = b"backchannel-consent:"
_WORD = re.compile(r"[\w@.+'-]+")
MAX_NAME_WORDS = 5


def name_hash(name: str) -> str:
    return hashlib.sha256(_SALT + norm_name(name).encode()).hexdigest()


def label(name: str) -> str:
    """Initials only ('K. W.'), so `consent list` can be read without naming anyone."""
    words = [w for w in re.split(r"[\s@._-]+", name) if w]
    return " ".join(w[0].upper() + "." for w in words[:3]) or "?"


@dataclass
class Matcher:
    full: set[str] = field(default_factory=set)  # names, aliases, addresses
    speaker_only: set[str] = field(default_factory=set)  # first names: a speaker label, never inside text

    def __bool__(self) -> bool:
        return bool(self.full or self.speaker_only)

    def is_withdrawn(self, name: str | None) -> bool:
        """A speaker label or a participant ('Karl Weber', 'Karl', 'Karl Weber (Acme)')."""
        if not name or not self:
            return False
        bare = re.sub(r"\s*[(\[].*$", "", name).strip()
        return any(name_hash(n) in self.full or name_hash(n) in self.speaker_only for n in {name, bare} if n) or bool(
            self.spans(name)
        )

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every withdrawn name or address in `text`, longest first at each place."""
        if not self.full or not text:
            return []
        words = list(_WORD.finditer(text))
        out: list[tuple[int, int]] = []
        i = 0
        while i < len(words):
            hit = 0
            for n in range(min(MAX_NAME_WORDS, len(words) - i), 0, -1):
                start, end = words[i].start(), words[i + n - 1].end()
                piece = text[start:end].rstrip(".'")
                if name_hash(piece) in self.full:
                    out.append((start, start + len(piece)))
                    hit = n
                    break
            i += hit or 1
        return out

    def redact(self, text: str) -> str:
        for start, end in reversed(self.spans(text)):
            text = text[:start] + REDACTED + text[end:]
        return text


_PEOPLE_LISTS = ("attendees", "withdrawn")
# Where a file or a feed is, never redacted: an inbox file named "2025-09-18 Karl Weber call.txt" must
# still be found to be read (its words are filtered as every meeting's are).
_LOCATIONS = frozenset({"path", "calendar", "sources", "file", "url"})


def _attendee_withdrawn(m: Matcher, attendee: Any) -> bool:
    from backchannel.memory.calendar import attendee_name_email

    name, email = attendee_name_email(attendee)
    return m.is_withdrawn(name) or (email is not None and m.is_withdrawn(email))


def scrub(m: Matcher, value: Any) -> Any:
    """A wake's payload without the people withdrawn: an attendee (or an invite's opted-out
    entry) who is one is dropped, their name or address inside any other text is redacted (not
    in a file's path or a feed's address: `_LOCATIONS`).
    Applied before a run records its wake, so a calendar read again after the erasure
    cannot bring the name back into `runs` or `calendar_events`."""
    if not m:
        return value
    if isinstance(value, dict):
        return {
            k: v
            if k in _LOCATIONS
            else [scrub(m, a) for a in v if not _attendee_withdrawn(m, a)]
            if k in _PEOPLE_LISTS and isinstance(v, list)
            else scrub(m, v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrub(m, v) for v in value]
    if isinstance(value, str):
        return m.redact(value)
    return value


def matcher(store: Store, configured: Iterable[str] = ()) -> Matcher:
    """Everyone withdrawn: the hashes in the store plus the names listed in config."""
    m = Matcher()
    for h, speaker_only in store.con.execute("SELECT name_hash, speaker_only FROM consent_withdrawals").fetchall():
        (m.speaker_only if speaker_only else m.full).add(h)
    for name in configured:
        if name.strip():
            m.full.add(name_hash(name))
    return m


def withdraw(store: Store, names: Iterable[str], *, first_names: Iterable[str] = (), via: str = "cli") -> str:
    """Record a person's withdrawal (in the caller's transaction): every name, alias and
    address given, and first names that only ever match a speaker label. Returns the
    person's random id; a name already withdrawn keeps its first record."""
    names = [n for n in dict.fromkeys(n.strip() for n in names) if len(norm_name(n)) >= 2]
    if not names:
        raise ValueError("a withdrawal needs a name or an address")
    existing = store.scalar(
        "SELECT person FROM consent_withdrawals WHERE list_contains(?, name_hash) LIMIT 1",
        [[name_hash(n) for n in names]],
    )
    person = existing or "C" + secrets.token_hex(6)
    tag = label(names[0])
    now = utcnow()
    rows = [(name_hash(n), person, tag, False, via, now) for n in names]
    rows += [(name_hash(f), person, tag, True, via, now) for f in first_names if len(norm_name(f)) >= 3]
    store.con.executemany(
        "INSERT INTO consent_withdrawals VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name_hash) DO NOTHING", rows
    )
    return person


def withdrawals(store: Store) -> list[dict[str, Any]]:
    """One row per person: initials, how many names and addresses are held (as hashes), when, how."""
    return store.query(
        """SELECT person, any_value(label) AS label, count(*) FILTER (WHERE NOT speaker_only) AS names,
                  min(withdrawn_at) AS withdrawn_at, string_agg(DISTINCT via, ',') AS via
           FROM consent_withdrawals GROUP BY person ORDER BY min(withdrawn_at)"""
    )

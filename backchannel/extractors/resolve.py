"""Entity resolution for one source: speaker labels and mentioned names to entities.

Layers, cheapest first: the source's own speakers and participants; exact name and
alias match (case- and accent-insensitive); a first name that matches exactly one
participant ("Marc" -> "Marc Dupont"); then, when the model gateway's layers are
installed, fuzzy / embedding / model matching (`resolve_layers.resolve_extra`).
Anything still unknown becomes a new entity with its surface form as alias.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from backchannel.memory import entities
from backchannel.memory.store import Store
from backchannel.memory.text import norm_name

# Labels that name a seat, not a person: they stay local to their source.
_GENERIC_LABEL = re.compile(
    r"^(speaker|participant|spk|person|unknown|guest|caller|interviewer|interviewee|moderator|host|"
    r"attendee|user|voice|member|chair|witness)\s*[-_#]?\s*\w{0,3}$",
    re.IGNORECASE,
)
_LABEL_NOTE = re.compile(r"\s*\(.*\)\s*$")  # a trailing "(riding, party)" or "(title)" after a name
_ROLE_WORDS = {
    "project manager", "marketing", "marketing expert", "user interface", "industrial designer",
    "professor", "phd", "grad", "postdoc", "chairman", "chair", "the chair", "clerk", "presenter",
    "narrator", "audience", "everyone", "all", "crowd", "group", "team", "unknown",
}


def is_seat_label(label: str) -> bool:
    """'Speaker 2', 'Caller 1', 'Guest': a seat, not a person's name."""
    return _GENERIC_LABEL.match(label.strip()) is not None


def looks_like_person_name(label: str) -> bool:
    """A speaker label that can be a person's name ("Marc", "Sophie Martin", "Dr. Lee")."""
    s = label.strip()
    if not s or any(ch.isdigit() for ch in s) or _GENERIC_LABEL.match(s):
        return False
    if norm_name(s) in _ROLE_WORDS or len(s.split()) > 4 or s.split()[0].lower() == "the":
        return False  # "The Acting Chair", "The Clerk": a seat, not a name
    words = [w for w in re.split(r"[\s\-]+", s) if w]
    return all(w[0].isupper() or w.lower() in {"de", "van", "von", "da", "di", "le", "la", "du", "del", "der"} for w in words)


@dataclass
class SourceResolver:
    """Resolves names for one source being written; caches what it decided."""

    store: Store
    source_id: str
    source_title: str
    owner_id: int
    owner_norms: set[str]
    participants: Sequence[str] = ()
    self_intros: dict[str, str] = field(default_factory=dict)
    extra: Callable[..., tuple[int | None, str, float]] | None = None
    speaker_ids: dict[str, int] = field(default_factory=dict)
    _cache: dict[tuple[str, str], int] = field(default_factory=dict)
    _known: dict[str, list[entities.Entity]] = field(default_factory=dict)
    created: int = 0

    def prefetch(self, names: set[str]) -> None:
        """Look every name this source will need up in one query (one per name is the
        slow path: a meeting mentions dozens of names)."""
        self._known.update(entities.find_many(self.store, names))

    def _find(self, name: str, kind: str) -> list[entities.Entity]:
        n = norm_name(name)
        if n in self._known:
            return [e for e in self._known[n] if e.kind == kind]
        return entities.find(self.store, name, kind)

    def _alias(self, eid: int, alias: str) -> None:
        entities.add_alias(self.store, eid, alias, source_id=self.source_id)
        n = norm_name(alias)
        if n in self._known and all(e.id != eid for e in self._known[n]):
            e = entities.get(self.store, eid)
            if e is not None:
                self._known[n].append(e)

    # -- speakers ---------------------------------------------------------
    def speaker(self, label: str | None) -> int | None:
        if not label:
            return None
        if label in self.speaker_ids:
            return self.speaker_ids[label]
        if norm_name(label) in self.owner_norms:
            eid = self.owner_id
        elif label in self.self_intros:
            eid = self.mention(self.self_intros[label], "person")
            self._alias(eid, label if looks_like_person_name(label) else f"{label} ({self.source_title})")
        elif looks_like_person_name(label):
            eid = self.mention(label, "person")
        elif looks_like_person_name(base := _LABEL_NOTE.sub("", label)) and base != label.strip():
            # "Mr. Dan Albas (Central Okanagan, CPC)", "Hon. Bill Blair (Minister of ...)": a name, then
            # a riding or a title; the same person as plain "Mr. Dan Albas" elsewhere in the meeting.
            eid = self.mention(base, "person")
            self._alias(eid, label)
        else:
            # A seat label ("Speaker 2", "Project Manager"): a person known only in this source.
            local = f"{label} ({self.source_title})"
            found = self._find(local, "person")
            eid = found[0].id if found else self._create(local, "person")
        self.speaker_ids[label] = eid
        return eid

    def only_an_organisation(self, name: str) -> bool:
        """True when memory knows `name` as an organisation and not as a person
        ("I know Acme well" is not about a person called Acme)."""
        return bool(self._find(name, "organisation")) and not self._find(name, "person")

    # -- mentions ---------------------------------------------------------
    def mention(self, name: str, kind: str) -> int:
        key = (norm_name(name), kind)
        if key in self._cache:
            return self._cache[key]
        eid = self._resolve(name, kind)
        self._cache[key] = eid
        return eid

    def _resolve(self, name: str, kind: str) -> int:
        n = norm_name(name)
        if kind == "person" and n in self.owner_norms:
            return self.owner_id
        found = self._find(name, kind)
        if len(found) == 1:
            return found[0].id
        if len(found) > 1:
            # Prefer someone present in this meeting; else the most recently created.
            present = {self.speaker_ids.get(p) for p in self.participants} | set(self.speaker_ids.values())
            for e in found:
                if e.id in present:
                    return e.id
            return found[-1].id
        if kind == "person" and " " not in n:
            full = self._first_name_match(n)
            if full is not None:
                self._alias(full, name)
                return full
        if self.extra is not None:
            eid, method, score = self.extra(self.store, name, kind)
            if eid is not None:
                self._alias(eid, name)
                return eid
        return self._create(name, kind)

    def _first_name_match(self, first: str) -> int | None:
        """'Marc' -> 'Marc Dupont' when exactly one participant of this source has that first name."""
        matches = {p for p in self.participants if norm_name(p).split(" ")[0] == first and " " in norm_name(p)}
        if len(matches) != 1:
            return None
        (full,) = matches
        return self.mention(full, "person")

    def _create(self, name: str, kind: str) -> int:
        self.created += 1
        e = entities.create(self.store, name, kind, source_id=self.source_id)
        self._known.setdefault(norm_name(name), []).append(e)
        return e.id

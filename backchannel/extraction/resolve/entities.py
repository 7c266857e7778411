"""Entity resolution for one source: speaker labels and mentioned names to entities.

Layers, cheapest first: the source's own speakers and participants; for a first name
alone, the one full name with that first name said in this meeting ("Hannah" after
"Hannah Schulz" is Schulz here, whatever alias "Hannah" was learned elsewhere); exact
name and alias match (case- and accent-insensitive); then, when the model gateway's
layers are installed, fuzzy / embedding / model matching (`resolve_layers.resolve_extra`).
Anything still unknown becomes a new entity with its surface form as alias.

A first name that fits two or more people, with nothing in the meeting to choose (no full
name said, none of them present), is an ambiguous reference: it is linked to the most
recent candidate, recorded in `ambiguous` with every candidate, and the writer marks each
assertion that rests on it `ambiguous_reference` (low trust), so no introduction is built
on a guess and `trace` can say why.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from backchannel.extraction.mentions.labels import is_seat_label, label_person
from backchannel.extraction.mentions.names_ja import is_japanese_name, looks_like_japanese_person
from backchannel.memory import entities
from backchannel.memory.store import Store
from backchannel.memory.text import norm_name

# Labels that name a seat, not a person: they stay local to their source.
_GENERIC_LABEL = re.compile(
    r"^(speaker|participant|spk|person|unknown|guest|caller|interviewer|interviewee|moderator|host|"
    r"attendee|user|voice|member|chair|witness|intervenant|intervenante|locuteur|locutrice|orateur|oratrice|appelant"
    r"|inconnu|invité|invitée)\s*[-_#]?\s*\w{0,3}$",
    re.IGNORECASE,
)
_LABEL_NOTE = re.compile(r"\s*\(.*\)\s*$")  # a trailing "(riding, party)" or "(title)" after a name
_ROLE_WORDS = {
    "project manager",
    "marketing",
    "marketing expert",
    "user interface",
    "industrial designer",
    "professor",
    "phd",
    "grad",
    "postdoc",
    "chairman",
    "chair",
    "the chair",
    "clerk",
    "presenter",
    "narrator",
    "audience",
    "everyone",
    "all",
    "crowd",
    "group",
    "team",
    "unknown",
}


def full_names_said(texts: Iterable[str]) -> list[str]:
    """Every person name of two or more words said in `texts`, in order of first mention:
    the context in which a lone first name is read ("Hannah Schulz does. ... Hannah")."""
    from backchannel.extraction.mentions.names import NAME_RX, person_name

    seen: dict[str, str] = {}
    for text in texts:
        for m in NAME_RX.finditer(text or ""):
            if " " not in m.group(0):
                continue
            n = person_name(m.group(0))
            if n and " " in n.strip():
                seen.setdefault(norm_name(n), n)
    return list(seen.values())


def is_anonymous_seat(label: str) -> bool:
    """'Speaker 2', 'Caller 1', 'Guest': a seat that says nothing of who sat in it (unlike
    'Project Manager' or 'The Chair', which offline_labels.is_seat_label also counts as seats)."""
    return _GENERIC_LABEL.match(label.strip()) is not None


def looks_like_person_name(label: str) -> bool:
    """A speaker label that can be a person's name ("Marc", "Sophie Martin", "Dr. Lee")."""
    s = label.strip()
    if not s or any(ch.isdigit() for ch in s) or _GENERIC_LABEL.match(s) or is_seat_label(s):
        return False
    if is_japanese_name(s):  # 田中さん, 田中太郎: no capitals to go by (names_ja.py)
        return looks_like_japanese_person(s)
    if norm_name(s) in _ROLE_WORDS or len(s.split()) > 4 or s.split()[0].lower() == "the":
        return False  # "The Acting Chair", "The Clerk": a seat, not a name
    words = [w for w in re.split(r"[\s\-]+", s) if w]
    return all(
        w[0].isupper() or w.lower() in {"de", "van", "von", "da", "di", "le", "la", "du", "del", "der"} for w in words
    )


# (store, surface name, kind) -> (entity id or None, method, score): the fuzzy / embedding /
# model layers (`resolve_layers.resolve_extra`), when installed.
ExtraResolver = Callable[[Store, str, str], tuple[int | None, str, float]]


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
    labels: Sequence[str] = ()  # every speaker label of the source (seats named in another label)
    extra: ExtraResolver | None = None
    # Person names said in this source (speakers, participants, mentions): the context a
    # lone first name is read in.
    meeting_names: Sequence[str] = ()
    speaker_ids: dict[str, int] = field(default_factory=dict)
    # normalised first name -> the names of every candidate, for names read without context
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    _cache: dict[tuple[str, str], int] = field(default_factory=dict)
    _known: dict[str, list[entities.Entity]] = field(default_factory=dict)
    _by_first: dict[str, list[entities.Entity]] = field(default_factory=dict)
    created: int = 0
    # New entities held until `flush` (one statement for all, not two per entity); None: each
    # is written when created. Held ones are in `_known`; a look-up that reads the store
    # flushes first, so it sees them as it would have.
    new: entities.NewEntities | None = None

    def flush(self) -> None:
        """Write the new entities held so far (the writer calls it before any other code
        reads the store or writes rows of its own for them)."""
        if self.new is not None:
            self.new.flush()

    def prefetch(self, names: set[str]) -> None:
        """Look every name this source will need up in one query (one per name is the
        slow path: a meeting mentions dozens of names)."""
        self.flush()
        self._known.update(entities.find_many(self.store, names))
        firsts = sorted({norm_name(x) for x in names} - {""})
        firsts = [f for f in firsts if " " not in f]
        if firsts:
            self._by_first = {f: [] for f in firsts}
            rows = self.store.con.execute(
                """SELECT split_part(norm, ' ', 1) AS first, id, kind, name, is_owner FROM entities
                   WHERE kind = 'person' AND merged_into IS NULL AND contains(norm, ' ')
                     AND list_contains(?, split_part(norm, ' ', 1)) ORDER BY id""",
                [firsts],
            ).fetchall()
            for first, *rest in rows:
                self._by_first[first].append(entities.Entity(rest[0], rest[1], rest[2], bool(rest[3])))

    def _people_by_first_name(self, first: str) -> list[entities.Entity]:
        """People whose full name starts with this first name (prefetched for the source's names)."""
        if first in self._by_first:
            return self._by_first[first]
        self.flush()
        return entities.find_by_first_name(self.store, first)

    def _find(self, name: str, kind: str) -> list[entities.Entity]:
        n = norm_name(name)
        if n in self._known:
            return [e for e in self._known[n] if e.kind == kind]
        self.flush()
        return entities.find(self.store, name, kind)

    def _alias(self, eid: int, alias: str) -> None:
        new = self.new
        held = new.get(eid) if new is not None else None
        if new is not None and held is not None:
            new.add_alias(eid, alias, source_id=self.source_id)
        else:
            entities.add_alias(self.store, eid, alias, source_id=self.source_id)
        n = norm_name(alias)
        if n in self._known and all(e.id != eid for e in self._known[n]):
            e = held or entities.get(self.store, eid)
            if e is not None:
                self._known[n].append(e)

    # -- speakers ---------------------------------------------------------
    def speaker(self, label: str | None) -> int | None:
        if not label:
            return None
        return self._label_entity(label)

    def _label_entity(self, label: str) -> int:
        """The entity a non-empty speaker label stands for (see `speaker`)."""
        if label in self.speaker_ids:
            return self.speaker_ids[label]
        if norm_name(label) in self.owner_norms:
            eid = self.owner_id
        elif label in self.self_intros:
            eid = self.mention(self.self_intros[label], "person")
            self._alias(eid, label if looks_like_person_name(label) else f"{label} ({self.source_title})")
        elif (person := label_person(label)) is not None:
            # "Mr. Dan Albas (Central Okanagan, CPC)", "Hon. Bill Blair (Minister of ...)", "Lynne Neagle AM",
            # "The Chair (Hon. Anthony Rota (...))": the person, under every spelling the meeting uses.
            eid = self.mention(person, "person")
            if norm_name(person) != norm_name(label):
                self._alias(eid, label)
                base = _LABEL_NOTE.sub("", label).strip()
                if base != label.strip() and looks_like_person_name(base):
                    self._alias(eid, base)  # "Hon. Bill Blair" as written without the note
        elif looks_like_person_name(label):
            eid = self.mention(label, "person")  # "M. Dupont": a name the label parser does not take apart
        elif (named := self._seat_holder(label)) is not None:
            eid = self._label_entity(named)  # "The Chair" when the meeting also labels "The Chair (Hon. X)"
        else:
            # A seat label ("Speaker 2", "Project Manager"): a person known only in this source.
            local = f"{label} ({self.source_title})"
            found = self._find(local, "person")
            eid = found[0].id if found else self._create(local, "person")
        self.speaker_ids[label] = eid
        return eid

    def _seat_holder(self, label: str) -> str | None:
        """The one label of this meeting that names who holds this seat ("The Chair" ->
        "The Chair (Hon. Anthony Rota (...))"); None when none or several do."""
        seat = norm_name(label)
        holders = {
            lab
            for lab in self.labels
            if lab != label and norm_name(_LABEL_NOTE.sub("", lab)) == seat and label_person(lab) is not None
        }
        people = {norm_name(label_person(lab) or "") for lab in holders}
        return sorted(holders)[0] if len(people) == 1 else None

    def alias_organisation(self, long_form: str, acronym: str) -> int:
        """Record `acronym` as an alias of the organisation `long_form` (created if new), unless memory
        already holds a different organisation under that acronym (then the two stay apart: merging
        is the user's call, `backchannel entities merge`)."""
        eid = self.mention(long_form, "organisation")
        others = [e for e in self._find(acronym, "organisation") if e.id != eid]
        if not others and not any(e.id == eid for e in self._find(acronym, "organisation")):
            self._alias(eid, acronym)
        self._cache[(norm_name(acronym), "organisation")] = eid if not others else others[0].id
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
        clean = label_person(name) if kind == "person" else None
        if clean and len(clean.split()) >= 2 and norm_name(clean) != key[0]:
            # "Jeremy Miles MS", "Dr Ian Johnson" in speech: the person, with that spelling as an alias
            eid = self.mention(clean, kind)
            self._alias(eid, name)
            self._cache[key] = eid
            return eid
        eid = self._resolve(name, kind)
        self._cache[key] = eid
        return eid

    def is_ambiguous(self, name: str | None) -> bool:
        return bool(name) and norm_name(name) in self.ambiguous

    def _resolve(self, name: str, kind: str) -> int:
        n = norm_name(name)
        if kind == "person" and is_seat_label(name) and label_person(name) is None:
            # "Speaker 1 will send it", or a model naming a seat: that seat in this meeting, never
            # a "Speaker 1" of another meeting (no fuzzy or embedding match either).
            if name in self.labels:
                return self._label_entity(name)
            local = f"{name} ({self.source_title})"
            found = self._find(local, "person")
            return found[0].id if found else self._create(local, "person")
        if kind == "person" and n in self.owner_norms:
            return self.owner_id
        if kind == "person" and n and " " not in n:
            eid = self._first_name_in_context(n, name)
            if eid is not None:
                return eid
        found = self._find(name, kind)
        if not found and kind == "person":
            tail = self._known_tail(name)
            if tail is not None:
                return self.mention(tail, kind)
        if len(found) == 1:
            return found[0].id
        if len(found) > 1:
            # Prefer someone present in this meeting; else the most recently created.
            present = {self.speaker_ids.get(p) for p in self.participants} | set(self.speaker_ids.values())
            for e in found:
                if e.id in present:
                    return e.id
            return found[-1].id
        if self.extra is not None:
            self.flush()  # the fuzzy / embedding / model layers read the store
            eid, method, score = self.extra(self.store, name, kind)
            if eid is not None:
                self._alias(eid, name)
                return eid
        return self._create(name, kind)

    def _known_tail(self, name: str) -> str | None:
        """'Sakura Sophie Martin' (a pattern swallowed the word before a name) is 'Sophie Martin'
        when memory or this meeting knows that shorter name and not the longer one."""
        toks = name.split()
        if len(toks) < 3 or any(t.islower() for t in toks):  # particles: "Ana de la Cruz"
            return None
        here = {norm_name(p) for p in self.meeting_names} - {norm_name(name)}
        for k in range(1, len(toks) - 1):
            tail = " ".join(toks[k:])
            if norm_name(tail) in here or self._find(tail, "person"):
                return tail
        return None

    def _first_name_in_context(self, first: str, surface: str) -> int | None:
        """A lone first name read in this meeting: the one full name with that first name
        said here; else, among the people memory knows by it (alias or full name), the one
        present here or the only one. Several and nothing to choose: the most recent, recorded
        as ambiguous. None: nobody by that first name (plain alias matching decides)."""
        here = {
            norm_name(p): p
            for p in self.meeting_names
            if " " in norm_name(p) and norm_name(p).split(" ")[0] == first and norm_name(p) not in self.owner_norms
        }
        if len(here) == 1:
            eid = self.mention(next(iter(here.values())), "person")
            self._alias(eid, surface)
            return eid
        if len(here) > 1:
            ids = [self.mention(full, "person") for full in here.values()]
            self.ambiguous[first] = sorted(here.values())
            return ids[-1]
        by_alias = {e.id: e for e in self._find(surface, "person")}
        by_id = {**by_alias, **{e.id: e for e in self._people_by_first_name(first)}}
        by_id.pop(self.owner_id, None)
        if not by_id:
            return None  # nobody by that name: alias matching, then a new person
        if len(by_id) == 1:
            # The one person memory knows by this first name ("Itziar came over from Initech" after
            # a meeting that named Itziar Etxeberria): that person, now also called so; a first name
            # that a seat or another kind holds stays with alias matching.
            (eid,) = by_id
            if eid not in by_alias:
                self._alias(eid, surface)
            return eid
        present = set(self.speaker_ids.values())
        here_ids = [i for i in by_id if i in present]
        if len(here_ids) == 1:
            return here_ids[0]
        self.ambiguous[first] = sorted({e.name for e in by_id.values()})
        # A guess, marked as one: whoever was last called by this name, else the newest namesake.
        return max(i for i in by_alias if i != self.owner_id) if set(by_alias) - {self.owner_id} else max(by_id)

    def _create(self, name: str, kind: str) -> int:
        self.created += 1
        if self.new is not None:
            e = self.new.create(name, kind, source_id=self.source_id)
        else:
            e = entities.create(self.store, name, kind, source_id=self.source_id)
        self._known.setdefault(norm_name(name), []).append(e)
        return e.id

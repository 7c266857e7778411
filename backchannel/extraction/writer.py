"""Writes one parsed and extracted source to the store in ONE transaction:
a failure anywhere leaves no partial rows, and a kill -9 leaves either the whole
source or nothing (DuckDB replays only committed transactions)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from backchannel.core.vocabulary import MODALITIES, NOT_FACT_STANCES, PREDICATES, STANCES
from backchannel.extraction import source_trust
from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.acronyms import organisation_aliases
from backchannel.extraction.mentions.names_ja import add_aliases as add_japanese_aliases
from backchannel.extraction.mentions.names_ja import is_japanese_name
from backchannel.extraction.resolve.entities import (
    ExtraResolver,
    SourceResolver,
    full_names_said,
    looks_like_person_name,
)
from backchannel.extraction.result import ExtractedAssertion
from backchannel.memory import assertions as assertion_table
from backchannel.memory import entities, sources, supersede
from backchannel.memory.store import Store, utcnow
from backchannel.memory.text import norm_name
from backchannel.memory.trust import trust_score


class QuoteMismatch(Exception):
    """An extractor produced a quote that is not the slice it claims: a bug, never stored."""


@dataclass
class WriteResult:
    source_id: str
    created: bool  # False: the same content was already stored
    assertions: int = 0
    entities_created: int = 0


def source_id_for(content_hash: str) -> str:
    return "S" + content_hash[:12]


def existing_source(store: Store, content_hash: str) -> str | None:
    # A source written earlier in the same Store.batch() is held, not yet in the table.
    return store.held_value("sources", "content_hash", content_hash, "id") or store.scalar(
        "SELECT id FROM sources WHERE content_hash = ?", [content_hash]
    )


def write_source(
    store: Store,
    transcript: Transcript,
    extracted: Sequence[ExtractedAssertion],
    *,
    owner_names: Sequence[str],
    extractor: str,
    self_intros: dict[str, str] | None = None,
    resolve_extra: ExtraResolver | None = None,
    content_hash: str | None = None,
    org_aliases: dict[str, str] | None = None,
    on_written: Callable[[str, SourceResolver], None] | None = None,
) -> WriteResult:
    """`on_written(source_id, resolver)`, when given, runs inside the same transaction
    after the rows are written (email records its message row and addresses there)."""
    content_hash = content_hash or transcript.content_hash()
    sid = source_id_for(content_hash)
    with store.transaction():
        if existing_source(store, content_hash):
            return WriteResult(sid, created=False)
        # Once per Store.batch() (email: many messages to a transaction): no unit of it changes the owner.
        me = store.per_batch(
            ("owner", tuple(owner_names)),
            lambda: entities.ensure_owner(store, owner_names[0] if owner_names else "Me", list(owner_names[1:])),
        )
        title = transcript.title or sid
        participants = list(transcript.participants or transcript.speakers())
        owner_norms = {norm_name(n) for n in owner_names if n} | {norm_name(me.name)}
        reliability = source_trust.assess(transcript, owner_norms, dict(self_intros or {}))
        mentioned = {
            m.name for a in extracted for m in (a.subject, a.object, a.recipient) if m is not None and not m.is_speaker
        }
        people_here = [
            *participants,
            *transcript.speakers(),
            *(self_intros or {}).values(),
            *sorted(
                m.name
                for a in extracted
                for m in (a.subject, a.object, a.recipient)
                if m is not None and not m.is_speaker and m.kind == "person"
            ),
            *full_names_said(u.text for u in transcript.utterances),
        ]
        resolver = SourceResolver(
            store,
            sid,
            title,
            me.id,
            {norm_name(n) for n in owner_names if n},
            participants=participants,
            self_intros=dict(self_intros or {}),
            extra=resolve_extra,
            labels=transcript.speakers(),
            meeting_names=people_here,
            new=entities.NewEntities(store),  # the meeting's new people and organisations: one write
        )
        names = set(participants) | set(transcript.speakers()) | set((self_intros or {}).values())
        names |= {f"{label} ({title})" for label in transcript.speakers()}
        names |= mentioned
        resolver.prefetch(names)
        for label in transcript.speakers():
            resolver.speaker(label)
        for p in participants:
            if looks_like_person_name(p) and p not in resolver.speaker_ids:
                resolver.mention(p, "person")
        # "the CPS" and "the Crown Prosecution Service" in one meeting: one organisation, before any
        # assertion names either (mentions/acronyms.py finds the pairs; None: find them here).
        for long_form, acronym in (organisation_aliases(transcript) if org_aliases is None else org_aliases).items():
            resolver.alias_organisation(long_form, acronym)

        assertion_table.insert_utterances(
            store,
            [
                (sid, u.idx, u.speaker, resolver.speaker(u.speaker), u.start_s, u.end_s, u.text)
                for u in transcript.utterances
            ],
            defer=True,  # in a Store.batch(), with the batch's other utterances at its commit
        )
        rows = _assertion_rows(transcript, extracted, resolver, sid, extractor, reliability)
        resolver.flush()  # every entity the rows name, before anything reads them back
        assertion_table.insert_assertions(
            store,
            [
                "subject_id",
                "predicate",
                "object_id",
                "object_literal",
                "qualifier",
                "speaker_id",
                "said_at",
                "valid_from",
                "valid_to",
                "recorded_at",
                "confidence",
                "modality",
                "source_id",
                "utterance_idx",
                "span_start",
                "span_end",
                "quote",
                "date_phrase",
                "extractor",
                "trust",
                "trust_reasons",
                "recipient_id",
                "stance",
            ],
            rows,
        )
        # The source row goes in last, with its count: one INSERT, no UPDATE (same transaction,
        # so nobody sees the assertions without their source; in a Store.batch(), at its commit).
        sources.insert_ingested(
            store,
            sid,
            content_hash=content_hash,
            path=transcript.path,
            title=title,
            format=transcript.format,
            meeting_date=transcript.meeting_date,
            meeting_date_origin=transcript.meeting_date_origin,
            participants=participants,
            utterance_count=len(transcript.utterances),
            extractor=extractor,
            trust_reasons=reliability.all_reasons(),
            assertion_count=len(rows),
        )
        # Only a titled works_at or a departure can close an older fact: most sources skip the look-up.
        if any(supersede.may_close(r[_PRED], r[_OBJ], r[_QUAL]) for r in rows):
            supersede.apply_source(store, sid, [r[_OBJ] for r in rows if r[_PRED] == "works_at" and r[_QUAL]])
        _japanese_name_forms(store, sid, resolver, transcript, extracted, me.id)
        if on_written is not None:
            # It writes rows of its own for what it resolves (email: an address as an alias of
            # its sender): from here each new entity goes in as it is created, as it always did.
            resolver.flush()
            resolver.new = None
            on_written(sid, resolver)
        store.append_event(
            "source_ingested",
            {
                "source_id": sid,
                "path": transcript.path,
                "assertions": len(rows),
                "extractor": extractor,
                "ambiguous_references": resolver.ambiguous,
            },
            key=f"ingest:{content_hash}",
            defer=True,
        )
        return WriteResult(sid, created=True, assertions=len(rows), entities_created=resolver.created)


def _japanese_name_forms(
    store: Store,
    sid: str,
    resolver: SourceResolver,
    transcript: Transcript,
    extracted: Sequence[ExtractedAssertion],
    owner_id: int,
) -> None:
    """田中太郎 said here is also 田中 and, to a calendar, Tanaka Taro (names_ja.py)."""
    labels = [x for x in [*transcript.speakers(), *transcript.participants] if is_japanese_name(x)]
    said = sorted(
        {
            m.name
            for a in extracted
            for m in (a.subject, a.object, a.recipient)
            if m is not None and not m.is_speaker and m.kind == "person" and is_japanese_name(m.name)
        }
    )
    if not labels and not said:
        return
    pairs = [(resolver.speaker(x) if x in resolver.speaker_ids else resolver.mention(x, "person"), x) for x in labels]
    pairs += [(resolver.mention(x, "person"), x) for x in said]
    resolver.flush()  # add_japanese_aliases reads and writes the aliases of these entities
    for eid, name in dict.fromkeys(pairs):
        if eid is not None and eid != owner_id:
            add_japanese_aliases(store, eid, name, source_id=sid)


def _assertion_rows(
    transcript: Transcript,
    extracted: Sequence[ExtractedAssertion],
    resolver: SourceResolver,
    sid: str,
    extractor: str,
    reliability: source_trust.SourceTrust,
) -> list[tuple]:
    said_at: datetime | None = transcript.meeting_date
    now = utcnow()
    by_idx = {u.idx: u for u in transcript.utterances}
    rows: list[tuple] = []
    seen: set[tuple] = set()
    for a in extracted:
        u = by_idx.get(a.utterance_idx)
        said = (u.speaker or "") if u is not None and a.quote_in_label else (u.text if u is not None else "")
        if u is None or said[a.span_start : a.span_end] != a.quote:
            raise QuoteMismatch(f"quote {a.quote!r} is not utterance {a.utterance_idx}[{a.span_start}:{a.span_end}]")
        if a.predicate not in PREDICATES or a.modality not in MODALITIES or a.stance not in STANCES:
            raise ValueError(f"unknown predicate/modality/stance {a.predicate!r}/{a.modality!r}/{a.stance!r}")
        if a.stance in NOT_FACT_STANCES:
            continue  # "I've never met X", "if I worked with X", a joke, a role-play: no fact to keep
        speaker_id = resolver.speaker(u.speaker)
        r = a.recipient
        if r is not None and not r.is_speaker and resolver.only_an_organisation(r.name):
            a.recipient = None  # "send the proposal to Acme": an organisation is nobody a promise is made to
        if any(
            m is not None and m.kind == "person" and not m.is_speaker and resolver.only_an_organisation(m.name)
            for m in (a.subject, a.object)
        ):
            continue  # a rule took an organisation for a person
        subject_id = speaker_id if a.subject.is_speaker else resolver.mention(a.subject.name, a.subject.kind)
        if subject_id is None:
            continue
        object_id = None
        if a.object is not None:
            object_id = speaker_id if a.object.is_speaker else resolver.mention(a.object.name, a.object.kind)
            if object_id == subject_id:
                continue
        recipient_id = None
        if a.recipient is not None:
            # Another speaker of this meeting ("Speaker 2", "Fatima") resolves as their label does.
            recipient_id = (
                speaker_id
                if a.recipient.is_speaker
                else resolver.speaker(a.recipient.name)
                if a.recipient.name in resolver.speaker_ids
                else resolver.mention(a.recipient.name, "person")
            )
        # What the words say about themselves (second-hand, hedged), then who said them where,
        # then whether a name it rests on was a guess between namesakes.
        reasons = [*a.trust_reasons, *reliability.reasons_for(u.speaker)]
        if any(
            resolver.is_ambiguous(u.speaker if m.is_speaker else m.name)
            for m in (a.subject, a.object, a.recipient)
            if m is not None and m.kind == "person"
        ):
            reasons.append("ambiguous_reference")
        reasons = list(dict.fromkeys(reasons))
        key = (subject_id, a.predicate, object_id, a.object_literal, a.qualifier, a.utterance_idx, a.span_start)
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            (
                subject_id,
                a.predicate,
                object_id,
                a.object_literal,
                a.qualifier,
                speaker_id,
                said_at,
                a.valid_from,
                a.valid_to,
                now,
                a.confidence,
                a.modality,
                sid,
                a.utterance_idx,
                a.span_start,
                a.span_end,
                a.quote,
                a.date_phrase,
                extractor,
                trust_score(a.confidence, reasons),
                reasons,
                recipient_id,
                a.stance,
            )
        )
    return _merge_employment(rows, by_idx)


# Row layout of _assertion_rows, for the merge below.
_SUBJ, _PRED, _OBJ, _QUAL, _FROM, _TO, _CONF, _UTT, _START, _END, _QUOTE, _PHRASE = (
    0,
    1,
    2,
    4,
    7,
    8,
    10,
    13,
    14,
    15,
    16,
    17,
)
_TRUST = 19


def _merge_employment(rows: list[tuple], by_idx: dict) -> list[tuple]:
    """One fact, not two: "Sophie is now the CIO of Acme, she joined Acme in March" yields
    a titled works_at and a dated one from the same utterance; keep one row with the title
    and the dates, quoting the span that covers both (still a verbatim slice)."""
    out: list[tuple] = []
    index: dict[tuple, int] = {}
    for r in rows:
        key = (r[_SUBJ], r[_OBJ], r[_UTT])
        if r[_PRED] != "works_at" or r[_OBJ] is None or key not in index:
            if r[_PRED] == "works_at" and r[_OBJ] is not None:
                index[key] = len(out)
            out.append(r)
            continue
        prev = list(out[index[key]])
        text = by_idx[r[_UTT]].text
        if any(text[x[_START] : x[_END]] != x[_QUOTE] for x in (prev, r)):
            out.append(r)  # one quotes the speaker label: no span covers both
            continue
        if prev[_QUAL] and r[_QUAL] and prev[_QUAL].casefold() != r[_QUAL].casefold():
            out.append(r)  # two different titles: two facts
            continue
        start, end = min(prev[_START], r[_START]), max(prev[_END], r[_END])
        prev[_QUAL] = prev[_QUAL] or r[_QUAL]
        prev[_FROM] = prev[_FROM] or r[_FROM]
        prev[_TO] = prev[_TO] or r[_TO]
        prev[_PHRASE] = prev[_PHRASE] or r[_PHRASE]
        prev[_CONF] = max(prev[_CONF], r[_CONF])
        prev[_TRUST] = max(prev[_TRUST], r[_TRUST])
        prev[_START], prev[_END], prev[_QUOTE] = start, end, by_idx[r[_UTT]].text[start:end]
        out[index[key]] = tuple(prev)
    return out

"""A signal read like speech, and the organisations it names that memory has heard of.

`read_signal` writes the news item (title and summary) as a source of its own
(format `news`, trust reason `news`) through the same stages as a transcript, when
they find something in it (an item about no one writes nothing):
the offline extractor or the configured model, the writer's resolution, trust and
supersession. Its id is the content hash, as for a transcript: a resumed run, or
the same item from two feeds, writes it once.

`organisations_discussed` makes an organisation known when a meeting talked about
it, whether or not any relation about it was extracted: the names in the signal
that look like organisations (extraction/news.py) are looked for, as written, in
the utterances of every other source; one said there becomes (or already is) an
organisation entity, first seen in that source. The signal then links to it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from backchannel.config import Settings
from backchannel.core.timeutil import as_naive_utc, parse_naive_utc
from backchannel.extraction.news import news_transcript, organisation_names
from backchannel.extraction.writer import source_id_for
from backchannel.memory import entities
from backchannel.memory import signals as signal_table
from backchannel.memory.store import Store
from backchannel.memory.text import norm_name
from backchannel.triggers import signals as signals_mod


def transcript_of(sig: dict[str, Any], now: datetime | None = None) -> Any:
    """The news transcript, dated when published (else `now`: when it was seen)."""
    published = sig.get("published_at")
    when = parse_naive_utc(published) if isinstance(published, str) else published
    when = as_naive_utc(when) if when else now
    return news_transcript(
        sig.get("title") or "", sig.get("summary"), published=when, path=sig.get("url") or sig.get("source")
    )


def news_source_id(sig: dict[str, Any]) -> str | None:
    """The source id the signal's text is (or will be) stored under; None for an empty item."""
    t = transcript_of(sig)
    return source_id_for(t.content_hash()) if t.utterances else None


def read_signal(
    store: Store,
    settings: Settings,
    sig: dict[str, Any],
    *,
    gateway: Any = None,
    run_id: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Write the signal as a news source (once); what was read from it."""
    from backchannel.extraction import ingest
    from backchannel.extraction.news import extract_news
    from backchannel.extraction.writer import existing_source, write_source

    t = transcript_of(sig, now)
    if not t.utterances:
        return {"source_id": None, "assertions": 0, "created": False}
    content_hash = t.content_hash()
    known = existing_source(store, content_hash)
    if known:
        return {"source_id": known, "assertions": 0, "created": False}
    names = ingest.owner_names(settings)
    extractor, stats = "offline", None
    if settings.models.extract != "offline" and gateway is not None:
        from backchannel.extraction import model as model_extract

        result = model_extract.extract_with_model(t, gateway=gateway, run_id=run_id, owner_names=names)
        extracted, extractor, stats = result.assertions, settings.models.extract, result.stats()
    else:
        extracted = extract_news(t, owner_names=names)
    if not extracted:
        # Nothing about people in it: no source (a feed's every item would be one), and the
        # same reading gives the same nothing when a resumed run reads it again.
        if stats is not None:
            store.append_event(
                "model_extraction",
                {"source_id": None, "signal": sig.get("id"), **stats},
                run_id=run_id,
                key=f"extract:{content_hash}",
            )
        return {"source_id": None, "assertions": 0, "created": False}
    written = write_source(
        store,
        t,
        extracted,
        owner_names=names,
        extractor=extractor,
        content_hash=content_hash,
        resolve_extra=ingest.extra_resolver(settings, gateway, run_id),
    )
    if stats is not None and written.created:
        store.append_event(
            "model_extraction", {"source_id": written.source_id, **stats}, run_id=run_id, key=f"extract:{content_hash}"
        )
    return {"source_id": written.source_id, "assertions": written.assertions, "created": written.created}


def organisations_discussed(store: Store, sig: dict[str, Any], *, source_id: str | None = None) -> list[dict[str, Any]]:
    """The signal's organisation names said in other sources (in `source_id` only, when given):
    each made an organisation entity when none exists; [{"name", "org_id", "created", "said_in"}]."""
    text = f"{sig.get('title') or ''}. {sig.get('summary') or ''}"
    found_groups = organisation_names(text)
    if not found_groups:
        return []
    people = {norm_name(p) for p in _people_named(store, sig)} | _people_among(store, found_groups)
    groups = [[n for n in forms if norm_name(n) not in people] for forms in found_groups]
    groups = [g for g in groups if g]
    if not groups:
        return []
    rows = signal_table.utterances_saying(store, sorted({n for g in groups for n in g}), source_id=source_id)
    out: list[dict[str, Any]] = []
    for forms in groups:
        for name in forms:  # the longest form another source says
            said = _said(name, rows)
            if not said:
                continue
            found = entities.find(store, name, "organisation")
            org_id = found[0].id if found else entities.create(store, name, "organisation", source_id=said[0][0]).id
            if all(o["org_id"] != org_id for o in out):
                out.append(
                    {"name": name, "org_id": org_id, "created": not found, "said_in": [list(x) for x in said[:20]]}
                )
            break
    return out


def _said(name: str, rows: list[tuple[str, int, str | None, str]]) -> list[tuple[str, int]]:
    """(source, utterance) where `name` is said as whole words; a one-word name opening a
    sentence ("Pinecrest? No idea") may be any word, and a speaker's own label is no mention."""
    word = re.compile(r"(?<![\w'’&-])" + re.escape(name) + r"(?![\w&-])")
    said = []
    for sid, idx, speaker, utterance in rows:
        if speaker and norm_name(speaker) == norm_name(name):
            continue
        if any(" " in name or not _opens_sentence(utterance, m.start()) for m in word.finditer(utterance)):
            said.append((sid, idx))
    return said


def may_be_discussed(sig: dict[str, Any], text: str) -> bool:
    """A cheap test before `link_discussed`: one of the signal's organisation names is in `text`."""
    names = organisation_names(f"{sig.get('title') or ''}. {sig.get('summary') or ''}")
    return any(form in text for forms in names for form in forms)


def link_discussed(store: Store, sig: dict[str, Any], *, source_id: str | None = None) -> dict[str, Any] | None:
    """Link the stored signal to the organisations other sources discuss; the new links, or None."""
    with store.transaction():
        found = organisations_discussed(store, sig, source_id=source_id)
        if not found:
            return None
        matches = signals_mod.match_org_details(
            f"{sig.get('title') or ''} {sig.get('summary') or ''}",
            signal_table.organisations(store, besides=news_source_id(sig)),
        )
        # The discussed ones count even when this news item made them known first.
        ids = sorted(
            {m.org_id for m in matches if m.confidence >= signals_mod.MIN_MATCH_CONFIDENCE}
            | {int(o["org_id"]) for o in found}
            | {int(i) for i in sig.get("org_ids") or []}
        )
        gained = sorted(set(ids) - {int(i) for i in sig.get("org_ids") or []})
        if not gained:
            return None
        import json

        signal_table.relink(store, sig["id"], ids, json.dumps([m.to_dict() for m in matches]))
    return {"org_ids": ids, "gained": gained, "discussed": found}


def _people_named(store: Store, sig: dict[str, Any]) -> list[str]:
    """People the news item's own reading found (its subjects), so no person becomes an organisation."""
    sid = news_source_id(sig)
    if sid is None:
        return []
    rows = store.con.execute(
        """SELECT DISTINCT e.name FROM assertions a JOIN entities e ON e.id IN (a.subject_id, a.object_id)
           WHERE a.source_id = ? AND e.kind = 'person'""",
        [sid],
    ).fetchall()
    return [str(r[0]) for r in rows]


def _people_among(store: Store, groups: list[list[str]]) -> set[str]:
    """The normalised forms memory knows as a person's name or alias, or a known person's
    first name: two queries for all of them."""
    forms = sorted({n for g in groups for n in g})
    known = entities.find_many(store, forms)
    out = {k for k, found in known.items() if any(e.kind == "person" for e in found)}
    single = sorted({norm_name(n) for n in forms if " " not in n} - {""})
    if single:
        out |= {
            str(r[0])
            for r in store.con.execute(
                """SELECT DISTINCT split_part(norm, ' ', 1) FROM entities
               WHERE kind = 'person' AND merged_into IS NULL AND contains(norm, ' ')
                 AND split_part(norm, ' ', 1) = ANY(?::VARCHAR[])""",
                [single],
            ).fetchall()
        }
    return out


_SENTENCE_OPEN = re.compile(r"(?:^|[.!?…]\s+|[\"“(]\s*)$")


def _opens_sentence(text: str, pos: int) -> bool:
    return _SENTENCE_OPEN.search(text[max(0, pos - 4) : pos]) is not None

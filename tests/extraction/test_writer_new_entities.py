"""The writer holds a meeting's new people and organisations and writes them in one
statement: the rows, ids, aliases and sequence are those of creating them one by one."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.resolve.entities import SourceResolver
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.writer import write_source
from backchannel.memory import Store, entities
from backchannel.memory.text import norm_name

OWNER = ["Alex Moreau", "Alex"]
PEOPLE = [
    f"{f} {last}"
    for f, last in zip(
        ["Ines", "Hugo", "Jade", "Omar", "Lea", "Karl", "Nadia", "Paul"],
        ["Costa", "Roux", "Blanc", "Khan", "Simon", "Weber", "Haddad", "Girard"],
    )
]
ORGS = ["Hooli", "Soylent", "Cyberdyne", "Vandelay Industries", "Initech", "Globex"]
TITLES = ["CTO", "CFO", "CIO", "head of procurement", "VP of Engineering", "chief executive"]


def meeting(date: datetime, lines: list[tuple[str, str]], title: str) -> Transcript:
    return Transcript(
        utterances=[Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)],
        format="text",
        title=title,
        meeting_date=date,
        meeting_date_origin="front_matter",
        participants=sorted({sp for sp, _ in lines}),
    )


def titled_facts(t: Transcript) -> list[ExtractedAssertion]:
    """One "P is the T of O." fact per utterance, as an extractor would return it."""
    out = []
    for u in t.utterances:
        person, rest = u.text.rstrip(".").split(" is the ")
        title, org = rest.rsplit(" of ", 1)
        out.append(
            ExtractedAssertion(
                Mention(person, "person"),
                "works_at",
                object=Mention(org, "organisation"),
                qualifier=title,
                utterance_idx=u.idx,
                span_start=0,
                span_end=len(u.text) - 1,
                quote=u.text[:-1],
            )
        )
    return out


def table(store: Store, sql: str) -> set[tuple]:
    return set(store.con.execute(sql).fetchall())


def test_a_meeting_of_many_new_people_and_organisations_writes_the_rows_of_one_by_one(tmp_path: Path):
    path = tmp_path / "memory.duckdb"
    store = Store.open(path)
    speakers = ["Marc Dupont", "Sophie Martin"]
    first = meeting(datetime(2026, 1, 5, 10), [("Marc Dupont", "Ines Costa is the CTO of Hooli.")], "Kick-off")
    write_source(store, first, titled_facts(first), owner_names=OWNER, extractor="test")
    before = table(store, "SELECT id, kind, name FROM entities")
    known = {(k, n) for _, k, n in before}
    lines = [
        (speakers[i % 2], f"{p} is the {TITLES[i % len(TITLES)]} of {ORGS[i % len(ORGS)]}.")
        for i, p in enumerate(PEOPLE)
    ]
    second = meeting(datetime(2026, 2, 9, 10), lines, "Review")
    facts = titled_facts(second)
    r = write_source(store, second, facts, owner_names=OWNER, extractor="test")
    sid = r.source_id
    store.close()

    store = Store.open(path)  # what the file holds after the commit
    said = {("person", sp) for sp in speakers} | {
        (m.kind, m.name) for a in facts for m in (a.subject, a.object) if m is not None
    }
    new = said - known
    rows = table(store, "SELECT id, kind, name FROM entities")
    added = rows - before
    assert {(k, n) for _, k, n in added} == new and r.entities_created == len(new)
    # The ids the sequence gives one by one: the next numbers after the oldest rows, no gap,
    # and the sequence stands after the last of them.
    first_new = max(i for i, _, _ in before) + 1
    assert sorted(i for i, _, _ in added) == list(range(first_new, first_new + len(new)))
    assert store.scalar("SELECT nextval('entity_ids')") == first_new + len(new)
    # Each new entity has its name as its one alias, from this meeting.
    ids = {i for i, _, _ in added}
    aliases = {row for row in table(store, "SELECT entity_id, alias, norm, source_id FROM aliases") if row[0] in ids}
    assert aliases == {(i, n, norm_name(n), sid) for i, _, n in added}
    # Every fact points at the entities it names.
    by_name = {(k, n): i for i, k, n in rows}
    assert table(store, f"SELECT subject_id, object_id, qualifier FROM assertions WHERE source_id = '{sid}'") == {
        (by_name[("person", a.subject.name)], by_name[("organisation", a.object.name)], a.qualifier) for a in facts
    }
    store.close()


def resolve_meeting(store: Store, held: bool) -> list[int]:
    """One meeting's resolutions, new names among them: a seat, a titled spelling, a first
    name with its full name said, an acronym, a name nobody prefetched (a store read)."""
    owner = entities.ensure_owner(store, OWNER[0], OWNER[1:])
    labels = ["Speaker 1", "Hannah Schulz", "Dr Ian Johnson"]
    resolver = SourceResolver(
        store,
        "Sheld",
        "Board",
        owner.id,
        {norm_name(n) for n in OWNER},
        participants=labels,
        labels=labels,
        meeting_names=["Hannah Schulz", "Ian Johnson", *PEOPLE],
        new=entities.NewEntities(store) if held else None,
    )
    resolver.prefetch({*labels, *PEOPLE, *ORGS, "Hannah"})
    ids = [resolver.speaker(label) for label in labels]
    ids += [resolver.mention(p, "person") for p in PEOPLE]
    ids += [resolver.mention(o, "organisation") for o in ORGS]
    ids.append(resolver.mention("Hannah", "person"))
    ids.append(resolver.alias_organisation("Crown Prosecution Service", "CPS"))
    ids.append(resolver.mention("Zoe Fischer", "person"))  # not prefetched: read from the store
    ids += [resolver.mention(p, "person") for p in ["Sakura Ines Costa", "Ines Costa"]]
    resolver.flush()
    return [i for i in ids if i is not None]


def test_held_new_entities_are_the_entities_written_one_by_one(tmp_path: Path):
    held, direct = Store.open(tmp_path / "held.duckdb"), Store.open(tmp_path / "direct.duckdb")
    for s in (held, direct):
        entities.create(s, "Globex", "organisation")  # one already known, the rest new
    with held.transaction():
        held_ids = resolve_meeting(held, held=True)
    with direct.transaction():
        direct_ids = resolve_meeting(direct, held=False)
    assert held_ids == direct_ids
    for sql in (
        "SELECT id, kind, name, norm, is_owner, merged_into FROM entities",
        "SELECT entity_id, alias, norm, source_id FROM aliases",
        "SELECT nextval('entity_ids')",
    ):
        assert table(held, sql) == table(direct, sql)
    assert len(table(held, "SELECT id FROM entities")) > len(PEOPLE) + len(ORGS)
    held.close()
    direct.close()


BARE = b"""From: Marc Dupont <marc.dupont@initech.example>
To: zoe.fischer@globex.example, Alex Moreau <alex@example.com>
Subject: Numbers
Date: Tue, 03 Nov 2026 09:00:00 +0100
Message-ID: <bare-1@initech.example>
Content-Type: text/plain; charset=utf-8

Zoe, the pricing is attached. I'll call you on Friday.

Marc
"""


def test_a_message_to_a_bare_address_writes_its_alias_once(home, store, tmp_path):
    """Email goes through the same writer (its message row and addresses written in on_written,
    after the held entities): the message is stored and each address is an alias once."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import ingest_file

    (home / "config.toml").write_text('[owner]\nname = "Alex Moreau"\nemail = "alex@example.com"\n')
    (tmp_path / "bare.eml").write_bytes(BARE)
    out = ingest_file(store, load_settings(resolve_paths()), tmp_path / "bare.eml")
    assert out.status == "ingested", out.error
    rows = store.con.execute(
        "SELECT e.name, a.alias FROM aliases a JOIN entities e ON e.id = a.entity_id"
        " WHERE a.norm IN ('zoe.fischer@globex.example', 'marc.dupont@initech.example')"
    ).fetchall()
    assert sorted(alias for _, alias in rows) == ["marc.dupont@initech.example", "zoe.fischer@globex.example"]

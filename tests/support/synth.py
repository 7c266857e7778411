"""Synthetic memories for tests and benches: N assertions over M people and orgs,
bulk-inserted (DuckDB scans numpy arrays directly) in seconds even at 1M rows.

The seed story is planted in every graph: the owner knows Marc Dupont; Marc
worked with Sophie Martin at Globex (2016-2021); Sophie Martin is CIO at Acme.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from backchannel.memory import entities as ents
from backchannel.memory.store import Store, utcnow
from backchannel.memory.text import norm_name

TITLES = ("engineer", "manager", "director", "analyst", "consultant", "VP Sales", "CTO", "CFO", "designer")
LITERALS = ("send the pricing", "share the deck", "intro to the team", "follow up next week", "review the contract")
EPOCH = datetime(1970, 1, 1)


@dataclass
class SynthGraph:
    owner: int
    people: np.ndarray
    orgs: np.ndarray
    contacts: np.ndarray
    named: dict[str, int] = field(default_factory=dict)  # "Marc Dupont", "Sophie Martin", "Acme", "Globex"
    assertions: int = 0


def _insert_entities(store: Store, kinds: list[str], names: list[str]) -> list[int]:
    now = utcnow()
    d = {
        "ord": np.arange(len(names)),
        "kind": np.array(kinds, dtype=object),
        "name": np.array(names, dtype=object),
        "norm": np.array([norm_name(n) for n in names], dtype=object),
    }
    store.con.register("synth_entities", d)
    try:
        first = store.scalar("SELECT coalesce(max(id), 0) FROM entities")
        store.con.execute(
            "INSERT INTO entities (kind, name, norm, created_at) "
            "SELECT kind, name, norm, ? FROM synth_entities ORDER BY ord",
            [now],
        )
        rows = store.con.execute("SELECT id, name FROM entities WHERE id > ?", [first]).fetchall()
        by_name = {n: i for i, n in rows}
        store.con.execute(
            "INSERT INTO aliases (entity_id, alias, norm, created_at) "
            "SELECT e.id, e.name, e.norm, ? FROM entities e WHERE e.id > ? ON CONFLICT DO NOTHING",
            [now, first],
        )
    finally:
        store.con.unregister("synth_entities")
    return [by_name[n] for n in names]


def generate(
    store: Store,
    n_assertions: int,
    n_people: int | None = None,
    n_orgs: int | None = None,
    *,
    contacts: int = 200,
    seed: int = 0,
    now: datetime | None = None,
) -> SynthGraph:
    """Add a synthetic graph of about `n_assertions` assertions to `store` (one transaction)."""
    rng = np.random.default_rng(seed)
    now = now or utcnow()
    n_people = n_people or max(50, n_assertions // 20)
    n_orgs = n_orgs or max(5, n_people // 50)
    contacts = min(contacts, n_people - 3)
    with store.transaction():
        me = ents.ensure_owner(store, "Me").id
        names = ["Marc Dupont", "Sophie Martin"] + [f"Person {i:06d}" for i in range(n_people - 2)]
        people = np.array(_insert_entities(store, ["person"] * n_people, names), dtype=np.int64)
        onames = ["Acme", "Globex"] + [f"Org {i:05d}" for i in range(n_orgs - 2)]
        orgs = np.array(_insert_entities(store, ["organisation"] * n_orgs, onames), dtype=np.int64)
        ents.add_alias(store, int(people[0]), "Marc")
        ents.add_alias(store, int(people[1]), "Sophie")
        marc, sophie, acme, globex = int(people[0]), int(people[1]), int(orgs[0]), int(orgs[1])
        contact_ids = np.concatenate([[marc], rng.choice(people[2:], contacts - 1, replace=False)])
        now_s = int((now - EPOCH).total_seconds())
        span = 3 * 365 * 86400

        cols: dict[str, list[np.ndarray]] = {
            k: [] for k in ("subj", "pred", "obj", "lit", "qual", "spk", "said", "vfrom", "vto", "conf", "modality")
        }

        def add(subj, pred, obj, lit, qual, spk, said, vfrom=None, vto=None, modality="stated"):
            n = len(subj)
            cols["subj"].append(np.asarray(subj, np.int64))
            cols["pred"].append(np.full(n, pred, dtype=object) if isinstance(pred, str) else np.asarray(pred, object))
            cols["obj"].append(np.asarray(obj, np.int64) if obj is not None else np.full(n, -1, np.int64))
            cols["lit"].append(np.asarray(lit, object) if lit is not None else np.full(n, None, dtype=object))
            cols["qual"].append(np.asarray(qual, object) if qual is not None else np.full(n, None, dtype=object))
            cols["spk"].append(np.asarray(spk, np.int64))
            cols["said"].append(np.asarray(said, np.int64))
            cols["vfrom"].append(np.asarray(vfrom, np.int64) if vfrom is not None else np.full(n, -1, np.int64))
            cols["vto"].append(np.asarray(vto, np.int64) if vto is not None else np.full(n, -1, np.int64))
            cols["conf"].append(np.round(rng.uniform(0.5, 0.95, n), 2))
            cols["modality"].append(np.full(n, modality, dtype=object))

        def days(d: datetime) -> int:
            return (d - EPOCH).days

        # The seed story.
        add([me], "knows", [marc], None, None, [me], [now_s - 30 * 86400])
        add(
            [marc],
            "worked_with",
            [sophie],
            None,
            ["Globex"],
            [marc],
            [now_s - 425 * 86400],
            [days(datetime(2016, 1, 1))],
            [days(datetime(2021, 12, 31))],
        )
        add([sophie], "works_at", [acme], None, ["CIO"], [marc], [now_s - 425 * 86400])
        # My network.
        rest = contact_ids[1:]
        add(
            np.full(len(rest), me),
            "knows",
            rest,
            None,
            None,
            np.full(len(rest), me),
            now_s - rng.integers(0, span, len(rest)),
        )
        # Everyone works somewhere.
        others = people[2:]
        add(
            others,
            "works_at",
            rng.choice(orgs, len(others)),
            None,
            rng.choice(TITLES, len(others)),
            rng.choice(people, len(others)),
            now_s - rng.integers(0, span, len(others)),
        )
        add([marc], "works_at", [globex], None, ["VP Sales"], [marc], [now_s - 400 * 86400])
        done = sum(len(c) for c in cols["subj"])
        n = max(0, n_assertions - done)
        # The bulk: random links between people, and some literals.
        kind = rng.choice(4, n, p=[0.4, 0.35, 0.15, 0.10])
        subj = rng.choice(people, n)
        objp = rng.choice(people, n)
        objo = rng.choice(orgs, n)
        spk = rng.choice(people, n)
        said = now_s - rng.integers(0, span, n)
        pred = np.array(["worked_with", "knows", "mentioned_with", "committed_to"], dtype=object)[kind]
        obj = np.where(kind == 2, objo, np.where(kind == 3, -1, objp))
        obj = np.where(obj == subj, np.roll(objp, 1), obj)
        lit = np.where(kind == 3, rng.choice(np.array(LITERALS, dtype=object), n), None)
        qual = np.where(kind == 0, np.array(onames, dtype=object)[rng.integers(0, n_orgs, n)], None)
        vto = np.where(kind == 3, (said // 86400) + rng.integers(-30, 60, n), -1)
        add(subj, pred, obj, lit, qual, spk, said, None, vto)

        cat = {k: np.concatenate(v) for k, v in cols.items()}
        total = len(cat["subj"])
        n_src = max(1, total // 200)
        src_ids = np.array([f"Ssynth{seed:03d}{i:07d}" for i in range(n_src)], dtype=object)
        src_dates = now_s - rng.integers(0, span, n_src)
        store.con.register(
            "synth_sources",
            {
                "id": src_ids,
                "title": np.array([f"Synthetic meeting {i}" for i in range(n_src)], dtype=object),
                "date": src_dates,
            },
        )
        store.con.execute(
            "INSERT INTO sources (id, content_hash, title, format, meeting_date, meeting_date_origin, extractor)"
            " SELECT id, 'synth:' || id, title, 'import', to_timestamp(date)::TIMESTAMP, 'import', 'synth'"
            " FROM synth_sources ON CONFLICT DO NOTHING"
        )
        store.con.unregister("synth_sources")
        cat["src"] = src_ids[rng.integers(0, n_src, total)]
        cat["quote"] = np.array([f"synthetic statement {i}" for i in range(total)], dtype=object)
        cat["ord"] = np.arange(total)
        modality = cat.pop("modality")
        modality[cat["pred"] == "committed_to"] = "commitment"
        cat["modality"] = modality
        store.con.register("synth_assertions", cat)
        try:
            store.con.execute(
                """INSERT INTO assertions (subject_id, predicate, object_id, object_literal, qualifier, speaker_id,
                        said_at, valid_from, valid_to, recorded_at, confidence, modality, source_id, quote, extractor)
                   SELECT subj, pred, CASE WHEN obj < 0 THEN NULL ELSE obj END, lit, qual, spk,
                          to_timestamp(said)::TIMESTAMP,
                          CASE WHEN vfrom < 0 THEN NULL ELSE DATE '1970-01-01' + vfrom::INTEGER END,
                          CASE WHEN vto < 0 THEN NULL ELSE DATE '1970-01-01' + vto::INTEGER END,
                          ?, conf, modality, src, quote, 'synth'
                   FROM synth_assertions ORDER BY ord""",
                [utcnow()],
            )
        finally:
            store.con.unregister("synth_assertions")
    return SynthGraph(
        owner=me,
        people=people,
        orgs=orgs,
        contacts=contact_ids,
        named={"Marc Dupont": marc, "Sophie Martin": sophie, "Acme": acme, "Globex": globex},
        assertions=total,
    )


SEED_NOW = datetime(2025, 6, 2, 9, 0, 0)


def seed_story(store: Store, now: datetime = SEED_NOW) -> dict[str, int]:
    """The hand-built seed story, with distractors, for tests and demos. Returns name -> id.

    Me knows Marc; Marc worked with Sophie Martin at Globex 2016-2021; Sophie is the
    CIO of Acme. Distractors: Robert Petit was Acme's CIO and left; Julie Bernard is
    CIO elsewhere; Paul Durand is Acme's CFO; Tom Blanc worked with Sophie but is
    no contact of mine; Nina Roux, a contact, has been silent since last September.
    """
    d = lambda days: now - timedelta(days=days)  # noqa: E731
    with store.transaction():
        me = ents.ensure_owner(store, "Me").id
        ids = {"Me": me}
        for name, kind, aliases in (
            ("Marc Dupont", "person", ["Marc"]),
            ("Sophie Martin", "person", ["Sophie"]),
            ("Robert Petit", "person", []),
            ("Julie Bernard", "person", []),
            ("Paul Durand", "person", ["Paul"]),
            ("Tom Blanc", "person", []),
            ("Nina Roux", "person", ["Nina"]),
            ("Acme", "organisation", ["Acme Corp"]),
            ("Globex", "organisation", []),
            ("Initech", "organisation", []),
        ):
            ids[name] = ents.create(store, name, kind).id
            for a in aliases:
                ents.add_alias(store, ids[name], a)
        meetings = [  # (source id, title, days ago, [(speaker, text)])
            (
                "Sseedcoffee01",
                "Coffee with Marc",
                425,
                [
                    ("Me", "Good to see you Marc, we should do this more often."),
                    ("Marc Dupont", "I worked with Sophie Martin at Globex from 2016 to 2021."),
                    ("Marc Dupont", "Sophie is the CIO of Acme now."),
                    ("Marc Dupont", "Robert Petit left Acme last year."),
                ],
            ),
            (
                "Sseedsync0002",
                "Weekly sync with Paul and Marc",
                5,
                [
                    ("Paul Durand", "I am the CFO at Acme, I will review the contract."),
                    ("Marc Dupont", "I will send you the pricing by Friday."),
                    ("Me", "Great, and I will share the deck."),
                ],
            ),
            (
                "Sseedold00003",
                "Catch-up with Nina",
                274,
                [
                    ("Nina Roux", "I worked with Robert Petit at Acme for years."),
                    ("Tom Blanc", "I worked with Sophie Martin at Initech."),
                    ("Julie Bernard", "I am the CIO at Initech."),
                ],
            ),
            (
                "Sseedpaul0004",
                "Call with Paul",
                20,
                [
                    ("Paul Durand", "I will review the contract next week."),
                ],
            ),
        ]
        utt = {}
        for sid, title, ago, lines in meetings:
            store.con.execute(
                "INSERT INTO sources (id, content_hash, title, format, meeting_date, meeting_date_origin,"
                " participants, utterance_count, extractor) VALUES (?, ?, ?, 'text', ?, 'given', ?, ?, 'seed')",
                [sid, "seed:" + sid, title, d(ago), sorted({s for s, _ in lines}), len(lines)],
            )
            for i, (spk, text) in enumerate(lines):
                store.con.execute(
                    "INSERT INTO utterances (source_id, idx, speaker, speaker_id, text) VALUES (?, ?, ?, ?, ?)",
                    [sid, i, spk, ids[spk], text],
                )
                utt[(sid, i)] = (ids[spk], text, d(ago))

        def fact(
            subj,
            pred,
            obj=None,
            *,
            lit=None,
            qual=None,
            src,
            idx,
            quote,
            vfrom=None,
            vto=None,
            modality="stated",
            superseded=False,
        ):
            spk, text, said = utt[(src, idx)]
            start = text.index(quote)
            return store.scalar(
                "INSERT INTO assertions (subject_id, predicate, object_id, object_literal, qualifier, speaker_id,"
                " said_at, valid_from, valid_to, superseded_at, confidence, modality, source_id, utterance_idx,"
                " span_start, span_end, quote, extractor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0.8, ?, ?, ?, ?, ?, ?,"
                " 'seed') RETURNING id",
                [
                    ids[subj],
                    pred,
                    ids[obj] if obj else None,
                    lit,
                    qual,
                    spk,
                    said,
                    vfrom,
                    vto,
                    said if superseded else None,
                    modality,
                    src,
                    idx,
                    start,
                    start + len(quote),
                    quote,
                ],
            )

        c, s, n, p = "Sseedcoffee01", "Sseedsync0002", "Sseedold00003", "Sseedpaul0004"
        fact("Me", "knows", "Marc Dupont", src=c, idx=0, quote="Good to see you Marc")
        fact(
            "Marc Dupont",
            "worked_with",
            "Sophie Martin",
            qual="Globex",
            src=c,
            idx=1,
            quote="I worked with Sophie Martin at Globex from 2016 to 2021",
            vfrom=datetime(2016, 1, 1).date(),
            vto=datetime(2021, 12, 31).date(),
        )
        fact("Sophie Martin", "works_at", "Acme", qual="CIO", src=c, idx=2, quote="Sophie is the CIO of Acme")
        fact(
            "Robert Petit",
            "works_at",
            "Acme",
            qual="CIO",
            src=c,
            idx=3,
            quote="Robert Petit left Acme",
            vto=d(500).date(),
            superseded=True,
        )
        fact("Robert Petit", "left", "Acme", src=c, idx=3, quote="Robert Petit left Acme")
        fact("Paul Durand", "works_at", "Acme", qual="CFO", src=s, idx=0, quote="I am the CFO at Acme")
        fact(
            "Paul Durand",
            "committed_to",
            lit="review the contract",
            src=s,
            idx=0,
            quote="I will review the contract",
            modality="commitment",
        )
        fact(
            "Paul Durand",
            "committed_to",
            lit="review the contract",
            src=p,
            idx=0,
            quote="I will review the contract",
            modality="commitment",
        )
        fact(
            "Marc Dupont",
            "committed_to",
            lit="send you the pricing",
            src=s,
            idx=1,
            quote="I will send you the pricing by Friday",
            vto=(now + timedelta(days=4)).date(),
            modality="commitment",
        )
        fact(
            "Me",
            "committed_to",
            lit="share the deck",
            src=s,
            idx=2,
            quote="I will share the deck",
            modality="commitment",
        )
        fact("Me", "knows", "Paul Durand", src=s, idx=2, quote="Great")
        fact(
            "Nina Roux",
            "worked_with",
            "Robert Petit",
            qual="Acme",
            src=n,
            idx=0,
            quote="I worked with Robert Petit at Acme",
        )
        fact("Me", "knows", "Nina Roux", src=n, idx=0, quote="I worked with Robert Petit")
        fact(
            "Tom Blanc",
            "worked_with",
            "Sophie Martin",
            qual="Initech",
            src=n,
            idx=1,
            quote="I worked with Sophie Martin at Initech",
        )
        fact("Julie Bernard", "works_at", "Initech", qual="CIO", src=n, idx=2, quote="I am the CIO at Initech")
        store.con.execute(
            "INSERT INTO calendar_events (uid, starts_at, ends_at, summary, attendees, attendee_ids, seen_at)"
            " VALUES ('lunch-marc', ?, ?, 'Lunch with Marc', ['Marc Dupont'], ?, ?)",
            [now + timedelta(days=2), now + timedelta(days=2, hours=1), [ids["Marc Dupont"]], now],
        )
        store.con.execute(
            "INSERT INTO signals (id, source, title, summary, published_at, org_ids, seen_at)"
            " VALUES ('Gseedtender', 'seed', 'Acme publishes a tender for a data platform', NULL, ?, ?, ?)",
            [now - timedelta(days=1), [ids["Acme"]], now],
        )
    return ids


# The seed's own question, written the way naive generated code writes it: for each
# person mentioning the target, for each link of that person, keep links into my
# network. bench/traverse.py times it at 1M assertions; tests check it stays correct.
SEED_PROGRAM = """
target = api.resolve("CIO", org="Acme")
mine = {c["id"] for c in api.network()}
keep = []
for m in api.mentions_of([t["id"] for t in target]):
    for link in api.links([m["speaker"]]):
        if link["to"] in mine:
            keep.append(link["id"])
result = sorted(set(keep))
"""

"""`import assertions`: validation with line numbers, one transaction, idempotency,
entity matching, and a round trip through export."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from backchannel.config import resolve_paths
from backchannel.graph.api import GraphAPI
from backchannel.graph.importer import ImportFailed, export_jsonl, import_jsonl
from backchannel.memory import Store
from backchannel.memory import entities as ents

LINES = [
    {"type": "entity", "id": "marc", "kind": "person", "name": "Marc Dupont", "aliases": ["Marc"]},
    {"type": "entity", "id": "sophie", "kind": "person", "name": "Sophie Martin"},
    {"type": "entity", "id": "acme", "kind": "organisation", "name": "Acme"},
    {
        "type": "assertion",
        "id": "crm-1",
        "subject": "sophie",
        "predicate": "works_at",
        "object": "acme",
        "qualifier": "CIO",
        "evidence": {
            "quote": "Sophie is the CIO of Acme",
            "text": "Sophie is the CIO of Acme now.",
            "speaker": "marc",
            "said_at": "2025-04-02T10:15:00+02:00",
            "source": "CRM note 1",
            "source_date": "2025-04-02",
        },
    },
    {
        "type": "assertion",
        "subject": "marc",
        "predicate": "worked_with",
        "object": "sophie",
        "qualifier": "Globex",
        "valid_from": "2016-01-01",
        "valid_to": "2021-12-31",
        "confidence": 0.8,
        "evidence": {
            "quote": "I worked with Sophie at Globex",
            "speaker": "marc",
            "said_at": "2025-04-02T10:16:00",
            "source": "CRM note 1",
            "source_date": "2025-04-02",
        },
    },
    {"type": "assertion", "subject": "me", "predicate": "knows", "object": "marc"},
    {
        "type": "assertion",
        "subject": "marc",
        "predicate": "committed_to",
        "object_literal": "send the pricing",
        "valid_to": "2025-04-10",
    },
]


def _text(lines):
    return [json.dumps(x) for x in lines]


def test_import_writes_entities_assertions_and_evidence(store):
    rep = import_jsonl(store, _text(LINES), source_file="crm.jsonl")
    assert (rep.entities_created, rep.assertions_imported, rep.assertions_skipped, rep.sources_created) == (3, 4, 0, 1)
    api = GraphAPI(store)
    marc = api.resolve("Marc")[0]["id"]
    assert api.resolve("CIO of Acme")[0]["name"] == "Sophie Martin"
    found = api.paths([api.me()["id"]], [api.resolve("Sophie Martin")[0]["id"]], max_hops=2)
    assert [p["names"] for p in found] == [["Me", "Marc Dupont", "Sophie Martin"]]
    ev = api.evidence([rep.assertion_ids[0]])[0]
    assert ev["quote"] == "Sophie is the CIO of Acme" and ev["speaker"] == "Marc Dupont"
    assert ev["said_at"] == "2025-04-02T08:15:00" and ev["source_title"] == "CRM note 1"  # UTC
    utt = store.query(
        "SELECT text FROM utterances u JOIN assertions a ON a.source_id = u.source_id"
        " AND a.utterance_idx = u.idx WHERE a.id = ?",
        [rep.assertion_ids[0]],
    )[0]["text"]
    assert utt == "Sophie is the CIO of Acme now."
    promise = api.assertions_about([marc], predicates=["committed_to"])[0]
    assert promise["modality"] == "commitment" and promise["valid_to"] == "2025-04-10"
    # `backchannel sources` counts what the import put there, like a transcript's.
    src = store.query("SELECT utterance_count, assertion_count FROM sources WHERE format = 'import'")
    assert [(r["utterance_count"], r["assertion_count"]) for r in src] == [(2, 2)]  # two quotes of CRM note 1


def test_import_is_idempotent_and_matches_existing_entities(store):
    ents.ensure_owner(store, "Me")
    existing = ents.create(store, "Sophie Martin", "person").id
    import_jsonl(store, _text(LINES))
    again = import_jsonl(
        store, _text(LINES + [{"type": "assertion", "subject": "sophie", "predicate": "knows", "object": "marc"}])
    )
    assert again.assertions_imported == 1 and again.assertions_skipped == 4 and again.entities_created == 0
    assert again.entities_matched == 3
    assert store.scalar("SELECT count(*) FROM entities WHERE name = 'Sophie Martin'") == 1
    assert GraphAPI(store).resolve("Sophie Martin")[0]["id"] == existing
    assert store.scalar("SELECT count(*) FROM assertions") == 5


def test_bad_lines_fail_the_whole_import_with_line_numbers(store):
    bad = _text(LINES) + [
        "not json",
        json.dumps({"type": "assertion", "subject": "marc", "predicate": "employs", "object": "acme"}),
        json.dumps({"type": "assertion", "subject": "ghost", "predicate": "knows", "object": "marc"}),
        json.dumps(
            {
                "type": "assertion",
                "subject": "marc",
                "predicate": "knows",
                "object": "acme",
                "evidence": {"quote": "abc", "text": "xyz"},
            }
        ),
        json.dumps({"type": "entity", "id": "marc", "name": "Marc Again"}),
        json.dumps(
            {
                "type": "assertion",
                "subject": "marc",
                "predicate": "knows",
                "object": "acme",
                "valid_from": "last year",
                "confidence": 3,
            }
        ),
        json.dumps({"type": "assertion", "id": "dup", "subject": "marc", "predicate": "knows", "object": "acme"}),
        json.dumps({"type": "assertion", "id": "dup", "subject": "marc", "predicate": "left", "object": "acme"}),
    ]
    with pytest.raises(ImportFailed) as err:
        import_jsonl(store, bad)
    text = str(err.value)
    for needle in (
        "line 8: not JSON",
        "line 9: predicate 'employs'",
        "line 10: subject 'ghost'",
        "line 11: evidence quote does not occur",
        "line 12: entity id 'marc' already declared",
        "line 13: confidence",
        "line 13: valid_from 'last year'",
        "line 15: assertion id 'dup' already used on line 14",
    ):
        assert needle in text
    numbers = [int(p.split(":")[0].split()[1]) for p in err.value.problems]
    assert numbers == sorted(numbers)  # in file order, whatever pass found them
    assert store.scalar("SELECT count(*) FROM assertions") == 0
    assert store.scalar("SELECT count(*) FROM entities") == 0


def test_round_trip_through_export(store, tmp_path):
    import_jsonl(store, _text(LINES))
    first = export_jsonl(store)
    other = Store.open(tmp_path / "other.duckdb")
    try:
        rep = import_jsonl(other, first)
        assert rep.assertions_imported == 4
        second = export_jsonl(other)
    finally:
        other.close()

    def strip(lines):
        return sorted(json.dumps({k: v for k, v in json.loads(x).items() if k != "id"}, sort_keys=True) for x in lines)

    assert strip(first) == strip(second)
    assert import_jsonl(store, first).assertions_imported == 4  # no ids in an export: keyed by content
    assert import_jsonl(store, first).assertions_skipped == 4


def test_import_cli(home, tmp_path):
    f = tmp_path / "crm.jsonl"
    f.write_text("\n".join(_text(LINES)) + "\n\n")
    from backchannel.cli.main import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["import", "assertions", str(f)])
    assert res.exit_code == 0, res.output
    assert "4 assertions imported, 0 already there; 3 entities created" in res.output
    res = runner.invoke(cli, ["import", "assertions", str(f), "--json"])
    assert json.loads(res.stdout)["assertions_skipped"] == 4
    f.write_text('{"type": "assertion"}\n')
    res = runner.invoke(cli, ["import", "assertions", str(f)])
    assert res.exit_code != 0 and "line 1" in str(res.exception)
    with Store.open(resolve_paths().db_file) as s:
        assert s.scalar("SELECT count(*) FROM import_keys") == 4


def test_each_line_is_validated_into_its_model_naming_line_and_field(store):
    bad = [
        json.dumps(x)
        for x in (
            {"type": "entity", "id": "marc", "name": "Marc", "aliases": ["M", 7]},
            {"type": "assertion", "subject": "marc", "predicate": "knows", "object": "marc", "qualifier": 12},
            {"type": "assertion", "predicate": "knows", "object": "marc"},
            {"type": "assertion", "subject": "marc", "predicate": "knows", "object": "marc", "evidence": "said so"},
            {
                "type": "assertion",
                "subject": "marc",
                "predicate": "knows",
                "object": "marc",
                "modality": "rumour",
                "evidence": {"quote": "hi", "said_at": "yesterday"},
            },
            {"type": "assertion", "subject": "marc", "predicate": "has_title"},
            {"type": "entity", "name": "Nobody"},
        )
    ]
    with pytest.raises(ImportFailed) as err:
        import_jsonl(store, bad)
    assert err.value.problems == [
        "line 1: aliases[1]: Input should be a valid string",
        "line 2: qualifier: Input should be a valid string",
        'line 3: assertion needs "subject"',
        'line 4: "evidence" must be an object',
        "line 5: modality 'rumour' is not one of stated, reported, commitment, opinion",
        "line 5: evidence said_at 'yesterday' is not an ISO date",
        'line 6: has_title needs "object_literal" (a string)',
        'line 7: entity needs an "id" (a reference used by assertion lines)',
    ]


def test_a_line_without_id_is_keyed_by_its_content_with_dates_normalised(store):
    """Two spellings of the same dates are the same line; unknown fields stay part of it."""
    base = {
        "type": "assertion",
        "subject": "me",
        "predicate": "committed_to",
        "object_literal": "send it",
        "valid_to": "2025-04-10",
        "evidence": {"quote": "I'll send it", "said_at": "2025-04-02T10:00:00+02:00"},
    }
    same = {
        **base,
        "valid_to": "2025-04-10T18:00:00",
        "evidence": {**base["evidence"], "said_at": "2025-04-02T08:00:00Z"},
    }
    assert import_jsonl(store, [json.dumps(base)]).assertions_imported == 1
    assert import_jsonl(store, [json.dumps(same)]).assertions_skipped == 1
    assert import_jsonl(store, [json.dumps({**base, "crm_owner": "x"})]).assertions_imported == 1

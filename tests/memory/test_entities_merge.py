"""Entity merges and splits round-trip exactly (API and CLI), and the fuzzy /
embedding / model resolution layers decide as documented."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.writer import write_source
from backchannel.memory import entities, merges
from backchannel.memory.store import Store


def snapshot(store):
    q = lambda sql: sorted(tuple(r) for r in store.con.execute(sql).fetchall())  # noqa: E731
    return {
        "entities": q("SELECT id, merged_into FROM entities"),
        "aliases": q("SELECT entity_id, norm FROM aliases"),
        "assertions": q("SELECT id, subject_id, object_id, speaker_id FROM assertions"),
        "utterances": q("SELECT source_id, idx, speaker_id FROM utterances"),
    }


def seed(store):
    """Two meetings where the same man appears as 'Marc Dupont' and as 'M. Dupont'."""

    def meeting(day, speaker, lines):
        us = [Utterance(i, speaker, text) for i, text in enumerate(lines)]
        t = Transcript(us, "text", title=f"m{day}", meeting_date=datetime(2025, 3, day))
        extracted = []
        for u in us:
            m = re.search(r"I worked with (\w+ \w+)", u.text)
            if m:
                extracted.append(
                    ExtractedAssertion(
                        Mention(speaker, "person", True),
                        "worked_with",
                        u.idx,
                        0,
                        m.end(),
                        u.text[: m.end()],
                        object=Mention(m[1], "person"),
                    )
                )
        write_source(store, t, extracted, owner_names=["Me"], extractor="test")

    meeting(3, "Marc Dupont", ["I worked with Sophie Martin at Acme.", "Hello."])
    meeting(9, "M. Dupont", ["I worked with Paul Leroy for years.", "I worked with Sophie Martin too."])
    keep = entities.find(store, "Marc Dupont", "person")[0].id
    other = entities.find(store, "M. Dupont", "person")[0].id
    return keep, other


def test_merge_and_split_round_trip(store):
    keep, other = seed(store)
    before = snapshot(store)
    mid = merges.merge(store, keep, other, reason="same man")
    after = snapshot(store)
    assert entities.get(store, other).id == keep  # lookups follow the merge
    assert [e.id for e in entities.find(store, "M. Dupont")] == [keep]
    assert dict(after["entities"])[other] == keep
    assert store.scalar("SELECT count(*) FROM assertions WHERE ? IN (subject_id, object_id, speaker_id)", [other]) == 0
    assert store.scalar("SELECT count(*) FROM utterances WHERE speaker_id = ?", [keep]) == 4
    log = store.query("SELECT kept_id, merged_id, method, reason, moved FROM entity_merges WHERE id = ?", [mid])[0]
    moved = json.loads(log["moved"])
    assert (log["kept_id"], log["merged_id"], log["method"], log["reason"]) == (keep, other, "user", "same man")
    assert moved["aliases"] == ["m. dupont"] and len(moved["subject"]) == 2 and len(moved["utterances"]) == 2

    assert merges.split(store, other) == other
    assert snapshot(store) == before
    assert store.scalar("SELECT undone_at IS NOT NULL FROM entity_merges WHERE id = ?", [mid])
    with pytest.raises(merges.MergeError, match="not merged"):
        merges.split(store, other)


def test_merge_refusals_and_nested_order(store):
    keep, other = seed(store)
    sophie = entities.find(store, "Sophie Martin", "person")[0].id
    acme = entities.create(store, "Acme", "organisation").id
    owner = entities.owner(store).id
    with pytest.raises(merges.MergeError, match="organisation"):
        merges.merge(store, keep, acme)
    with pytest.raises(merges.MergeError, match="owner"):
        merges.merge(store, keep, owner)
    before = snapshot(store)
    m1 = merges.merge(store, keep, other)
    m2 = merges.merge(store, sophie, keep)
    with pytest.raises(merges.MergeError, match="split that merge first"):
        merges.split(store, f"M{m1}")
    merges.split(store, f"M{m2}")
    merges.split(store, f"M{m1}")
    assert snapshot(store) == before


def run_cli(home, *args):
    env = {**os.environ, "BACKCHANNEL_HOME": str(home)}
    p = subprocess.run(
        [sys.executable, "-m", "backchannel", *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_cli_merge_split_round_trip(store, home):
    keep, other = seed(store)
    before = snapshot(store)
    path = store.path
    store.close()  # the CLI opens the file itself (no daemon runs)
    out = json.loads(run_cli(home, "entities", "merge", str(keep), "M. Dupont", "--reason", "typo", "--json"))
    assert out["kept_id"] == keep and out["merged_id"] == other and out["merge_id"].startswith("M")
    listing = json.loads(run_cli(home, "entities", "--json"))
    assert other not in {e["id"] for e in listing} and keep in {e["id"] for e in listing}
    text = run_cli(home, "entities", "split", out["merge_id"])
    assert f"entity {other} is separate" in text
    s = Store.open(path)
    try:
        assert snapshot(s) == before
    finally:
        s.close()
    assert "no model calls" in run_cli(home, "usage", "--days", "3")


# -- resolution layers ------------------------------------------------------


def test_fuzzy_layer_accepts_close_spellings_only(store):
    from backchannel.extraction.resolve.layers import resolve_extra

    john = entities.create(store, "John Smith", "person").id
    entities.create(store, "Marc Dupont", "person")
    assert resolve_extra(store, "Jon Smith", "person")[:2] == (john, "fuzzy")
    assert resolve_extra(store, "Smith John", "person")[:2] == (john, "fuzzy")
    eid, method, _ = resolve_extra(store, "Marc", "person")  # a first name is a candidate, not proof
    assert (eid, method) == (None, "none")
    assert resolve_extra(store, "Zoe Quartermaine", "person")[:2] == (None, "none")


@pytest.mark.slow
def test_embedding_and_model_layers(store):
    from backchannel import embedding
    from backchannel.agent.models import Gateway
    from backchannel.config import Settings, resolve_paths
    from backchannel.config.sections import ModelSettings
    from backchannel.extraction.resolve.layers import resolve_extra
    from tests.support.scripted_models import register_scripted

    acme = entities.create(store, "Acme Corporation", "organisation").id
    entities.create(store, "Globex", "organisation")
    eid, method, score = resolve_extra(store, "ACME Corp.", "organisation")
    assert (eid, method) == (acme, "embedding") and score > 0.92
    v = embedding.embed(["Acme", "Acme"])
    assert v.shape == (2, 384) and abs(float(v[0] @ v[1]) - 1.0) < 1e-5

    # people: ambiguous candidates go to the model, which must pick one of them
    marc_d = entities.create(store, "Marc Dupont", "person").id
    entities.create(store, "Marc Durand", "person")

    def responder(messages):
        ids = re.findall(r"- id (\d+): Marc Dupont", messages[-1]["content"])
        return {"match_id": int(ids[0]), "confidence": 0.8, "reason": "only Dupont works at Acme"}

    script = register_scripted([], name="resolver", responder=responder)
    gw = Gateway(Settings(models=ModelSettings(extract="scripted/resolver")), store, resolve_paths())
    assert resolve_extra(store, "Marc", "person", gateway=gw) == (marc_d, "model", 0.8)
    assert len(script.calls) == 1 and "Marc Durand" in script.calls[0].prompt
    assert store.scalar("SELECT role FROM model_calls") == "resolve"
    # the offline model never calls a model
    offline = Gateway(Settings(), store, resolve_paths())
    assert resolve_extra(store, "Marc", "person", gateway=offline)[:2] == (None, "none")
    assert len(script.calls) == 1

"""The model path shares the stages: with a scripted extract model, every stance the
prompt and schema ask for ends as the offline path would end it, the claim pass runs
over the model's quotes, and what is written carries the same trust as offline."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from backchannel.agent.models import Gateway, load_litellm
from backchannel.agent.schemas import ExtractionAnswer
from backchannel.config import Settings, resolve_paths
from backchannel.config.sections import ModelSettings
from backchannel.core.vocabulary import STANCES
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.model import extract_with_model
from tests.support.scripted_models import register_scripted

MEETING = datetime(2026, 3, 12, 10, 0)
LINES = [
    ("Marc", "I worked with Sophie Martin at Acme for three years."),  # 0 asserted
    ("Marc", "I have never met Paul Girard, to be honest."),  # 1 negated
    ("Marc", "If I knew Nadia Haddad I would ask her for an intro."),  # 2 hypothetical
    ("Marc", "Apparently Karl Weber is the new CFO of Globex."),  # 3 rumour
    ("Marc", "Lea told us that she worked with Omar Farouk at Initech."),  # 4 reported
    ("Marc", "Oh yes, I am best friends with the Pope, sure."),  # 5 joke
    ("Marc", "In this role-play I am the CTO of Hooli, you pitch to me."),  # 6 exercise
    ("Marc", "Ines Alvarez was the CIO of Pinecrest Bank until last year."),  # 7 ended (job)
    ("Marc", "Tom Baker and I used to be close, we do not talk any more."),  # 8 ended (tie)
    ("Marc", "I have heard of Priya Raman, everyone has."),  # 9 knows_of
    ("Marc", "I know Dana Whitfield well. Just kidding, I do not."),  # 10 asserted, but retracted
]


def _item(i: int, quote: str, subject: str, predicate: str, obj: str | None, stance: str, **kw) -> dict:
    return {
        "utterance": i,
        "quote": quote,
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "stance": stance,
        **kw,
    }


ANSWER = {
    "assertions": [
        _item(
            0, "I worked with Sophie Martin at Acme", "I", "worked_with", "Sophie Martin", "asserted", qualifier="Acme"
        ),
        _item(1, "I have never met Paul Girard", "I", "knows", "Paul Girard", "negated"),
        _item(2, "If I knew Nadia Haddad", "I", "knows", "Nadia Haddad", "hypothetical"),
        _item(
            3,
            "Karl Weber is the new CFO of Globex",
            "Karl Weber",
            "works_at",
            "Globex",
            "rumour",
            object_kind="organisation",
            qualifier="CFO",
        ),
        _item(
            4,
            "she worked with Omar Farouk at Initech",
            "Lea",
            "worked_with",
            "Omar Farouk",
            "reported",
            qualifier="Initech",
        ),
        _item(5, "I am best friends with the Pope", "I", "knows", "the Pope", "joke"),
        _item(
            6,
            "I am the CTO of Hooli",
            "I",
            "works_at",
            "Hooli",
            "exercise",
            object_kind="organisation",
            qualifier="CTO",
        ),
        _item(
            7,
            "Ines Alvarez was the CIO of Pinecrest Bank until last year",
            "Ines Alvarez",
            "works_at",
            "Pinecrest Bank",
            "ended",
            object_kind="organisation",
            qualifier="CIO",
            date_phrase="last year",
        ),
        _item(8, "Tom Baker and I used to be close", "I", "knows", "Tom Baker", "ended"),
        _item(9, "I have heard of Priya Raman", "I", "knows", "Priya Raman", "knows_of"),
        # The model calls it asserted; the claim pass reads the retraction after it.
        _item(10, "I know Dana Whitfield", "I", "knows", "Dana Whitfield", "asserted"),
    ]
}


@pytest.fixture(scope="module", autouse=True)
def _litellm_once():
    load_litellm()


def _gateway(store, name: str) -> Gateway:
    return Gateway(
        Settings(models=ModelSettings(extract=f"scripted/{name}", backoff_s=0.0)), store, resolve_paths().ensure()
    )


def _transcript() -> Transcript:
    return Transcript(
        [Utterance(i, s, t) for i, (s, t) in enumerate(LINES)], "text", title="Stances", meeting_date=MEETING
    )


def test_prompt_and_schema_ask_for_every_stance(store):
    script = register_scripted([{"content": {"assertions": []}}], name="st0")
    extract_with_model(_transcript(), gateway=_gateway(store, "st0"), run_id="R0")
    prompt = script.calls[0].prompt
    assert all(s in prompt for s in STANCES)
    schema = json.dumps(ExtractionAnswer.model_json_schema())
    assert all(f'"{s}"' in schema for s in STANCES)


def test_each_stance_ends_as_the_offline_path_would(store):
    register_scripted([{"content": ANSWER}], name="st1")
    result = extract_with_model(_transcript(), gateway=_gateway(store, "st1"), run_id="R1", owner_names=["Me"])
    got = {a.utterance_idx: a for a in result.assertions}
    # negated, hypothetical, joke, exercise: no fact; the retracted one: the claim pass; knowing *of*
    # someone is kept as what it is (a knows of that stance, which no reader of ties takes for one).
    assert sorted(got) == [0, 3, 4, 7, 8, 9]
    assert result.stance_dropped == 4 and result.claim_dropped == 1
    whys = [r["why"] for r in result.rejected]
    assert sorted(w for w in whys if w.startswith("stance")) == sorted(
        f"stance {s}" for s in ("negated", "hypothetical", "joke", "exercise")
    )
    assert got[0].subject.is_speaker and got[0].trust_reasons == () and got[0].stance == "asserted"
    assert "hedged" in got[3].trust_reasons  # rumour
    assert got[4].modality == "reported" and "second_hand" in got[4].trust_reasons  # reported
    assert got[4].subject.name == "Lea"
    assert got[7].predicate == "left" and got[7].qualifier is None  # an ended job is a departure
    assert got[7].valid_to is not None and got[7].valid_to.year == 2025
    assert got[8].predicate == "knows" and got[8].stance == "ended"  # an ended tie, for the judge
    assert got[9].predicate == "knows" and got[9].stance == "knows_of" and got[9].object.name == "Priya Raman"


def test_the_model_path_writes_the_same_trust_as_offline(store, home):
    from backchannel.extraction.ingest import ingest_file

    path = home / "2026-03-12 stances.txt"
    path.write_text("\n".join(f"{s}: {t}" for s, t in LINES) + "\n")
    register_scripted([{"content": ANSWER}], name="st2")
    gw = _gateway(store, "st2")
    out = ingest_file(store, gw.settings, path, gateway=gw, run_id="R2")
    assert out.status == "ingested" and out.assertions == 6
    rows = {
        r["utterance_idx"]: r
        for r in store.query(
            "SELECT utterance_idx, predicate, modality, trust, confidence, trust_reasons, stance FROM assertions"
        )
    }
    assert "hedged" in rows[3]["trust_reasons"] and rows[3]["trust"] < rows[3]["confidence"]
    assert "second_hand" in rows[4]["trust_reasons"] and rows[4]["modality"] == "reported"
    assert rows[7]["predicate"] == "left"
    assert rows[9]["predicate"] == "knows" and rows[9]["stance"] == "knows_of"
    [event] = store.events(kind="model_extraction")
    assert event["data"]["stance_dropped"] == 4 and event["data"]["claim_dropped"] == 1


def test_french_and_japanese_first_person_from_the_model(store):
    lines = [
        ("Marc", "J'ai travaillé avec Sophie Martin chez Acme."),
        ("田中", "私は佐藤さんをよく知っています。"),
        ("Marc", "Il connaît Paul Girard."),
    ]
    t = Transcript([Utterance(i, s, x) for i, (s, x) in enumerate(lines)], "text", meeting_date=MEETING)
    register_scripted(
        [
            {
                "content": {
                    "assertions": [
                        _item(
                            0,
                            "J'ai travaillé avec Sophie Martin chez Acme",
                            "je",
                            "worked_with",
                            "Sophie Martin",
                            "asserted",
                        ),
                        _item(1, "私は佐藤さんをよく知っています", "私", "knows", "佐藤", "asserted"),
                        _item(
                            2, "Il connaît Paul Girard", "il", "knows", "Paul Girard", "asserted"
                        ),  # whom "il" means: unknown
                    ]
                }
            }
        ],
        name="st3",
    )
    result = extract_with_model(t, gateway=_gateway(store, "st3"), run_id="R3")
    assert [(a.subject.name, a.subject.is_speaker, a.object.name) for a in result.assertions] == [
        ("Marc", True, "Sophie Martin"),
        ("田中", True, "佐藤"),
    ]
    assert result.unresolved == 1


def test_a_news_item_read_by_the_model_is_a_news_source(store, home):
    """With a model configured, the signal's text goes to the model, then the same passes and
    the same writer: trust reason `news`; what the model calls hypothetical is dropped."""
    from backchannel.engine.signal_reading import read_signal

    register_scripted(
        [
            {
                "content": {
                    "assertions": [
                        _item(
                            0,
                            "Kenji Sato appointed Chief Digital Officer at Mirai Bank",
                            "Kenji Sato",
                            "works_at",
                            "Mirai Bank",
                            "asserted",
                            object_kind="organisation",
                            qualifier="CDO",
                        ),
                        _item(
                            1,
                            "Laura Chen could leave Globex",
                            "Laura Chen",
                            "left",
                            "Globex",
                            "hypothetical",
                            object_kind="organisation",
                        ),
                    ]
                }
            }
        ],
        name="st4",
    )
    gw = _gateway(store, "st4")
    sig = {
        "id": "n1",
        "title": "Kenji Sato appointed Chief Digital Officer at Mirai Bank",
        "summary": "Laura Chen could leave Globex.",
        "published_at": "2026-03-12T08:00:00+00:00",
    }
    read = read_signal(store, gw.settings, sig, gateway=gw, run_id="R4")
    assert read["created"] and read["assertions"] == 1
    row = store.query("SELECT predicate, qualifier, trust_reasons, speaker_id, extractor FROM assertions")[0]
    assert (row["predicate"], row["qualifier"], list(row["trust_reasons"])) == ("works_at", "CDO", ["news"])
    assert row["speaker_id"] is None and row["extractor"] == "scripted/st4"
    assert read_signal(store, gw.settings, sig, gateway=gw, run_id="R5")["created"] is False  # once

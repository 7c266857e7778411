"""The evaluation set of bench/evalset/ is well formed, and its scorer counts as its docstring says.

Fast on purpose: the files are parsed and checked, the stories loaded through the story
harness, and the scorer's matching run on facts written here; the extractor runs on one
sentence only (bench/meaning_eval.py scores the whole set)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "scenarios"))

import harness  # noqa: E402 - tests/scenarios/harness.py, the story engine
import meaning_eval as ev  # noqa: E402 - bench/meaning_eval.py, the scorer

REGISTERS = {
    "disfluent",
    "uk_english",
    "us_english",
    "indian_english",
    "code_switch_en_fr",
    "committee_hearing",
    "casual_call",
    "news",
    "french",
    "japanese",
}


@pytest.fixture(scope="module")
def sentences() -> dict[str, list[dict]]:
    return {split: ev.load_sentences(split) for split in ev.SENTENCE_SPLITS}


def test_every_sentence_item_parses_with_allowed_predicates_and_stances(sentences):
    ids = [i["id"] for items in sentences.values() for i in items]
    assert len(ids) == len(set(ids)) >= 400
    for split, items in sentences.items():
        assert len(items) >= (150 if split == "dev2" else 180), split
        registers = {i["register"] for i in items}
        assert registers == REGISTERS if split != "dev2" else registers <= REGISTERS, split  # dev2: English only
        facts = [f for i in items for f in i["facts"]]
        assert {f["predicate"] for f in facts} == set(ev.PREDICATES), split
        assert {f["stance"] for f in facts} == set(ev.STANCES), split
        # hard negatives with no fact at all (dev2 is smaller, and its negatives are more often non-asserted facts)
        assert sum(1 for i in items if not i["facts"]) >= (10 if split == "dev2" else 25), split
        for i in items:
            for f in i["facts"]:
                if f["predicate"] == "committed_to" and "due" in f:
                    assert len(f["due"]) == 10 and f["due"] >= i["meeting_date"], (i["id"], f)
            if i["register"] == "news":
                assert i["speaker"] is None and not i["context"], i["id"]
            else:
                assert i["speaker"] in i["speakers"], i["id"]


def test_a_bad_item_gets_a_clear_error():
    good = {
        "id": "x-1",
        "register": "casual_call",
        "meeting_date": "2026-01-05",
        "speakers": ["A B"],
        "context": [],
        "speaker": "A B",
        "text": "hello",
        "facts": [],
    }
    assert ev.validate_item(dict(good), "x") == good
    bad_fact = {"subject": "A B", "predicate": "likes", "object": "C D", "stance": "asserted"}
    with pytest.raises(ev.EvalsetError, match="predicate 'likes'"):
        ev.validate_item({**good, "facts": [bad_fact]}, "x")
    with pytest.raises(ev.EvalsetError, match="stance 'sarcastic'"):
        ev.validate_item({**good, "facts": [{**bad_fact, "predicate": "knows", "stance": "sarcastic"}]}, "x")
    with pytest.raises(ev.EvalsetError, match="ISO date"):
        ev.validate_item({**good, "meeting_date": "5 Jan"}, "x")
    with pytest.raises(ev.EvalsetError, match="only a news item"):
        ev.validate_item({**good, "speaker": None}, "x")


def test_stories_load_through_the_harness():
    stories = {split: harness.load_stories(ev.story_dir(split)) for split in ev.STORY_SPLITS}
    assert len(stories["test"]) >= 20 and len(stories["dev"]) + len(stories["test"]) >= 40
    assert len(stories["fresh"]) >= 16 and len(stories["fresh2"]) >= 16 and len(stories["fresh3"]) >= 16
    assert len(stories["dev3"]) >= 24  # tunable like dev (README, "The third dev stories")
    assert len(stories["dev4"]) >= 16  # tunable, promises (README, "The fourth dev stories")
    assert len(stories["dev5"]) >= 16  # tunable, all four kinds (README, "The fifth dev stories")
    assert len(stories["fresh4"]) >= 16
    for split, found in stories.items():
        kinds = Counter(e["kind"] for s in found for e in s.expect)
        assert set(kinds) == ({"commitment"} if split == "dev4" else set(harness.KINDS)), split
        silent = sum(1 for s in found if not s.expect)
        assert 0.35 <= silent / len(found) <= 0.65, split  # about half hard negatives
        for s in found:
            text = json.dumps(s.data, ensure_ascii=False).casefold()
            for e in s.expect:  # every expected name is in the story (meetings, calendar or news)
                assert all(n.casefold() in text for n in e["entities"]), (s.name, e)
            for m in s.data.get("meetings") or []:
                assert Path(m["file"]).suffix in {".vtt", ".srt", ".txt", ".json"}, (s.name, m["file"])


def _p(subject, predicate, obj, stance="asserted", qualifier=None, valid_to=None):
    return ev.Prediction(subject, predicate, obj, qualifier, stance, None, valid_to, None, None)


def _score(item, preds):
    total, register = ev.Tally(), ev.Tally()
    ev.score_item(item, preds, total, register)
    return ev.figures(total)


ITEM = {
    "id": "u-1",
    "register": "casual_call",
    "meeting_date": "2026-03-02",
    "speakers": ["Alex Moreau", "Dana Ruiz"],
    "context": [],
    "speaker": "Dana Ruiz",
    "text": "...",
    "facts": [
        {"subject": "Dana Ruiz", "predicate": "worked_with", "object": "Leon Fischer", "stance": "asserted"},
        {"subject": "Leon Fischer", "predicate": "works_at", "object": "Stripe", "stance": "asserted", "past": True},
        {"subject": "Dana Ruiz", "predicate": "knows", "object": "Oskar Lund", "stance": "negated"},
        {
            "subject": "Dana Ruiz",
            "predicate": "committed_to",
            "literal": "pricing one-pager",
            "stance": "asserted",
            "due": "2026-03-04",
        },
    ],
}


def test_lenient_names_and_the_stance_rules():
    f = _score(
        ITEM,
        [
            _p("Dana Ruiz", "worked_with", "Leon", qualifier="Stripe"),  # a first name; Stripe implies Leon's past job
            _p("Dana", "committed_to", "get you the pricing one-pager", valid_to="2026-03-04"),
            _p(
                "Dana Ruiz", "knows", "Oskar Lund", stance="negated"
            ),  # flagged with its stance: neither right nor wrong
        ],
    )
    assert (f["precision"], f["recall"], f["found"], f["labelled"]) == (1.0, 1.0, 3, 3)
    assert f["per_predicate"]["knows"]["flagged_not_stored"] == 1
    assert f["stance_accuracy"] == 1.0 and f["due_date_accuracy"] == 1.0

    f = _score(ITEM, [_p("Dana Ruiz", "knows", "Oskar Lund"), _p("Dana Ruiz", "works_at", "Stripe")])
    assert f["per_predicate"]["knows"]["false_positives"] == 1  # a negated tie stored as asserted
    assert f["per_predicate"]["works_at"]["false_positives"] == 1  # not what was said
    assert f["recall"] == 0.0 and f["stance_per_label"]["negated"]["right"] == 0
    assert f["stance_accuracy_all"] == 0.0


def test_stance_read_from_todays_fields_and_new_attributes():
    class Old:  # today's ExtractedAssertion fields only
        modality, trust_reasons = "stated", ("hedged",)

    class New:
        stance = "knows_of"

    assert ev.stance_of(Old()) == "rumour" and ev.stance_of(New()) == "knows_of"
    assert ev.stance_of(type("R", (), {"modality": "reported"})()) == "reported"
    assert ev.same_org("Goldman", "Goldman Sachs") and not ev.same_org("Goldman", "Goldwind Energy")
    assert ev.same_person("Hon. Claire Tremblay (Chair)", "Claire Tremblay")
    assert ev.same_person("田中さん", "田中 美咲") and ev.same_person("美咲", "田中 美咲")


def test_one_sentence_through_the_offline_extractor():
    item = {
        "id": "u-2",
        "register": "us_english",
        "meeting_date": "2026-03-12",
        "speakers": ["Alex Moreau", "Rachel Stein"],
        "context": [{"speaker": "Alex Moreau", "text": "Can you send me the pricing?"}],
        "speaker": "Rachel Stein",
        "text": "Sure, I'll send you the pricing sheet by Friday.",
        "facts": [],
    }
    preds = ev.predict(ev.load_extractor("backchannel.extraction.offline:extract"), item)
    assert all(p.predicate for p in preds)
    promise = [p for p in preds if p.predicate == "committed_to"]
    assert promise and promise[0].subject == "Rachel Stein" and promise[0].valid_to == "2026-03-13"


def test_held_out_splits_refuse_per_item_output(capsys):
    for split in ev.HELD_OUT:
        assert ev.main(["--split", split, "--part", "stories", "--show-errors"]) == 2
        assert "refused" in capsys.readouterr().err
    assert ev.main(["--split", "fresh", "--part", "sentences"]) == 2
    assert "stories only" in capsys.readouterr().err

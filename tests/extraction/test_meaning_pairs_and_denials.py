"""Three mechanisms of the meaning stage, each on sentences written for this file and in no suite or
evaluation split: a head made of several seeded heads averaged (heads.fit_bag), a "we" that stands for
the speaker and a person named just before written as that pair for the head (heard.as_slots), and a
denial or a knowing-of said after a tie that is not the speaker's denial of it (tie_verdict)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from backchannel.extraction.meaning import heads
from backchannel.extraction.meaning.classifier import Reading
from backchannel.extraction.meaning.heard import as_slots
from backchannel.extraction.meaning.tie_verdict import verdict
from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.stage import PronounRef
from backchannel.extraction.result import ExtractedAssertion, Mention

# ---------------------------------------------------------------- a bag of seeded heads


def _toy(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 16))
    y = rng.integers(0, 3, 240)
    x = centres[y] + 0.6 * rng.normal(size=(240, 16))
    return x / np.linalg.norm(x, axis=1, keepdims=True), y


def test_a_bag_is_its_seeded_members_averaged():
    x, y = _toy()
    bag = heads.fit_bag("mlp", x, y, 3, seed=5, members=3)
    assert bag["W1"].shape == (3, 16, 64) and heads.members("mlp", bag) == 3
    one_by_one = [heads.fit("mlp", x, y, 3, seed=5 + i) for i in range(3)]
    expected = np.mean([heads.predict_proba("mlp", p, x) for p in one_by_one], axis=0)
    assert np.allclose(heads.predict_proba("mlp", bag, x), expected, atol=1e-6)
    assert np.allclose(heads.predict_proba("mlp", bag, x).sum(axis=1), 1.0, atol=1e-6)


def test_a_bag_of_one_is_the_plain_head_and_a_prototype_has_no_seeds():
    x, y = _toy()
    one = heads.fit_bag("mlp", x, y, 3, seed=5, members=1)
    plain = heads.fit("mlp", x, y, 3, seed=5)
    assert one.keys() == plain.keys() and all(np.array_equal(one[k], plain[k]) for k in one)
    assert heads.members("prototype", heads.fit_bag("prototype", x, y, 3, seed=5, members=4)) == 1


def test_a_bag_moves_less_with_its_seed_than_one_head():
    """Why it ships: a borderline reading of one MLP moves with its seed; the mean of five moves less."""
    x, y = _toy(11)
    probe = x[:60]
    singles = np.stack(
        [heads.predict_proba("mlp", heads.fit("mlp", x, y, 3, seed=s, steps=80), probe) for s in range(6)]
    )
    bags = np.stack(
        [
            heads.predict_proba("mlp", heads.fit_bag("mlp", x, y, 3, seed=100 + 5 * s, members=5), probe)
            for s in range(3)
        ]
    )
    assert bags.std(axis=0).mean() < singles.std(axis=0).mean()


# ---------------------------------------------------------------- "we" as the pair


def _ref(text: str, at: str, partner: str) -> PronounRef:
    start = text.index(at)
    word = re.match(r"\w+", at)
    assert word is not None
    return PronounRef(word.group(0), start, start + word.end(), partner, "person")


def _masked(text: str, pronoun_at: str, partner: str, *more: PronounRef) -> str:
    """The sentence from `pronoun_at` on as the head hears it, its "we"/"us" resolved to `partner`."""
    s0 = text.index(pronoun_at)
    ref = _ref(text, pronoun_at, partner)
    orgs = [mentions.Slot(m.start(), m.end(), m.group(0), "organisation") for m in _ORGS.finditer(text)]
    return mentions.masked(text, s0, len(text), orgs, as_slots((ref, *more), orgs, text))


_ORGS = re.compile(r"Halden Group|Mercer Row")


@pytest.mark.parametrize(
    "text,pronoun_at,heard",
    [
        ("Priya Nair? Oh yes. We shared an office at Halden Group.", "We", "{P} and I shared an office at {O}."),
        ("Priya Nair, sure. We've known each other for years.", "We've", "{P} and I have known each other for years."),
        ("Priya Nair? They put us on one project at Halden Group.", "us on", "{P} and me on one project at {O}."),
    ],
)
def test_a_we_right_after_a_name_in_a_short_turn_is_heard_as_the_pair(text, pronoun_at, heard):
    assert _masked(text, pronoun_at, "Priya Nair") == heard


def test_a_we_far_from_the_name_or_in_a_long_turn_is_left_as_said():
    far = "Priya Nair joined the board in March, which matters for the timing of all this. We shared an office at Halden Group."
    assert _masked(far, "We shared", "Priya Nair").startswith("We shared an office at {O}")
    long_turn = "Priya Nair. " + "The committee has looked at the figures for the region in some detail. " * 3
    long_turn += "We shared an office at Halden Group."
    assert _masked(long_turn, "We shared", "Priya Nair").startswith("We shared an office at {O}")
    # the person said again by a pronoun of their own: the "us" is the speaker's side
    text = "Ask Tomás Ruiz. He got us the first contract at Mercer Row."
    assert _masked(text, "us the", "Tomás Ruiz", _ref(text, "He got", "Tomás Ruiz")).startswith("us the first")


# ---------------------------------------------------------------- denials that are not the speaker's


def _reading(stance: str, relation: str = "knows", stance_p: float = 0.99, relation_p: float = 0.97) -> Reading:
    others = {"asserted": 0.0, "negated": 0.0, "knows_of": 0.0, "joke": 0.0, "ended": 0.0}
    return Reading(relation, relation_p, stance, stance_p, {**others, stance: stance_p}, {relation: relation_p})


def _knows(predicate: str = "knows") -> ExtractedAssertion:
    return ExtractedAssertion(
        subject=Mention("Ines Ferreira", "person", is_speaker=True),
        predicate=predicate,
        utterance_idx=0,
        span_start=0,
        span_end=10,
        quote="I know Bronwen Tate",
        object=Mention("Bronwen Tate", "person"),
    )


@pytest.mark.parametrize(
    "coda",
    [
        "He never came to the reunion in the end.",
        "Honestly, she hasn't replied to a single email of mine this year.",
        "Bronwen barely posts anything now.",
        "She wouldn't have seen my message, she's on leave.",
    ],
)
def test_a_denied_act_of_the_other_person_leaves_the_tie(coda):
    assert verdict(_reading("negated"), _knows(), coda, []) is None


@pytest.mark.parametrize(
    "coda",
    [
        "We've never actually met, now I think of it.",
        "I don't really know her at all.",
        "Actually he and I never spoke.",
    ],
)
def test_the_speakers_own_denial_still_drops_the_tie(coda):
    assert verdict(_reading("negated"), _knows(), coda, []) == "drop"


def test_knowing_of_someone_narrows_the_tie_only_when_it_is_the_speakers():
    r = _reading("knows_of")
    assert verdict(r, _knows(), "I mostly know her from the radio, if I'm honest.", []) == "knows_of"
    assert verdict(r, _knows(), "Everyone's seen her on the radio, she's on every week.", []) is None
    assert verdict(r, _knows(), "You'd have heard her name at the awards, surely.", []) is None

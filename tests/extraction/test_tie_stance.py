"""The stance of a claim as the words around its sentence say it, through the real offline
extractor (rules, the meaning stage with the shipped head, the claim pass): a tie whose turn says
it soured is `ended`, a knows said of a name only is `knows_of`, a role-play or an earlier answer
being corrected holds no fact, and a claim someone else told is `reported`. None of these
sentences is in a suite or in the evaluation set."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning.tie_stance import HEARD_OF, SOURED


def _said(text: str, speaker: str = "Dana Price") -> list[tuple]:
    t = Transcript(
        [Utterance(0, "Alex Moreau", "Hello."), Utterance(1, speaker, text)],
        "text",
        meeting_date=datetime(2026, 3, 12, 10, 0),
    )
    return [
        (a.subject.name, a.predicate, a.object.name if a.object else a.object_literal, a.stance)
        for a in offline.extract(t, owner_names=["Alex Moreau"])
    ]


def _ties(text: str, speaker: str = "Dana Price") -> list[tuple]:
    return [f for f in _said(text, speaker) if f[1] in ("worked_with", "knows")]


@pytest.mark.parametrize(
    "text",
    [
        # the head reads the coda, said on its own, as an ended tie
        "Piotr Nowak and I built the Gdansk team together. It got ugly after the reorg, and that was the end of us.",
        # an exact word of a quarrel, in the next sentence or in the tie's own
        "I worked with Piotr Nowak at Orange. Never again.",
        "Piotr Nowak and I shared a desk at Orange for years. We fell out over the Lisbon account.",
        "J'ai travaillé avec Piotr Nowak chez Orange, mais on s'est brouillés.",
    ],
)
def test_a_tie_its_turn_says_soured_is_ended(text):
    ties = _ties(text)
    assert ties and all(f[3] == "ended" for f in ties), ties


def test_a_quarrel_in_japanese_ends_the_tie():
    ties = _ties("中村さんとは前の会社で一緒に働いていましたが、喧嘩別れしました。", speaker="松本 恵")
    assert [(f[2], f[3]) for f in ties] == [("中村", "ended")]


@pytest.mark.parametrize(
    "text",
    [
        "I worked with Piotr Nowak at Orange for years. We still have lunch every month.",
        "I worked with Piotr Nowak at Orange. The project ended in 2019.",
        "Piotr Nowak and I shared a desk at Orange for years. We fell out once, but we are still close friends.",
        # a third person named in full: which tie the quarrel ends is not said
        "I worked with Piotr Nowak at Orange and I know Omar Said from school. We fell out last year.",
    ],
)
def test_a_tie_that_goes_on_or_a_coda_of_someone_else_stays_asserted(text):
    ties = [f for f in _ties(text) if f[2] == "Piotr Nowak"]
    assert ties and all(f[3] == "asserted" for f in ties), ties


def test_the_quarrel_words_are_no_words_of_drifting_apart():
    for words in ("we fell out", "we are not on talking terms", "on s'est brouillés", "揉めてしまって"):
        assert SOURED.search(words), words
    for words in ("we lost touch", "we drifted apart", "the contract ended in March", "I'd happily introduce you"):
        assert not SOURED.search(words), words


def test_knowing_only_the_name_is_knows_of():
    assert _ties("Karim Benali? I know him by reputation only.") == [
        ("Dana Price", "knows", "Karim Benali", "knows_of")
    ]
    assert _ties("Karim Benali? I only know her by name, never met.") == [
        ("Dana Price", "knows", "Karim Benali", "knows_of")
    ]
    assert _ties("I know Karim Benali, of course, we play tennis on Sundays.") == [
        ("Dana Price", "knows", "Karim Benali", "asserted")
    ]
    assert not HEARD_OF.search("I know, of course, that she left")


def test_a_role_play_frame_holds_no_fact_and_a_bare_role_play_is_no_frame():
    assert _said("For the purposes of this exercise, I'm the head of procurement at Veolia.") == []
    assert _said("In this mock interview I am the hiring manager at Stripe.") == []
    got = _said("We did a role-play last week. Sophie Martin is the CTO of Acme, by the way.")
    assert ("Sophie Martin", "works_at", "Acme", "asserted") in got


def test_an_earlier_answer_being_corrected_holds_no_fact():
    assert _said("Let me correct myself. I said I had worked with Paul Girard at Orange; it was his brother.") == []
    kept = _said("I said I had worked with Paul Girard at Orange, and that is right.")
    assert ("Dana Price", "worked_with", "Paul Girard", "asserted") in kept
    news = Transcript(
        [
            Utterance(
                0,
                None,
                "Correction: an earlier version of this article said Maria Lopez had joined Santander. "
                "She remains at BBVA.",
            )
        ],
        "news",
        meeting_date=datetime(2026, 3, 12, 10, 0),
    )
    facts = {(a.subject.name, a.predicate, a.object.name) for a in offline.extract(news) if a.object is not None}
    assert facts == {("Maria Lopez", "works_at", "BBVA")}  # what the correction says, not what it takes back


def test_what_someone_was_telling_is_reported():
    got = _said("My cousin Ravi was telling that Anita Desai has joined Infosys as CFO.")
    assert ("Anita Desai", "works_at", "Infosys", "reported") in got


# ---------------------------------------------------------------- a coda read as a tie of its own


def _claim(text: str, at: str, predicate: str, partner: str, stance: str = "asserted"):
    from backchannel.extraction.result import ExtractedAssertion, Mention

    start = text.index(at)
    return ExtractedAssertion(
        subject=Mention("Dana Price", "person", is_speaker=True),
        predicate=predicate,
        utterance_idx=1,
        span_start=start,
        span_end=start + len(at),
        quote=at,
        object=Mention(partner, "person"),
        stance=stance,
    )


def _codas(text: str, *claims) -> list[tuple]:
    from backchannel.extraction.meaning.tie_stance import tie_stances

    t = Transcript([Utterance(0, "Alex Moreau", "Hello."), Utterance(1, "Dana Price", text)], "text")
    return [(a.predicate, a.object.name, a.stance) for a in tie_stances(t, list(claims))]


def test_a_coda_read_as_an_ended_tie_of_its_own_ends_the_tie_before_it_and_goes():
    # what the stage gives when the head reads the coda alone as an ended knows, its "we" the pair
    text = "Tomasz Wrona and I had a room together at Aviva for ages. We fell out over the rota and that was it."
    tie = _claim(text, "Tomasz Wrona and I had a room", "worked_with", "Tomasz Wrona")
    coda = _claim(text, "We fell out over the rota", "knows", "Tomasz Wrona", stance="ended")
    assert _codas(text, tie, coda) == [("worked_with", "Tomasz Wrona", "ended")]


def test_a_sentence_after_a_tie_that_names_the_person_or_says_the_tie_goes_on_keeps_its_claim():
    text = "Tomasz Wrona and I had a room together at Aviva. Tomasz and I fell out later over the rota."
    tie = _claim(text, "Tomasz Wrona and I had a room", "worked_with", "Tomasz Wrona")
    own = _claim(text, "Tomasz and I fell out", "knows", "Tomasz Wrona", stance="ended")
    assert ("knows", "Tomasz Wrona", "ended") in _codas(text, tie, own)
    text = "Tomasz Wrona and I had a room together at Aviva. We fell out once, but we still talk."
    tie = _claim(text, "Tomasz Wrona and I had a room", "worked_with", "Tomasz Wrona")
    coda = _claim(text, "We fell out once", "knows", "Tomasz Wrona", stance="ended")
    assert ("knows", "Tomasz Wrona", "ended") in _codas(text, tie, coda)
    # a coda of another pair is its own
    text = "Tomasz Wrona and I had a room together at Aviva. We fell out over the rota."
    other = _claim(text, "We fell out over the rota", "knows", "Ewa Lis", stance="ended")
    assert ("knows", "Ewa Lis", "ended") in _codas(text, _claim(text, "Tomasz", "worked_with", "Tomasz Wrona"), other)

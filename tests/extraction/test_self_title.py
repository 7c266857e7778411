"""A title the speaker gives themself in so many words ("I'm only the acting head of legal"): the
words say whose title and which, so the head need only lean to has_title (stage.SELF_TITLE_MIN). A
title said in passing has no such form and gives nothing. Every sentence is new (in no evaluation
split, bench bank or other test); the real offline extractor and its head."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning.titles import self_title
from backchannel.extraction.mentions.sentence import fluent
from backchannel.extraction.offline import extract


def titles_of(line: str) -> set[tuple[str, str | None]]:
    t = Transcript(
        [Utterance(0, "Gwen Arkwright", "Shall we go round the table?"), Utterance(1, "Tariq Osman", line)],
        "text",
        meeting_date=datetime(2026, 3, 10, 14, 0),
    )
    return {(a.subject.name, a.object_literal) for a in extract(t) if a.predicate == "has_title"}


@pytest.mark.parametrize(
    ("line", "title"),
    [
        (
            "So, um, officially I'm the, the deputy head of procurement, until they find someone proper.",
            "deputy head of procurement",
        ),
        ("For my sins I'm only the interim treasurer, the real one's on sabbatical.", "interim treasurer"),
        ("I'm, uh, a senior data engineer, which still sounds made up.", "senior data engineer"),
    ],
)
def test_a_title_the_speaker_gives_themself_is_theirs(line, title):
    assert ("Tariq Osman", title) in titles_of(line)


@pytest.mark.parametrize(
    "line",
    [
        "I'm a big admirer of our finance director, honestly.",
        "I'm told she is the new treasurer.",
        "I'm the one who hired the deputy head of procurement.",
    ],
)
def test_a_title_said_in_passing_is_no_ones(line):
    assert not {t for who, t in titles_of(line) if who == "Tariq Osman"}


def test_the_title_must_follow_i_am_at_once():
    assert self_title(fluent("Technically I'm the, um, the acting CFO, just for now.")) == "acting CFO"
    assert self_title(fluent("I'm sure the CFO will sign.")) is None
    assert self_title(fluent("I'm happy to be treasurer.")) is None

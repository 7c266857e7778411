"""'X is at ORG now' read as employment whether the adverb comes before or after the
organisation (offline_roles.rule_copula), as offline_people already reads "she's at Spotify
now"; said of oneself, only with what one does there, since "I'm at Heathrow now" is as often
where one stands. Real parser rules; no model."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract

MEETING = datetime(2026, 6, 2, 9, 30)


def works_at(lines) -> set[tuple[str, str]]:
    t = Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)], "text", title="Catch-up", meeting_date=MEETING
    )
    return {(a.subject.name, a.object.name) for a in extract(t) if a.predicate == "works_at" and a.object}


def test_someone_else_at_an_organisation_now_works_there():
    got = works_at(
        [
            ("Mira Kohl", "Jonas Weber is at Brightline now."),
            ("Mira Kohl", "And Elena Sousa is at Tidewell still, as far as I know."),
        ]
    )
    assert ("Jonas Weber", "Brightline") in got and ("Elena Sousa", "Tidewell") in got


def test_the_speaker_at_an_organisation_now_works_there_when_they_say_what_they_do():
    got = works_at(
        [
            ("Hugo Lind", "I'm at Pelican Row now, heading up sales for the Nordics."),
            ("Ada Brooks", "I am at Quillfeather now, in the data team."),
        ]
    )
    assert got == {("Hugo Lind", "Pelican Row"), ("Ada Brooks", "Quillfeather")}


def test_the_speaker_at_a_place_now_is_where_they_stand_not_where_they_work():
    got = works_at(
        [
            ("Hugo Lind", "I'm at Heathrow now, running late."),
            ("Ada Brooks", "I'm at the Hilton now, in the lobby."),
            ("Ada Brooks", "I'm at Paddington now."),
            ("Mira Kohl", "Jonas Weber was at Brightline now and then."),
            ("Mira Kohl", "Elena Sousa is at Gatwick."),
        ]
    )
    assert got == set()

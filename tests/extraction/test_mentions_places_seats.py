"""What the mentions give the meaning stage as slots: no place (mentions/places.py) as a person or an
employer, no seat's label (mentions/labels.is_seat_name) as a person, and no "there" of "there's" as
the organisation named before (mentions/pronouns.py). Every sentence is written for this test only
(in no bank file, no story, no split of the evaluation set). Real transcripts; no model."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.labels import is_seat_name
from backchannel.extraction.mentions.places import is_place, is_region, no_employer
from backchannel.extraction.mentions.pronouns import pronoun_refs
from backchannel.memory.text import norm_name


def _slots(text: str, *, known: tuple[str, ...] = (), speaker: str | None = "Rhian Price") -> set[tuple[str, str]]:
    texts = [text]
    orgs = mentions.organisations_of(texts)
    found = mentions.find(
        text,
        0,
        len(text),
        known_people=frozenset(norm_name(k) for k in known),
        organisations=orgs,
        speaker=speaker,
        names=mentions.first_names(texts, orgs),
        lowercase=mentions.lowercase_words(texts),
    )
    return {(s.name, s.kind) for s in found}


def _meeting(*lines: tuple[str | None, str]) -> Transcript:
    return Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)],
        "text",
        title="Call",
        meeting_date=datetime(2026, 9, 14, 10, 0),
    )


# ---------------------------------------------------------------- places


def test_the_gazetteer_takes_a_place_as_a_whole_name_only():
    assert is_place("Merthyr Tydfil") and is_place("the Midlands") and is_place("Gothenburg")
    assert not is_place("Merthyr Tydfil Council") and not is_place("Gothenburg Energi")
    assert is_region("Carmarthenshire") and not is_region("Gothenburg")


def test_a_place_of_several_words_is_no_person():
    said = "Honestly I know Blaenau Gwent and Rhondda Cynon Taf best, we run the same scheme there."
    assert not {s for s in _slots(said) if s[1] == "person"}


def test_a_person_named_after_a_place_is_still_a_person():
    said = "I sat next to Sydney Okafor at the awards, and Sydney was lovely."
    assert ("Sydney Okafor", "person") in _slots(said)


def test_a_region_is_no_employer_whatever_frames_it():
    assert no_employer("Carmarthenshire", "She was at Carmarthenshire for years.", 12, 27, set())
    assert not _slots("Dafydd Morgan was at Carmarthenshire for years.") & {("Carmarthenshire", "organisation")}


def test_a_town_is_an_employer_only_when_joining_leaving_or_hiring_names_it():
    text = "Ilse Brandt left Gothenburg in March."
    assert not no_employer("Gothenburg", text, 17, 27, set())
    text = "Ilse Brandt is at Gothenburg this week."
    assert no_employer("Gothenburg", text, 18, 28, set())


def test_an_organisation_named_after_a_place_keeps_its_name():
    assert ("Monmouthshire Housing Association", "organisation") in _slots(
        "I worked with Owen Pryce at Monmouthshire Housing Association for a while."
    )


# ---------------------------------------------------------------- seats


def test_a_seat_label_names_no_person():
    assert is_seat_name("User Interface") and is_seat_name("Industrial Designer") and is_seat_name("Speaker 3")
    assert not is_seat_name("Delyth Evans") and not is_seat_name("Hon. Delyth Evans (Chair)")


def test_a_seat_said_in_speech_is_no_party():
    seats = ("Project Manager", "Marketing", "User Interface", "Industrial Designer")
    said = "Right, so Industrial Designer and User Interface will team up on the casing."
    assert not {s for s in _slots(said, known=seats, speaker="Marketing") if s[1] == "person"}


def test_a_named_speaker_said_in_speech_is_still_a_person():
    said = "I've worked with Carys Jenkins on three of these reviews."
    assert ("Carys Jenkins", "person") in _slots(said, known=("Carys Jenkins", "Rhian Price"))


# ---------------------------------------------------------------- "there"


def _there_refs(second: str) -> list[str]:
    t = _meeting(
        ("Rhian Price", "We've had Tarrant Analytics in twice this month."),
        ("Gwen Ellis", second),
    )
    orgs = mentions.organisations_of([u.text for u in t.utterances])
    refs = pronoun_refs(t, frozenset(), orgs).get(1, [])
    return [r.refers_to or "" for r in refs if second[r.start : r.end].lower() == "there"]


def test_there_of_theres_points_at_no_organisation():
    assert _there_refs("Yes, and there's a chance Joel Brandt could help us.") == []
    assert _there_refs("Yes, and there’ll be a second round next week with Joel Brandt.") == []


def test_there_as_a_place_still_points_back():
    assert _there_refs("Joel Brandt has worked there for a decade, hasn't he.") == ["Tarrant Analytics"]


def test_a_place_set_off_by_commas_is_left_out_of_what_the_head_reads():
    said = "I spent four years at Orrin Labs, in, um, Gothenburg, next to Hedda Lund."
    slots = [mentions.Slot(22, 32, "Orrin Labs", "organisation"), mentions.Slot(62, 72, "Hedda Lund", "person")]
    assert said[22:32] == "Orrin Labs" and said[62:72] == "Hedda Lund"
    assert mentions.masked(said, 0, len(said), slots) == "I spent four years at {O}, next to {P}."
    inside = "Hedda Lund and I shared a flat in Gothenburg, and then both joined Orrin Labs."
    assert "in Gothenburg" in mentions.masked(inside, 0, len(inside), [])

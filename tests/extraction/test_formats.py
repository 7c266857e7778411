"""Transcript formats: VTT, SRT, text, JSON, encodings and meeting dates (inline fixtures)."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path

import pytest

from backchannel.extraction.formats import parse_vtt_cues, sniff_format
from backchannel.extraction.formats.decode import decode_bytes
from backchannel.extraction.formats.meeting_date import date_from_filename, parse_date_value
from backchannel.extraction.formats.parse import parse_bytes, parse_file, pretty_title
from backchannel.extraction.formats.transcript import (
    DATE_ORIGINS,
    DecodeFailure,
    EmptyTranscript,
    MalformedTranscript,
    TranscriptError,
    UnsupportedFormat,
)

MTIME = datetime(2024, 3, 5, 14, 30).timestamp()


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    os.utime(p, (MTIME, MTIME))
    return p


def said(t) -> list[tuple[str | None, str]]:
    return [(u.speaker, u.text) for u in t.utterances]


# --- WebVTT -----------------------------------------------------------------------------

MEETING_VTT = """WEBVTT
Kind: captions

NOTE date: 2025-09-18 10:00
title: Acme pipeline review
participants: Marc Dupont, Sophie Martin, Paul

00:00:01.000 --> 00:00:03.000
<v Marc Dupont>We worked together at Acme

00:00:03.000 --> 00:00:05.500
<v Marc Dupont><c.yellow>from 2016</c> to <b>2021</b> &amp; it was great.</v>

00:00:06.000 --> 00:00:07.000
<v.loud Marc Dupont>Next sentence.</v>

00:00:07.000 --> 00:00:08.000
Sophie Martin: She's now the CIO <00:00:07.500>of Acme.

00:00:08.000 --> 00:00:09.000
<v Sophie Martin>Right.</v><v Marc Dupont>Indeed.</v>
"""


def test_vtt_voices_tags_merging_and_note_header(tmp_path):
    t = parse_file(write(tmp_path, "review.vtt", MEETING_VTT))
    assert t.format == "vtt"
    assert said(t) == [
        ("Marc Dupont", "We worked together at Acme from 2016 to 2021 & it was great."),
        ("Marc Dupont", "Next sentence."),
        ("Sophie Martin", "She's now the CIO of Acme."),
        ("Sophie Martin", "Right."),
        ("Marc Dupont", "Indeed."),
    ]
    first = t.utterances[0]
    assert (first.idx, first.start_s, first.end_s) == (0, 1.0, 5.5)  # start of first cue, end of last
    assert [u.idx for u in t.utterances] == list(range(5))
    assert t.title == "Acme pipeline review"
    assert t.participants == ["Marc Dupont", "Sophie Martin", "Paul"]
    assert (t.meeting_date, t.meeting_date_origin) == (datetime(2025, 9, 18, 10, 0), "vtt_note")


def test_vtt_cues_before_merging_and_bare_note_date(tmp_path):
    text = "WEBVTT\n\nNOTE 2025-09-19 09:30\n\n00:01.000 --> 00:02.000\nhello\n\n00:02.000 --> 00:03.000\nthere\n"
    cues, _notes = parse_vtt_cues(text)
    assert [(c.start_s, c.end_s, c.raw_text) for c in cues] == [(1.0, 2.0, "hello"), (2.0, 3.0, "there")]
    t = parse_bytes(text.encode(), "call.vtt")
    assert said(t) == [(None, "hello there")]  # no sentence end: one run
    assert (t.meeting_date, t.meeting_date_origin) == (datetime(2025, 9, 19, 9, 30), "vtt_note")
    assert t.participants == []


def test_vtt_w3c_timings_and_whitespace():
    text = (
        "WEBVTT\n\n0:00:00.000 --> 00:00:01.000\nhours one digit\n\n"
        "00:00:0.000 --> 00:00:01.000\nseconds one digit\n\n"
        "00:00.000 --> 00:01.000\nno hours\n\n"
        "\v00:00:00.000 --> 00:00:01.000\nvertical tab\n\n"
        "00:00:00.000\x00 --> 00:00:01.000\nnul in timing\n"
    )
    assert [c.raw_text for c in parse_vtt_cues(text)[0]] == ["hours one digit", "no hours"]


def test_vtt_needs_signature_and_speaker_from_brackets():
    with pytest.raises(MalformedTranscript, match="WEBVTT"):
        parse_bytes(b"WEBVTTX\n\n00:01.000 --> 00:02.000\nhi\n", "bad.vtt")
    t = parse_bytes(b"WEBVTT\n\n00:01.000 --> 00:02.000\n[Marc] hello.\n", "x.vtt")
    assert said(t) == [("Marc", "hello.")]


def test_vtt_without_cues_is_empty():
    with pytest.raises(EmptyTranscript):
        parse_bytes(b"WEBVTT\n\nNOTE nothing said\n", "x.vtt")


def test_srt_saved_as_vtt_falls_back_to_content():
    t = parse_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nMarc: hi.\n", "wrong.vtt")
    assert t.format == "srt" and said(t) == [("Marc", "hi.")]


# --- SRT ----------------------------------------------------------------------------------

MEETING_SRT = """1
00:00:01,000 --> 00:00:03,000
Marc Dupont: <i>We worked together</i>

2
00:00:03,000 --> 00:00:05,000
Marc Dupont: at Acme.

3
00:00:05,000 --> 00:00:06,000
{\\an8}[Sophie] Really?
PAUL: Yes.

not a block

4
00:00:07,000 --> 00:00:08,000
No speaker here.
"""


def test_srt_speakers_tags_and_merging(tmp_path):
    t = parse_file(write(tmp_path, "2025-09-18 sync.srt", MEETING_SRT))
    assert t.format == "srt"
    assert said(t) == [
        ("Marc Dupont", "We worked together at Acme."),
        ("Sophie", "Really?"),
        ("PAUL", "Yes. not a block"),  # srt's lenient mode keeps stray lines with the cue
        (None, "No speaker here."),
    ]
    assert (t.utterances[0].start_s, t.utterances[0].end_s) == (1.0, 5.0)
    assert t.participants == ["Marc Dupont", "Sophie", "PAUL"]
    assert (t.meeting_date, t.meeting_date_origin) == (datetime(2025, 9, 18), "filename")
    assert t.title == "Sync"


def test_vtt_and_srt_of_one_meeting_hash_the_same():
    vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\n<v Marc>We worked\n\n00:02.000 --> 00:03.000\n<v Marc>together.\n"
    srt = "1\n00:00:01,000 --> 00:00:02,000\nMarc: We worked\n\n2\n00:00:02,000 --> 00:00:03,000\nMarc: together.\n"
    a, b = parse_bytes(vtt.encode(), "a.vtt"), parse_bytes(srt.encode(), "a.srt")
    assert said(a) == said(b) == [("Marc", "We worked together.")]
    assert a.content_hash() == b.content_hash()


def test_srt_without_timings_is_malformed():
    with pytest.raises(MalformedTranscript, match="timing"):
        parse_bytes(b"1\nsome text\n", "x.srt")


# --- plain text ---------------------------------------------------------------------------

MEETING_TXT = """---
title: "Weekly sync"
date: 2025-09-18T10:00:00+02:00
participants:
  - Marc Dupont
  - Sophie Martin
---
# Heading that is not speech

[00:00:01] Marc Dupont: Hello   everyone,
this line continues Marc.
Sophie Martin (00:01:05): Hi Marc.
00:02:00 Paul: Stamp before the name.
**Marc Dupont:** Markdown name.

A line without a speaker.
Note: not a speaker either.

Sophie Martin  3:10
Otter style text

after a blank line.
Agenda items are next.
"""


def test_text_front_matter_stamps_continuations(tmp_path):
    t = parse_file(write(tmp_path, "notes.md", MEETING_TXT))
    assert t.format == "text"
    assert said(t) == [
        ("Marc Dupont", "Hello everyone, this line continues Marc."),
        ("Sophie Martin", "Hi Marc."),
        ("Paul", "Stamp before the name."),
        ("Marc Dupont", "Markdown name."),
        (None, "A line without a speaker. Note: not a speaker either."),
        ("Sophie Martin", "Otter style text"),
        (None, "after a blank line. Agenda items are next."),
    ]
    assert [u.start_s for u in t.utterances[:3]] == [1.0, 65.0, 120.0]
    assert t.utterances[5].start_s == 190.0
    assert t.title == "Weekly sync"
    assert t.participants == ["Marc Dupont", "Sophie Martin"]
    # the offset is dropped, not converted: the wall time as written
    assert (t.meeting_date, t.meeting_date_origin) == (datetime(2025, 9, 18, 10, 0), "front_matter")


def test_text_title_from_heading_and_speakers_as_participants():
    t = parse_bytes(b"# Board call\n\nAnna: Hi.\nBen: Hello.\nAnna: Bye.\n", "x.txt")
    assert t.title == "Board call"
    assert t.participants == ["Anna", "Ben"]


def test_text_inline_participants_and_name_line_filled_later():
    data = b"---\nparticipants: [Anna Lee, 'Ben']\n---\nAnna Lee:\n\nI speak on the next line.\n"
    t = parse_bytes(data, "x.text")
    assert t.participants == ["Anna Lee", "Ben"]
    assert said(t) == [("Anna Lee", "I speak on the next line.")]


def test_text_normalisation_nfc_nul_whitespace():
    t = parse_bytes("Zoe\u0308:  cafe\u0301\x00 \u00a0 au\tlait\n".encode(), "x.txt")
    assert said(t) == [("Zo\u00eb", "caf\u00e9 au lait")]


# --- JSON ---------------------------------------------------------------------------------


def test_json_native_shape(tmp_path):
    doc = {
        "title": "Acme review",
        "date": "2025-09-18T10:00:00Z",
        "participants": ["Marc Dupont", {"name": "Sophie Martin"}],
        "utterances": [
            {"speaker": "Marc Dupont", "text": "We worked  together.", "start": 1, "end": "00:00:04.5"},
            {"speaker": "Sophie Martin", "text": "Yes.", "start": 5.0},
            {"speaker": "Sophie Martin", "text": None},
        ],
    }
    t = parse_file(write(tmp_path, "x.json", json.dumps(doc)))
    assert t.format == "json"
    assert said(t) == [("Marc Dupont", "We worked together."), ("Sophie Martin", "Yes.")]
    assert (t.utterances[0].start_s, t.utterances[0].end_s) == (1.0, 4.5)
    assert t.title == "Acme review"
    assert t.participants == ["Marc Dupont", "Sophie Martin"]
    assert (t.meeting_date, t.meeting_date_origin) == (datetime(2025, 9, 18, 10, 0), "json")


def test_json_bare_list_qmsum_and_segments():
    bare = [{"speaker": "A", "content": "{vocalsound} Hi {disfmarker} there ."}, {"speaker": "B", "text": "Yo"}]
    assert said(parse_bytes(json.dumps(bare).encode(), "x.json")) == [("A", "Hi there ."), ("B", "Yo")]
    qmsum = {"topic_list": [], "meeting_transcripts": [{"speaker": "PM", "content": "{pause} Okay ."}]}
    assert said(parse_bytes(json.dumps(qmsum).encode(), "ES.json")) == [("PM", "Okay .")]
    whisper = {
        "text": "all",
        "segments": [{"id": 0, "start": 0.0, "end": 2.0, "text": " Hello."}],
        "started_at": 1758189600,
    }
    t = parse_bytes(json.dumps(whisper).encode(), "w.json")
    assert said(t) == [(None, "Hello.")] and t.utterances[0].end_s == 2.0
    assert t.meeting_date == datetime.fromtimestamp(1758189600) and t.meeting_date_origin == "json"


def test_json_errors():
    with pytest.raises(MalformedTranscript, match="invalid JSON"):
        parse_bytes(b"{not json", "x.json")
    with pytest.raises(MalformedTranscript, match="without a list"):
        parse_bytes(b'{"cues": []}', "x.json")
    with pytest.raises(MalformedTranscript, match="item 1"):
        parse_bytes(b'[{"text": "ok"}, {"speaker": "no text"}]', "x.json")
    with pytest.raises(EmptyTranscript):
        parse_bytes(b'{"utterances": [{"speaker": "A", "text": "{vocalsound}"}]}', "x.json")
    with pytest.raises(MalformedTranscript, match="not an object or a list"):
        parse_bytes(b"42", "x.json")


# --- format choice ------------------------------------------------------------------------


def test_unknown_extension_sniffs_content_or_refuses():
    assert parse_bytes(b"WEBVTT\n\n00:01.000 --> 00:02.000\nhi\n", "x.sub").format == "vtt"
    assert parse_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nhi\n", "x.sub").format == "srt"
    assert parse_bytes(b'[{"text": "hi"}]', "x.log").format == "json"
    with pytest.raises(UnsupportedFormat, match=r"\.log"):
        parse_bytes(b"Marc: hello\n", "x.log")
    assert sniff_format("plain words") is None


def test_empty_and_unreadable_files(tmp_path):
    with pytest.raises(EmptyTranscript):
        parse_bytes(b"  \n\n", "x.txt")
    with pytest.raises(EmptyTranscript):
        parse_bytes(b"\xef\xbb\xbf", "x.vtt")
    with pytest.raises(TranscriptError, match="cannot read"):
        parse_file(tmp_path / "missing.vtt")


# --- encodings ----------------------------------------------------------------------------

SAMPLE = "Marc: J'ai travaillé avec Sophie à Genève, c'était très bien.\nSophie: Ça me fait plaisir.\n"


@pytest.mark.parametrize(
    "data",
    [
        SAMPLE.encode("utf-8-sig"),
        SAMPLE.encode("utf-16"),  # BOM, native order
        b"\xff\xfe" + SAMPLE.encode("utf-16-le"),
        b"\xfe\xff" + SAMPLE.encode("utf-16-be"),
        SAMPLE.encode("utf-16-le"),  # no BOM: NUL pattern
        SAMPLE.encode("utf-16-be"),
        SAMPLE.encode("utf-32"),
        b"\x00\x00\xfe\xff" + SAMPLE.encode("utf-32-be"),
        SAMPLE.encode("latin-1"),
        (SAMPLE + "Paul: 5 € – «oui».\n").encode("cp1252"),
    ],
    ids=[
        "utf8-bom",
        "utf16",
        "utf16le-bom",
        "utf16be-bom",
        "utf16le",
        "utf16be",
        "utf32",
        "utf32be-bom",
        "latin1",
        "cp1252",
    ],
)
def test_encodings_decode_to_the_same_transcript(data):
    t = parse_bytes(data, "x.txt")
    assert t.utterances[0].text == "J'ai travaillé avec Sophie à Genève, c'était très bien."
    assert t.utterances[1].text == "Ça me fait plaisir."


def test_short_latin1_prefers_cp1252():
    assert decode_bytes("Marc: café\n".encode("latin-1")) == ("Marc: café\n", "cp1252")


def test_binary_garbage_is_a_decode_failure():
    import random

    rng = random.Random(7)
    garbage = bytes(rng.randrange(256) for _ in range(4000))
    with pytest.raises(DecodeFailure, match="not UTF-8"):
        parse_bytes(garbage, "x.vtt")
    with pytest.raises(DecodeFailure, match="control characters"):
        parse_bytes(b"WEBVTT\n" + bytes(range(1, 9)) * 50, "x.vtt")
    with pytest.raises(DecodeFailure, match="utf-16"):
        decode_bytes(b"\xff\xfe\x00\xd8a\x00")  # BOM, then a lone surrogate


# --- meeting dates ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,expected",
    [
        ("2025-09-18 weekly.vtt", datetime(2025, 9, 18)),
        ("weekly_20250918.srt", datetime(2025, 9, 18)),
        ("call_2025_09_18.txt", datetime(2025, 9, 18)),
        ("GMT20250918-100000_Recording.vtt", datetime(2025, 9, 18, 10, 0, 0)),
        ("2025-13-45 notes.txt", None),
        ("call 123456789.txt", None),
    ],
)
def test_date_from_filename(name, expected):
    assert date_from_filename(name) == expected


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2025-09-18", datetime(2025, 9, 18)),
        ("18 September 2025 10:15", datetime(2025, 9, 18, 10, 15)),
        ("Sep 18, 2025", datetime(2025, 9, 18)),
        ("2025-09-18T10:00:00-05:00", datetime(2025, 9, 18, 10, 0)),
        (1758189600000, datetime.fromtimestamp(1758189600)),
        ("10:00", None),
        ("next week", None),
        ("the 2025 budget", None),
        (True, None),
    ],
)
def test_parse_date_value(value, expected):
    assert parse_date_value(value) == expected


def test_date_origins_in_order(tmp_path):
    # file beats name, name beats mtime; the mtime is only the file's date: the meeting's stays unknown
    p = write(tmp_path, "2024-01-02 sync.txt", "---\ndate: 2025-09-18\n---\nA: hi\n")
    assert parse_file(p).meeting_date_origin == "front_matter"
    p = write(tmp_path, "2024-01-02 sync2.txt", "A: hi\n")
    t = parse_file(p)
    assert (t.meeting_date, t.meeting_date_origin) == (datetime(2024, 1, 2), "filename")
    p = write(tmp_path, "sync.txt", "A: hi\n")
    t = parse_file(p)
    assert (t.meeting_date, t.file_date, t.meeting_date_origin) == (None, datetime.fromtimestamp(MTIME), "mtime")
    assert parse_bytes(b"A: hi\n", "sync.txt").meeting_date is None
    for origin in ("front_matter", "json", "vtt_note", "filename", "mtime"):
        assert origin in DATE_ORIGINS


def test_pretty_title():
    assert pretty_title("2025-09-18_weekly_sync.vtt") == "Weekly sync"
    assert pretty_title("ES2004a.json") == "ES2004a"
    assert pretty_title("20250918.vtt") == "20250918"


@pytest.mark.parametrize(
    "line,speaker",
    [
        ("Marc de la Fontaine: hello", "Marc de la Fontaine"),
        ("SPEAKER_01: hello", "SPEAKER_01"),
        ("Speaker 2: hello", "Speaker 2"),
        ("Dr. O'Neil: hello", "Dr. O'Neil"),
        ("Ms. Heather McPherson (Edmonton Strathcona, NDP): hello", "Ms. Heather McPherson (Edmonton Strathcona, NDP)"),
        ("张伟: 你好", "张伟"),
        ("The answer: hello", None),
        ("Next steps: hello", None),
        ("Note: hello", None),
        ("so: hello", None),
        ("At 10:30 we met", None),
    ],
)
def test_speaker_prefixes(line, speaker):
    t = parse_bytes(line.encode(), "x.txt")
    assert t.utterances[0].speaker == speaker


def test_vtt_tag_edge_cases():
    def vtt_text(body: str) -> list[tuple[str | None, str]]:
        return said(parse_bytes(f"WEBVTT\n\n00:01.000 --> 00:02.000\n{body}\n".encode(), "x.vtt"))

    assert vtt_text("revenue < 5M and <5M ok") == [(None, "revenue < 5M and <5M ok")]
    assert vtt_text("<ruby>漢<rt>kan</rt></ruby> &lt;b&gt; &nbsp;x") == [(None, "漢kan <b> x")]
    assert vtt_text("- Marc: hi\n- Sophie: hello") == [("Marc", "hi"), ("Sophie", "hello")]
    # absurd hour counts drop that cue only (webvtt-py would refuse the whole file)
    data = b"WEBVTT\n\n12345678901:00:00.000 --> 12345678901:00:01.000\nhuge\n\n00:01.000 --> 00:02.000\nok\n"
    assert said(parse_bytes(data, "x.vtt")) == [(None, "ok")]


def test_text_rules_are_not_front_matter_or_speech():
    t = parse_bytes(b"---\nMarc: hi.\n---\nSophie: hello.\n\n***\n", "x.txt")
    assert said(t) == [("Marc", "hi."), ("Sophie", "hello.")]
    assert t.meeting_date is None and t.title == "X"


# Speaker lines of common chat and note-taker exports (fixtures in tests/fixtures/exports/):
# the name alone, whatever the digits of its stamp; a clock time is not an offset.
EXPORTS = Path(__file__).parents[1] / "fixtures" / "exports"
_CHAT = ["Marc Dupont", "Alex Moreau", "Nina Roy"]


@pytest.mark.parametrize(
    "name,speakers,starts",
    [
        # the export's title line heads both: an unattributed line, not a speaker
        (
            "otter_transcript.txt",
            [None, "Alex Moreau", "Marc Dupont", "Alex Moreau", "Marc Dupont", "Alex Moreau"],
            [None, 3.0, 11.0, 598.0, 607.0, 3735.0],
        ),
        ("zoom_chat.txt", _CHAT, [57731.0, 57820.0, 57902.0]),
        ("zoom_chat_legacy.txt", _CHAT, [72.0, 160.0, 725.0]),
        ("zoom_transcript.vtt", ["Alex Moreau", "Marc Dupont"], [3.12, 8.01]),
        ("teams_chat.txt", _CHAT, [None, None, None]),
        ("teams_transcript.txt", _CHAT, [None, None, None]),
        ("teams_transcript.vtt", ["Marc Dupont", "Alex Moreau"], [0.0, 4.95]),
        ("google_meet_transcript.txt", [None, *_CHAT], [None, None, None, None]),
        ("google_meet_chat.txt", _CHAT, [962.0, 973.0, 975.0]),
    ],
)
def test_chat_and_note_taker_exports(name, speakers, starts):
    t = parse_file(EXPORTS / name)
    assert [u.speaker for u in t.utterances] == speakers
    assert [u.start_s for u in t.utterances] == starts
    # the message is the text, never the stamp or the speaker line
    assert all(not re.search(r"\d:\d\d|From |[AP]M\b", u.text) for u in t.utterances), t.utterances
    first = next(u.text for u in t.utterances if u.speaker == "Alex Moreau")
    assert first.startswith("Thanks"), first


@pytest.mark.parametrize(
    "line,speaker,text,start",
    [
        ("Marc Dupont  12:45", "Marc Dupont", "", 765.0),  # not "Marc Dupont 1" at 2:45
        ("Marc Dupont  4:02 PM", "Marc Dupont", "", None),
        ("Marc Dupont 4:02 p.m.", "Marc Dupont", "", None),
        ("Kirsty Williams (10:04): Thank you, Chair.", "Kirsty Williams", "Thank you, Chair.", 604.0),
        ("[11:59 AM] Nina Roy", "Nina Roy", "", None),
        ("[00:01:02] Okay", None, "Okay", 62.0),  # one word after an offset is speech
        ("Meeting at 10:30", None, "Meeting at 10:30", None),
        ("We meet at 4:02 PM tomorrow.", None, "We meet at 4:02 PM tomorrow.", None),
    ],
)
def test_speaker_line_forms(line, speaker, text, start):
    from backchannel.extraction.formats.text import _read_line

    assert _read_line(line) == (speaker, text, start)

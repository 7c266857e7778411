"""Third-party subtitle and meeting files (../shared/corpora): every file parses or fails
with our own typed error; W3C cue counts; mozilla voice spans; all QMSum meetings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backchannel.extraction.formats import parse_vtt_cues
from backchannel.extraction.formats.decode import decode_bytes
from backchannel.extraction.formats.parse import parse_file, pretty_title
from backchannel.extraction.formats.transcript import MalformedTranscript, Transcript, TranscriptError


def test_every_subtitle_file_parses_or_fails_typed(corpora: Path):
    files = sorted(p for p in (corpora / "subtitles").rglob("*") if p.is_file())
    assert len(files) > 150, "the subtitles corpus looks incomplete"
    parsed, failed = [], []
    for path in files:
        try:
            t = parse_file(path)
        except TranscriptError as e:
            # the safety net in parse_bytes must never be what caught it
            assert "unexpected parser error" not in e.reason, f"{path}: {e.reason}"
            assert e.reason and e.path == str(path)
            failed.append(path)
        else:  # anything else propagates and fails the test
            assert isinstance(t, Transcript) and t.utterances, path
            assert all(u.text and u.text == " ".join(u.text.split()) for u in t.utterances), path
            assert t.meeting_date_origin == "mtime" and t.title, path
            parsed.append(path)
    exts = {p.suffix for p in parsed}
    assert {".vtt", ".srt"} <= exts
    assert any(p.name == "gb2312.srt" for p in parsed)
    assert len(parsed) >= 40 and len(failed) >= 40


def test_gb2312_srt_decodes_by_detection(corpora: Path):
    path = corpora / "subtitles" / "srt-cdown" / "gb2312.srt"
    text, encoding = decode_bytes(path.read_bytes())
    assert encoding in ("gb2312", "gbk", "gb18030")
    t = parse_file(path)
    assert t.format == "srt" and "宇宙守护神" in t.utterances[0].text


def test_wpt_webvtt_cue_counts(corpora: Path):
    folder = corpora / "subtitles" / "wpt_webvtt"
    expected = json.loads((folder / "expected.json").read_text())
    assert len(expected) >= 9
    for case in expected:
        text, _ = decode_bytes((folder / case["file"]).read_bytes())
        cues, _notes = parse_vtt_cues(text, case["file"])
        assert len(cues) == case["expected_cue_count"], case["title"]


def _mozilla_expected(json_path: Path) -> list[dict] | None:
    if not json_path.exists():
        return None
    return json.loads(json_path.read_text())["cues"]


# vtt.js reads a 3-digit first field without hours ("000:00.000", "120:00.000") as
# minutes; the W3C parser reads it as hours, then fails for want of seconds, and WPT's
# timings-too-long case agrees ("000:00.000 --> 00:01.000" is invalid). We follow W3C.
VTTJS_MORE_LENIENT_THAN_W3C = {"min-top-digits.vtt": 0, "minimum-spots-over-sixty.vtt": 0}


def test_mozilla_vtt_cue_counts_and_times(corpora: Path):
    root = corpora / "subtitles" / "mozilla-vtt.js"
    checked = 0
    for vtt in sorted(root.rglob("*.vtt")):
        expected = _mozilla_expected(vtt.with_suffix(".json"))
        if expected is None:
            continue  # no expected cues, only a -proc.json of parser events
        if vtt.name in VTTJS_MORE_LENIENT_THAN_W3C:
            expected = expected[: VTTJS_MORE_LENIENT_THAN_W3C[vtt.name]]
        text, _ = decode_bytes(vtt.read_bytes())
        try:
            cues, _ = parse_vtt_cues(text, vtt.name)
        except MalformedTranscript:
            cues = []
        assert len(cues) == len(expected), vtt.name
        for cue, exp in zip(cues, expected):
            assert cue.start_s == pytest.approx(exp["startTime"]), vtt.name
            assert cue.end_s == pytest.approx(exp["endTime"]), vtt.name
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize(
    "name,speaker,text",
    [
        ("with-annotation.vtt", "Mary", "No way!"),
        ("with-closing-span.vtt", "Joe", "Hee! Hee!"),
        ("with-subclass.vtt", "Joe", "That's awesome!"),
        ("with-two-subclasses.vtt", "Joe", "That's awesome!"),
        ("not-closed.vtt", None, "It's a blue apple tree!"),
    ],
)
def test_mozilla_voice_spans(corpora: Path, name, speaker, text):
    t = parse_file(corpora / "subtitles" / "mozilla-vtt.js" / "cuetext" / "voice" / name)
    assert [(u.speaker, u.text) for u in t.utterances] == [(speaker, text)]


def test_all_qmsum_meetings(corpora: Path):
    folder = corpora / "meetings" / "qmsum"
    index = {m["meeting"]: m for m in json.loads((folder / "INDEX.json").read_text())}
    files = sorted(p for p in folder.glob("*.json") if p.name != "INDEX.json")
    assert len(files) == 20
    for path in files:
        t = parse_file(path)
        assert t.format == "json" and len(t.utterances) > 100, path.name
        assert all(u.speaker for u in t.utterances), path.name
        assert not any("{disfmarker}" in u.text or "{vocalsound}" in u.text for u in t.utterances)
        meta = index[path.stem]  # speaker_labels lists at most a few of them
        assert len(t.participants) == meta["speakers"], path.name
        assert set(meta["speaker_labels"]) <= set(t.participants), path.name
        assert t.title == pretty_title(path.name) and t.meeting_date_origin == "mtime"

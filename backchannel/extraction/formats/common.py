"""Helpers every format shares: canonical text, `Speaker: text` prefixes, cue merging."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime

from backchannel.memory.text import norm_space

# A speaker label before a colon: one to five words and an optional parenthesis ("Marc",
# "Marc Dupont", "Speaker 2", "SPEAKER_01", "Dr. O'Neil", "Ms. Heather McPherson
# (Edmonton Strathcona, NDP)", "张伟"). is_name then refuses lower-case starts, so prose
# like "note: the deadline" or "so: what now" stays text (scripts without case pass).
# The note may hold one nested parenthesis ("The Chair (Hon. Anthony Rota (Nipissing, Lib.))") and run
# to 120 characters ("(Vice-President, Health Security Infrastructure Branch, Public Health Agency of Canada)").
# After a comma, an office: "Kirsty Williams AM, Cabinet Secretary for Education" (is_name checks it).
NAME_PATTERN = (
    r"[^\W\d_][\w'’.\-]*(?:[ \t]+[\w'’.\-&]+){0,4}"
    r"(?:,[ \t]+[A-Z][\w'’.\-&]*(?:[ \t]+[\w'’.\-&]+){0,8})?"
    r"(?:[ \t]*\((?=[^\n]{1,120}\))[^()\n]*(?:\([^()\n]*\)[^()\n]*)?\))?"
)
_SPEAKER_PREFIX = re.compile(
    rf"^[ \t]*(?:[-–—][ \t]+)?(?:\*\*|__)?\[?(?P<name>{NAME_PATTERN})\]?(?:\*\*|__)?[ \t]*:(?:\*\*|__)?(?:[ \t]+|$)(?P<rest>.*)$",
    re.DOTALL,
)
# `[Marc]` or `[Marc Dupont] text` as some subtitle exports write speakers.
_BRACKET_PREFIX = re.compile(rf"^[ \t]*\[(?P<name>{NAME_PATTERN})\][ \t]*(?P<rest>.*)$", re.DOTALL)
# Words that start a line with a colon but are not speakers.
_NOT_NAMES = frozenset(
    "note notes warning caution important update summary agenda action actions todo "
    "question answer q a re subject date time title participants attendees location "
    "http https ps nb tip example step".split()
)
_PARTICLES = frozenset("de la le du des da di del della van von der den ter bin ben al el y e dos das".split())
_OFFICE_WORDS = frozenset("for of and the in on at to".split())  # "Cabinet Secretary for Education"
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*$")

# Merged cue runs stop growing past this many characters, so unpunctuated captions
# (auto-generated subtitles) do not collapse a whole file into one utterance.
MAX_MERGED_CHARS = 1500


@dataclass
class Segment:
    """One piece of transcript before numbering: a cue, a line, a JSON item."""

    speaker: str | None
    text: str
    start_s: float | None = None
    end_s: float | None = None


@dataclass
class Parsed:
    """What a format parser returns: segments plus whatever the file declares about itself.
    parse.py turns it into a Transcript (numbering, defaults, emptiness check)."""

    format: str
    segments: list[Segment] = field(default_factory=list)
    title: str | None = None
    meeting_date: datetime | None = None
    meeting_date_origin: str | None = None
    participants: list[str] = field(default_factory=list)

    def set_date(self, when: datetime | None, origin: str) -> None:
        """Keep the first date the file declares."""
        if when is not None and self.meeting_date is None:
            self.meeting_date, self.meeting_date_origin = when, origin


# Transcript markup that is no speech: QMSum/AMI braces ("{vocalsound}", "{disfmarker}", "{gap}") and the
# bracketed sound cues of captions and exports ("[laughter]", "(inaudible 00:01:02)", "[crosstalk]").
# Only this vocabulary: "[Marc]" or "(see page 4)" are words someone wrote.
_MARKUP = re.compile(
    r"\{(?:vocalsound|disfmarker|pause|gap|nonvocalsound|comment|other)[^{}]*\}|\{[a-z_]{2,20}\}"
    r"|[\[(](?:laugh(?:s|ter|ing)?|chuckles?|inaudible|unintelligible|crosstalk|cross-talk|overlapping|music|"
    r"applause|silence|noise|background\s+noise|pause|coughs?|cough(?:ing)?|sighs?|clears\s+throat|"
    r"indistinct|static|beep|phone\s+rings|rires?|inaudible|silence|bruit)(?:\s+[\d:.]+)?[\])]",
    re.IGNORECASE,
)


def strip_markup(text: str) -> str:
    """Text without transcript markup (see _MARKUP); a removed cue leaves a space."""
    return _MARKUP.sub(" ", text) if ("{" in text or "[" in text or "(" in text) else text


def clean_text(text: str) -> str:
    """The canonical utterance text: NFC, no NULs, whitespace runs collapsed to one space."""
    return norm_space(unicodedata.normalize("NFC", text.replace("\x00", "")))


def clean_speaker(name: str | int | None) -> str | None:
    """A speaker label as stored: cleaned like text, markdown emphasis and brackets dropped (a JSON
    transcript's numeric label, 3, as "3")."""
    if name is None:
        return None
    name = clean_text(str(name)).strip("*_[] ")
    return name or None


def split_speaker(text: str, brackets: bool = False) -> tuple[str | None, str]:
    """Split a leading `Speaker: ` (or, with brackets, `[Speaker] `) off a line of text.

    Returns (None, text) when the line does not start with something name-like."""
    m = _SPEAKER_PREFIX.match(text)
    if m and is_name(m["name"]):
        return clean_speaker(m["name"]), m["rest"]
    if brackets:
        m = _BRACKET_PREFIX.match(text)
        if m and is_name(m["name"]):
            return clean_speaker(m["name"]), m["rest"]
    return None, text


def segments_by_speaker(
    text: str, start_s: float | None, end_s: float | None, speaker: str | None = None
) -> list[Segment]:
    """Split a cue's text where a line starts with a speaker prefix (`Marc: `, `[Marc] `).

    Lines without a prefix continue the segment before them; the first segment takes
    `speaker` (a voice span's) unless its own first line names one."""
    out: list[Segment] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        name, rest = split_speaker(line, brackets=True) if speaker is None or out else (None, line)
        if name is not None or not out:
            out.append(Segment(name if name is not None else speaker, rest, start_s, end_s))
        else:
            out[-1].text = f"{out[-1].text}\n{rest}"
    return [s for s in out if s.text.strip()]


def is_name(name: str) -> bool:
    """Whether a matched label reads as a speaker name rather than the start of prose."""
    if name[:1].islower():
        return False
    first = name.split()[0].strip(".'’-").casefold() if name.split() else ""
    if first in _NOT_NAMES:
        return False
    # A lower-case word other than a name particle makes it a clause ("The answer: yes",
    # "Next steps: ..."), not a name ("Marc de la Fontaine" is one).
    outside = re.sub(r"\(.*\)", "", name)
    if "," in outside:
        head, _, office = outside.partition(",")
        heads = head.split()
        if not 2 <= len(heads) <= 5 or not all(w[:1].isupper() for w in heads):
            return False  # "Well, Next Steps": only a full name takes an office after a comma
        if not all(w[:1].isupper() or w.casefold() in _OFFICE_WORDS for w in office.split()):
            return False
        name = head
    words = re.sub(r"\([^)]*\)", "", name).split()
    return all(not w[:1].islower() or w.casefold() in _PARTICLES for w in words[1:])


def ends_sentence(text: str) -> bool:
    return bool(_SENTENCE_END.search(text.rstrip()))


def merge_runs(segments: list[Segment]) -> list[Segment]:
    """Join consecutive cues by the same speaker (None counts as a speaker) while the
    previous cue stops mid-sentence, the way meeting exports split one sentence over
    several cues. The merged segment keeps the first start and the last end."""
    out: list[Segment] = []
    for seg in segments:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.speaker == seg.speaker
            and prev.text
            and not ends_sentence(prev.text)
            and len(prev.text) + len(seg.text) < MAX_MERGED_CHARS
        ):
            prev.text = f"{prev.text} {seg.text}"
            if seg.end_s is not None:
                prev.end_s = seg.end_s
            continue
        out.append(Segment(seg.speaker, seg.text, seg.start_s, seg.end_s))
    return out


_HMS = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?$")


def hms_seconds(value: str) -> float | None:
    """'01:02:03', '1:02:03.5', '02:03,250' as seconds, or None."""
    m = _HMS.match(value.strip())
    if not m:
        return None
    h, mi, s, frac = m.groups()
    if int(mi) > 59 or int(s) > 59:
        return None
    return int(h or 0) * 3600 + int(mi) * 60 + int(s) + (int(frac.ljust(3, "0")) / 1000 if frac else 0.0)


def parse_list_value(value: str) -> list[str]:
    """'[A, B]', 'A, B', 'A; B' as a list of names (for front matter and NOTE lines)."""
    inner = value.strip().strip("[]")
    parts = re.split(r"[;,]", inner) if inner else []
    return [p for p in (clean_speaker(x.strip().strip("\"'")) for x in parts) if p]

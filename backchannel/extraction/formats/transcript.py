"""What every transcript format parses into, and the typed errors parsing raises."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from backchannel.memory.text import norm_space

DATE_ORIGINS = ("front_matter", "json", "vtt_note", "filename", "mtime", "import", "given", "manifest", "user")


class TranscriptError(Exception):
    """A transcript we cannot read. `reason` is written to failed/NAME.error.txt."""

    def __init__(self, path: str | Path | None, reason: str):
        self.path = str(path) if path is not None else None
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)


class UnsupportedFormat(TranscriptError):
    pass


class DecodeFailure(TranscriptError):
    pass


class MalformedTranscript(TranscriptError):
    pass


class EmptyTranscript(TranscriptError):
    pass


@dataclass
class Utterance:
    idx: int
    speaker: str | None  # the label as written in the file ("Marc", "Speaker 2", None)
    text: str
    start_s: float | None = None
    end_s: float | None = None


@dataclass
class Transcript:
    utterances: list[Utterance]
    format: str  # vtt, srt, text, json
    title: str | None = None
    meeting_date: datetime | None = None  # naive, the meeting's local wall time
    meeting_date_origin: str | None = None  # one of DATE_ORIGINS
    # The file's mtime when nothing better dates the meeting ("mtime" origin): shown as a
    # file date, never used as the meeting's (meeting_date stays None: the date is unknown).
    file_date: datetime | None = None
    participants: list[str] = field(default_factory=list)  # as declared, else distinct speakers in order
    path: str | None = None

    def speakers(self) -> list[str]:
        seen: dict[str, None] = {}
        for u in self.utterances:
            if u.speaker:
                seen.setdefault(u.speaker, None)
        return list(seen)

    def content_hash(self) -> str:
        """sha256 over speaker and whitespace-normalised text of every utterance, so the
        same meeting re-encoded or re-exported in another format hashes the same."""
        h = hashlib.sha256()
        for u in self.utterances:
            h.update(norm_space(u.speaker or "").casefold().encode())
            h.update(b"\x1f")
            h.update(norm_space(u.text).encode())
            h.update(b"\x1e")
        return h.hexdigest()

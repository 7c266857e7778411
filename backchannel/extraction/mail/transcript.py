"""A `MailMessage` as a `Transcript`: one source per message, its blocks as utterances.

Speakers are people: the sender's label for what they wrote and for their signature,
the quoted author's label for a quoted reply (never the replier's), None when a quote
names nobody. The message's date is its `Date:` header in the owner's time zone.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo

from backchannel.extraction.formats.transcript import EmptyTranscript, Transcript, Utterance
from backchannel.extraction.mail.body import split_body
from backchannel.extraction.mail.message import Address, MailMessage
from backchannel.memory.text import norm_space

# Blocks whose text goes through extraction: a reply's quote repeats an earlier
# message (stored on its own when we have it), so it is kept as context only.
EXTRACTED_KINDS = ("own", "forward")


@dataclass
class MailTranscript(Transcript):
    message: MailMessage | None = None
    kinds: dict[int, str] = field(default_factory=dict)  # utterance idx -> own, quote, forward, signature
    emails: dict[str, str] = field(default_factory=dict)  # speaker/participant label -> address

    def content_hash(self) -> str:
        """The message's identity (Message-ID, else a hash of its headers and body) plus
        its text: the same message found in IMAP, a Maildir and an mbox hashes the same."""
        h = hashlib.sha256(b"email\x1e")
        h.update((self.message.identity() if self.message else "").encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
        for u in self.utterances:
            h.update(norm_space(u.speaker or "").casefold().encode())
            h.update(b"\x1f")
            h.update(norm_space(u.text).encode("utf-8", "surrogatepass"))
            h.update(b"\x1e")
        return h.hexdigest()

    def extraction_view(self) -> Transcript:
        """The same transcript with only the utterances extraction reads (indices kept)."""
        return Transcript(
            utterances=[u for u in self.utterances if self.kinds.get(u.idx) in EXTRACTED_KINDS],
            format=self.format,
            title=self.title,
            meeting_date=self.meeting_date,
            meeting_date_origin=self.meeting_date_origin,
            participants=list(self.participants),
            path=self.path,
        )


def local_time(when: datetime | None, tz: str | None) -> datetime | None:
    """A header date as naive wall time in `tz` (how meeting dates are stored)."""
    if when is None:
        return None
    if when.tzinfo is None:
        return when
    try:
        zone: tzinfo = ZoneInfo(tz or "UTC")
    except Exception:  # an unknown zone name is reported by doctor; UTC keeps ingest going
        zone = UTC
    return when.astimezone(zone).replace(tzinfo=None)


def to_transcript(
    msg: MailMessage,
    origin: str,
    *,
    owner_name: str | None = None,
    owner_email: str | None = None,
    tz: str | None = None,
) -> MailTranscript:
    me = (owner_email or "").strip().lower()
    emails: dict[str, str] = {}

    def label(a: Address | None) -> str | None:
        if a is None:
            return None
        if me and a.addr == me and owner_name:
            name = owner_name  # the owner's own mail: first person is the owner
        else:
            name = a.label()
        if a.addr and "@" in a.addr:
            emails.setdefault(name, a.addr)
        return name

    sender = label(msg.sender)
    recipients = [x for x in (label(a) for a in msg.recipients()) if x]
    utterances: list[Utterance] = []
    kinds: dict[int, str] = {}
    for block in split_body(msg.body, sender):
        text = block.text.strip()
        if not text:
            continue
        idx = len(utterances)
        utterances.append(Utterance(idx, block.author, text))
        kinds[idx] = block.kind
    if not utterances:
        raise EmptyTranscript(origin, "no text in the message body")
    participants = list(dict.fromkeys([p for p in (sender, *recipients) if p and "@" not in p]))
    return MailTranscript(
        utterances=utterances,
        format="email",
        title=msg.subject or "(no subject)",
        meeting_date=local_time(msg.date, tz),
        meeting_date_origin="email_header" if msg.date else None,
        participants=participants,
        path=origin,
        message=msg,
        kinds=kinds,
        emails=emails,
    )

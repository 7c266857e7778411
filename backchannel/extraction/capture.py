"""What of a meeting may be captured, decided before anything is extracted or stored.

- A meeting marked no-capture (front matter `capture: no`, a file name with
  `no-capture` in it, or a calendar event flagged with one of `[consent]
  calendar_markers` whose slot holds the meeting) is refused with the reason, or with
  `[consent] no_capture = "owner_only"` keeps only the owner's own turns.
- People who withdrew consent: their turns are dropped and their names, aliases and
  addresses in other people's words are replaced, so extraction never sees them and no
  assertion about them can be made from this source.
- The source's scope: from the folder it was dropped in (`[scope] folders`), else the
  default (`ingest --scope` sets it).

`admit()` runs once per file, right after parsing; `mark()` records the outcome on the
source row once it is written."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from backchannel.config import Settings
from backchannel.extraction.formats.transcript import Transcript, TranscriptError
from backchannel.memory import consent
from backchannel.memory.store import Store
from backchannel.memory.text import norm_name

_NO_CAPTURE_NAME = re.compile(r"no[ _-]?capture|off[ _-]the[ _-]record", re.IGNORECASE)
_FRONT_FLAG = re.compile(r"^\s*(capture|no[_-]capture|recording|consent)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_OFF = {"no", "false", "off", "0", "none", "withdrawn", "denied", "refused"}
_ON = {"yes", "true", "on", "1"}


class NoCapture(TranscriptError):
    """A meeting that must not be stored."""


@dataclass
class Admission:
    consent: str = "ok"  # ok, redacted, owner_only
    scope: str = "default"
    dropped_turns: int = 0


def no_capture_reason(store: Store, settings: Settings, transcript: Transcript, path: Path) -> str | None:
    """Why this meeting is no-capture, or None."""
    if _NO_CAPTURE_NAME.search(path.name):
        return f"the file name {path.name!r} marks the meeting no-capture"
    flag = _front_matter_flag(path)
    if flag:
        return f"its front matter says {flag}"
    event = _flagged_event(store, settings, transcript.meeting_date)
    if event:
        return f"the calendar event {event!r} in its slot is marked no-capture"
    return None


def _front_matter_flag(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            head = fh.read(8192).decode("utf-8", "replace")
    except OSError:
        return None
    lines = head.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:60]:
        if line.strip() in ("---", "..."):
            break
        m = _FRONT_FLAG.match(line)
        if not m:
            continue
        key, value = m[1].casefold().replace("_", "-"), m[2].strip("\"'").casefold()
        if (key == "no-capture" and value in _ON) or (key != "no-capture" and value in _OFF):
            return f"{m[1]}: {m[2]}"
    return None


def _flagged_event(store: Store, settings: Settings, when: datetime | None) -> str | None:
    markers = [m.casefold() for m in settings.consent.calendar_markers if m.strip()]
    if when is None or not markers:
        return None
    from zoneinfo import ZoneInfo

    try:
        utc = when.replace(tzinfo=ZoneInfo(settings.owner.timezone)).astimezone(ZoneInfo("UTC")).replace(tzinfo=None)
    except (KeyError, ValueError):
        utc = when
    if utc.hour == 0 and utc.minute == 0 and when.hour == 0 and when.minute == 0:
        return None  # a date without a time: no slot to match
    rows = store.con.execute(
        "SELECT summary FROM calendar_events WHERE starts_at - INTERVAL 15 MINUTE <= ? "
        "AND coalesce(ends_at, starts_at + INTERVAL 1 HOUR) >= ?",
        [utc, utc],
    ).fetchall()
    for (summary,) in rows:
        if summary and any(m in summary.casefold() for m in markers):
            return str(summary)
    return None


def scope_for(settings: Settings, path: Path) -> str:
    """`[scope] folders`: an absolute folder holding the file, or a folder name on its path."""
    rules = settings.scope.folders
    resolved = path.resolve() if path.exists() else path
    for folder, scope in sorted(rules.items(), key=lambda kv: -len(kv[0])):
        f = Path(folder).expanduser()
        if f.is_absolute():
            if resolved.is_relative_to(f.resolve() if f.exists() else f):
                return scope
        elif folder in path.parts[:-1]:
            return scope
    return settings.scope.default


def admit(
    store: Store, settings: Settings, transcript: Transcript, path: Path, owner_names: list[str]
) -> tuple[Transcript, Admission]:
    """The transcript as it may be stored, or NoCapture with the reason."""
    admission = Admission(scope=scope_for(settings, path))
    reason = no_capture_reason(store, settings, transcript, path)
    if reason:
        if settings.consent.no_capture == "refuse":
            raise NoCapture(str(path), f"no-capture meeting: {reason}; nothing of it was stored")
        owners = {norm_name(n) for n in owner_names if n}
        kept = [u for u in transcript.utterances if u.speaker and norm_name(u.speaker) in owners]
        if not kept:
            raise NoCapture(str(path), f"no-capture meeting: {reason}; the owner has no turn in it to keep")
        admission.consent, admission.dropped_turns = "owner_only", len(transcript.utterances) - len(kept)
        transcript = _with(transcript, kept, participants=[u.speaker for u in kept if u.speaker])
    m = consent.matcher(store, settings.consent.withdrawn)
    if not m:
        return transcript, admission
    kept = [u for u in transcript.utterances if not m.is_withdrawn(u.speaker)]
    changed = len(kept) != len(transcript.utterances)
    for u in kept:
        text = m.redact(u.text)
        changed |= text != u.text
        u.text = text
    participants = [p for p in transcript.participants if not m.is_withdrawn(p)]
    changed |= participants != transcript.participants
    title = m.redact(transcript.title) if transcript.title else transcript.title
    changed |= title != transcript.title
    if not kept:
        raise NoCapture(str(path), "everyone who speaks in it withdrew consent; nothing of it was stored")
    if changed:
        admission.dropped_turns += len(transcript.utterances) - len(kept)
        if admission.consent == "ok":
            admission.consent = "redacted"
        transcript = _with(transcript, kept, participants=participants, title=title)
        if transcript.path:
            transcript.path = m.redact(transcript.path)
    return transcript, admission


def _with(t: Transcript, utterances: list, *, participants: list[str], title: str | None = None) -> Transcript:
    for i, u in enumerate(utterances):
        u.idx = i
    return Transcript(
        utterances=utterances,
        format=t.format,
        title=title if title is not None else t.title,
        meeting_date=t.meeting_date,
        meeting_date_origin=t.meeting_date_origin,
        participants=participants,
        path=t.path,
    )


def mark(store: Store, source_id: str, admission: Admission) -> None:
    """Record the source's consent state and scope (after its row is written)."""
    store.con.execute(
        "UPDATE sources SET consent = ?, scope = ? WHERE id = ?", [admission.consent, admission.scope, source_id]
    )


__all__ = ["Admission", "NoCapture", "admit", "mark", "no_capture_reason", "scope_for"]


_CONSENT_HEADER = re.compile(r"^x-(?:backchannel-)?(consent|no-capture|capture)\s*:\s*(.+?)\s*$", re.I | re.M)


def mail_header_flag(data: bytes) -> tuple[str, str] | None:
    """('withdrawn', header) when the message carries `X-Backchannel-Consent: withdrawn`
    (its sender opts out), ('no-capture', header) for `X-No-Capture: yes` or
    `X-Backchannel-Capture: no`; None otherwise. Only the header block is read."""
    head = data.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0].decode("latin-1")
    for m in _CONSENT_HEADER.finditer(head):
        key, value = m[1].casefold(), m[2].strip().casefold()
        if key == "consent" and value in _OFF:
            return "withdrawn", m[0].strip()
        if (key == "no-capture" and value in _ON) or (key == "capture" and value in _OFF):
            return "no-capture", m[0].strip()
    return None


def admit_mail(store: Store, settings: Settings, transcript: Transcript, data: bytes, origin: str) -> Admission:
    """`admit` for one email message, changing `transcript` in place (a mail transcript keeps
    its utterance numbering): a consent header withdraws the sender and refuses the message;
    a no-capture header refuses it; a withdrawn sender refuses it (every word is theirs);
    a withdrawn recipient or a quoted withdrawn writer is cut out of the rest."""
    sender = getattr(getattr(transcript, "message", None), "sender", None)
    flag = mail_header_flag(data)
    if flag and flag[0] == "withdrawn":
        names = [n for n in (getattr(sender, "addr", None), getattr(sender, "name", None)) if n]
        if names:
            with store.transaction():
                person = consent.withdraw(store, names, via="mail_header")
                store.append_event(
                    "consent.withdrawn", {"person": person, "names_hashed": len(names), "via": "mail_header"}
                )
        raise NoCapture(origin, f"its sender withdrew consent ({flag[1]}); nothing of it was stored")
    if flag:
        raise NoCapture(origin, f"no-capture message ({flag[1]}); nothing of it was stored")
    m = consent.matcher(store, settings.consent.withdrawn)
    admission = Admission(scope=settings.scope.default)
    if not m:
        return admission
    if sender is not None and (
        m.is_withdrawn(getattr(sender, "addr", None)) or m.is_withdrawn(getattr(sender, "name", None))
    ):
        raise NoCapture(origin, "its sender withdrew consent; nothing of it was stored")
    changed = False
    for u in transcript.utterances:
        if m.is_withdrawn(u.speaker):
            u.text, u.speaker, changed = consent.REDACTED, None, True
            continue
        text = m.redact(u.text)
        changed |= text != u.text
        u.text = text
    kept = [p for p in transcript.participants if not m.is_withdrawn(p)]
    changed |= kept != transcript.participants
    transcript.participants = kept
    emails = getattr(transcript, "emails", None)
    if isinstance(emails, dict):
        for label in [k for k, v in emails.items() if m.is_withdrawn(k) or m.is_withdrawn(v)]:
            del emails[label]
            changed = True
    if transcript.title:
        title = m.redact(transcript.title)
        changed |= title != transcript.title
        transcript.title = title
    msg = getattr(transcript, "message", None)
    if msg is not None:  # the message row keeps recipients' addresses and the subject
        for field_name in ("to", "cc"):
            addrs = getattr(msg, field_name)
            kept_addrs = [a for a in addrs if not (m.is_withdrawn(a.addr) or m.is_withdrawn(a.name))]
            changed |= len(kept_addrs) != len(addrs)
            setattr(msg, field_name, kept_addrs)
        msg.subject = m.redact(msg.subject or "")
    if changed:
        admission.consent = "redacted"
    return admission

"""One email message (RFC 5322 bytes) to a `MailMessage`: headers and the body's text.

Only text is kept: the first text/plain part that is not an attachment, else the
first text/html part turned into text (blockquotes become `> ` lines, so quoted
replies in HTML mail are recognised like plain ones). Attachments are never
decoded, stored or written anywhere; they are only counted.

Every problem with one message raises `MailError` (a TranscriptError) with a reason
a person can act on: too large, no text part, a charset nobody knows whose bytes are
not UTF-8 either, headers that cannot be parsed. Callers record it per message; a
bad message never stops a mailbox, a sync or the daemon.
"""

from __future__ import annotations

import email
import email.errors
import email.header
import email.policy
import email.utils
import hashlib
import html
import re
from dataclasses import dataclass, field
from datetime import datetime
from email.message import Message
from html.parser import HTMLParser

from backchannel.extraction.formats.transcript import TranscriptError

# A message this big is a set of attachments with a note around it; reading it would
# hold the daemon's writer and its memory for nothing (attachments are never kept).
MAX_MESSAGE_BYTES = 25 * 1024 * 1024
# The text we keep of one body; past it, a message is a pasted log or a newsletter archive.
MAX_BODY_CHARS = 200_000


class MailError(TranscriptError):
    """A message we cannot read; `reason` says why, for the per-message error list."""


@dataclass
class Address:
    name: str  # display name, may be empty
    addr: str  # lower-cased address, may be empty for a bare group

    def label(self) -> str:
        """The person's name as a speaker label: the display name, else one made from
        the address's local part ('marc.dupont@x' -> 'Marc Dupont'), else the address."""
        if self.name:
            return self.name
        local = self.addr.split("@", 1)[0]
        parts = [p for p in re.split(r"[._\-+]+", local) if p]
        if parts and all(p.isalpha() for p in parts):
            return " ".join(p.capitalize() for p in parts)
        return self.addr


@dataclass
class MailMessage:
    message_id: str | None  # normalised: no angle brackets, lower-cased domain part kept as written
    subject: str
    sender: Address | None
    to: list[Address]
    cc: list[Address]
    date: datetime | None  # aware when the header carries a zone
    body: str  # the text we read (plain, or HTML turned into text), newlines kept
    html_only: bool = False
    attachments: int = 0  # parts skipped as attachments (never stored)
    in_reply_to: str | None = None
    defects: list[str] = field(default_factory=list)
    raw_sha256: str = ""

    def recipients(self) -> list[Address]:
        return [*self.to, *self.cc]

    def identity(self) -> str:
        """What makes this message the same message wherever it is found: its Message-ID,
        else a hash of sender, date, subject and body."""
        if self.message_id:
            return self.message_id
        h = hashlib.sha256()
        for part in (
            self.sender.addr if self.sender else "",
            self.date.isoformat() if self.date else "",
            self.subject,
            self.body,
        ):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\x1f")
        return "sha256:" + h.hexdigest()


def parse_message(data: bytes, origin: str, *, max_bytes: int = MAX_MESSAGE_BYTES) -> MailMessage:
    """Parse one message's bytes; `origin` names it in errors (a path, `mbox#12`, `INBOX uid 7`)."""
    if len(data) > max_bytes:
        raise MailError(
            origin,
            f"too large: {len(data) / 1e6:.1f} MB; messages up to {max_bytes / 1e6:.0f} MB are "
            "read ([mail] max_message_mb); its attachments would not be kept anyway",
        )
    if not data.strip():
        raise MailError(origin, "empty message")
    try:
        # compat32: headers stay raw strings, decoded below only for the few we read; the
        # modern policy's header objects cost five times as much per message.
        msg = email.message_from_bytes(data, policy=email.policy.compat32)
    except Exception as exc:  # the parser is lenient; anything it still raises is a broken message
        raise MailError(origin, f"cannot parse the message ({type(exc).__name__}: {exc})") from None
    if not msg.keys() or not any(k.lower() in _MAIL_HEADERS for k in msg.keys()):
        raise MailError(origin, "no headers: this is not an email message")
    defects = [type(d).__name__ for d in getattr(msg, "defects", [])]
    body, html_only, attachments = _body(msg, origin, defects)
    if not body.strip():
        raise MailError(origin, "no text in the body" + (f" (MIME defects: {', '.join(defects)})" if defects else ""))
    return MailMessage(
        message_id=_msgid(_header(msg, "message-id")),
        subject=_clean_header(_header(msg, "subject")),
        sender=_first(_addresses(msg, "from")),
        to=_addresses(msg, "to"),
        cc=_addresses(msg, "cc"),
        date=_date(_header(msg, "date")),
        body=body[:MAX_BODY_CHARS],
        html_only=html_only,
        attachments=attachments,
        in_reply_to=_msgid(_header(msg, "in-reply-to")),
        defects=defects,
        raw_sha256=hashlib.sha256(data).hexdigest(),
    )


# -- headers -----------------------------------------------------------------------


_MAIL_HEADERS = {
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "received",
    "return-path",
    "mime-version",
    "content-type",
    "sender",
    "reply-to",
    "in-reply-to",
    "references",
}


def _header(msg: Message, name: str) -> str:
    """A header's text with RFC 2047 encoded words decoded (unknown charsets kept raw)."""
    value = msg.get(name)
    if value is None:
        return ""
    if isinstance(value, email.header.Header):
        value = str(value)
    if "=?" not in value:
        return value
    try:
        return str(email.header.make_header(email.header.decode_header(value)))
    except (LookupError, UnicodeDecodeError, ValueError, email.errors.HeaderParseError):
        return value


def _clean_header(value: str) -> str:
    return re.sub(r"\s+", " ", value).strip()


def _msgid(value: str) -> str | None:
    value = value.strip()
    m = re.search(r"<([^<>\s]+)>", value)
    got = m.group(1) if m else (value.split()[0] if value.split() else "")
    return got or None


def _addresses(msg: Message, name: str) -> list[Address]:
    try:
        values = msg.get_all(name) or []
    except Exception:
        values = []
    out: list[Address] = []
    for display, addr in email.utils.getaddresses([str(v) for v in values]):
        if "=?" in display:
            try:
                display = str(email.header.make_header(email.header.decode_header(display)))
            except (LookupError, UnicodeDecodeError, ValueError, email.errors.HeaderParseError):
                pass
        display, addr = _clean_header(display).strip("'\""), addr.strip().lower()
        if "@" not in addr and not display:
            continue
        out.append(Address(display, addr))
    return out


def _first(items: list[Address]) -> Address | None:
    return items[0] if items else None


def _date(value: str) -> datetime | None:
    if not value.strip():
        return None
    try:
        return email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None


# -- body --------------------------------------------------------------------------


def _body(msg: Message, origin: str, defects: list[str]) -> tuple[str, bool, int]:
    """(text, html_only, attachments skipped)."""
    plain: Message | None = None
    html_part: Message | None = None
    attachments = 0
    parts = msg.walk() if msg.is_multipart() else [msg]
    for part in parts:
        if part.is_multipart():
            continue
        ctype = part.get_content_type()
        if _is_attachment(part):
            attachments += 1
            continue
        if ctype == "text/plain" and plain is None:
            plain = part
        elif ctype == "text/html" and html_part is None:
            html_part = part
        elif ctype.startswith("message/") or not ctype.startswith("text/"):
            attachments += 1
    if plain is not None:
        return _text_of(plain, origin), False, attachments
    if html_part is not None:
        return html_to_text(_text_of(html_part, origin)), True, attachments
    if defects:
        raise MailError(
            origin,
            f"broken MIME ({', '.join(defects)}): no readable text part (a missing or wrong multipart boundary?)",
        )
    raise MailError(origin, f"no text/plain or text/html part to read ({attachments} other part(s) skipped)")


def _is_attachment(part: Message) -> bool:
    disposition = (part.get("content-disposition") or "").split(";", 1)[0].strip().lower()
    return disposition == "attachment" or (disposition != "inline" and bool(part.get_filename()))


def _text_of(part: Message, origin: str) -> str:
    payload = part.get_payload(decode=True)
    # decode=True gives a leaf part's bytes, or None (a multipart); typeshed's overload also
    # allows a Message, which it never is here
    if not isinstance(payload, bytes):
        return ""
    charset = (part.get_content_charset() or "us-ascii").lower()
    try:
        text = payload.decode(charset)
    except LookupError:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise MailError(
                origin, f"unknown charset {charset!r} and the text is not UTF-8 either: cannot read the body"
            ) from None
    except UnicodeDecodeError:
        # Mislabelled (a 'us-ascii' part with UTF-8 in it is common): UTF-8, then Latin-1's
        # superset cp1252; never silently dropping the message.
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            text = payload.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


# -- HTML to text -------------------------------------------------------------------

_BLOCK = {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "pre", "hr"}
_SKIP = {"script", "style", "head", "title"}


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.cur: list[str] = []
        self.depth = 0  # blockquote nesting: quoted lines get '> ' per level
        self.skip = 0

    def _flush(self) -> None:
        text = re.sub(r"[ \t\u00a0]+", " ", "".join(self.cur)).strip()
        self.cur = []
        if text:
            self.lines.append("> " * self.depth + text)
        elif self.lines and self.lines[-1] != "> " * self.depth:
            self.lines.append("> " * self.depth if self.depth else "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag == "blockquote":
            self._flush()
            self.depth += 1
        elif tag in _BLOCK:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "blockquote":
            self._flush()
            self.depth = max(0, self.depth - 1)
        elif tag in _BLOCK:
            self._flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.cur.append(data.replace("\n", " "))


def html_to_text(markup: str) -> str:
    """Readable text of an HTML body: block elements end lines, blockquotes become
    `> ` lines, scripts and styles are dropped, entities decoded."""
    parser = _HtmlText()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # malformed markup: fall back to stripping tags
        return html.unescape(re.sub(r"<[^>]+>", " ", markup))
    parser._flush()
    return "\n".join(parser.lines).strip()

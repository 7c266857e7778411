"""Email over SMTP: STARTTLS, implicit TLS or none; login from the secrets dir;
multipart text + HTML. The Message-ID is given by the caller (the outbox derives
it from the idempotency key, so a re-send after a crash carries the same one and
a mail server or client can recognise the duplicate)."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate

from backchannel.config import Paths, Settings, read_secret
from backchannel.delivery._http import DeliveryError


def owner_address(settings: Settings) -> str | None:
    """Where proposal mails go: `delivery.email.to`, else `owner.email`. Never anyone else."""
    return settings.delivery.email.to or settings.owner.email


def build_message(
    settings: Settings,
    *,
    to: str,
    subject: str,
    text: str,
    html: str | None,
    message_id: str,
    headers: dict[str, str] | None = None,
) -> EmailMessage:
    cfg = settings.delivery.email
    sender = cfg.sender or cfg.username or owner_address(settings)
    if not sender:
        raise DeliveryError("no sender address: set delivery.email.sender")
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    # Every line break the email package refuses in a header (U+2028, NEL, VT, FF... not
    # only CR/LF): a title drafted from a transcript must neither inject a header nor
    # make the mail unsendable.
    msg["Subject"] = " ".join(subject.splitlines())
    msg["Date"] = formatdate(localtime=False, usegmt=True)
    msg["Message-ID"] = message_id
    for k, v in (headers or {}).items():
        msg[k] = v
    msg.set_content(text)
    if html is not None:
        msg.add_alternative(html, subtype="html")
    return msg


def _tls_context(settings: Settings) -> ssl.SSLContext:
    ca = settings.delivery.email.ca_file
    return ssl.create_default_context(cafile=str(ca) if ca else None)


def send_message(settings: Settings, paths: Paths, msg: EmailMessage, recipients: list[str]) -> str:
    """Send over the configured SMTP server; returns the Message-ID. Raises DeliveryError."""
    cfg = settings.delivery.email
    if not cfg.host:
        raise DeliveryError("email is not configured: set delivery.email.host")
    security = cfg.security.lower()
    if security not in ("starttls", "tls", "none"):
        raise DeliveryError(f"delivery.email.security must be starttls, tls or none, not {cfg.security!r}")
    try:
        if security == "tls":
            smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                cfg.host, cfg.port, timeout=cfg.timeout_s, context=_tls_context(settings)
            )
        else:
            smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout_s)
        with smtp:
            smtp.ehlo()
            if security == "starttls":
                smtp.starttls(context=_tls_context(settings))
                smtp.ehlo()
            if cfg.username:
                password = read_secret(paths, cfg.password_secret)
                if password is None:
                    raise DeliveryError(f"SMTP password secret {cfg.password_secret!r} not found")
                smtp.login(cfg.username, password)
            refused = smtp.send_message(msg, to_addrs=recipients)
            if refused:
                raise DeliveryError(f"recipients refused: {sorted(refused)}")
    except DeliveryError:
        raise
    except (smtplib.SMTPException, ssl.SSLError, OSError) as exc:
        # The password never appears in these messages; the server's reply may.
        raise DeliveryError(f"SMTP {cfg.host}:{cfg.port}: {type(exc).__name__}: {exc}") from None
    return str(msg["Message-ID"])


def send_to_owner(
    settings: Settings,
    paths: Paths,
    *,
    subject: str,
    text: str,
    html: str | None,
    message_id: str,
    headers: dict[str, str] | None = None,
) -> str:
    to = owner_address(settings)
    if not to:
        raise DeliveryError("no recipient: set delivery.email.to or owner.email")
    msg = build_message(settings, to=to, subject=subject, text=text, html=html, message_id=message_id, headers=headers)
    return send_message(settings, paths, msg, [to])

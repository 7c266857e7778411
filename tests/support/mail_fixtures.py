"""Email fixtures for the mail tests: the introduction story, and the bad input every
mailbox holds (HTML only, unknown charsets, broken MIME, huge attachments), written as
.eml files, a Maildir and an mbox with the standard library's own writers."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

INTRO = b"""From: Marc Dupont <marc.dupont@initech.example>
To: Julie Bernard <julie.bernard@hooli.example>, Sophie Martin <sophie.martin@acme.example>
Cc: Alex Moreau <alex@example.com>
Subject: Intro: Julie <> Sophie
Date: Mon, 02 Nov 2026 10:00:00 +0100
Message-ID: <intro-1@initech.example>
Content-Type: text/plain; charset=utf-8

Hi both,

Julie, meet Sophie Martin. Sophie runs IT at Acme and is looking at data
platforms this quarter. I'll send you both the deck by Friday.

Looping in Paul Girard as well.

Best,
Marc

--
Marc Dupont
Partner | Initech
+33 6 12 34 56 78
"""

REPLY = b"""From: Sophie Martin <sophie.martin@acme.example>
To: Marc Dupont <marc.dupont@initech.example>, Julie Bernard <julie.bernard@hooli.example>
Cc: Alex Moreau <alex@example.com>
Subject: Re: Intro: Julie <> Sophie
Date: Mon, 02 Nov 2026 14:12:00 +0100
Message-ID: <reply-1@acme.example>
In-Reply-To: <intro-1@initech.example>
Content-Type: text/plain; charset=utf-8

Thanks Marc! Julie, happy to connect. Will send you our requirements by next Tuesday.

Sophie Martin
Chief Information Officer
Acme Corp

On Mon, 2 Nov 2026 at 10:00, Marc Dupont <marc.dupont@initech.example> wrote:
> Hi both,
>
> Julie, meet Sophie Martin. I worked with Tom Becker at Globex for years.
> I'll send you both the deck by Friday.
>
> Best,
> Marc
"""

HTML_ONLY = b"""From: Julie Bernard <julie.bernard@hooli.example>
To: Sophie Martin <sophie.martin@acme.example>
Subject: Re: Intro
Date: Tue, 03 Nov 2026 09:30:00 +0000
Message-ID: <html-1@hooli.example>
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8

<html><head><style>p {color: red}</style></head><body>
<p>Lovely to meet you Sophie. I&#39;ll send you the security questionnaire by Thursday.</p>
<div>Julie Bernard<br>Head of Procurement, Hooli</div>
<div class="gmail_quote">On Mon, 2 Nov 2026, Sophie Martin &lt;sophie.martin@acme.example&gt; wrote:
<blockquote><p>I left Globex in 2019 and joined Acme as CIO.</p></blockquote></div>
</body></html>
"""

UNKNOWN_CHARSET_UTF8 = """From: Paul Girard <paul.girard@example.net>
To: Alex Moreau <alex@example.com>
Subject: Bonjour
Date: Wed, 04 Nov 2026 08:00:00 +0000
Message-ID: <charset-ok@example.net>
Content-Type: text/plain; charset=x-unheard-of

Salut Alex, I'll call you on Monday. Amitiés, Paul Girard.
""".encode()

UNKNOWN_CHARSET_BINARY = (
    b"From: Someone <someone@example.net>\nSubject: ???\nMessage-ID: <charset-bad@example.net>\n"
    b"Content-Type: text/plain; charset=x-klingon\nContent-Transfer-Encoding: 8bit\n\n"
    b"\xff\xfe\xfa\xfb \xc3\x28 \xa0\xa1 not decodable\n"
)

BROKEN_MIME = (
    b"From: Broken <broken@example.net>\nSubject: broken\nMessage-ID: <broken@example.net>\n"
    b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="nowhere"\n\n'
    b"--elsewhere\nContent-Type: application/octet-stream\n\nAAAA\n--elsewhere--\n"
)

OUTLOOK_REPLY = b"""From: Tom Becker <tom.becker@hooli.example>
To: Alex Moreau <alex@example.com>
Subject: RE: whitepaper
Date: Thu, 05 Nov 2026 11:00:00 +0000
Message-ID: <outlook-1@hooli.example>
Content-Type: text/plain; charset=utf-8

Thanks Alex, got it.

Tom

-----Original Message-----
From: Alex Moreau <alex@example.com>
Sent: Wednesday, November 4, 2026 5:00 PM
To: Tom Becker <tom.becker@hooli.example>
Subject: whitepaper

I'll send you the whitepaper by Friday. I used to work at Globex.
"""


def with_attachment(size_bytes: int, message_id: str = "<attach-1@example.org>") -> bytes:
    """A short note with one binary attachment of `size_bytes`."""
    msg = EmailMessage()
    msg["From"] = "Nadia Haddad <nadia.haddad@example.org>"
    msg["To"] = "Alex Moreau <alex@example.com>"
    msg["Subject"] = "the slides"
    msg["Date"] = "Fri, 06 Nov 2026 10:00:00 +0000"
    msg["Message-ID"] = message_id
    msg.set_content("Slides attached. I'll share the recording by Monday.\n\nNadia Haddad\nCTO, Globex\n")
    msg.add_attachment(b"\x89PNG" + b"\x00" * size_bytes, maintype="image", subtype="png", filename="slides.png")
    return msg.as_bytes()


GOOD = [INTRO, REPLY, HTML_ONLY, UNKNOWN_CHARSET_UTF8, OUTLOOK_REPLY]
BAD = [UNKNOWN_CHARSET_BINARY, BROKEN_MIME]


def write_maildir(root: Path, messages: list[bytes], subfolder: str | None = None) -> Path:
    """A Maildir at `root` (and a Maildir++ subfolder) holding `messages`."""
    box = mailbox.Maildir(str(root), create=True)
    target = box.add_folder(subfolder) if subfolder else box
    for data in messages:
        target.add(mailbox.MaildirMessage(data))
    box.close()
    return root


def write_mbox(path: Path, messages: list[bytes]) -> Path:
    box = mailbox.mbox(str(path), create=True)
    for data in messages:
        box.add(mailbox.mboxMessage(data))
    box.flush()
    box.close()
    return path


def numbered(n: int, *, domain: str = "bulk.example") -> list[bytes]:
    """`n` distinct realistic messages (a reply with a quote and a signature each)."""
    out = []
    for i in range(n):
        out.append(
            f"""From: Person {i % 97} <p{i % 97}@{domain}>
To: Alex Moreau <alex@example.com>
Subject: Update {i}
Date: Mon, 02 Nov 2026 10:{i % 60:02d}:00 +0000
Message-ID: <m{i}@{domain}>
Content-Type: text/plain; charset=utf-8

Hi Alex, I worked with Sophie Martin at Globex and I'll send you the notes by Friday.
Marc knows Julie Bernard well. Looping in Paul Girard.

Regards,
Person {i % 97}
Head of Sales, Initech

On Sun, 1 Nov 2026, Alex Moreau <alex@example.com> wrote:
> Can you send the numbers for item {i}?
""".encode()
        )
    return out

"""An email body cut into what its sender wrote, what it quotes, and the signature.

    own        the sender's own paragraphs
    quote      a quoted reply ("On ... Marc wrote:" + "> " lines, or an Outlook
               "-----Original Message-----" block): attributed to the quoted author
               when the attribution names one, never to the sender
    forward    a forwarded message's text, attributed to its original sender
    signature  the block after "-- ", or after a closing ("Best,", "Regards,") at
               the end of the sender's own text: name, title, organisation lines

Quoted text is split again, one level deeper, with its own author, so a quoted
message's signature belongs to the person who wrote that message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from backchannel.extraction.mail.message import Address

MAX_DEPTH = 4
MAX_SIGNATURE_LINES = 8

_ATTRIBUTION = re.compile(
    r"^\s*(?:On\b.{0,240}?\bwrote|Le\b.{0,240}?\ba\s+écrit|Am\b.{0,240}?\bschrieb|El\b.{0,240}?\bescribió)\s*:\s*$",
    re.I | re.S,
)
_ORIGINAL = re.compile(r"^\s*-{2,}\s*Original Message\s*-{2,}\s*$", re.I)
_FORWARD = re.compile(r"^\s*(?:-{2,}\s*Forwarded message\s*-{2,}|Begin forwarded message:)\s*$", re.I)
_HEADER_LINE = re.compile(r"^\s*(From|Sent|Date|To|Cc|Subject|De|Envoyé|À|Objet)\s*:\s*(.*)$", re.I)
_SIG_DASHES = re.compile(r"^--\s?$")
_CLOSING = re.compile(
    r"^\s*(?:best|best wishes|best regards|kind regards|warm regards|warmest regards|regards|many thanks|thanks"
    r"|thank you|thanks again|cheers|sincerely|yours sincerely|yours|all the best|take care|talk soon|br|cordialement"
    r"|bien à vous|merci)\s*[,.!]?\s*$",
    re.I,
)
_NAME_ADDR = re.compile(r"([^,<>\"]+?)\s*\"?\s*<\s*([^<>@\s]+@[^<>\s]+)\s*>")
_BARE_ADDR = re.compile(r"([\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)")


@dataclass
class Block:
    kind: str  # own, quote, forward, signature
    author: str | None  # speaker label of who wrote it; None when a quote names nobody
    text: str  # paragraphs: lines joined by spaces; a signature keeps its lines


def split_body(body: str, author: str | None, *, depth: int = 0) -> list[Block]:
    """The blocks of `body`, in order, written by `author` (the sender's label)."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[Block] = []
    own: list[str] = []
    i, n = 0, len(lines)

    def flush_own() -> None:
        if own:
            out.extend(_own_blocks(own, author))
            own.clear()

    while i < n:
        line = lines[i]
        attribution, used = _attribution_at(lines, i)
        if attribution is not None:
            flush_own()
            i += used
            while i < n and not lines[i].strip():
                i += 1
            run, i = _quoted_run(lines, i)
            if not run:  # "On ... wrote:" with the quote not marked by '>': the rest is the quote
                run, i = lines[i:], n
            out.extend(_nested(run, attribution or None, "quote", depth))
            continue
        if _ORIGINAL.match(line) or _FORWARD.match(line):
            flush_own()
            kind = "forward" if _FORWARD.match(line) else "quote"
            who, start = _header_block(lines, i + 1)
            out.extend(_nested(lines[start:], who, kind, depth, strip=False))
            break
        if _is_outlook_header(lines, i):
            flush_own()
            who, start = _header_block(lines, i)
            out.extend(_nested(lines[start:], who, "quote", depth, strip=False))
            break
        if line.lstrip().startswith(">"):
            flush_own()
            run, i = _quoted_run(lines, i)
            out.extend(_nested(run, None, "quote", depth))
            continue
        own.append(line)
        i += 1
    flush_own()
    return out


def _nested(run: list[str], who: str | None, kind: str, depth: int, *, strip: bool = True) -> list[Block]:
    inner = [_unquote(x) for x in run] if strip else run
    if depth >= MAX_DEPTH:
        return [Block(kind, who, p) for p in _paragraphs(inner)]
    blocks = split_body("\n".join(inner), who, depth=depth + 1)
    # The quoted author's own words are a quote here; their signature stays theirs.
    return [Block(kind if b.kind == "own" else b.kind, b.author, b.text) for b in blocks]


def _unquote(line: str) -> str:
    s = line.lstrip()
    if s.startswith(">"):
        s = s[1:]
        return s[1:] if s.startswith(" ") else s
    return line


def _quoted_run(lines: list[str], i: int) -> tuple[list[str], int]:
    """The '>' lines from i on (blank lines inside the run included), and where it ends."""
    run: list[str] = []
    j = i
    while j < len(lines):
        s = lines[j].lstrip()
        if s.startswith(">"):
            run.append(lines[j])
            j += 1
        elif not s and j + 1 < len(lines) and lines[j + 1].lstrip().startswith(">"):
            run.append(">")
            j += 1
        else:
            break
    return run, j


def _attribution_at(lines: list[str], i: int) -> tuple[str | None, int]:
    """(author label or "", lines used) when an attribution line starts at i; (None, 0) otherwise.
    Mail clients wrap long attributions, so up to three lines are joined."""
    first = lines[i].strip()
    if not first or first.startswith(">") or not re.match(r"(?:On|Le|Am|El)\b", first):
        return None, 0
    for used in (1, 2, 3):
        joined = " ".join(x.strip() for x in lines[i : i + used])
        if _ATTRIBUTION.match(joined):
            return _author_in(joined) or "", used
    return None, 0


def _author_in(text: str) -> str | None:
    m = _NAME_ADDR.search(text)
    if m:
        name = m.group(1).strip()
        # "On Mon, 2 Nov 2026 at 10:00, Marc Dupont <...>": the name follows the last comma.
        name = re.split(r",\s*|\bat\s+\d{1,2}[:.]\d{2}\s*(?:[AaPp][Mm])?\s*", name)[-1].strip()
        return Address(name if _plausible_name(name) else "", m.group(2).lower()).label()
    m = _BARE_ADDR.search(text)
    if m:
        return Address("", m.group(1).lower()).label()
    return None


def _plausible_name(name: str) -> bool:
    words = name.split()
    return 0 < len(words) <= 5 and not any(ch.isdigit() for ch in name) and words[0][:1].isupper()


def _is_outlook_header(lines: list[str], i: int) -> bool:
    """'From: X' followed within four lines by 'Sent:'/'Date:' and 'Subject:' (a reply
    quoted by Outlook, with no '>' at all)."""
    m = _HEADER_LINE.match(lines[i])
    if not m or m.group(1).lower() not in ("from", "de"):
        return False
    keys = {h[1].lower() for x in lines[i + 1 : i + 6] if (h := _HEADER_LINE.match(x))}
    return bool(keys & {"sent", "date", "envoyé"}) and bool(keys & {"subject", "objet"})


def _header_block(lines: list[str], i: int) -> tuple[str | None, int]:
    """The author named by a 'From:' line in the header block at i, and where its body starts."""
    who = None
    j = i
    while j < len(lines) and (not lines[j].strip() and j == i or _HEADER_LINE.match(lines[j])):
        m = _HEADER_LINE.match(lines[j])
        if m and m.group(1).lower() in ("from", "de"):
            who = _author_in(m.group(2)) or (m.group(2).strip().strip('"') or None)
        j += 1
    return who, j


def _own_blocks(lines: list[str], author: str | None) -> list[Block]:
    body, sig = _split_signature(lines, author)
    blocks = [Block("own", author, p) for p in _paragraphs(body)]
    if sig:
        blocks.append(Block("signature", author, "\n".join(sig)))
    return blocks


def _split_signature(lines: list[str], author: str | None) -> tuple[list[str], list[str]]:
    for k, line in enumerate(lines):
        if _SIG_DASHES.match(line):
            return lines[:k], _trim(lines[k + 1 :])
    last = len(lines) - 1
    while last >= 0 and not lines[last].strip():
        last -= 1
    for k in range(last, max(-1, last - 12), -1):
        if _CLOSING.match(lines[k]):
            sig = _trim(lines[k + 1 :])
            if sig and all(len(x) <= 80 for x in sig):
                return lines[: k + 1], sig
            return lines, []
    # No closing: a trailing block of short lines starting with the sender's own name.
    tail_start = last
    while tail_start > 0 and lines[tail_start - 1].strip():
        tail_start -= 1
    tail = _trim(lines[tail_start : last + 1])
    if author and 2 <= len(tail) <= 6 and all(len(x) <= 80 for x in tail) and _same_name(tail[0], author):
        return lines[:tail_start], tail
    return lines, []


def _same_name(line: str, author: str) -> bool:
    a, b = line.strip().casefold().split(), author.casefold().split()
    return bool(a) and bool(b) and (a == b or a[0] == b[0] and len(a) <= 4)


def _trim(lines: list[str]) -> list[str]:
    out = [x.rstrip() for x in lines]
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    out = [x.strip() for x in out if x.strip()]
    return out[:MAX_SIGNATURE_LINES]


def _paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated paragraphs, hard-wrapped lines joined by spaces."""
    out: list[str] = []
    cur: list[str] = []
    for line in [*lines, ""]:
        s = line.strip()
        if s:
            cur.append(s)
        elif cur:
            out.append(re.sub(r"\s+", " ", " ".join(cur)).strip())
            cur = []
    return [p for p in out if p]

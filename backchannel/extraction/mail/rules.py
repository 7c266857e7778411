"""Offline rules that only email needs: signatures, introductions, subject-less promises.

- A signature block ("Sophie Martin / Chief Information Officer | Acme") becomes
  works_at (title as qualifier) or has_title about the block's author, quoting the
  block's lines verbatim.
- "Julie, meet Sophie", "looping in Sophie", "I'd like to introduce you to Sophie":
  the writer introduced (and knows) each person named; the two people introduced to
  each other know each other from then on (lower confidence).
- "Will send the deck by Friday." (email drops the "I"): a commitment of the writer,
  only with a due date.

Everything else in an email goes through the transcript extractor (offline.extract
or the model) on the sender's own and forwarded text; these rules add to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.names import NAME, org_name, parse_title, person_name
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.core import Ctx, sentences

_PHONE_OR_LINK = re.compile(
    r"(?:\+?\d[\d\s().\-]{6,}\d|@|https?://|www\.|\b(?:tel|phone|mobile|fax|m|t|e)\s*[:.])", re.I
)
_SPLIT_TITLE_ORG = re.compile(r"\s*(?:\||·|•|–|—|\s-\s|,|\bat\b|@)\s*")

_MEET = re.compile(rf"(?P<a>{NAME})\s*,\s+(?:please\s+)?meet\s+(?P<b>{NAME})")
_LOOP_IN = re.compile(
    rf"\b(?i:looping|loop|bringing|adding|copying|cc['’]?ing|cc-ing|ccing)\s+(?:in\s+)?(?P<b>{NAME})"
    rf"|\b(?:[Ll]ooping|[Aa]dding|[Cc]opying)\s+(?P<b2>{NAME})\s+(?:in|here|to\s+this\s+thread)\b"
)
_INTRODUCE = re.compile(
    rf"\b(?:I['’]d\s+like\s+to|I\s+would\s+like\s+to|[Ll]et\s+me|[Aa]llow\s+me\s+to|I\s+want\s+to|"
    rf"[Hh]appy\s+to|[Gg]lad\s+to|I['’]m\s+happy\s+to|[Pp]leased\s+to)\s+introduce\s+(?:you\s+(?:both\s+)?to\s+)?"
    rf"(?P<b>{NAME})|\b[Ii]ntroducing\s+(?P<b2>{NAME})"
)
_SUBJECTLESS_PROMISE = re.compile(
    r"[Ww]ill\s+(?P<verb>send|share|forward|circulate|follow\s+up|get\s+back\s+to\s+you|confirm|"
    r"prepare|draft|book|schedule|set\s+up|introduce|deliver|provide|submit)\b(?P<rest>[^.;!?]*)"
)
_TRIGGERS = re.compile(r"meet\s|loop|bringing|adding|copying|cc|introduc|^will ", re.I)


def extract_mail_rules(
    transcript: Transcript, kinds: dict[int, str], known_people: frozenset[str] = frozenset()
) -> list[ExtractedAssertion]:
    """The email-only rules over the utterances of `transcript` (kinds: utterance idx ->
    own, quote, forward, signature). Quotes of replies are not read."""
    anchor = transcript.meeting_date.date() if transcript.meeting_date else None
    out: list[ExtractedAssertion] = []
    for u in transcript.utterances:
        kind = kinds.get(u.idx)
        if kind == "signature":
            out.extend(signature_facts(u.idx, u.speaker, u.text))
            continue
        if kind not in ("own", "forward") or not u.speaker:
            continue
        for s0, s1 in sentences(u.text):
            if not _TRIGGERS.search(u.text[s0:s1]):
                continue
            ctx = Ctx(
                utt_idx=u.idx,
                speaker=u.speaker,
                text=u.text,
                s0=s0,
                s1=s1,
                anchor=anchor,
                out=out,
                known_people=known_people,
            )
            _introductions(ctx)
            _subjectless_promise(ctx)
    return out


# -- signatures --------------------------------------------------------------------


def signature_facts(idx: int, author: str | None, text: str) -> list[ExtractedAssertion]:
    """works_at / has_title about `author` from a signature block; the quote is the
    block's lines from the name (or title) to the organisation, verbatim."""
    if not author:
        return []
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    title = org = None
    first = last = None
    for k, line in enumerate(lines):
        s = line.strip()
        if not s or _PHONE_OR_LINK.search(s) or len(s) > 70:
            continue
        if person_name(s) and _is_author(s, author):
            first = k if first is None else first
            continue
        got_title, got_org = _title_org(s)
        if got_title and title is None:
            title = got_title
            first = k if first is None else first
            last = k
        if got_org and org is None and (title is not None or got_title):
            org = got_org
            last = k
        if title and org:
            break
    if title is None or first is None or last is None:
        return []
    start, end = offsets[first], offsets[last] + len(lines[last])
    quote = text[start:end]
    me = Mention(name=author, kind="person", is_speaker=True)
    if org:
        return [
            ExtractedAssertion(
                subject=me,
                predicate="works_at",
                utterance_idx=idx,
                span_start=start,
                span_end=end,
                quote=quote,
                object=Mention(org, "organisation"),
                qualifier=title,
                modality="stated",
                confidence=0.8,
            )
        ]
    return [
        ExtractedAssertion(
            subject=me,
            predicate="has_title",
            utterance_idx=idx,
            span_start=start,
            span_end=end,
            quote=quote,
            object_literal=title,
            modality="stated",
            confidence=0.7,
        )
    ]


def _is_author(line: str, author: str) -> bool:
    a, b = line.casefold().split(), author.casefold().split()
    return bool(a) and bool(b) and a[0] == b[0]


def _title_org(line: str) -> tuple[str | None, str | None]:
    """(canonical title, organisation) a signature line states: 'CIO | Acme',
    'Head of Procurement, Hooli', 'Partner at Initech', a lone title, or a lone organisation."""
    parts = [p for p in _SPLIT_TITLE_ORG.split(line) if p.strip()]
    if len(parts) >= 2:
        t = parse_title(parts[0])
        if t and not t[2]:
            o = org_name(parts[1], lenient=True)
            return t[1], o
    t = parse_title(line)
    if t and not t[2]:
        return t[1], None
    o = org_name(line, lenient=True)
    if o and o.strip() == line.strip().rstrip("."):
        return None, o
    return None, None


# -- introductions and promises ----------------------------------------------------


def _introductions(ctx: Ctx) -> None:
    me = ctx.me()
    if me is None:
        return
    sent = (ctx.s0, ctx.s1)
    for m in _MEET.finditer(ctx.text, *sent):
        a, b = ctx.person(m.group("a")), ctx.person(m.group("b"))
        if a is None or b is None or a.is_speaker or b.is_speaker:
            continue
        for who in (a, b):
            ctx.emit("introduced", me, m.start(), m.end(), obj=who, confidence=0.75)
            ctx.emit("knows", me, m.start(), m.end(), obj=who, confidence=0.7)
        ctx.emit("knows", a, m.start(), m.end(), obj=b, confidence=0.5, modality="reported")
    for rx in (_LOOP_IN, _INTRODUCE):
        for m in rx.finditer(ctx.text, *sent):
            raw = m.group("b") or m.group("b2")
            named = ctx.person(raw) if raw else None
            if named is None or named.is_speaker:
                continue
            ctx.emit("introduced", me, m.start(), m.end(), obj=named, confidence=0.7)
            ctx.emit("knows", me, m.start(), m.end(), obj=named, confidence=0.65)


def _subjectless_promise(ctx: Ctx) -> None:
    me = ctx.me()
    m = _SUBJECTLESS_PROMISE.match(ctx.text, ctx.s0, ctx.s1)
    if me is None or m is None:
        return  # "I'll ..." is offline.extract's rule_commitment
    dr = ctx.date_for(m.start("verb"), m.end())
    if dr is None:
        return
    end = m.end()
    for a, _b, _p in ctx.dates():
        if m.start("verb") < a < end:
            end = a
            break
    words = ctx.text[m.start("verb") : end].strip(" ,—–-").split()
    if not 2 <= len(words) <= 16:
        return
    ctx.emit(
        "committed_to",
        me,
        m.start(),
        m.end(),
        literal=" ".join(words),
        dr=dr,
        valid_to=dr.end or dr.start,
        modality="commitment",
        confidence=0.6,
    )


def merge(base: Sequence[ExtractedAssertion], extra: Sequence[ExtractedAssertion]) -> list[ExtractedAssertion]:
    """`base` then those of `extra` that say something `base` does not (same utterance,
    predicate, subject and object)."""

    def key(a: ExtractedAssertion) -> tuple:
        return (
            a.utterance_idx,
            a.predicate,
            a.subject.name.casefold(),
            a.subject.is_speaker,
            a.object.name.casefold() if a.object else None,
            a.object_literal,
        )

    seen = {key(a) for a in base}
    out = list(base)
    for a in extra:
        if key(a) not in seen:
            seen.add(key(a))
            out.append(a)
    return out

"""Promises the meaning stage reads: who promised, the deliverable (the clause after the cue up to
its date), the due date. The head says a sentence is a promise; these say which words are it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from backchannel.extraction.dates.en import DateRange, can_be_due, find_date_phrases, says_a_start
from backchannel.extraction.meaning.candidate import Candidate, covered, quote
from backchannel.extraction.mentions.names import NAME
from backchannel.extraction.mentions.sentence import HESITATION_WORDS, fluent
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.core import Ctx
from backchannel.extraction.rules.en.commitments import ADDRESSEE, CONDITION_AFTER, DELIVER_VERB, FRENCH_IF, recipient

PROMISE_CUE = re.compile(
    r"\b[Ww]hat\s+I\s*(?:['’]ll|\s+will|\s+can|\s+propose\s+to|['’]m\s+going\s+to|\s+am\s+going\s+to)\s+do\b"
    r"(?:\s*,[^,.;?!]{1,30},)?\s*(?:is\s*,?|,)\s*(?:to\s+|I\s*(?:['’]ll|\s+will|\s+shall)\s+)?"  # a frame:
    # "what I'll do, Chair, is write ...", "what I will do is, I will send ..."
    r"|\bI\s*(?:['’]ll|\s+will|\s+shall|['’]m\s+going\s+to|\s+am\s+going\s+to|['’]m\s+gonna|['’]m\s+happy\s+to"
    r"|\s+promise\s+to|\s+undertake\s+to|\s+commit\s+to|\s+can(?:\s+certainly|\s+definitely)?)\s+|\b[Ll]et\s+me\s+"
    # a promise the speaker made before and tells of: "I promised Fatima to draft the memo", "we agreed to"
    rf"|\b(?:I|[Ww]e)\s+(?:(?:have|had|['’]ve)\s+)?(?P<vow>promised|agreed|offered)(?:\s+(?P<to>you|him|her|{NAME}))?\s+to\s+"
)
# A delivery promised as what the listener will have: "You'll have the countersigned MSA by Friday", "you
# will receive the minutes within a week", "we'll have the audit pack over to you by Friday". The speaker
# makes it, to the one spoken to. Not an obligation or a prediction of the listener's own ("you'll have to
# ask Marc", "you'll get used to it", "you'll have seen the report", "you'll have a great time"); a "we"
# only where the thing goes to the listener ("we'll have a new CEO by March" is news, no promise).
DELIVERY_CUE = re.compile(
    r"\b(?:(?P<you>[Yy]ou)|[Ww]e)\s*(?:['’]ll|\s+will|\s+shall)\s+(?:(?:definitely|certainly|also|then)\s+)?"
    r"(?:have|get|receive)\s+"
    r"(?!to\b|used\b|been\b|seen\b|heard\b|had\b|got\b|done\b|read\b|known\b|met\b|\w+ed\b"
    r"|(?:a|an|some)\s+(?:\w+\s+)?(?:time|day|go|look|think|chat|word|feel|sense|idea|laugh|surprise|shock)\b)"
)
_DELIVERY_WAY = re.compile(r"\s+(?:(?:over|back|across|round)\s+)?(?:(?:to|with)\s+you|from\s+(?:me|us))\b.*$", re.I)
_TO_YOU = re.compile(r"\b(?:to|for|with)\s+you\b|\byou\s+(?:the|a|an|our|my)\b", re.I)
# Words that make a first-person future no promise: a condition, a guess, a question, an obligation.
_UNSURE = re.compile(
    r"\b(?:if|unless|maybe|perhaps|probably|might|think|guess|suppose|whether|have\s+to|need"
    r"|want|hope)\b|\?"
    # a time clause that doubts its own event ("once I find it giving any positive result", "when I have
    # anything"): "any" asks whether it happens at all, so the act after it is no promise yet
    r"|\b(?:once|when|as\s+soon\s+as|after)\b[^.;!?]*\bany(?:thing|one|body)?\b"
    rf"|{FRENCH_IF}",
    re.I,
)
OTHER_PROMISE = re.compile(
    rf"(?P<who>{NAME})\s+(?:will|['’]ll|is\s+going\s+to|(?:has\s+)?(?:promised|agreed|offered)"
    rf"(?:\s+(?P<to>you|me|us|him|her|{NAME}))?\s+to"
    r"|(?:said|told\s+(?P<told>me|us|you))\s+(?:that\s+)?(?:she|he|they)(?:['’]d|\s+would|['’]ll|\s+will))\s+"
)
_SOFT = re.compile(
    r"(?:(?:uh|um|er|first|now|just|also|definitely|certainly|quickly|then|happily|personally|go\s+ahead\s+and|try\s+and"
    r"|try\s+to|make\s+sure\s+(?:to|that\s+I|I))\s+)*"
)
_VERB = re.compile(r"(?P<verb>[a-z]{2,})\b")
# Acts done in the meeting itself or no act at all: "I'll go first", "I'll be there", "let me think".
_NOT_DELIVERABLE = frozenset(
    "be go see think say tell try keep leave stop come start pass hand begin just turn move continue wait sit stay "
    "answer ask pick jump add echo agree disagree mention speak talk explain repeat read show present walk take "
    "let hear bring focus say".split()
)
_EVERYDAY = frozenset("review check look consider reflect explore investigate think ponder revisit".split())
_COURTESY = re.compile(r"\bmy\s+(?:love|best|regards|thanks|wishes|condolences|congratulations)\b", re.I)
# No deliverable after the verb: only these (pronouns, particles, prepositions, time words) follow it ("I'll get
# back on that", "I'll follow up with you about it": a promise to say something, no thing promised).
_EMPTY_OBJECT = frozenset(
    "uh um er out to you me us him her back up round over it that this them those these a go one some something things stuff there here later "
    "now then too again soon on about with into onto for of at in from".split()
)
_HESITATION = re.compile(rf",?\s*\b{HESITATION_WORDS}\b\s*,?", re.I)
_FILLER_WORD = re.compile(rf"{HESITATION_WORDS}|like", re.I)  # a word said to fill, not to mean
# Where a promise's clause ends; "and I'll tell you when" starts the next one.
_PROMISE_END = re.compile(
    r"[,;:.!?—–]|\s+(?:and\s+then|because|but|so\s+that|if|unless|when|once)\b"
    r"|\s+and\s+(?=(?:I|we)(?:\s|['’]))"
)
# After "I can": what the speaker is able to do now, no offer ("I can send emails from my phone now").
_ABILITY = re.compile(r"\b(?:now|already|anymore|any\s+more|finally|these\s+days|nowadays)\b", re.I)


def _over_before(dr: DateRange, anchor: date | None) -> bool:
    """A date of the clause that ended before the meeting and is no start ("last week", not "from 2011")."""
    return not says_a_start(dr) and not can_be_due(dr, anchor)


def told_promise(c: Candidate) -> bool:
    """Whether the candidate says a promise of a person it names ("Marc said he'd ...", a person slot
    before the cue), or the speaker's told with a verb of promising ("I agreed to ...")."""
    if any(m.group("vow") for m in PROMISE_CUE.finditer(c.text, c.w0, c.w1)):
        return True
    return any(
        s.kind == "person" and s.start <= m.start("who") < s.end
        for m in OTHER_PROMISE.finditer(c.text, c.w0, c.w1)
        for s in c.slots
    )


def promise(ctx: Ctx, c: Candidate, me: Mention | None, conf: float, rules: Sequence[ExtractedAssertion]) -> None:
    subject: Mention | None = me
    cues = sorted([*PROMISE_CUE.finditer(c.text, c.w0, c.w1), *deliveries(c)], key=lambda m: m.start())
    cues = cues if me is not None else []
    if not cues:
        other = OTHER_PROMISE.search(c.text, c.w0, c.w1)
        if other is None:
            return
        cues, subject = [other], ctx.person(other.group("who"))
    if subject is None or covered(rules, c, "committed_to", subject, None):
        return
    if _UNSURE.search(c.text, c.w0, c.w1) or CONDITION_AFTER.search(c.text, c.w0, c.w1):
        return
    if _HESITATION.search(ctx.sent):
        # "by, uh, Wednesday": the date phrases of the sentence with its hesitations blanked out (same
        # length, so every offset still points into the utterance)
        blank = _HESITATION.sub(lambda h: " " * len(h.group(0)), ctx.sent)
        ctx._dates = [(ctx.s0 + a, ctx.s0 + b, " ".join(p.split())) for a, b, p in find_date_phrases(blank)]
    # a false start names no deliverable ("I'll, um, let me — I'll get the form back to you"): the
    # first cue that is followed by one is the promise
    for m in cues:
        if _promise_at(ctx, c, m, subject, conf, rules):
            return


def deliveries(c: Candidate) -> list[re.Match]:
    """The candidate's DELIVERY_CUEs: each "you'll have", and a "we'll have" whose thing goes to the listener."""
    out = []
    for m in DELIVERY_CUE.finditer(c.text, c.w0, c.w1):
        stop = _clause_end(c.text, m.end(), c.w1)
        if m.group("you") or _TO_YOU.search(c.text, m.end(), c.w1 if stop is None else stop):
            out.append(m)
    return out


def _clause_end(text: str, start: int, end: int) -> int | None:
    """Where the promise's clause ends: the first _PROMISE_END that is no hesitation ("get the, the signed
    form", "back to you by, uh, Wednesday": a comma before a word said again or a filler goes on)."""
    for m in _PROMISE_END.finditer(text, start, end):
        if m.group(0) == ",":
            after = text[m.end() : m.end() + 24].split()
            # the word before the comma, fillers aside ("the, um, the revised quote": "the" said again)
            before = [w for w in text[start : m.start()].replace(",", " ").split() if not _FILLER_WORD.fullmatch(w)]
            if after and (
                _FILLER_WORD.fullmatch(after[0].strip(",")) or (before and after[0].lower() == before[-1].lower())
            ):
                continue
        return m.start()
    return None


def _promise_at(
    ctx: Ctx, c: Candidate, m: re.Match, subject: Mention, conf: float, rules: Sequence[ExtractedAssertion]
) -> bool:
    delivery = m.re is DELIVERY_CUE  # the words after the cue are the thing itself: no verb to read
    soft = None if delivery else _SOFT.match(c.text, m.end())
    start = soft.end() if soft else m.end()
    v = _VERB.match(c.text, start)
    if v is None or not delivery and v.group("verb") in _NOT_DELIVERABLE:
        return False
    if not delivery and v.group("verb") in _EVERYDAY and not any(start <= d[0] < c.w1 for d in ctx.dates()):
        return False  # "I'll review the figures": an everyday verb promises something only with a due date
    stop = _clause_end(c.text, start if delivery else v.end(), c.w1)
    end = stop if stop is not None else c.w1
    if re.search(r"\bcan\b", m.group(0)) and _ABILITY.search(c.text, start, end):
        return False
    dates = [d for d in ctx.dates() if start <= d[0] < end]
    if dates:
        end = dates[0][0]
    words = fluent(c.text[start:end]).replace(",", " ").split()[:12]
    while words and words[-1].lower() in ("by", "on", "before", "for", "the", "to", "and", "over", "until"):
        words.pop()
    if "I" in words[1:4]:
        return False  # "I can hel- I will try ...": a word cut off and said again; the next cue is the promise
    if _COURTESY.search(" ".join(words)):
        return False  # "I'll send her my love": a courtesy, not a deliverable
    if (
        len(words) < 2
        or all(w.lower() in _EMPTY_OBJECT for w in words[0 if delivery else 1 :])
        or (words[0].lower() == "have" and words[1].lower() in ("a", "to"))
    ):
        return False  # "do that", "have a go": no deliverable named
    literal = " ".join(words)
    if delivery:  # "the audit pack over to you", "the pricing back from me": the thing, not its way
        literal = _DELIVERY_WAY.sub("", literal) or literal
    if any(
        a.predicate == "committed_to"
        and (a.object_literal or "").casefold() == literal.casefold()
        and a.subject.name == subject.name
        for a in rules
    ):
        return True  # the same promise said again ("I'll migrate the old tables ... so I'll migrate the old tables")
    dr = ctx.date_for(m.start(), c.w1)
    if dr is not None and _over_before(dr, ctx.anchor):
        return False  # "she'd already sent the report last week": "'d" is "had", the act done, no promise
    modality = "commitment"
    ctx.emit(
        "committed_to",
        subject,
        m.start(),
        c.w1,
        literal=literal,
        dr=dr,
        valid_to=dr.end if dr else None,
        modality=modality,
        confidence=conf,
        quote_span=quote(c),
    )
    to = (
        Mention(name="you", kind=ADDRESSEE)
        if delivery
        else recipient(
            ctx,
            subject,
            m.start(),
            v.end(),
            end,
            deliver=DELIVER_VERB.fullmatch(v.group("verb")) is not None,
            told=m.groupdict().get("to") or m.groupdict().get("told"),
        )
    )
    ctx.out[-1] = replace(
        ctx.out[-1], recipient=to, trust_reasons=ctx.out[-1].trust_reasons if subject.is_speaker else ("second_hand",)
    )
    return True

"""Offline rule for commitments: who promised what, to whom, by when.

committed_to: "I'll send you the pricing by Friday", "we'll get back to you by
the 15th", "Marc will send you the deck", "he'll share the slides with Fatima",
"Marc said he'd send me the contract", "I promised Fatima to draft the memo".

What makes a promise (precision over recall):
- a deliverable verb with its object (send/share/introduce/draft/prepare X,
  publish/issue/order X, bring forward X, make sure/ensure that ...);
- an everyday verb ("check", "review") only with a due date; "look into" and
  "find out" also with a topic that says what will be looked into ("look into
  the billing problem", "find out how the charger works"; never "look into it");
- the modal said as speech says it: "I'm gonna", "she's going to", an offer
  made gladly ("I'm happy to look into the case", "we'll be glad to send it")
  and "I can" with a deliverable verb ("I can send an email around");
- a social verb ("call you", "get back to you", "let you know", "follow up",
  "reach out") only with a due date or a topic that is not a pronoun ("get back
  to you on the pricing"): "I'll call you later", "let me get back to you" are
  small talk, not commitments;
- never hedged, negated or questioned, never small-talk objects ("send her my
  love").

The recipient (whom the promise was made to) is the person the deliverable goes
to ("send Fatima the quote", "share it with Fatima", "send me the deck" said of
someone else: the speaker). "you" is marked `ADDRESSEE` here and resolved with
the whole transcript by addressee.resolve_recipients (vocative, a 1:1 meeting,
a reply to a request); with several people and no addressee it stays unknown.
A due date comes from a date phrase ("by Friday") or "before our next meeting"
(resolved from the meeting's own mention of the next one, else left open with
the phrase kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from backchannel.extraction.dates.en import DateRange
from backchannel.extraction.mentions.names import NAME, looks_like_org
from backchannel.extraction.result import Mention
from backchannel.extraction.rules.core import Ctx

# The surface "you" of a promise: resolved to a person by addressee.resolve_recipients, or dropped.
ADDRESSEE = "addressee"

_TO_PERSON = r"(?=\s+(?:you|us|him|her|them|me|[A-Z]))"
_DELIVER_VERBS = (
    r"send(?:\s+(?:over|out|around|round))?|e-?mail|forward|share(?!\s+(?:my|the|your|our)\s+screen)|circulate"
    r"|introduce|make\s+(?:the|an|that|this)\s+intro(?:duction)?|put\s+\w+\s+in\s+touch|connect|arrange"
    r"|schedule|set\s+up|book|draft|write\s+up|prepare|confirm"
    r"|deliver|provide|submit|organi[sz]e"
    # what real meetings promise (ministers, committees, research groups)
    r"|publish|issue|release|order|bring\s+forward|make\s+sure|ensure"
)
DELIVER_VERB = re.compile(_DELIVER_VERBS)
# Verbs of keeping in touch: a promise only with a due date or a real topic.
_SOCIAL_VERBS = (
    rf"follow\s+up|work\s+(?:closely\s+)?with{_TO_PERSON}|(?:get|come|report)\s+back\s+to{_TO_PERSON}"
    rf"|(?:reach\s+out\s+to|contact|call|ring|phone){_TO_PERSON}"
    r"|let\s+(?:you|\w+)\s+know|drop\s+\w+\s+a\s+(?:line|note|email)"
)
# Everyday verbs that make a promise only with a due date ("I'll check it by Monday").
WEAK_VERBS = (
    r"check|look\s+into|find\s+out|review|update|finish|complete|fix|sort\s+out|talk\s+to|speak\s+to"
    r"|ask|write|do|get|pick\s+up"
)
# Verbs whose object may be a bare noun ("publish guidance", "order laptops", "bring forward legislation").
_BARE_OBJECT_VERBS = re.compile(r"publish|issue|release|order|bring\s+forward|send\s+(?:out|around|round)", re.I)
_BARE_OBJECT = re.compile(r"\s+(?!(?:later|soon|too|then|now|again|tomorrow|today|it|that|this|them)\b)[a-z][a-z-]{2,}")
# Weak verbs that name an inquiry: a promise without a due date when the topic is said
# ("look into the billing problem", "find out how the charger works"), never for "look into it".
_INQUIRY = re.compile(r"look\s+into|find\s+out", re.I)
_INQUIRY_TOPIC = re.compile(
    r"\s+(?:(?:what|how|why|whether|where|who|which|when)\b|(?:the|this|that|these|those|your|our|his|her|their)"
    r"\s+(?:particular\s+|specific\s+|individual\s+)?(?!(?:one|ones|thing|things|stuff|bit)\b)[a-z][\w-]{2,})"
)
_MODAL = (
    r"\s?(?:['’]ll|\s+will|\s+shall|['’]m\s+going\s+to|\s+am\s+going\s+to|['’]re\s+going\s+to"
    r"|\s+are\s+going\s+to|\s+is\s+going\s+to|\s?['’]s\s+going\s+to"
    r"|\s?['’](?:m|re|s)\s+gon\s?na|\s+(?:am|are|is)\s+gon\s?na"
    # an offer made gladly: "I'm happy to look into it", "we'll be glad to send it"
    r"|\s?(?:['’]m|['’]re|\s+am|\s+are|['’]ll\s+be|\s+will\s+be)\s+(?:very\s+|quite\s+|more\s+than\s+|really\s+)?"
    r"(?:happy|glad|pleased)\s+to)"
)
# "Marc said he'd send ...", "Marc promised to send ...": someone else's promise, told by the speaker.
_REPORTED = (
    rf"(?P<rep>{NAME})\s+(?:said|promised|agreed|told\s+(?:me|us|you))\s+(?:that\s+)?"
    r"(?:he|she)\s?(?:['’]d|['’]ll|\s+would|\s+will)"
    rf"|(?P<prom>{NAME}|\bI|\b[Ww]e)\s+(?:promised|agreed|offered)\s+"
    rf"(?:(?P<pto>you|me|us|him|her|{NAME})\s+)?to"
)
_PROMISE = (
    r"\s+(?:(?:definitely|certainly|just|also|then|personally|quickly|make\s+sure\s+to|try\s+and|try\s+to)\s+)*"
    rf"(?P<verb>(?P<deliver>{_DELIVER_VERBS})|(?P<social>{_SOCIAL_VERBS})|(?P<weak>{WEAK_VERBS}))"
    rf"\b(?P<rest>[^.;!?]*)"
)
_COMMIT = re.compile(
    # "My producer, Tariq Aziz, will follow up with you": a name in apposition keeps its comma
    rf"(?:(?P<subj>\b[Ii]|\b[Ww]e|\b[Hh]e|\b[Ss]he|{NAME})(?:(?<=[a-z]),(?=\s+will\b))?{_MODAL}|\b(?P<letme>[Ll]et\s+me)"
    # an offer of a deliverable: "I can send you the deck", "I can certainly provide a printed copy"
    r"|\b(?P<can>I)\s+can(?:\s+(?:certainly|definitely|also|easily))?(?=\s+(?:" + _DELIVER_VERBS + r")\b))"
    rf"{_PROMISE}"
)
# Reported promises are rarer and their pattern dearer: offline.py runs them only after their own triggers.
_COMMIT_REPORTED = re.compile(rf"(?:{_REPORTED}){_PROMISE}")
# A French condition in a code-switched promise ("si le board valide le budget, I'll send ..."): "si"
# before a subject or a determiner is "if" (not the "si" of "si bien", "mais si").
FRENCH_IF = (
    # not the courtesies "si tu veux", "si vous voulez", "si vous le souhaitez" ("if you like": an offer)
    r"\bsi\s+(?!(?:tu|vous)\s+(?:le\s+)?(?:veux|voulez|souhaites|souhaitez|préfères|préférez)\b)"
    r"(?:le|la|les|l['’]|un|une|des|tu|vous|on|il|elle|ils|elles|je|j['’]|nous|c['’]|ça|ca|ton|ta|tes"
    r"|mon|ma|mes|notre|votre|leur)\b|\bs['’]ils?\b"
)
HEDGE = re.compile(
    r"\b(?:if|maybe|perhaps|probably|might|unless|whether|hopefully|would|could|not|never|say|says|"
    rf"said|wonder|suppose)\b|n['’]t\b|{FRENCH_IF}",
    re.I,
)
# A condition said after the promise: the promise holds only if it is met (the evaluation set labels such
# promises hypothetical, as it does those with "if" before the verb).
CONDITION_AFTER = re.compile(
    r"\b(?:assuming|provided|providing|as\s+long\s+as|so\s+long\s+as|subject\s+to|pending|depending\s+on"
    r"|on\s+condition|unless)\b",
    re.I,
)
_OBJECT_START = re.compile(
    r"\s+(?:you|him|her|them|us|me|it|this|that|the|a|an|our|my|your|his|their|some|those|"
    rf"these|over|to|with|on|up|back|everyone|everybody|he|she|they|we|whoever|{NAME})\b"
)
PROMISE_CUT = re.compile(
    # a quote mark ends the promise; an apostrophe of "he's", "we'll" (even spaced: "he 's") does not
    r"['’](?!(?:s|ll|re|m|ve|d|t)\b)|[\"“”‘]|-\s|\s+or\b|,\s*(?:and|but|so|then|because|which|okay|ok|alright|right)\b"
    r"|\s+(?:and\s+then|so\s+that|because|but)\b|\s+(?:okay|ok|alright|yeah|right)\s*$"
)
FILLER_END = re.compile(
    r"(?:\s+(?:as\s+well|too|then|okay|ok|alright|yeah|right|please|again|now|later|soon|sometime"
    r"|at\s+some\s+point|when\s+I\s+can|in\s+a\s+bit|in\s+a\s+while))+\s*$"
)
# A social verb's topic: "get back to you on the pricing"; "on that", "about it" are no topic.
_TOPIC = re.compile(
    r"\b(?:about|on|regarding|re|with)\s+(?!(?:it|that|this|them|those|these|things?|stuff|"
    r"everything|something|anything)\b)(?:the\s+|our\s+|your\s+|my\s+)?[\w-]{3,}",
    re.I,
)
# Objects that are courtesies, not deliverables.
SMALL_TALK_OBJECT = re.compile(
    r"\b(?:my|our)\s+(?:best|love|regards|thanks|condolences|congratulations|wishes)\b"
    r"|\b(?:love|regards|greetings|best\s+wishes|thoughts|prayers)\b",
    re.I,
)
# "before our next meeting", "before we meet again", "by next time": due at the next meeting.
NEXT_MEETING = re.compile(
    r"\b(?:before|by|for|ahead\s+of|prior\s+to)\s+(?:our|the|your)\s+next\s+(?:meeting|call|catch-?up|session|sync"
    r"|check-?in|conversation|chat)\b|\bbefore\s+we\s+(?:next\s+)?(?:meet|speak|talk)(?:\s+again|\s+next)?\b"
    r"|\b(?:by|before)\s+next\s+time\b",
    re.I,
)
# Whom a deliverable goes to: the word right after the verb ("send Fatima the quote",
# "send you the deck"), or "to/with X" later ("share the deck with Fatima").
DIRECT_TO = re.compile(rf"\s+(?P<r>you|me|us|him|her|them|{NAME})\b")
LATER_TO = re.compile(rf"\b(?:to|with)\s+(?P<r>you|me|us|him|her|them|{NAME})\b")


_OPENERS = {"and", "so", "but", "then", "i", "we", "okay", "ok", "well", "also", "now", "yes", "sure"}


def _subject(ctx: Ctx, m: re.Match) -> tuple[Mention | None, bool]:
    """(who promised, whether the speaker only reports it)."""
    g = m.groupdict()
    if g.get("rep"):
        return ctx.person(g["rep"]), True
    raw = g.get("prom") or g.get("subj") or "I"  # "let me send you ..." is the speaker's promise
    words = raw.split()
    if len(words) > 1 and words[-1].lower() in ("i", "we") and words[0].lower() in _OPENERS:
        raw = words[-1]  # "And I will send ...": the name pattern took the opener with the pronoun
    if raw.lower() in ("i", "we"):
        return ctx.me(), False
    if raw.lower() in ("he", "she"):
        return ctx.antecedent(m.start()), False
    person = ctx.person(raw)
    return person, bool(g.get("prom")) and person is not None and not person.is_speaker


def _recipient(ctx: Ctx, subj: Mention, m: re.Match, promise_end: int) -> Mention | None:
    return recipient(
        ctx,
        subj,
        m.start(),
        m.end("verb"),
        promise_end,
        deliver=m.group("deliver") is not None,
        told=m.groupdict().get("pto"),
    )


def recipient(
    ctx: Ctx, subj: Mention, at: int, verb_end: int, promise_end: int, *, deliver: bool, told: str | None = None
) -> Mention | None:
    """Whom the deliverable goes to, as said in the promise: `told` ("I promised Fatima to ..."),
    the word right after the verb ("send Fatima the quote", "send you the deck"), or "to/with X" later
    ("share the deck with Fatima"); None when not said."""
    if told:
        return _who(ctx, subj, at, told)
    hit = DIRECT_TO.match(ctx.text, verb_end, promise_end)
    if hit is None or hit.group("r") in ("him", "her", "them") and not deliver:
        hit = LATER_TO.search(ctx.text, verb_end, promise_end) or hit
    return None if hit is None else _who(ctx, subj, at, hit.group("r"))


def _who(ctx: Ctx, subj: Mention, at: int, word: str) -> Mention | None:
    low = word.lower()
    if low == "you":
        return Mention(name="you", kind=ADDRESSEE)
    if low in ("me", "us"):
        return None if subj.is_speaker else ctx.me()
    if low in ("him", "her", "them"):
        return ctx.antecedent(at) if low != "them" else None
    person = ctx.person(word)
    if person is None or looks_like_org(person.name) or person.name == subj.name:
        return None
    return person


def rule_commitment(ctx: Ctx) -> None:
    """ "I'll send you X", "Marc will send you X", "let me draft X"."""
    if not ctx.sent.rstrip().endswith("?"):
        _promises(ctx, _COMMIT.finditer(ctx.text, ctx.s0, ctx.s1))


def rule_reported_commitment(ctx: Ctx) -> None:
    """ "Marc said he'd send me X", "Marc promised Carol to draft X", "I promised to send X"."""
    if not ctx.sent.rstrip().endswith("?"):
        _promises(ctx, _COMMIT_REPORTED.finditer(ctx.text, ctx.s0, ctx.s1))


def _promises(ctx: Ctx, matches: Iterator[re.Match[str]]) -> None:
    for m in matches:
        g = m.groupdict()
        subj, reported = _subject(ctx, m)
        if subj is None:
            continue
        hedge_to = m.start() if g.get("rep") or g.get("prom") else m.start("verb")
        if HEDGE.search(ctx.text, ctx.clause_start_at(m.start()), hedge_to):
            continue
        if CONDITION_AFTER.search(ctx.text, m.end("verb"), ctx.s1):
            continue  # "I'll get you the benchmarks by Friday, assuming legal signs off": a conditional promise
        rest_start = m.end("verb")
        verb = m.group("verb").lower()
        bare_verb = " ".join(verb.split())
        inquiry = _INQUIRY.fullmatch(bare_verb) is not None and _INQUIRY_TOPIC.match(ctx.text, rest_start) is not None
        if (
            not _OBJECT_START.match(ctx.text, rest_start)
            and not verb.startswith(("get back", "follow"))
            and not (inquiry or _BARE_OBJECT_VERBS.fullmatch(bare_verb) and _BARE_OBJECT.match(ctx.text, rest_start))
        ):
            continue
        dr = ctx.date_for(m.start("verb"), m.end())
        promise_end = m.end()
        if dr is not None:
            for a, _b, _p in ctx.dates():
                if m.start("verb") < a < promise_end:
                    promise_end = a
                    break
        else:
            nxt = NEXT_MEETING.search(ctx.text, m.start("verb"), m.end())
            if nxt:
                dr = DateRange(None, None, nxt.group(0))  # resolved by addressee.resolve_recipients
                promise_end = nxt.start()
        if m.group("weak") and dr is None and not inquiry:
            continue
        if g.get("can") and not m.group("deliver"):
            continue  # "I can check", "I can call you": ability or small talk, not an offer of something
        if g.get("letme") and verb.startswith("introduce") and dr is None:
            continue  # "let me introduce you to Sophie" makes the introduction now: no promise
        cut = PROMISE_CUT.search(ctx.text, rest_start, promise_end)
        if cut:
            if inquiry and dr is None and cut.group(0).startswith("-"):
                continue  # "look into how you daisy - ...": a topic broken off is no topic said
            promise_end = cut.start()
        promise = FILLER_END.sub("", ctx.text[m.start("verb") : promise_end]).strip(" ,—–-")
        words = promise.split()
        longest = 20 if bare_verb in ("make sure", "ensure") else 16  # "make sure that <a whole clause>"
        if len(words) < 2 or len(words) > longest or SMALL_TALK_OBJECT.search(promise):
            continue
        if m.group("social") and dr is None and not _TOPIC.search(promise, len(m.group("verb"))):
            continue
        due = dr.end or dr.start if dr else None
        before = len(ctx.out)
        ctx.emit(
            "committed_to",
            subj,
            m.start(),
            m.end(),
            literal=" ".join(words),
            dr=dr,
            valid_to=due,
            modality="commitment",
            confidence=0.6 if dr else 0.5,
        )
        if len(ctx.out) > before:
            made = ctx.out[-1]
            made.recipient = _recipient(ctx, subj, m, promise_end)
            if reported or not subj.is_speaker:  # "Marc will send you the deck" is the speaker's word for Marc's
                made.trust_reasons = (*made.trust_reasons, "second_hand")

"""Offline rule for promises recognised by their frame, not by a list of deliverable verbs.

rules/en/commitments.py knows the verbs of office work ("send", "share", "draft"); real
meetings promise in any verb: "we'll be setting a minimum standard", "we will make a
statutory provision", "I'll incorporate them all", "I'm gonna pick them up tomorrow".
A promise is said in one frame, whatever its verb:

- first person ("I", "we") + a future of intent ("'ll", "will", "shall", "going to",
  "gonna", "'ll be <verb>ing") + an action verb + its object;
- the verb is an action done after the meeting: the acts of the meeting itself ("I'll go
  first", "I'll give you an example", "we'll move on"), thinking and saying verbs ("I'll
  think", "we'll see") and verbs of state ("we'll have", "we'll need") are not promises;
- the object says what: a noun phrase, not a bare pronoun ("I'll do that", "we'll
  fix it" say nothing that could be followed up);
- "we" promises only from an office-holder (a minister, a chair, a professor: their
  office or group is theirs to commit); a participant's "we'll have a look", a product
  team's "we're gonna make a remote control" is the room talking;
- never hedged, negated, hypothetical, forecast ("I think we'll save money") or asked
  (the guard of offline_commitments, where "as I said" is no reported speech).

It runs after rule_commitment; a promise this speaker already made in the meeting (read by
either rule) is not made again. Measured on bench/devset (README "Figures").
"""

from __future__ import annotations

import re

from backchannel.extraction.rules.core import Ctx
from backchannel.extraction.rules.en.commitments import (
    CONDITION_AFTER,
    FILLER_END,
    HEDGE,
    PROMISE_CUT,
    SMALL_TALK_OBJECT,
    WEAK_VERBS,
)

_FUTURE = (
    r"\s?['’]ll|\s+will|\s+shall|\s?['’]m\s+going\s+to|\s+am\s+going\s+to|\s?['’]re\s+going\s+to"
    r"|\s+are\s+going\s+to|\s?['’](?:m|re)\s+gon\s?na|\s+(?:am|are)\s+gon\s?na"
    # an offer made gladly: "I'm happy to work with the member", "I'm quite happy to look at that"
    r"|\s?(?:['’]m|['’]re|\s+am|\s+are)\s+(?:very\s+|quite\s+|more\s+than\s+|really\s+)?"
    r"(?:happy|glad|pleased)\s+to"
)
# "I look forward to working with my fellow member on this issue": volition with the verb as -ing.
_LOOK_FORWARD = r"\s+look\s+forward\s+to"
_ADVERBS = (
    r"also|then|just|definitely|certainly|actually|absolutely|personally|now|first|quickly|duly"
    r"|of\s+course|at\s+some\s+point|at\s+the\s+first\s+opportunity|go\s+ahead\s+and|make\s+sure\s+to"
    r"|try\s+and|try\s+to|be\s+looking\s+to|look\s+to|seek\s+to|want\s+to"
)
_PLEDGE = re.compile(
    rf"\b(?P<subj>I|[Ww]e)(?:(?P<future>{_FUTURE})(?:\s+(?:{_ADVERBS}))*"
    r"(?:\s+be\s+(?P<ing>[a-z]{2,}ing)(?!\s+to\b)|\s+(?P<verb>[a-z]{2,}))"
    rf"|{_LOOK_FORWARD}\s+(?P<ing2>[a-z]{{2,}}ing))\b(?P<rest>[^.;!?]*)"
)
# "the next step is to work on tightening up the boundaries": a stated plan of one's next step.
_NEXT_STEP = re.compile(
    r"\b(?:the|my|our)\s+next\s+step\s+(?:is|will\s+be)\s+(?:to\s+)?(?P<verb>[a-z]{2,})\b"
    r"(?P<rest>[^.;!?]*)",
    re.I,
)
# Verbs that are no promise: acts of the meeting itself, thinking and saying, states, and verbs
# too vague to follow up ("do", "get", "go").
_NOT_ACTIONS = frozenset(
    """
be have get go come see know think say tell talk speak ask answer respond reply start begin move turn hand pass
give show read repeat explain take hear leave stop end wait let need want like continue keep allow remind note
point mention add call invite welcome thank close open finish suspend resume adjourn proceed vote agree accept
admit acknowledge recognise recognize feel hope wish believe guess assume suppose expect imagine remember forget
understand learn notice recall describe summarise summarize clarify elaborate conclude jump skip switch stay sit
stand use do find lose miss run play try probably also not never just still always already rather soon
become seem hold face win fail require present focus chat delegate change appeal manage choose
i you he she they it we me us him her them put raise refer discuss consider appear reflect
grant concede confess level warn bet wager swear
""".split()
)
# Progressive forms whose stem needs its final e back: "making" -> "make", "providing" -> "provide".
_E_STEM = re.compile(
    r"(?:[^aeiou][aeiou][cdkgvsz]|[^aeiou]at|[^aeiou]ar|[^aeiou]ir|uc|nc|ens|ctiv|rv|fin"
    r"|[^aeiou]u|ur|writ)$"
)
# Stems the pattern above cannot tell from "treat", "visit": "creating" -> "create".
_E_STEM_WORDS = {"creat", "generat", "updat"}
_OBJECT = re.compile(
    r"\s+(?:(?:up|out|forward|back|on|in|off|over|around|down|to|for|into|with|about|on)\s+)?"
    r"(?!(?:it|that|this|them|those|these|so|there|here|something|anything|everything|things?|stuff|one|more"
    r"|sure|ahead|again|too|later|soon|now|then|well|first|last|please|okay|ok|yeah|alright|right"
    r"|(?:some|all|any|most|one|each)\s+of\s+(?:it|that|this|them|those|these)"
    r"|up|out|forward|back|on|in|off|over|around|down|to|for|into|with|about|at|from|by|through)\b)"
    r"(?:the|a|an|our|my|your|his|her|their|its|some|all|any|every|each|new|more|[a-z][a-z-]{2,}|[A-Z][\w-]+)\b"
)
# A speaker whose "we" commits their office or group: a title in the label ("Hon.", "AM",
# "(Minister of Health)", "The Chair", "Professor C"). AMI seats ("Project Manager") are not
# enough: a design team's "we" plans the meeting's own work.
_ROLE_LABEL = re.compile(
    r"\b(?:Hon|Minister|Secretary|Chair|Chairman|Chairwoman|Speaker|Professor|Director|Chief|President"
    r"|Commissioner|Officer)\b|\b(?:AM|MS|MP|MSP)\b|\(",
    re.I,
)
# A future said as a forecast or inside a question or condition, not as a promise: "I think we'll save money",
# "I'm sure we'll pick that up", "otherwise we'll reach uneven outcomes", "how we are going to deal with it".
_FORECAST = re.compile(
    r"\b(?:think|sure|guess|hope|expect|believe|bet|reckon|otherwise|either|how|what|which"
    r"|where|whether|why|when|once)\b",
    re.I,
)
# Acts of the meeting said with an object: "I'll change the subject", "I'll be sharing my time".
_MEETING_OBJECT = re.compile(
    r"^\S+\s+(?:the\s+subject|my\s+time|my\s+question|(?:my|the)\s+floor|myself"
    r"|(?:my|the|your)\s+screen)\b"
    r"|\bat\s+the\s+end$|\bend\s+of\s+(?:the|this)\s+meeting\b",
    re.I,
)
# A pronoun object says what only with more after it: "escalate this to our tier two team", "pick them up
# tomorrow", "incorporate them all and put bleeps"; never "do that", "fix it later", "look it up".
_PRONOUN_OBJECT = re.compile(r"\s+(?:it|that|this|them|those|these)\b(?P<more>.*)", re.S)
_CONTENT = re.compile(
    r"\b(?!(?:again|later|soon|now|then|today|tomorrow|there|here|too|well|first|please|okay|yeah"
    r"|right|alright|up|out|back|down|over|off|away|through|with|from|into|onto|about|your|their"
    r"|them|they|this|that|these|those|what|when|then|there|some|just|also)\b)[A-Za-z][\w-]{3,}"
)
# "as I said" is a discourse marker, not reported speech.
_AS_I_SAID = re.compile(r"\bas\s+(?:I|we)(?:['’]ve)?\s+(?:said|say|have\s+said)\b", re.I)
# Where a long promise's object ends: a relative or a list that only says more about it.
_OBJECT_END = re.compile(
    r":|\s+and\s+(?:I|we)\b"
    r"|,\s*(?:including|which|who|where|as\s+I\s+said|as\s+we\s+said|in\s+order)\b"
    r"|\s+(?:or\s+it|if|unless|once)\b"
)
_QUOTED = re.compile(r"(?<!\w)['‘]([^'’‘\n]{1,60})['’](?!\w)")
_PLURAL_POSSESSIVE = re.compile(r"(?<=\ws)['’](?=\s)")
_LONGEST = 16
_DANGLING = {
    "and",
    "or",
    "but",
    "so",
    "the",
    "a",
    "an",
    "of",
    "in",
    "on",
    "to",
    "for",
    "with",
    "at",
    "by",
    "that",
    "uh",
    "um",
}


# rule_commitment's everyday verbs ("check", "review", "fix") promise only with a due date: it owns them.
# With a question as its object ("check what happened", "check and make sure it's fixed") the
# verb says what will be found out, as "look into the billing problem" does there.
_EVERYDAY = re.compile(WEAK_VERBS)
_WH_TOPIC = re.compile(r"\s+(?:what|how|whether|why|where|who|which|if)\b|\s+and\s+make\s+sure\b")


def lemma(word: str) -> str:
    """'setting' -> 'set', 'making' -> 'make', 'reflecting' -> 'reflect' (a progressive back to its base)."""
    if not word.endswith("ing") or len(word) < 6:
        return word
    stem = word[:-3]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]  # "setting", "putting"
    return stem + "e" if stem in _E_STEM_WORDS or _E_STEM.search(stem) else stem


def has_role(speaker: str | None) -> bool:
    if not speaker:
        return False
    return _ROLE_LABEL.search(speaker) is not None


def hedged(text: str, start: int, end: int) -> bool:
    """A hedge, negation or condition in text[start:end] (offline_commitments' guard; "as I said" is none)."""
    spans = [(h.start(), h.end()) for h in _AS_I_SAID.finditer(text, start, end)]
    return any(not any(a <= h.start() < b for a, b in spans) for h in HEDGE.finditer(text, start, end))


def rule_pledge(ctx: Ctx) -> None:
    """ "we'll be setting a minimum standard", "I'll incorporate them all", "I'm gonna pick them up tomorrow"."""
    if ctx.sent.rstrip().endswith("?") or ctx.me() is None:
        return
    pos = ctx.s0
    while (m := _PLEDGE.search(ctx.text, pos, ctx.s1)) is not None:
        pos = m.start("rest")  # promises may follow one another in a sentence: "X will send ..., and I'll ..."
        if m.group("subj").lower() == "we" and not has_role(ctx.speaker):
            continue
        if re.match(r"\s+just\b", ctx.text[m.end("future") :] if m.group("future") else ""):
            continue  # "I'll just raise another point", "I'll just separate the ratings": done in the meeting
        said = "ing" if m.group("ing") else "ing2" if m.group("ing2") else "verb"  # the verb as said
        verb = lemma(m.group(said)) if said != "verb" else m.group("verb")
        clause = ctx.clause_start_at(m.start())
        everyday = _EVERYDAY.fullmatch(verb) and not _WH_TOPIC.match(ctx.text, m.end(said))
        if (
            verb in _NOT_ACTIONS
            or everyday
            or hedged(ctx.text, clause, m.start(said))
            or CONDITION_AFTER.search(ctx.text, m.end(said), ctx.s1)  # "..., provided procurement clears it"
            or _FORECAST.search(ctx.text, clause, m.start())
        ):
            continue
        _promise(ctx, m.start(), m.end(said), verb, m.end())
    for m in _NEXT_STEP.finditer(ctx.text, ctx.s0, ctx.s1):
        if m.group("verb").lower() not in _NOT_ACTIONS and not hedged(
            ctx.text, ctx.clause_start_at(m.start()), m.start("verb")
        ):
            _promise(ctx, m.start(), m.end("verb"), m.group("verb").lower(), m.end())


def _promise(ctx: Ctx, start: int, rest_start: int, verb: str, end: int) -> None:
    """Emit verb + object (text[rest_start:end], cut where the promise ends) when the object says what."""
    text = ctx.text
    obj = _OBJECT.match(text, rest_start, end)
    pron = _PRONOUN_OBJECT.match(text, rest_start, end)
    if obj is None and (pron is None or not _CONTENT.search(_cut(pron.group("more")))):
        return
    # ICSI spells a hyphenated word spaced ("daisy - chain"): a hyphen, not a break in the promise;
    # a quoted phrase ("the 'what matters' statements") is part of the object.
    for a, _b, _p in ctx.dates():  # the due date is the promise's date, not part of what is promised
        if rest_start < a < end:
            end = a
            break
    rest = _QUOTED.sub(r"\1", re.sub(r"(?<=\w) - (?=\w)", "-", text[rest_start:end]))
    words = [verb, *_cut(rest).split()][:_LONGEST]
    while len(words) > 2 and words[-1].lower() in _DANGLING:
        words.pop()  # "look into how you daisy-chain them and", "... our approach to progression in"
    promise = " ".join(words)
    if len(words) < 2 or SMALL_TALK_OBJECT.search(promise) or _MEETING_OBJECT.search(promise):
        return
    if _already_promised(ctx, promise):
        return
    me = ctx.me()
    if me is None:  # never: rule_pledge returns first when the sentence has no speaker
        return
    dr = ctx.date_for(start, end)
    ctx.emit(
        "committed_to",
        me,
        start,
        min(end, rest_start + len(rest)),
        literal=promise,
        dr=dr,
        valid_to=(dr.end or dr.start) if dr else None,
        modality="commitment",
        confidence=0.45,
    )


def _cut(rest: str) -> str:
    rest = _PLURAL_POSSESSIVE.sub("\u02bc", rest)  # "the residents' association": no closing quote mark
    for rx in (PROMISE_CUT, _OBJECT_END):
        c = rx.search(rest)
        if c:
            rest = rest[: c.start()]
    return FILLER_END.sub("", rest).strip(" ,—–-").replace("\u02bc", "'")


def _already_promised(ctx: Ctx, promise: str) -> bool:
    """This speaker already made this promise in the meeting (rule_commitment's reading, or this rule's
    in an earlier turn: "We'll check what happened." ... "We'll check what happened and ...")."""
    head = " ".join(promise.split()[:3]).lower()
    return any(
        a.predicate == "committed_to"
        and a.object_literal
        and a.subject.is_speaker
        and a.subject.name == ctx.speaker
        and (head in a.object_literal.lower() or a.object_literal.lower() in promise.lower())
        for a in ctx.out
    )

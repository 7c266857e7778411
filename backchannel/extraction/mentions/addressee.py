"""Whom a promise was made to, who "we" is, and when "our next meeting" is: the transcript-wide pass.

The commitment rule sees one sentence; "I'll send you the quote" needs the
meeting around it. For each `committed_to` whose recipient is "you" (marked
`ADDRESSEE`), or a first-person promise with no recipient said, the addressee is,
in order:
1. the person named as a vocative around it: "Fatima, I'll send you the quote",
   "I'll send it to you tomorrow, Fatima.", "Thanks Fatima. I'll ...";
2. in a meeting of two people, the other one; in a one-speaker recording (a
   voicemail, a memo) with no other participant, the owner it was left for;
3. the speaker of the turn just before, when that turn asked for something
   ("Could you send me the quote?", "Please share the deck"), or of the one before it when the
   turn between asks nothing and is said to someone else by a vocative (a committee member's aside
   to the chair between the chair's question and the answer: REQUEST_REACH turns back, never past a
   turn of the promise's own speaker) and the request shares a content word with what is promised.
A "you" said to several ("I'll send you both ...", "all of you") is the owner when the owner is in
the meeting and did not make the promise: they are owed it whoever else is.
Otherwise "you" stays unknown (several people, no addressee): the recipient is
dropped rather than guessed.

The same pass settles "we worked together" when the sentence names nobody: the
vocative, else the one person (not of this meeting) named in the two turns before
(mentions.resolve_pronoun; two or more named: nothing), else the other person of a
two-person meeting, else nothing.

A due date said as "before our next meeting" becomes the date of the next meeting
when the transcript names it ("see you next Tuesday", "next call on the 14th");
else the phrase stays and the date stays open.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Literal

from backchannel.extraction.dates.en import find_date_phrases, resolve_phrase
from backchannel.extraction.dates.fr import find_date_phrases_fr
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.names import NAME, looks_like_org, person_name, same_person
from backchannel.extraction.mentions.names_fr import FR_STOP
from backchannel.extraction.mentions.stage import mentions_in, resolve_pronoun
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.core import sentences
from backchannel.extraction.rules.en.commitments import ADDRESSEE, NEXT_MEETING
from backchannel.extraction.rules.en.relations import WE_PARTNER
from backchannel.extraction.rules.fr.commitments import NEXT_MEETING_FR
from backchannel.graph.kept import topic

REQUEST_REACH = 2
# "you" said to more than one: "I'll send you both ...", "all of you", "y'all".
_PLURAL_YOU = re.compile(r"\byou\s+(?:both|two|all|guys)\b|\b(?:both|all)\s+of\s+you\b|\by['’]all\b", re.I)
_OPENERS = (
    r"(?i:(?:ok|okay|so|sure|right|well|yes|yeah|thanks|thank\s+you|great|and|hi|hey|oh|alright|of\s+course"
    r"|oui|merci|bon|alors|parfait|bien\s+sûr|d['’]accord|et|bonjour|salut)\s*,?\s+)?"
)
_VOCATIVE_OPEN = re.compile(rf"(?:^|(?<=[.!?])\s+){_OPENERS}(?P<v>{NAME})\s*[,!]")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_VOCATIVE_CLOSE = re.compile(rf",\s*(?P<v>{NAME})\s*(?:[.!]|$)")
_REQUEST = re.compile(
    r"\?|\b(?:can|could|would|will)\s+you\b|\bplease\b|\b(?:send|forward|share|email|give)\s+(?:me|us)\b"
    r"|\bI(?:['’]d|\s+would)\s+(?:love|like|appreciate)\b|\b(?:I|we)\s+need\b|\bdo\s+you\s+have\b"
    r"|\b(?:pouvez|pourriez|peux|pourrais)[- ](?:vous|tu)\b|\bs['’]il\s+(?:vous|te)\s+pla[iî]t\b"
    r"|ください|いただけ|もらえ|お願い|？",
    re.I,
)
_NEXT_MEETING_SAID = re.compile(
    r"\b(?:next\s+(?:meeting|call|catch-?up|session|sync|check-?in)|meet\s+again|see\s+you|speak\s+(?:again|then)"
    r"|talk\s+(?:again|then)|same\s+time|prochaine\s+réunion|prochain\s+(?:rendez-vous|point|appel)|on\s+se\s+voit"
    r"|on\s+se\s+revoit|à\s+(?:jeudi|lundi|mardi|mercredi|vendredi|la\s+semaine\s+prochaine))\b",
    re.I,
)


def resolve_recipients(
    transcript: Transcript, extracted: list[ExtractedAssertion], owner_names: Sequence[str] = ()
) -> list[ExtractedAssertion]:
    """`extracted` with every commitment's "you" resolved (or dropped) and "before our
    next meeting" dated when the transcript says when that is."""
    if not any(
        a.predicate == "committed_to" or a.object is not None and a.object.kind == WE_PARTNER for a in extracted
    ):
        return extracted
    by_idx = {u.idx: u for u in transcript.utterances}
    order = {u.idx: i for i, u in enumerate(transcript.utterances)}
    people = _meeting_people(transcript)
    next_meeting: date | Literal[False] | None = None  # False: looked for, none said
    out = []
    for a in extracted:
        if a.object is not None and a.object.kind == WE_PARTNER:
            partner = _we_partner(transcript, by_idx, people, a)
            if partner is not None:  # "we worked together" in a two-person meeting: the other one
                out.append(replace(a, object=partner))
            continue
        if a.predicate != "committed_to":
            out.append(a)
            continue
        r = a.recipient
        if r is not None and r.kind == ADDRESSEE or r is None and a.subject.is_speaker:
            r = _addressee(transcript, by_idx, order, people, a, owner_names)
        due = a.valid_to
        if (
            due is None
            and a.date_phrase
            and (NEXT_MEETING.fullmatch(a.date_phrase) or NEXT_MEETING_FR.fullmatch(a.date_phrase))
        ):
            if next_meeting is None:
                next_meeting = _next_meeting_date(transcript) or False
            due = next_meeting or None
        out.append(replace(a, recipient=r, valid_to=due))
    return out


def _meeting_people(transcript: Transcript) -> list[str]:
    """Distinct people of the meeting (speaker labels first; 'Marc' and 'Marc Dupont' are one)."""
    people: list[str] = []
    for n in [*transcript.speakers(), *transcript.participants]:
        if n and not any(same_person(n, p) for p in people):
            people.append(n)
    return people


def _addressee(
    transcript: Transcript,
    by_idx: dict,
    order: dict[int, int],
    people: list[str],
    a: ExtractedAssertion,
    owner_names: Sequence[str],
) -> Mention | None:
    u = by_idx[a.utterance_idx]
    speaker = u.speaker
    if not speaker:
        return None
    owner = next((p for p in people for o in owner_names if o and same_person(p, o)), None)
    if owner and not same_person(owner, speaker) and _PLURAL_YOU.search(u.text, a.span_start, a.span_end):
        return Mention(name=owner, kind="person")  # "I'll send you both ...": the owner, in the room, is owed it
    named = _vocative(u.text, a.span_start, a.span_end, speaker, people)
    if named:
        return _as_mention(named, people, speaker)
    others = [p for p in people if not same_person(p, speaker)]
    if len(others) == 1:
        return Mention(name=others[0], kind="person")
    if not others and owner_names and not any(same_person(speaker, o) for o in owner_names if o):
        return Mention(name=owner_names[0], kind="person")
    pos = order[u.idx]
    promised = topic(a.object_literal or a.quote or "")
    for back, prev in enumerate(reversed(transcript.utterances[max(0, pos - REQUEST_REACH) : pos])):
        if not prev.speaker or same_person(prev.speaker, speaker):
            return None  # the promise's speaker spoke since: an earlier request was answered then
        if _REQUEST.search(prev.text) and (back == 0 or promised & topic(prev.text)):
            # past an aside, only a request for what is promised ("a breakdown by region" ... "the full
            # breakdown, region by region"), not any request still in the air
            return Mention(name=prev.speaker, kind="person")
        if not _aside(prev.text, speaker):
            # a turn said to the promise's speaker ("Yes, that would help a lot"): not stepped past, unless its
            # speaker is the one the request before it asked for ("Kwame, Alex will need the logs")
            return _asked_for(transcript.utterances[max(0, pos - REQUEST_REACH) : pos - back - 1], prev, a, people)
    return None


# What is promised said as a pronoun ("I'll pull them this afternoon"): the thing the request named.
_POINTS_BACK = re.compile(r"^\w+(?:\s+\w+)?\s+(?:it|them|those|these|that)\b", re.I)


def _asked_for(
    earlier: Sequence[Utterance], prev: Utterance, a: ExtractedAssertion, people: Sequence[str]
) -> Mention | None:
    """The speaker of `prev` when the turn just before it asks the promise's maker for what is promised on
    their behalf, naming them ("Kwame, Alex is gonna need the access logs", "can you get the figures to Bea?")
    and is no turn of the maker's or of theirs: the request answered is made for the one who then spoke."""
    if not earlier or not prev.speaker:
        return None
    req = earlier[-1]
    maker = a.subject.name
    if (
        not req.speaker
        or same_person(req.speaker, maker)
        or same_person(req.speaker, prev.speaker)
        or not (
            topic(a.object_literal or a.quote or "") & topic(req.text) or _POINTS_BACK.search(a.object_literal or "")
        )
    ):
        return None
    who = next((p for p in people if same_person(p, prev.speaker)), prev.speaker)
    alt = "|".join(re.escape(n) for n in sorted({who, who.split()[0]}, key=len, reverse=True))
    # "Mona's going to need ...", "Alex will be wanting ...": a need said for them is itself the request
    needs = re.search(
        rf"\b(?:{alt})(?:['’]s)?\s+(?:(?:is\s+)?(?:going\s+to|gonna)\s+|(?:is|will|would|might|['’]ll)\s+)?(?:be\s+)?"
        r"(?:need|needs|needing|want|wants|wanting|waiting)\b",
        req.text,
    )
    for_them = re.search(
        rf"\b(?:to|for)\s+(?:{alt})\b(?!\s*['’]s)|\b(?:send|get|give|forward|email|pass|show)\s+(?:{alt})\b",
        req.text,
    )
    return Mention(name=who, kind="person") if needs or for_them and _REQUEST.search(req.text) else None


def _aside(text: str, maker: str) -> bool:
    """Whether a turn is said to someone other than the promise's maker, by a vocative ("Chair, the agency
    staff too", "And the Leeds depot, ideally, Chair."): an aside the maker's answer steps over."""
    said = [m.group("v") for rx in (_VOCATIVE_OPEN, _VOCATIVE_CLOSE) for m in rx.finditer(text)]
    return any((v.lower() in _ROLE_VOCATIVES or person_name(v) is not None) and not same_person(v, maker) for v in said)


_ROLE_VOCATIVES = frozenset({"chair", "chairman", "chairwoman", "convenor", "minister", "president", "sir", "madam"})


def _we_partner(transcript: Transcript, by_idx: dict, people: list[str], a: ExtractedAssertion) -> Mention | None:
    """The other half of the speaker's "we": a vocative, else the other person of a
    two-person meeting; None otherwise (the fact is then dropped, never guessed)."""
    u = by_idx[a.utterance_idx]
    if not u.speaker:
        return None
    named = _vocative(u.text, a.span_start, a.span_end, u.speaker, people)
    if named:
        return _as_mention(named, people, u.speaker)
    # A third person named in the turns just before is who "we" takes in ("- I had lunch with
    # Priya Nair. - We worked together at Globex."): that one person, or nobody when several are.
    ref = resolve_pronoun(
        "we",
        speaker=u.speaker,
        before=[],
        people=people,
        recent=[
            m
            for t in _turns_before(transcript, u.idx)
            for m in mentions_in(t, 0, len(t))
            if m.kind != "person" or not any(same_person(m.name, p) for p in people)
        ],
    )
    if ref.candidates and not any(same_person(c, p) for c in ref.candidates for p in people):
        return Mention(name=ref.refers_to, kind="person") if ref.refers_to else None
    others = [p for p in people if not same_person(p, u.speaker)]
    return Mention(name=others[0], kind="person") if len(others) == 1 else None


def _turns_before(transcript: Transcript, idx: int, n: int = 2) -> list[str]:
    """The text of the `n` utterances before utterance `idx`."""
    pos = next((i for i, u in enumerate(transcript.utterances) if u.idx == idx), 0)
    return [u.text or "" for u in transcript.utterances[max(0, pos - n) : pos]]


def _vocative(text: str, start: int, end: int, speaker: str, people: Sequence[str] = ()) -> str | None:
    """A name the speaker addresses around the promise: at the head of a sentence up to it
    ("Fatima, I'll ..."), or closing its own sentence or the one before ("Understood,
    Ramesh. I will send you ..."). A capitalised word at the head of a sentence is as often
    a reply ("Understood, ...", "Noted, ...") as a name, so a candidate that is one of the
    meeting's people wins over any other; among the rest, the one nearest the promise."""
    stop = _SENTENCE_END.search(text, end)
    sent_end = stop.start() if stop else len(text)
    window = max(0, start - 200)  # the promise's sentence and the one before
    opens = [(m.start("v"), m.group("v"), False) for m in _VOCATIVE_OPEN.finditer(text, window, end)]
    closes = [(m.start("v"), m.group("v"), True) for m in _VOCATIVE_CLOSE.finditer(text, window, sent_end + 1)]
    names: list[tuple[int, str]] = []
    known: list[tuple[int, str]] = []
    for pos, raw, closing in opens + closes:
        name = person_name(raw)
        if name is None or name.split()[0].lower() in FR_STOP or looks_like_org(name) or same_person(name, speaker):
            continue
        if any(same_person(name, p) for p in people if not same_person(p, speaker)):
            known.append((pos, name))
        elif not closing or pos >= start:
            # a name closing the sentence before may be an apposition ("I met their CEO, Marc."):
            # from there only one of the meeting's people is taken
            names.append((pos, name))
    chosen = max(known or names, default=None)
    return chosen[1] if chosen else None


def _as_mention(name: str, people: list[str], speaker: str) -> Mention:
    """The meeting's own label for a vocative ('Fatima' -> the speaker 'Fatima Zahra')."""
    for p in people:
        if same_person(name, p) and not same_person(p, speaker):
            return Mention(name=p, kind="person")
    return Mention(name=name, kind="person")


def _next_meeting_date(transcript: Transcript) -> date | None:
    """The day of the next meeting as the transcript names it, the last mention winning."""
    anchor = transcript.meeting_date
    if anchor is None:
        return None
    found: date | None = None
    for u in transcript.utterances:
        for s0, s1 in sentences(u.text):
            sent = u.text[s0:s1]
            if not _NEXT_MEETING_SAID.search(sent):
                continue
            for _a, _b, phrase in find_date_phrases(sent) + find_date_phrases_fr(sent):
                r = resolve_phrase(phrase, anchor)
                day = r.start or r.end
                if day is not None and day > anchor.date():
                    found = day
                    break
    return found

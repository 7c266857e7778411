"""Facts a found fact carries with it: a tie at an organisation says where both people worked.

"We worked together at Savills", "Thiago was on my team at Ambev, 2012 to 2018", "he'd worked
under Eluned Parry at Cardiff Council": each is a worked_with whose `qualifier` is the
organisation where, and each says that both people were employed there. The employment is
added for each of the two (the same quote, stance and trust reasons, an ended tie's employment
as asserted: the falling out ended the tie, not the job), when the words give its time:

- a past stint ("worked", "was", "were", "did a stint", "had", "spent", "used to") is `left`,
  or `works_at` with `valid_from`/`valid_to` when the tie carries its years;
- a present one ("work together", "is my manager", "ended up at", "still", "now") is `works_at`;
- no verb that says which ("my manager at Deliveroo, Tom Fielding") adds nothing;
- a past tie of one under the other ("she was my first manager at DHL") says the tie is over,
  not that either left: neither gets anything, unless another turn places them there now.

A person a claim of the same utterance, or a past one, already places at that organisation
gets nothing new; one whom another turn places there now keeps that (works_at, never a `left`
beside it). A tie whose sentence names a second organisation gets nothing either: which
of the two is the "where" is the tie's own guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import date

from backchannel.extraction.mentions.names import same_person
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.memory.text import norm_name

_PAST = re.compile(
    r"\b(?:was|were|worked|did|had|spent|used\s+to|left|back\s+(?:at|in|when)|years\s+ago|at\s+the\s+time"
    r"|['’]d\s+(?:worked|been))\b",
    re.I,
)
_PRESENT = re.compile(
    r"\b(?:work|works|working|is|are|am|['’]s|['’]re|['’]m|ended\s+up|joined|moved\s+to|still|now|currently"
    r"|these\s+days|nowadays)\b",
    re.I,
)
# The turn goes on to take the tie back: what it carries goes with it.
_CORRECTED = re.compile(
    r"\b(?:in\s+fact\s+(?:that|it)\s+was|I\s+misspoke|correct\s+(?:my|that)\s+(?:earlier\s+)?(?:answer|statement)"
    r"|scratch\s+that|that\s+was\s+wrong|I\s+got\s+(?:that|it)\s+wrong)\b",
    re.I,
)
# Words that put both people there together, not one under the other ("we worked together", "alongside").
_MUTUAL = re.compile(
    r"\b(?:we|us|together|both|and\s+I|I\s+and|me\s+and|alongside|(?:worked|work|working)\s+with"
    r"|same\s+(?:team|squad|pod|desk|office|floor|department|unit|cubicle|project))\b",
    re.I,
)
_CLAUSE_START = re.compile(r"(?:[,;:—–]|\band\b|\bbut\b|\bthen\b)\s*", re.I)
_CARRIED_REASONS = frozenset({"second_hand", "hedged", "rumour", "owner_absent", "unknown_speaker", "voicemail"})


def _tense(text: str, start: int, org_at: int) -> str | None:
    """'past', 'present' or None: the verbs of the clause that leads to the organisation, else of the
    whole quote ("Rosie and I were at school together, and then both ended up at the BBC": ended up)."""
    clause_start = max((m.end() for m in _CLAUSE_START.finditer(text, start, org_at)), default=start)
    for lo in (clause_start, start):
        clause = text[lo:org_at]
        past, present = _PAST.search(clause), _PRESENT.search(clause)
        if past and present:
            return "present" if present.start() > past.start() else "past"
        if past or present:
            return "past" if past else "present"
    return None


def _same_org(a: str, b: str) -> bool:
    """'ICICI' and 'ICICI Bank': one name's words run inside the other's."""
    x, y = f" {norm_name(a)} ", f" {norm_name(b)} "
    return x in y or y in x


def _placed(
    claims: Iterable[ExtractedAssertion], who: Mention, org: str, speaker: str | None, utterance: int
) -> str | None:
    """'here' when a claim of the same utterance puts `who` at `org`, 'now' when another one puts them there
    at present, 'before' when one puts them there in the past, else None."""
    found = None
    for a in claims:
        if a.predicate not in ("works_at", "left") or a.object is None or not _same_org(a.object.name, org):
            continue
        subject_is = (a.subject.is_speaker and who.is_speaker) or same_person(a.subject.name, who.name)
        if not subject_is and speaker and a.subject.is_speaker and same_person(speaker, who.name):
            subject_is = True
        if not subject_is:
            continue
        if a.utterance_idx == utterance:
            return "here"
        if a.predicate == "works_at" and a.valid_to is None:
            found = "now"
        elif found is None:
            found = "before"
    return found


def employment_of_ties(
    claims: Sequence[ExtractedAssertion],
    texts: dict[int, str],
    speakers: dict[int, str | None],
    organisations: set[str],
    anchor: date | None = None,
) -> list[ExtractedAssertion]:
    """The employments the worked_with claims among `claims` carry (module docstring); `texts` and
    `speakers` by utterance index, `organisations` the normalised names the transcript uses."""
    out: list[ExtractedAssertion] = []
    for tie in claims:
        if tie.predicate != "worked_with" or not tie.qualifier or tie.object is None or tie.quote_in_label:
            continue
        if tie.object.kind != "person" or not (tie.subject.is_speaker or tie.subject.kind == "person"):
            continue  # "we" not yet resolved to anyone (addressee.py may drop the tie)
        text = texts.get(tie.utterance_idx, "")
        if _CORRECTED.search(text):
            continue  # "I said I had worked with Mr Barnes at Ofgem. In fact that was his deputy."
        quote = text[tie.span_start : tie.span_end]
        org = tie.qualifier
        org_at = quote.find(org)
        if org_at < 0:
            continue
        q = norm_name(org)
        named = {o for o in organisations if re.search(rf"\b{re.escape(o)}\b", norm_name(quote))}
        if any(o not in q and q not in o for o in named):
            continue
        tense = _tense(quote, 0, org_at)
        if tense is None:
            continue
        reasons = tuple(r for r in tie.trust_reasons if r in _CARRIED_REASONS)
        stance = "asserted" if tie.stance == "ended" else tie.stance
        speaker = speakers.get(tie.utterance_idx)
        mutual = _MUTUAL.search(quote) is not None
        for who in (tie.subject, tie.object):
            placed = _placed([*claims, *out], who, org, speaker, tie.utterance_idx)
            if placed in ("here", "before"):
                continue
            if tense == "past" and not mutual and placed != "now":
                continue  # "she was my first manager at DHL": the tie is over, neither stint need be
            # the years said of the stint, over before the meeting ("for two years" runs up to the day it is
            # said; an ended tie's valid_to is the day it was said to have ended)
            dated = (
                tense == "past"
                and tie.valid_from is not None
                and tie.valid_to is not None
                and (anchor is None or tie.valid_to < anchor)
                and tie.stance != "ended"
            )
            predicate = "left" if tense == "past" and not dated and placed != "now" else "works_at"
            out.append(
                replace(
                    tie,
                    subject=who,
                    predicate=predicate,
                    object=Mention(name=org, kind="organisation"),
                    qualifier=None,
                    valid_from=tie.valid_from if predicate == "works_at" else None,
                    valid_to=tie.valid_to if dated else None,
                    modality="stated" if who.is_speaker and tie.modality != "reported" else "reported",
                    confidence=tie.confidence,  # the tie at X says as surely that both were at X
                    trust_reasons=reasons,
                    stance=stance,
                    recipient=None,
                )
            )
    return out

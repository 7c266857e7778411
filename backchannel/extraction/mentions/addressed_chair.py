"""Who chairs a meeting, read from how the others open their turns: "Thank you, Chair." said to the
one who just gave them the floor.

A committee's members open their questions by thanking the chair ("Thank you, Chair. What more
can be done ..."); the turn before is the chair calling them. One such turn is thin evidence (a
member may thank the chair after a witness's answer), so the meeting votes: every turn that
opens with thanks to the chair votes for the speaker of the turn before, and the title is given
only to a speaker whom most votes (and at least two, or every vote) name. A speaker label that
already says the post ("The Chair (Hon. Anthony Rota)") needs no second fact.

Only the chair: it is the one title a meeting's vocative gives to a single person ("Thank you,
Minister" may thank any of several ministers present, and names their post only in part).
"""

from __future__ import annotations

import re
from collections import Counter

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.labels import parse_label
from backchannel.extraction.result import ExtractedAssertion, Mention

# The turn opens with thanks to the chair: "Thank you, Chair.", "Thanks very much, Mr. Chair.",
# "Thank you, Madam Chair, and good morning".
_CHAIR_WORDS = r"(?:chair|chairman|chairwoman|chairperson|convener)\b"
_THANKS_CHAIR = re.compile(
    rf"\s*(?:yes[.,]\s*)?(?:thank\s+you|thanks)(?:\s+(?:very|so)\s+much)?\s*,?\s*"
    rf"(?:(?:mr|madam|madame|mister)\.?\s*)?(?P<title>{_CHAIR_WORDS})\s*[.,!]",
    re.I,
)
_ALREADY = re.compile(rf"\b{_CHAIR_WORDS}", re.I)


def addressed_chair(transcript: Transcript) -> list[ExtractedAssertion]:
    """A has_title "Chair" for the speaker the meeting's members thank as chair (one fact a meeting)."""
    votes: Counter[str] = Counter()
    first: dict[str, tuple[int, int]] = {}  # addressee -> (utterance, end of the thanks) of the first vote
    utts = transcript.utterances
    for i, u in enumerate(utts):
        m = _THANKS_CHAIR.match(u.text or "")
        if m is None or i == 0 or not u.speaker:
            continue
        before = utts[i - 1].speaker
        if not before or before == u.speaker:
            continue
        votes[before] += 1
        first.setdefault(before, (u.idx, m.end()))
    if not votes:
        return []
    (chair, n), total = votes.most_common(1)[0], sum(votes.values())
    if n * 3 < total * 2 or (n < 2 and total > 1) or _ALREADY.search(chair):
        return []
    idx, end = first[chair]
    text = next(u.text for u in utts if u.idx == idx)
    quote = text[:end].strip().rstrip(",")
    return [
        ExtractedAssertion(
            # said by another speaker: the subject is the chair by name ("Lynne Neagle AM" -> "Lynne Neagle")
            subject=Mention(name=parse_label(chair)[0] or chair, kind="person"),
            predicate="has_title",
            utterance_idx=idx,
            span_start=0,
            span_end=len(quote),
            quote=quote,
            object_literal="Chair",
            modality="reported",  # the members say it of the chair
            confidence=0.7 if n > 1 else 0.6,
        )
    ]

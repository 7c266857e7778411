"""What the stance head's reading of a sentence after a tie does to it (tie_context.py reads the
sentences; this weighs the reading): end it, narrow a knows to knowing *of* someone, drop it, or
nothing. Each rule and its reason is with the function that applies it."""

from __future__ import annotations

import re

from backchannel.extraction.dates.en import find_date_phrases
from backchannel.extraction.meaning.classifier import Reading
from backchannel.extraction.meaning.tie_stance import TIES
from backchannel.extraction.mentions.sentence import FIRST_PERSON
from backchannel.extraction.result import ExtractedAssertion

TAKEN_BACK_MIN = 0.9
NO_TIE = ("negated", "knows_of", "joke")
SURE_RELATION_MIN = 0.9
NARROWED_MIN = 0.8
_SPAN = r"(?:years|months|decades|ages|forever|(?:a|quite\s+a)\s+(?:long\s+)?(?:while|time))"
_BOUND = re.compile(
    rf"\b(?:since|any\s?more|lately|recently|(?:in|for)\s+(?:(?:many|a\s+few|a\s+couple\s+of|several|\w+)\s+)?{_SPAN})\b",
    re.I,
)
# The tie's work said as a thing done, a gerund or an infinitive under another verb ("never liked
# working for him", "didn't enjoy having to work with her"): a denial of that verb, not of the work.
_WORK_DONE = re.compile(r"\b(?:working|to\s+work)\s+(?:with|for|alongside|under)\b", re.I)
# A denial whose subject is the other person alone, not the pair: an act of theirs denied ("he never
# answered my last message", "she probably doesn't remember me"), not the tie ("we never worked
# together", "I don't know her", "he and I never met").
_THEIR_DENIAL = re.compile(
    r"^\W*(?:(?i:and|but|so|well|though|honestly|oh|um|uh)\W+)*"
    r"(?:[Hh]e|[Ss]he|(?!(?:We|You|They|It|There|That|This|Then|Not|No|Never)\b)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
    r"(?!\s+and\s+(?:I|me)\b)(?:['’](?:s|d|ll))?"
    r"(?:\s+\w+){0,2}?\s+(?:never|not|no\s+longer|hardly|barely|\w+n['’]t)\b"
)


def verdict(r: Reading, a: ExtractedAssertion, text: str, again: list[int]) -> str | None:
    """What a context sentence's reading does to the tie `a`: "ended", "knows_of", "drop" or nothing.
    The readings that say there is no live tie are taken together ("I've only heard her talks, we've
    never met" reads knows_of 0.63 and negated 0.36: no tie either way). Narrowing a knows to
    knowing of keeps the fact and only takes it off the paths, so it needs less of them
    (NARROWED_MIN), but the head sure that the sentence is of the tie (the tie relations at
    SURE_RELATION_MIN together): "I've read his book too" reads knows_of 0.94, of a tie only 0.71,
    as it adds to the tie, where "I've only read her papers, we've never met" is of it at 0.99."""
    probs, rel = r.stance_probs, r.relation_probs or {}
    no_tie = sum(probs.get(c, 0.0) for c in NO_TIE)
    if r.stance == "ended" and r.stance_p >= TAKEN_BACK_MIN:
        return "ended"
    if r.stance not in NO_TIE:
        return None
    if r.stance == "knows_of" and not FIRST_PERSON.search(text):
        # knowing *of* someone is the speaker's ("I only know her from her newsletter"); "you'll have
        # come across her name" is the listener's, and says nothing of the tie
        return None
    if r.stance == "knows_of" and a.predicate == "knows":
        sure = sum(rel.get(t, 0.0) for t in TIES) >= SURE_RELATION_MIN
        return "knows_of" if sure and no_tie >= NARROWED_MIN else None
    if no_tie < TAKEN_BACK_MIN or (r.stance == "negated" and not _denies(r, a, text, again)):
        return None
    if r.stance == "negated" and a.predicate == "worked_with" and _WORK_DONE.search(text):
        return "ended"  # "I never liked working for him": the work was done, the tie went sour
    return "drop"


def _denies(r: Reading, a: ExtractedAssertion, text: str, again: list[int]) -> bool:
    """Whether a `negated` reading of a sentence denies the tie `a`, not something else said of it.
    Not where the sentence says the tie again as a claim of its own (rules/claims.py's grammar knows
    the scope of its negation: "we never worked on the same account, though" keeps the worked_with),
    nor where the denial is bounded in time (`_bounded`), nor where its subject is the other person alone
    (`_THEIR_DENIAL`: an act of theirs, "he never answered my email"), nor where the head is unsure the sentence
    is of the tie's relation ("he never answered my email" reads knows 0.77: an act, not the tie),
    nor where it denies a worked_with of a knows ("I know her; I haven't worked with her
    directly"): knowing is what working together entails, not the other way round."""
    probs = r.relation_probs or {}
    relation = max(TIES, key=lambda t: probs.get(t, 0.0))
    if again or _bounded(text) or probs.get(relation, 0.0) < SURE_RELATION_MIN or _THEIR_DENIAL.match(text):
        return False
    return not (a.predicate == "knows" and relation == "worked_with")


def _bounded(text: str) -> bool:
    """Whether a denial is bounded in time: a date (the exact date rules), or a span that runs up to
    now ("not since the wedding", "in years", "for a long while", "any more", "lately"), says what has
    not happened of late, after the tie, not that the tie never was."""
    return bool(find_date_phrases(text)) or _BOUND.search(text) is not None

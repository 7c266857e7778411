"""A sentence about a tie with its pronouns written as the tie's people, for the stance head.

The head learned its stances over sentences that name their people as the bank's person slot
(slots.py): "{P} and I haven't spoken since" reads `ended`, sure of it, where "we haven't spoken
since" reads almost even between ended and asserted (0.56 / 0.44), and "I follow {P}'s blog,
{P} and I have never spoken" reads `knows_of` at 0.98 where "I follow her blog, we've never
spoken" reads 0.54. A coda says its tie's people by pronoun far more often than by name, so the
pronouns that stand for them are written as the slot before the head reads it:

- he, she, him: the slot; his: the slot's possessive; her: the possessive before a word that can
  follow only a possessive (not a preposition, conjunction or adverb: "her blog" / "her on
  LinkedIn", "her since", "her directly"), else the slot;
- we, us (only where the speaker is one end of the tie): "{P} and I", "{P} and me", with the
  contraction's verb spelt out ("we've" -> "{P} and I have").

"they" is left alone: it is as often the company as the person.
"""

from __future__ import annotations

import re

# Words that follow an object "her" (never a noun she owns): "met her at", "her since", "her again".
_AFTER_OBJECT = frozenset(
    "a an the and or but nor so to at in on onto for with without from by about since until till"
    " after before during again anymore once twice too either neither ever never often now then"
    " there here that this these those yet though although because if when while as up out off"
    " back over much well very really properly personally myself herself himself ourselves i you"
    " he she we they it me him us them".split()
)
_CONTRACTED = {"'ve": " have", "'re": " are", "'d": "'d", "'ll": "'ll", "'s": "'s"}
_PRONOUN = re.compile(r"\b(he|she|him|his|her|we|us)((?:['’](?:ve|re|d|ll|s))?)\b(\s+([A-Za-z]+))?", re.I)


def resolve_pronouns(text: str, slot: str, we: bool) -> str:
    """`text` with the pronouns of the tie's other end written as `slot`, and, where `we`, the first
    person plural as `slot` and the speaker."""

    def sub(m: re.Match[str]) -> str:
        word, tail, after, nxt = m.group(1).lower(), m.group(2).replace("’", "'").lower(), m.group(3) or "", m.group(4)
        if word in ("we", "us") and not we:
            return m.group(0)
        if word == "his" or (word == "her" and nxt and nxt.lower() not in _AFTER_OBJECT and not nxt.endswith("ly")):
            name = slot + "'s"
        elif word == "we":
            name = f"{slot} and I" + _CONTRACTED.get(tail, tail)
            tail = ""
        elif word == "us":
            name = f"{slot} and me"
        else:
            name = slot
        return name + tail + after

    return _PRONOUN.sub(sub, text)

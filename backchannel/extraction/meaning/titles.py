"""The title a candidate sentence says, from the title lexicon (mentions.names.parse_title)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.names import TITLE_HEADS, parse_title

# Verbs a news item puts before a title ("names", "confirms", "appoints"): they open no title.
_NEWS_VERBS = frozenset(
    "confirms confirmed announces announced names named appoints appointed promotes promoted hires hired says said "
    "taps tapped welcomes welcomed loses lost".split()
)
_VOCATIVE_BEFORE = re.compile(r"\b(?:Mr|Mrs|Ms|Madam|Mister|Madame)\.?\s*$")


def find_title(text: str, w0: int, w1: int, slots: Sequence[mentions.Slot]) -> str | None:
    """The longest title (offline_names.parse_title) said in text[w0:w1] outside the mentions."""
    words = [(m.start(), m.end()) for m in re.finditer(r"[\w'’&.-]+", text[w0:w1])]
    best: tuple[int, str] | None = None
    for i, (a, b) in enumerate(words):
        if text[w0 + a : w0 + b].lower().strip(".,") not in TITLE_HEADS:
            continue
        for lo in range(max(0, i - 3), i + 1):
            for hi in range(i + 1, min(len(words), i + 5) + 1):
                x0, x1 = w0 + words[lo][0], w0 + words[hi - 1][1]
                if any(s.start < x1 and x0 < s.end for s in slots) or _VOCATIVE_BEFORE.search(text, w0, x0):
                    continue  # "Mr. Chair, I'm happy to ...": the chair addressed, not a title claimed
                got = parse_title(text[x0:x1])
                if got and not got[2] and _clean_title(got[0]) and (best is None or x1 - x0 > best[0]):
                    best = (x1 - x0, got[1])
    return best[1] if best else None


def _clean_title(surface: str) -> bool:
    """A title phrase, not a clause: no comma, no connector first, and before its "of"/"for"
    only title words may be capitalised ("Minister of Health", never "Ruth Adeyemi, procurement lead")."""
    words = surface.split()
    if "," in surface or not words or words[0].lower() in ("and", "or", "of", "for", "the", "to", "at"):
        return False
    if words[-1].lower() in ("and", "or", "of", "for", "the", "to", "at"):
        return False  # "CIO of" before the organisation's slot: the complement is the slot, not the title
    if words[0].lower() in _NEWS_VERBS:
        return False  # "Bayfield Energy confirms chief executive Owen Marsh ...": the verb is no part of it
    lows = [w.lower().strip(".") for w in words]
    if lows[-1] not in TITLE_HEADS and "of" not in lows and "for" not in lows:
        return False  # "designer speak first": a title ends with its head word or its complement
    for w in words:
        if w.lower() in ("of", "for"):
            break
        if (
            w[:1].isupper()
            and w.lower().strip(".") not in TITLE_HEADS
            and not w.isupper()
            and w.lower()
            not in (
                "deputy",
                "vice",
                "senior",
                "junior",
                "general",
                "assistant",
                "principal",
                "managing",
                "executive",
                "chief",
                "lead",
                "head",
                "first",
                "prime",
                "cabinet",
                "permanent",
                "interim",
                "acting",
            )
        ):
            return False
    return True


# "I'm (now|only|...) (a|the) TITLE": the speaker names their own title, and the title follows at once.
_I_AM_TITLE = re.compile(
    r"\bI(?:['’]m|\s+am|\s+(?:got|was|have\s+been|['’]ve\s+been)\s+(?:elevated|promoted|made|appointed|named)"
    r"(?:\s+(?:to|as))?)\s+(?:(?:now|only|just|technically|officially|currently|basically|actually|still|also"
    r"|really|kind\s+of|sort\s+of|well|a|an|the|our|their)[\s,]+)*",
    re.I,
)
# where the title ends at the latest: the clause, or a date or place said after it ("head of growth in June")
_CLAUSE_END = re.compile(
    r"[,;.!?—–]|\s-\s|\b(?:and|but|which|who|so|because|till|until|just|in|since|from|last|this|next|at)\b", re.I
)


def self_title(fluent_text: str) -> str | None:
    """The title a speaker gives themself in so many words ("technically I'm the interim head of
    finance", "I'm only the acting product owner"), the words right after "I'm" making a title of the
    lexicon up to the clause's end; else None ("I'm a huge fan of our CFO" gives none)."""
    for m in _I_AM_TITLE.finditer(fluent_text):
        end = _CLAUSE_END.search(fluent_text, m.end())
        phrase = fluent_text[m.end() : end.start() if end else len(fluent_text)].strip()
        words = phrase.split()[:6]
        for k in range(len(words), 0, -1):  # the longest title the words open with ("... consultant last month")
            got = parse_title(" ".join(words[:k]))
            if got and not got[2] and _clean_title(got[0]) and got[0].split()[0].lower() == words[0].lower():
                return got[1]
    return None

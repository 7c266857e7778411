"""What makes a capitalised run an organisation or a person, for the meaning stage's slots.

A slot is what the trained head reads a relation between: a wrong one becomes a fact when the
head is sure of the sentence ("Welcome to the Children, Young People and Education Committee"
read as someone working at "Education Committee"). So a run is an organisation only with
evidence that it is one, and a person only with a name's shape:

- an organisation: known (memory, a rule's claim), a name with a head word ("Council", "Bank",
  "University") that is the whole name, an acronym the meeting expands ("the Crown Prosecution
  Service ... the CPS") or uses as a place of work ("joined the CPS"), or a one-word name after
  a verb of work ("at", "joined", "left", "works for"). Never a head word alone ("the Council",
  "the Board": a generic reference), an acronym nothing vouches for ("PPE", "FFT", "CERB"), or
  a piece of a longer name;
- a piece of a longer name: a run joined to capitalised words by "and", "&" or a comma where the
  whole ends on a head word ("Cardiff and Vale College", "Research and Development Centre",
  "Children, Young People and Education Committee"), cut at a possessive ("National Police
  Chiefs' Council") or an apostrophe inside a word ("Wet'suwet'en"), or cut before "and"/"of"
  while its last word is no head ("Wales Institute of Social [and Economic Research]");
- a person of two words or more: not a phrase of common words capitalised, i.e. not every word
  of it written in lower case elsewhere in the meeting ("young people", "social care"), unless
  its first word is a first name of the gender lexicon or the person is known.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from backchannel.extraction.mentions.names import ORG_HEADS, STOP, looks_like_org

_ORG_HEADS_FORMS = ORG_HEADS | {h + "s" for h in ORG_HEADS}
_CAP_WORD = r"(?<![\w'’-])[A-Z][\w'’-]*"
_RUN = rf"{_CAP_WORD}(?:\s+{_CAP_WORD})*"
# Capitalised words just before this run, joined by "and" or "&" ("Cardiff and ").
_JOINED_LEFT = re.compile(rf"(?P<run>{_RUN})\s+(?:and|&)\s+$")
# After this run: more capitalised words, a list of them ("X, Y and Z") joined by "and"/"&", that
# end on a head word (", Young People and Education Committee", " and Development Centre").
_JOINED_RIGHT = re.compile(rf"^(?:\s*,\s*{_RUN})*\s+(?:and|&)\s+(?:the\s+)?(?P<tail>{_RUN})(?![\w'’-])")
_JOINED_BY_TO = re.compile(rf"(?P<word>{_CAP_WORD})\s+to\s+$")
_POSSESSIVE_AFTER = re.compile(r"^['’]\s+[A-Z]")  # "National Police Chiefs' Council"
_POSSESSIVE_BEFORE = re.compile(r"[A-Za-z]s['’]\s+$")  # "... Chiefs' Council"
_APOSTROPHE_INSIDE = re.compile(r"^['’](?![sd]\b|ll\b|re\b|ve\b)[a-z]")  # "Wet'suwet'en" cut at its second apostrophe
_CUT_BEFORE_JOIN = re.compile(r"^\s+(?:and|&|of|for)\s+[A-Z]")
_ACRONYM = re.compile(r"^[A-Z][A-Z&]{1,6}$")
_WORD = re.compile(r"[A-Za-z][a-z'’-]+")


def is_head(word: str) -> bool:
    return word.lower().strip(".,") in _ORG_HEADS_FORMS


def lone_head_word(name: str) -> bool:
    """'Council', 'the Board', 'Parliament': a head word alone names no one organisation."""
    words = [w for w in name.split() if w.lower() != "the"]
    return len(words) == 1 and is_head(words[0])


def is_acronym(name: str) -> bool:
    return _ACRONYM.match(name) is not None


def piece_of_longer_name(text: str, start: int, end: int, lowercase: frozenset[str] = frozenset()) -> bool:
    """Whether text[start:end] is a piece of a longer capitalised name (see the module docstring).
    `lowercase` (lowercase_words): a common word capitalised just before "to" opens the name
    ("the Time to Change Wales project"), where a name does not ("introduced Sophie to Acme Bank")."""
    name = text[start:end]
    words = name.split()
    if not words:
        return False
    to = _JOINED_BY_TO.search(text, max(0, start - 30), start)
    if to and to.group("word").lower() in lowercase and to.group("word").lower() not in STOP:
        return True
    after = text[end : end + 120]
    if _POSSESSIVE_AFTER.match(after) or _APOSTROPHE_INSIDE.match(after):
        return True
    if _POSSESSIVE_BEFORE.search(text, max(0, start - 30), start) and re.search(
        rf"{_CAP_WORD}\s*$", text[max(0, start - 30) : start - 2]
    ):
        return True
    if _CUT_BEFORE_JOIN.match(after) and not is_head(words[-1]) and any(is_head(w) for w in words):
        return True  # an organisation's name cut before the rest of it
    left = _JOINED_LEFT.search(text, max(0, start - 60), start)
    if left and any(is_head(w) for w in words):
        # "Cardiff and Vale College": one name, unless what stands before is an organisation of its own
        # ("Halden Robotics and Orla Insurance", "Public Health Wales and Swansea University")
        run = [w for w in left.group("run").split() if w.lower() not in STOP]
        if run and not looks_like_org(" ".join(run)):
            return True
    right = _JOINED_RIGHT.match(after)
    if right and is_head(right.group("tail").split()[-1]) and not any(is_head(w) for w in words):
        return True  # "Young People" of "Young People and Education Committee"
    return False


def lowercase_words(texts: Iterable[str]) -> frozenset[str]:
    """Every word the meeting writes in lower case somewhere (not at a sentence's start)."""
    # organisations_of, first_names, the meaning stage's candidates and its typer each ask, of one meeting
    return _lowercase_words(tuple(texts))


@functools.lru_cache(maxsize=4)
def _lowercase_words(texts: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for text in texts:
        out.update(w for w in _WORD.findall(text) if w[0].islower())
    return frozenset(out)


def common_phrase(name: str, lowercase: frozenset[str]) -> bool:
    """A run of two words or more whose every word the meeting also writes in lower case: a phrase
    of common words capitalised ("Young People", "Social Care"), not someone's name."""
    words = [w for w in name.split() if w[:1].isupper()]
    return len(words) >= 2 and all(w.lower() in lowercase for w in words)

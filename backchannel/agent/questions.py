"""Offline reading of a question: a prepared skill's parameters from its words
(no model), and the "nothing found" reasons a skill's program printed."""

from __future__ import annotations

import re
from typing import Any

_INTRO_TARGET = re.compile(
    r"(?:introduc\w*\s+(?:me\s+)?to|intro\s+to|reach|get\s+to|connect\s+(?:me\s+)?(?:with|to)|in\s+touch\s+with"
    r"|path\s+to|who\s+knows)\s+(?:the\s+|an?\s+)?(.+?)\s*[?.!]*$",
    re.I,
)
# "someone at Hooli" aims at Hooli's people: the organisation is the target.
_ANYONE_AT = re.compile(
    r"^(?:some(?:one|body)|any(?:one|body)|people|a\s+person|the\s+people|folks)"
    r"\s+(?:who\s+works\s+)?(?:at|from|in|of|working\s+(?:at|for))\s+(?:the\s+)?",
    re.I,
)
# What a brief is about: "brief me on X", "tell me about X", "who is X", "who works at X"...
_ABOUT = re.compile(
    r"(?:brief\s+(?:me\s+)?(?:on|about)|tell\s+me\s+about|know\s+about|background\s+(?:on|about)"
    r"|who\s+is\s+working\s+(?:at|for)|who\s+works?\s+(?:at|for)|who\s+is|who's|who\s+are"
    r"|(?:people|staff|employees)\s+(?:at|of)|(?:meeting|meet|call|lunch|coffee)\s+with)"
    r"\s+(?:the\s+)?(.+?)\s*[?.!]*$",
    re.I,
)
_NAMES = re.compile(r"\b([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)")
_WEEKS = re.compile(r"(\d+)\s*weeks?", re.I)
_MONTHS = re.compile(r"(\d+)\s*months?", re.I)
_NOT_NAMES = {
    "Who",
    "What",
    "Which",
    "When",
    "Brief",
    "Before",
    "Prepare",
    "Tell",
    "I",
    "My",
    "Me",
    "The",
    "Can",
    "Do",
    "Does",
    "Is",
    "Are",
    "Meeting",
    "Give",
    "Show",
    "Any",
    "Did",
    "Has",
    "Have",
    "List",
    "Remind",
}
_SELF = re.compile(r"\b(?:I|I've|I'd|my|mine|myself)\b")
_PAST = re.compile(r"\b(?:did|promised|committed|said)\b", re.I)
_OPEN_ONLY = re.compile(r"\b(?:open|still|pending|outstanding|overdue|due|left)\b", re.I)
# Whose commitments a question asks for, named as a person, a seat label or a title:
# "what did the project manager promise?", "what does Priya Shah owe me?", "the chair's promises".
_WHOSE = (
    re.compile(
        r"^(?:and\s+)?what\s+(?:did|has|have|does|do|will|had)\s+(?:the\s+|our\s+|their\s+)?(?P<who>.+?)\s+"
        r"(?:promise|promised|commit(?!tee)\w*|owe|owes|offer|offered|agree|agreed|undert[ao]ok|pledge\w*"
        r"|(?:say|said)\s+(?:he|she|they|it|I|we)\s*(?:would|will|'d|'ll))\b",
        re.I,
    ),
    re.compile(
        r"^(?:what\s+(?:are|were)\s+|list\s+|show\s+(?:me\s+)?)?(?:the\s+)?(?P<who>.+?)(?:'s|’s|s'|s’)\s+"
        r"(?:open\s+|pending\s+)?(?:commitments|promises|action\s+items|follow-?ups)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:commitments|promises|action\s+items)\s+(?:of|by|from|made\s+by)\s+(?:the\s+)?(?P<who>.+?)"
        r"\s*[?.!]*$",
        re.I,
    ),
)
_NOBODY_IN_PARTICULAR = {
    "people",
    "anyone",
    "anybody",
    "everyone",
    "everybody",
    "someone",
    "somebody",
    "they",
    "others",
    "the others",
    "all",
    "we",
    "us",
    "he",
    "she",
    "it",
}
_ME_WORDS = {"i", "me", "myself", "you"}
NOTHING_PREFIX = "nothing found: "


def _names(text: str) -> list[str]:
    return [n for n in _NAMES.findall(text) if n.split()[0] not in _NOT_NAMES]


def _whose(question: str) -> str | None:
    """The person, seat or title whose commitments the question names, or None."""
    for pattern in _WHOSE:
        m = pattern.search(question)
        if m:
            who = re.sub(r"^(?:the|our|their|mr\.?|mrs\.?|ms\.?|dr\.?)\s+", "", m.group("who").strip(), flags=re.I)
            if who and who.lower() not in _NOBODY_IN_PARTICULAR and len(who.split()) <= 8:
                return who
    return None


def question_args(skill: Any, question: str) -> dict[str, Any]:
    """Offline parameters for a skill from the question's words (no model)."""
    q = question.strip()
    if skill.name == "introductions":
        m = _INTRO_TARGET.search(q)
        if not m:
            return {}
        return {"target": _ANYONE_AT.sub("", m.group(1)).strip() or m.group(1)}
    if skill.name == "pre_meeting_brief":
        m = _ABOUT.search(q)
        if m and m.group(1).strip().lower() not in ("me", "i", "my meeting", "my next meeting"):
            # One entry, resolved whole first by the program: "Cardiff and Vale College" is one name,
            # "Marc and Sophie" two; only memory can tell, so the program splits what does not resolve.
            return {"attendees": [m.group(1).strip()]}
        names = _names(q)
        return {"attendees": names} if names else {}
    if skill.name == "open_commitments":
        args: dict[str, Any] = {}
        names = _names(q)
        whose = _whose(q)
        if whose and whose.lower() in _ME_WORDS:
            args["people"] = ["me"]
        elif whose:
            args["people"] = [whose]  # one entry, whole: "Minister of Finance", "project manager"
        elif names:
            args["people"] = names
        elif _SELF.search(q):
            args["people"] = ["me"]
        if _PAST.search(q) and not _OPEN_ONLY.search(q):
            # "what did Marc promise?" asks for every promise not followed up, however late.
            args.update(overdue_days=3650, max_age_days=3650)
        return args
    if skill.name == "stale_relationships":
        m = _WEEKS.search(q)
        if m:
            return {"weeks": int(m.group(1))}
        m = _MONTHS.search(q)
        return {"weeks": int(m.group(1)) * 4} if m else {}
    return {}


def nothing_found_reasons(output: str | None) -> list[str]:
    """The reasons a program printed for finding nothing ("nothing found: ..." lines)."""
    return [
        line[len(NOTHING_PREFIX) :].strip()
        for line in (output or "").splitlines()
        if line.startswith(NOTHING_PREFIX) and line[len(NOTHING_PREFIX) :].strip()
    ]


__all__ = ["NOTHING_PREFIX", "nothing_found_reasons", "question_args"]

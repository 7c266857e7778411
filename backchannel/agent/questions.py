"""Offline reading of a question: a prepared skill's parameters from its words
(no model), and the "nothing found" reasons a skill's program printed."""

from __future__ import annotations

import re
from typing import Any

_INTRO_TARGET = re.compile(
    r"(?:introduc\w*\s+(?:me\s+)?to|intro\s+to|reach|get\s+to|connect\s+(?:me\s+)?(?:with|to)|in\s+touch\s+with"
    r"|path\s+to|who\s+knows)\s+(?:the\s+|an?\s+)?(.+?)\s*[?.!]*$", re.I)
# "someone at Hooli" aims at Hooli's people: the organisation is the target.
_ANYONE_AT = re.compile(r"^(?:some(?:one|body)|any(?:one|body)|people|a\s+person|the\s+people|folks)"
                        r"\s+(?:who\s+works\s+)?(?:at|from|in|of|working\s+(?:at|for))\s+(?:the\s+)?", re.I)
# What a brief is about: "brief me on X", "tell me about X", "who is X", "who works at X"...
_ABOUT = re.compile(
    r"(?:brief\s+(?:me\s+)?(?:on|about)|tell\s+me\s+about|know\s+about|background\s+(?:on|about)"
    r"|who\s+is\s+working\s+(?:at|for)|who\s+works?\s+(?:at|for)|who\s+is|who's|who\s+are"
    r"|(?:people|staff|employees)\s+(?:at|of)|(?:meeting|meet|call|lunch|coffee)\s+with)"
    r"\s+(?:the\s+)?(.+?)\s*[?.!]*$", re.I)
_NAMES = re.compile(r"\b([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)")
_WEEKS = re.compile(r"(\d+)\s*weeks?", re.I)
_MONTHS = re.compile(r"(\d+)\s*months?", re.I)
_NOT_NAMES = {"Who", "What", "Which", "When", "Brief", "Before", "Prepare", "Tell", "I", "My", "Me", "The", "Can",
              "Do", "Does", "Is", "Are", "Meeting", "Give", "Show", "Any", "Did", "Has", "Have", "List", "Remind"}
_SELF = re.compile(r"\b(?:I|I've|I'd|my|mine|myself)\b")
_PAST = re.compile(r"\b(?:did|promised|committed|said)\b", re.I)
_OPEN_ONLY = re.compile(r"\b(?:open|still|pending|outstanding|overdue|due|left)\b", re.I)
NOTHING_PREFIX = "nothing found: "


def _names(text: str) -> list[str]:
    return [n for n in _NAMES.findall(text) if n.split()[0] not in _NOT_NAMES]


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
        if names:
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
    return [line[len(NOTHING_PREFIX):].strip() for line in (output or "").splitlines()
            if line.startswith(NOTHING_PREFIX) and line[len(NOTHING_PREFIX):].strip()]


__all__ = ["NOTHING_PREFIX", "nothing_found_reasons", "question_args"]

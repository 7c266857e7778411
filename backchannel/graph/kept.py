"""Was a promise kept? Read from what was said in later meetings, by whoever said it.

Shared by the judge (a commitment reminder is vetoed `kept`) and the graph API
(`api.kept`, so that `ask "what is still open?"` agrees with the proposals). In a later
meeting where the maker or the recipient spoke:

- the maker says it is done ("I sent you the pricing on Monday"): a done-verb anywhere in
  the turn and at least half of the promise's topic words;
- anyone else says, in one sentence, that it was delivered or received ("Got the rollout
  deck, thanks Alex", "Thank you for the audit figures", "merci pour le devis, bien reçu"):
  a received-verb, a thanks-for or a done-verb, at least half the topic words (one, said by
  the recipient), and neither a negation ("still haven't received") nor a question ("did the
  deck arrive?").
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backchannel.memory.store import Store

LATER_TURNS = 400  # a promise's later turns read, in meeting order, to find it kept
DONE = re.compile(
    r"\b(?:sent|shared|emailed|mailed|forwarded|attached|delivered|uploaded|done|finished|"
    r"envoy[ée]e?s?|transmis|partag[ée]e?s?)\b",
    re.I,
)
RECEIVED = re.compile(
    r"\b(?:got|received|receiving|arrived|came\s+through|came\s+in|have\s+it|had\s+it|"
    r"(?:thanks|thank\s+you|cheers|merci)\s+(?:\w+\s+){0,2}(?:for|pour)|"
    r"re[çc]u(?:e|s|es)?|bien\s+arriv[ée]e?s?)\b",
    re.I,
)
NOT_YET = re.compile(
    r"\b(?:not|never|yet\s+to|still\s+waiting|waiting\s+for|no\s+sign|pas|jamais|toujours\s+pas)\b"
    r"|n['’]t\b|\?\s*$",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
TOPIC_STOP = {
    "send",
    "will",
    "with",
    "your",
    "that",
    "this",
    "from",
    "about",
    "next",
    "week",
    "by",
    "the",
    "you",
    "envoie",
    "vous",
    "pour",
    "avec",
    "thanks",
    "thank",
    "have",
    "them",
    "they",
    "their",
    "tomorrow",
    "today",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "demain",
    "lundi",
    "mardi",
    "mercredi",
    "jeudi",
    "vendredi",
    "samedi",
    "dimanche",
    "also",
    "just",
    "over",
}

Turn = tuple[str, datetime, "int | None"]  # (text, meeting date, speaker id)
PromiseKey = tuple[int, datetime, int]  # (maker, said at, recipient or -1)


def topic(text: str) -> set[str]:
    """The words a promise is about (their first five letters): what a later turn must name."""
    return {w[:5] for w in re.findall(r"[^\W\d_]{4,}", (text or "").lower()) if w not in TOPIC_STOP}


def keeping_turn(turns: list[Turn], maker: int, promised: str, recipient: int = -1) -> Turn | None:
    """The first of `turns` (in meeting order) that says the promise `promised` was kept:
    (the sentence or turn, when, who said it); None when none does. The recipient thanking
    for it needs to name only one of its topic words ("got the pricing, thanks" for "the
    updated pricing for the enterprise tier"): they know what they were waiting for."""
    words = topic(promised)
    if not words:
        return None

    def on_topic(text: str, least: int) -> bool:
        shared = len(words & topic(text))
        return shared >= least or shared * 2 >= len(words)

    for text, when, speaker in turns:
        if speaker == maker:
            if DONE.search(text) and on_topic(text, len(words)):
                return text, when, speaker
            continue
        least = 1 if speaker is not None and speaker == recipient else len(words)
        for sentence in _SENTENCE.findall(text):
            if (
                (RECEIVED.search(sentence) or DONE.search(sentence))
                and not NOT_YET.search(sentence)
                and on_topic(sentence, least)
            ):
                return sentence.strip(), when, speaker
    return None


def later_turns(store: Store, keys: list[PromiseKey]) -> dict[PromiseKey, list[Turn]]:
    """For each promise key, every turn, whoever speaks, of the meetings after it was said
    where the maker or the recipient spoke: the first LATER_TURNS in meeting order. One query
    for all the keys."""
    out: dict[PromiseKey, list[Turn]] = {k: [] for k in keys}
    if not keys:
        return out
    rows = store.con.execute(
        f"""WITH p AS (SELECT unnest(?::BIGINT[]) AS k, unnest(?::BIGINT[]) AS maker,
                              unnest(?::TIMESTAMP[]) AS said, unnest(?::BIGINT[]) AS recipient),
            src AS (SELECT DISTINCT p.k, s.id, s.meeting_date FROM p
                    JOIN utterances w ON w.speaker_id IN (p.maker, p.recipient)
                    JOIN sources s ON s.id = w.source_id
                    WHERE s.meeting_date > p.said)
            SELECT src.k, u.text, src.meeting_date, u.speaker_id
            FROM src JOIN utterances u ON u.source_id = src.id
            QUALIFY row_number() OVER (PARTITION BY src.k
                                       ORDER BY src.meeting_date, u.source_id, u.idx) <= {LATER_TURNS}
            ORDER BY src.k, src.meeting_date, u.source_id, u.idx""",
        [list(range(len(keys))), [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]],
    ).fetchall()
    for k, text, date, speaker in rows:
        out[keys[int(k)]].append((text, date, int(speaker) if speaker is not None else None))
    return out


def kept_promises(store: Store, assertion_ids: list[int]) -> dict[int, dict[str, Any]]:
    """{assertion id: {"quote", "speaker_id", "date"}} for those of the committed_to
    assertions `assertion_ids` that a later meeting says were kept."""
    ids = [int(i) for i in assertion_ids]
    if not ids:
        return {}
    rows = store.con.execute(
        """SELECT id, subject_id, said_at, coalesce(recipient_id, -1), coalesce(object_literal, quote, '')
           FROM assertions WHERE id = ANY(?::BIGINT[]) AND predicate = 'committed_to'
             AND subject_id IS NOT NULL AND said_at IS NOT NULL""",
        [ids],
    ).fetchall()
    keys = {int(r[0]): (int(r[1]), r[2], int(r[3])) for r in rows}
    turns = later_turns(store, list(dict.fromkeys(keys.values())))
    out = {}
    for r in rows:
        found = keeping_turn(turns[keys[int(r[0])]], int(r[1]), str(r[4]), int(r[3]))
        if found:
            out[int(r[0])] = {"quote": found[0], "speaker_id": found[2], "date": found[1]}
    return out

"""Who the others address by a title ("Chair", "Minister"), read from the turns of meetings.

A turn that opens with the title ("Thank you, Chair.") speaks to whoever spoke last. This
finds who chaired a meeting when no assertion says so; the graph API serves it as
`addressed_as`, whose docstring (graph/api.py) is what a program reads.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from backchannel.graph.errors import GraphAPIError

if TYPE_CHECKING:
    from backchannel.graph.index import GraphIndex
    from backchannel.memory.store import Store

_HONORIFIC = r"(?:(?:Mr|Madam|Madame|Mrs|Ms|Mister)\.?\s+)?"
_BODY_STOP = {"the", "of", "on", "for", "and", "a", "an", "in", "at", "to", "meeting", "meetings", "session"}
OPENING_TURNS = 3  # a meeting names the body it is a meeting of in its first turns ("Welcome to the ... Committee")
ADDRESSED_MAX_SOURCES = 200  # at most this many sources' turns are read


def addressed_as(
    store: Store, idx: GraphIndex, scopes: list[str] | None, title: str, naming: str | None, limit: int
) -> list[dict]:
    """See GraphAPI.addressed_as."""
    if not isinstance(title, str) or not title.strip() or len(title) > 100:
        raise GraphAPIError("addressed_as: title must be a short non-empty string")
    words = title.strip().split()
    spoken = " ".join([words[0][:1].upper() + words[0][1:]] + words[1:])
    # The title opening a turn ("Thank you, Chair.", "Okay. Mr. Chair, I ..."): said to whoever
    # just spoke and handed over the floor. Mid-turn ("My last question, Chair, is") may be said
    # to someone who did not speak last, and is not read.
    vocative = re.compile(
        r"^\W*(?:(?:okay|ok|yes|well|right|so|sorry|and|good\s+(?:morning|afternoon|evening))"
        r"[,.!]?\s+){0,3}(?:(?:thank\s+you(?:\s+(?:very\s+much|so\s+much))?|thanks)[,.!]?\s+)?"
        + _HONORIFIC
        + re.escape(spoken).replace("\\ ", r"\s+")
        + r"\s*(?:[,.;:!?\u2014\u2013]|$)",
        re.I,
    )
    params: list[Any] = [f"%{spoken.lower()}%"]
    where = "lower(text) LIKE ?"
    body: list[str] = []  # the words naming the body, each found as a word start in one sentence
    if naming is not None:
        body = [w for w in re.findall(r"[^\W_]+", str(naming).lower()) if w not in _BODY_STOP]
        if not body:
            raise GraphAPIError("addressed_as: naming must name something (or be null)")
        named_in = " AND ".join("lower(text) LIKE ?" for _ in body)
        where = f"source_id IN (SELECT DISTINCT source_id FROM utterances WHERE {named_in}) AND {where}"
        params = [f"%{w}%" for w in body] + params
    sources = [
        r[0]
        for r in store.con.execute(
            f"SELECT DISTINCT source_id FROM utterances WHERE {where} LIMIT {ADDRESSED_MAX_SOURCES}", params
        ).fetchall()
    ]
    if not sources:
        return []
    starts = [re.compile(r"(?<![^\W_])" + re.escape(w)) for w in body]

    def naming_sentence(text: str) -> str | None:
        for sentence in re.findall(r"[^.!?]+[.!?]*", " ".join(text.split())):
            low = sentence.lower()
            if all(p.search(low) for p in starts):
                return sentence.strip()
        return None

    rows = store.con.execute(
        """SELECT u.source_id, u.speaker_id, u.text, s.title FROM utterances u JOIN sources s ON s.id = u.source_id
           WHERE list_contains(?, u.source_id) AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], coalesce(s.scope, 'default')))
           ORDER BY u.source_id, u.idx""",
        [sources, scopes, scopes],
    ).fetchall()
    found: dict[int, dict[str, Any]] = {}
    named: dict[str, list[tuple[int | None, str]]] = {}
    last: tuple[str, int] | None = None  # (source, the last speaker seen there)
    opened: set[str] = set()  # sources whose opening turns name the body: meetings of that body
    turn: dict[str, int] = {}
    for src, spk, text, src_title in rows:
        spk = int(idx.canon[spk]) if spk is not None and spk < idx.n_nodes else spk
        turn[src] = turn.get(src, 0) + 1
        if body and turn[src] <= OPENING_TURNS:
            sentence = naming_sentence(text)
            if sentence:
                named.setdefault(src, []).append((spk, sentence))
                opened.add(src)
        if body and src not in opened:
            continue  # a body named later ("a letter from me to the Business Committee") is not the meeting's
        if last and last[0] == src and spk != last[1] and vocative.search(text):
            d = found.setdefault(
                last[1],
                {
                    "id": last[1],
                    "name": idx.name(last[1]),
                    "times": 0,
                    "sources": [],
                    "quote": text[:200],
                    "quote_speaker": idx.name(spk) if spk is not None else None,
                    "quote_source": src_title,
                    "_src": set(),
                },
            )
            d["times"] += 1
            if src not in d["_src"]:
                d["_src"].add(src)
                d["sources"].append(src_title)
        if spk is not None and (not last or last[0] != src or spk != last[1]):
            last = (src, spk)
    out = sorted(found.values(), key=lambda d: (-d["times"], d["id"]))[: max(0, int(limit))]
    for d in out:
        srcs = d.pop("_src")
        said = [(s, t) for src in sorted(srcs) for s, t in named.get(src, [])]
        said.sort(key=lambda st: st[0] != d["id"])
        d["named_quote"] = said[0][1][:200] if said else None
        d["named_speaker"] = idx.name(said[0][0]) if said and said[0][0] is not None else None
    return out

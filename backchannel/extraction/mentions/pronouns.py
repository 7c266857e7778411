"""The pronouns of a transcript that the mentions stage resolves, per utterance: what the meaning
stage fills its slots with ("She's head of data at X" is about the one person named before)."""

from __future__ import annotations

import re
from dataclasses import replace

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.mentions.stage import EntityMention, PronounRef, find_mentions, resolve_pronoun
from backchannel.memory.text import norm_name

# Pronouns resolved, and the one it resolves them as ("there", "its": the organisation
# named before, as "their" is).
_PRONOUN = re.compile(r"\b(?:[Hh]e|[Ss]he|[Hh]im|[Hh]is|[Hh]er|[Tt]hey|[Tt]heir|[Tt]hem|[Ii]ts|[Tt]here|[Ww]e|[Uu]s)\b")
_AS_THEY = {"its": "their", "there": "their"}
# "There" that points at no place: the existential "there is", "there's", "there'll be" (written with
# or without the apostrophe's space), "there seems", "there used to be", and "over there", "out there".
_THERE_PLACE = re.compile(
    r"\b(?:there(?:\s+(?:is|are|was|were|will|would|might|must|may|can|could|should|has|have|had"
    r"|seems?|appears?|used\s+to|being|been|isn['’]t|aren['’]t|wasn['’]t|weren['’]t)\b"
    r"|\s*['’]\s*(?:s|re|ll|d|ve)\b)"
    r"|over\s+there\b(?!\s+since)|out\s+there|there\s+you\s+go)",
    re.I,
)
# A possessive before a person of theirs ("his brother", "her boss") points at the owner, who is not the one
# the sentence is about ("I worked with his brother at Arup" is no tie with him).
_OWNED_PERSON = re.compile(
    r"\s+(?:(?:elder|older|younger|little|big|late|ex|former|new|old)[\s-]+)?(?:brother|sister|wife|husband"
    r"|partner|son|daughter|kids?|children|father|mother|dad|mum|mom|parents?|cousin|uncle|aunt|nephew|niece"
    r"|family|fianc[eé]e?|girlfriend|boyfriend|boss|colleague|friend|mate|team|assistant|deputy|manager"
    r"|predecessor|successor|lawyer|doctor)s?\b",
    re.I,
)
_RECENT = 2  # turns before this one whose mentions a pronoun may point back to
_EARLIER = 2  # turns before those whose organisations "they"/"their" may still point back to
_THEY = frozenset({"they", "them", "their", "theirs"})


def _as_organisations(mentions: list[EntityMention], organisations: set[str]) -> list[EntityMention]:
    """The mentions, each one whose name the meeting uses as an organisation read as one."""
    return [
        replace(m, kind="organisation", confirmed=True) if norm_name(m.name) in organisations else m for m in mentions
    ]


def pronoun_refs(
    transcript: Transcript, known_people: frozenset[str], organisations: set[str] | None = None
) -> dict[int, list[PronounRef]]:
    """{utterance: its resolved pronouns}: he/she/him/her to the one
    person named before (extraction/mentions.resolve_pronoun: never the speaker, never either person
    of a two-person meeting, left open when two fit), they/their/its/there to the one organisation
    named before, we/us to the speaker's one partner. Only resolved pronouns are kept."""
    found = find_mentions(transcript, owner_names=tuple(known_people), organisations=organisations or ())
    people = [n for n in (*transcript.speakers(), *transcript.participants) if n]
    by_utt: dict[int, list] = {}
    for sm in found:
        by_utt.setdefault(sm.utterance_idx, []).append(sm)
    turns: list[list[EntityMention]] = []
    out: dict[int, list[PronounRef]] = {}
    for u in transcript.utterances:
        recent = [m for t in turns[-_RECENT:] for m in t]
        earlier = [m for t in turns[-(_RECENT + _EARLIER) : -_RECENT] for m in t] if len(turns) > _RECENT else []
        this_turn: list[EntityMention] = []
        for sm in by_utt.get(u.idx, []):
            refs = []
            for pm in _PRONOUN.finditer(u.text, sm.start, sm.end):
                word = pm.group(0).lower()
                if word == "there" and _THERE_PLACE.match(u.text, pm.start()):
                    continue  # "there is", "out there": no place of work
                if word in ("his", "her") and _OWNED_PERSON.match(u.text, pm.end()):
                    continue
                before = [m for m in (*this_turn, *sm.mentions) if m.end <= pm.start()]
                plural = _AS_THEY.get(word, word) in _THEY
                turn_before, earlier_before = recent, earlier
                if organisations:
                    # "Itaú hired her as their head of ESG": a name this meeting uses as an organisation
                    # (organisations_of: "X hired", "joined X") is one for "their", and no "her", whatever
                    # the words around this mention say
                    before = _as_organisations(before, organisations)
                    turn_before = _as_organisations(recent, organisations)
                    earlier_before = _as_organisations(earlier, organisations)
                ref = resolve_pronoun(
                    _AS_THEY.get(word, word),
                    speaker=u.speaker,
                    before=before,
                    recent=turn_before,
                    people=people,
                    start=pm.start(),
                    earlier=earlier_before if plural else (),
                )
                if (
                    plural
                    and ref.refers_to is None
                    and len(ref.candidates) == 1
                    and organisations
                    and norm_name(ref.candidates[0]) in organisations
                ):
                    # "Any movement at Redrow?" - "They've taken on ...": one word after "at" is no sure
                    # organisation to the mentions stage, but this meeting uses it as one (organisations_of)
                    ref = replace(ref, refers_to=ref.candidates[0], kind="organisation")
                if ref.refers_to is not None:
                    # read as "their", but the span is the word said ("its" is two letters shorter: its slot
                    # must not eat the next word, "its chief design officer" -> "{O} chief design officer")
                    refs.append(replace(ref, end=pm.end()))
            out.setdefault(u.idx, []).extend(refs)
            this_turn.extend(sm.mentions)
        turns.append(this_turn)
    return out

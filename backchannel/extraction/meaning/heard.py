"""What the head hears of a candidate sentence, and how its reading is weighed before the stage fills
slots (meaning/stage.py): the masked sentence as the bank writes it, the clause before a wish said
after the claim, and a tie's belief that the head's one-class choice split with the job it implies."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from backchannel.core.vocabulary import NOT_FACT_STANCES
from backchannel.extraction.meaning.candidate import Candidate
from backchannel.extraction.meaning.classifier import Reading
from backchannel.extraction.meaning.slots import fill
from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.names import NAME_RX, same_person
from backchannel.extraction.mentions.stage import PronounRef
from backchannel.memory.text import norm_name

# Pronouns written as their slot for the head ("her" is left: it may be "her team", no person slot).
_WRITTEN = frozenset({"he", "she", "him", "they", "their", "its"})
_PAIR = frozenset({"we", "us"})
_PAIR_REACH = 60
_PAIR_TURN = 200
# A former employer said in passing ("X, formerly of IBM Research, as provost"): the slots read it
# (fill._FORMER_BEFORE); the head reads the sentence without it.
_FORMER_APPOSITION = re.compile(
    r",\s*(?:formerly|previously|late)\s+(?:of|at|with)\s+(?:the\s+)?\{O\}\s*(?:,(?=\s*\w)|(?=,))"
)
# Where a clause begins that goes on past the last party of a claim: "X reported to me at Y for four years,
# I'd hire her again tomorrow": a wish or a plan said after the fact ("I'd hire her again") is not the
# fact's own stance.
_CODA = re.compile(r",\s+(?=(?:I|we|he|she|they|you(?:\s+(?:two|both|guys))?)(?:['’]d|\s+would)\b)")
_CODA_MIN_WORDS = 3
# Knowing someone is not summed in: a tie read between knowing and working with ("Sophie and I met for
# lunch") is as often no tie at all (tried: three of the suite's chatter and denial sentences became ties).
_TIE_AT_A_PLACE = ("worked_with", "works_at", "left")


def as_slots(refs: Sequence[PronounRef], slots: Sequence[mentions.Slot] = (), text: str = "") -> list[mentions.Slot]:
    """The pronouns written as slots for the head; not one whose person is named in the same window
    ("You should meet Ravinder Gill, he's the bloke who ...": the apposition already reads right).

    A "we"/"us" that stands for the speaker and one person named earlier in the same turn `text` is
    written as that pair ("Oh, Sunita Rao! We overlapped at X" reads "{P} and I overlapped at X"):
    alone, "we overlapped at X" is as often a company's "we" as a tie, and the head reads it so. The
    "we" of a two-person meeting (the other person, named nowhere) is left: there it is as often the
    company ("we already work with X")."""
    named = {norm_name(x.name) for x in slots}
    out = []
    for r in refs:
        if not r.refers_to or r.kind not in ("person", "organisation"):
            continue
        said = r.pronoun.lower()
        if r.kind == "person" and said in _PAIR and _named_before(text, r) and not _said_apart(r, refs):
            if not any(x.kind == "person" for x in slots):
                out.append(mentions.Slot(r.start, r.end, r.refers_to, mentions.PAIR))
            continue
        if said in _WRITTEN and not (r.kind == "person" and any(same_person(r.refers_to, n) for n in named)):
            out.append(mentions.Slot(r.start, r.end, r.refers_to, r.kind))
    return out


def _said_apart(r: PronounRef, refs: Sequence[PronounRef]) -> bool:
    """Whether the pair's person is also said by a he/she of their own ("He got us the contract"):
    then the "we" is the speaker's side, not the two of them."""
    return any(x is not r and x.refers_to == r.refers_to and x.pronoun.lower() not in _PAIR for x in refs)


def _named_before(text: str, r: PronounRef) -> bool:
    """Whether the pair's person is named just before the "we", in the same short turn (within
    _PAIR_REACH characters, a turn of at most _PAIR_TURN): a committee's "we" after a name is the
    institution's ("Thank you, Suzy. We have a certain pedagogical approach ...")."""
    name = r.refers_to or ""
    if len(text) > _PAIR_TURN:
        return False  # a long turn is a statement or an answer, and its "we" the speaker's side
    start = max(0, r.start - _PAIR_REACH)
    return bool(name) and any(same_person(m.group(0), name) for m in NAME_RX.finditer(text, start, r.start))


def heard(masked: str) -> str:
    """A masked candidate as the head reads it: fillers in the slots, hesitations out."""
    return mentions.fluent(fill(_FORMER_APPOSITION.sub("", masked)))


def core_of(c: Candidate) -> str | None:
    """The candidate up to a would-clause after its last party (slots, resolved pronouns), as the head
    reads it; None when there is none."""
    if c.part:
        return None
    # the named slots; a pronoun only when none is named ("We worked together at ..."): the coda often
    # points back at the party ("I'd hire her again")
    last = max([s.end for s in c.slots] or [r.end for r in c.refs if r.kind], default=None)
    m = _CODA.search(c.text, last, c.w1) if last is not None else None
    if m is None or len(c.text[m.end() : c.w1].split()) < _CODA_MIN_WORDS:
        return None
    slots = [s for s in c.slots if s.end <= m.start()]
    refs = tuple(r for r in c.refs if r.end <= m.start())
    return heard(mentions.masked(c.text, c.w0, m.start(), slots, as_slots(refs, slots, c.text)).rstrip(" ,") + ".")


def with_core(whole: Reading, core: Reading, stance_min: float) -> Reading:
    """The reading of the claim, from the core clause (the sentence without the would-clause after its
    last party: "I'd hire her again", "you two would click", a wish or a scenario said of the fact, no
    part of it) where the core reads a fact and either the whole reads no fact or the core is surer of
    its relation: the would-clause pulls the whole's relation too ("Alex, he runs logistics at Acme,
    you'd get along": worked_with 0.61 hypothetical; the core, works_at 0.93 asserted). Else the whole's:
    a core cut short can read less ("Alex reported to me at Acme for six years, 2012 to 2018." 0.46, the
    whole 0.90)."""
    if core.relation == "none" or core.stance in NOT_FACT_STANCES or core.stance_p < stance_min:
        return whole
    if whole.stance in NOT_FACT_STANCES or core.relation_p > whole.relation_p:
        return core
    return whole


def tie_at_a_place(c: Candidate, r: Reading) -> Reading:
    """A tie said at an organisation ("we worked together at X") says an employment there too, and the
    head, choosing one class, splits its belief between the tie and the job: the tie's reading is then
    as sure as the two together (the job is filled as the second reading, or by implied.py)."""
    if r.relation != "worked_with" or not r.relation_probs or not any(s.kind == "organisation" for s in c.slots):
        return r
    if not any(s.kind == "person" for s in c.slots) and not any(x.kind == "person" for x in c.refs):
        return r  # no other person named or pointed at: no tie to be sure of ("I interviewed at X")
    return replace(r, relation_p=sum(r.relation_probs.get(k, 0.0) for k in _TIE_AT_A_PLACE))

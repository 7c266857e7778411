"""The stance of a tie as the talk after it says it: people take a tie back, narrow it or sour it a
sentence or a turn later ("I worked with her at Unilever. Actually no, that was her sister, I've
never met Dana herself."; "- Samir was on my team. - Could you introduce me? - Hang on, I don't
think I've ever met Samir."). The stance head reads each sentence alone, so its reading of the
tie's own sentence is `asserted`; here it reads the sentences that follow.

**The context** of an asserted tie is the rest of its turn and the next two turns (the other
speaker's reply, and the tie's speaker answering it), at most CONTEXT_SENTENCES of each turn after
it, leaving out sentences that hold a claim of their own (those were read as claims already),
unless their claims only say the same tie again ("I know Sigrid Berg. I've only heard her
interviews, we've never met." reads a knows of its own in the second sentence).

**Said again later.** A claim of the same two people that the tie's speaker makes later in the
context with stance `ended` or `knows_of` (the stage read it on its own sentence) is the later word
on the tie: the tie takes that stance (a worked_with is left as it is by a knows_of).

**Taking back.** A context sentence changes the tie only where it speaks of the tie's other end:
by name (first tokens or the surname), or, in a turn of the tie's own speaker with one pair of
people in its ties and no one else named in full from the tie's sentence on, by a personal pronoun
(he, she; we where the speaker is one end of the tie: not "they", which is as often the company).
The head reads that sentence with the tie's people written as the bank's person slot (as the stage
masks its sentences) and, where the pronoun path holds, its pronouns too (tie_pronouns.py: the
head is sure of a coda said with the slot, unsure of the same coda said with "we" and "her").
Where the relation head reads a tie in it (knows or worked_with at TIE_RELATION_MIN together, or
an `ended` reading at ENDED_ALONE_MIN that no other relation claims: `_of_the_tie`),
`tie_verdict.verdict` decides: an `ended` reading at TAKEN_BACK_MIN ends the tie (tie_stance.as_ended); the
readings that say there is no live tie (NO_TIE: negated, knows_of, joke) are taken together: at
NARROWED_MIN, knows_of leading and the relation head sure the sentence is of the tie
(SURE_RELATION_MIN), a knows becomes `knows_of` ("I've read his book too" is of his book, not of
the tie: 0.71); at TAKEN_BACK_MIN they drop the tie (a worked_with said knows_of is dropped, as
the stage drops it), or end it where the denied sentence says the work as a thing done ("I never
liked working for him": a denial of the liking, the tie soured, not one that never was). A `negated` reading drops it only where it denies the tie
(`tie_verdict._denies`): not in a sentence that says the tie again as a claim of its own (the rules' grammar
owns that negation's scope), not where a date or a span up to now bounds it ("we haven't worked
together since 2015", "I haven't seen him in years": after the tie, not that it never was), not
where the relation head is unsure the sentence is of one tie relation (SURE_RELATION_MIN: "he
never answered my email"), and never a knows by a denied worked_with. A change reaches the same
tie said again in the sentence that makes it. A word that the tie goes on (ONGOING) in the context
keeps the tie.

**Another name.** "- I worked with Tom Reid at Arup. - You're thinking of Tom Reilly, surely? -
Oh, right, Reilly.": a context sentence of the tie's own speaker naming someone who shares a name
with the tie's other end but is not that person (Tom Reilly for Tom Reid, Karen Lee for Karen
Liu) says the speaker had the other one in mind, so the tie is dropped: who the tie is with is
then said only by the correction, and a tie moved on that reading would rest on a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning.classifier import Embed, Reading, classify
from backchannel.extraction.meaning.slots import FILLERS
from backchannel.extraction.meaning.tie_pronouns import resolve_pronouns
from backchannel.extraction.meaning.tie_stance import ONGOING, TIES, as_ended, sentence_at, third_person
from backchannel.extraction.meaning.tie_verdict import verdict
from backchannel.extraction.mentions import sentence as mentions
from backchannel.extraction.mentions.names import NAME_RX, same_person
from backchannel.extraction.result import ExtractedAssertion
from backchannel.extraction.rules.core import sentences
from backchannel.memory.text import norm_name

CONTEXT_SENTENCES = 2
TIE_RELATION_MIN = 0.5
ENDED_ALONE_MIN = 0.95
OTHER_RELATION_MAX = 0.2
_WE = frozenset(("we", "us", "our"))
_PRONOUNS = frozenset(("he", "him", "his", "she", "her", "hers")) | _WE


def context_stances(
    transcript: Transcript, claims: Sequence[ExtractedAssertion], embed: Embed | None = None
) -> list[ExtractedAssertion]:
    """`claims` less the asserted ties the talk after them takes back, with a knows narrowed to
    knowing *of* someone marked `knows_of` (see the module's text)."""
    utts = [u for u in transcript.utterances if u.text]
    anchor = transcript.meeting_date.date() if transcript.meeting_date else None
    pos = {u.idx: n for n, u in enumerate(utts)}
    spans_of = sentence_spans(utts)
    held = claims_by_sentence(claims, spans_of)
    pairs_in: dict[int, set[frozenset[str]]] = {}
    ties = [i for i, a in enumerate(claims) if _is_tie(a) and a.utterance_idx in pos]
    for i in ties:
        a = claims[i]
        end = a.object.name if a.object else ""
        pairs_in.setdefault(a.utterance_idx, set()).add(frozenset((norm_name(a.subject.name), norm_name(end))))
    orgs = mentions.organisations_of([u.text for u in utts])
    asks: list[tuple[int, str, str, list[int]]] = []  # (tie, sentence said, as the head reads it, its restatements)
    dropped: set[int] = set()
    out = list(claims)
    for i in ties:
        a = claims[i]
        u = utts[pos[a.utterance_idx]]
        other = _other_end(a, u.speaker)
        if other is None:
            continue
        k = sentence_at(spans_of[u.idx], a.span_start)
        said = context_after(
            utts,
            pos[a.utterance_idx],
            k,
            spans_of,
            held,
            partial(_restates, claims, a),
        )
        if any(ONGOING.search(s) for _, _, s, _ in said):
            continue
        later = _said_later(claims, i, utts, pos, spans_of)
        if later == "ended":
            out[i] = as_ended(a, anchor)
        elif later == "knows_of" and a.predicate == "knows":
            out[i] = replace(a, stance="knows_of")
        if later:
            continue
        we = u.speaker is not None and (same_person(a.subject.name, u.speaker) or same_person(end_of(a), u.speaker))
        # pronouns stand for the tie's people while its turn names no other pair and no one else is
        # named in full, from the tie's own sentence on ("I worked with X and I know Omar Said. We
        # fell out.": which "we" is not said)
        pair = (a.subject.name, end_of(a))
        clear = len(pairs_in[u.idx]) == 1 and not third_person([_sentence_of(u.text, spans_of[u.idx], a)], pair, orgs)
        for _, speaker, s, again in said:
            own = speaker == u.speaker
            clear = clear and not third_person([s], pair, orgs)
            if own and _names_another(s, other):
                dropped.add(i)
            elif _names(s, other) or (own and clear and _has_pronoun(s, we)):
                masked = _masked(s, a)
                if own and clear:  # its pronouns stand for the tie's people (tie_pronouns.py)
                    masked = resolve_pronouns(masked, FILLERS["{P}"], we)
                asks.append((i, s, masked, again))
    asks = [x for x in asks if x[0] not in dropped]
    read = classify([mentions.fluent(m) for _, _, m, _ in asks], embed=embed)
    for (i, s, _, again), r in zip(asks, read):
        if not _of_the_tie(r) or i in dropped:
            continue
        for j in (i, *again):  # the tie, and the same tie said again in the sentence that takes it back
            reading = verdict(r, out[j], s, again)
            if reading == "ended":
                out[j] = as_ended(out[j], anchor)
            elif reading == "knows_of":
                out[j] = replace(out[j], stance="knows_of")
            elif reading == "drop":
                dropped.add(j)
    return [a for i, a in enumerate(out) if i not in dropped]


def _of_the_tie(r: Reading) -> bool:
    """Whether the head reads the context sentence as of the tie: the tie relations at TIE_RELATION_MIN
    together, or a sure `ended` (ENDED_ALONE_MIN) that no other relation claims (OTHER_RELATION_MAX):
    "I haven't said one word to him since the lawsuit" reads ended 0.97 and mostly none, as a
    sentence of talking rather than of knowing, and still says the tie is over."""
    probs = r.relation_probs or {}
    tie_p = sum(probs.get(t, 0.0) for t in TIES)
    if tie_p >= TIE_RELATION_MIN:
        return True
    other = sum(v for k, v in probs.items() if k not in TIES and k != "none")
    return r.stance == "ended" and r.stance_p >= ENDED_ALONE_MIN and other < OTHER_RELATION_MAX


def _said_later(
    claims: Sequence[ExtractedAssertion], i: int, utts: list, pos: dict[int, int], spans_of: dict
) -> str | None:
    """The stance, ended or knows_of, of a claim of the same two people that the tie's speaker
    makes after it, in the tie's context (its turn, and the next two turns): the stage read that
    sentence on its own, pronouns and all ("I know Nadia Oyelaran. Well, I've read her papers,
    we've never met." is a knows_of of its own), and the later word on the tie is the one that
    stands."""
    a = claims[i]
    at, speaker = pos[a.utterance_idx], utts[pos[a.utterance_idx]].speaker
    k = sentence_at(spans_of[a.utterance_idx], a.span_start)
    for b in claims:
        if b.stance not in ("ended", "knows_of") or b.predicate not in TIES or b.object is None:
            continue
        n = pos.get(b.utterance_idx)
        if n is None or not at <= n <= at + 2 or utts[n].speaker != speaker:
            continue
        if n == at and sentence_at(spans_of[b.utterance_idx], b.span_start) <= k:
            continue
        if _same_pair(a, b):
            return b.stance
    return None


def _same_pair(a: ExtractedAssertion, b: ExtractedAssertion) -> bool:
    x, y, p, q = a.subject.name, end_of(a), b.subject.name, end_of(b)
    return (same_person(x, p) and same_person(y, q)) or (same_person(x, q) and same_person(y, p))


def _is_tie(a: ExtractedAssertion) -> bool:
    return a.predicate in TIES and a.stance == "asserted" and a.object is not None and not a.quote_in_label


def _other_end(a: ExtractedAssertion, speaker: str | None) -> str | None:
    """The end of the tie that is not its speaker (a tie between two others: its object)."""
    if a.object is None:
        return None
    if speaker and same_person(a.object.name, speaker) and not same_person(a.subject.name, speaker):
        return a.subject.name
    return a.object.name


def _restates(claims: Sequence[ExtractedAssertion], a: ExtractedAssertion, j: int) -> bool:
    return _is_tie(claims[j]) and _same_pair(a, claims[j])


def sentence_spans(utts: Sequence[Utterance]) -> dict[int, list[tuple[int, int]]]:
    """{utterance: its sentences' spans} (a turn with no sentence end is one sentence)."""
    return {u.idx: sentences(u.text) or [(0, len(u.text))] for u in utts}


def claims_by_sentence(
    claims: Sequence[ExtractedAssertion], spans_of: dict[int, list[tuple[int, int]]]
) -> dict[tuple[int, int], list[int]]:
    """{(utterance, sentence): the indices of the claims read in it}."""
    held: dict[tuple[int, int], list[int]] = {}
    for j, a in enumerate(claims):
        if a.utterance_idx in spans_of:
            held.setdefault((a.utterance_idx, sentence_at(spans_of[a.utterance_idx], a.span_start)), []).append(j)
    return held


def context_after(
    utts: list,
    at: int,
    k: int,
    spans_of: dict[int, list[tuple[int, int]]],
    held: dict[tuple[int, int], list[int]],
    restates: Callable[[int], bool],
) -> list[tuple[int, str | None, str, list[int]]]:
    """(turn, speaker, sentence, the claims in it) for the rest of turn `at` after its sentence `k`
    and the first CONTEXT_SENTENCES of the next two turns: the sentences with no claim, or whose claims
    only say the same thing again (`restates`: "I know Sigrid Berg. I've only heard her interviews,
    we've never met." has a knows of its own). promise_context.py reads the same context."""
    out: list[tuple[int, str | None, str, list[int]]] = []
    for n in range(at, min(at + 3, len(utts))):
        u = utts[n]
        spans = spans_of[u.idx]
        first = k + 1 if n == at else 0
        picked = [j for j in range(first, len(spans)) if all(map(restates, held.get((u.idx, j), [])))]
        if n != at:
            picked = [j for j in picked if j < CONTEXT_SENTENCES]
        out.extend((n, u.speaker, u.text[slice(*spans[j])], held.get((u.idx, j), [])) for j in picked)
    return out


def _masked(text: str, a: ExtractedAssertion) -> str:
    """The sentence with the tie's people written as the bank's person slot, as the stage masks its
    sentences: the head learned its stances over "{P}", never a particular name (slots.py)."""
    ends = [a.subject.name, a.object.name if a.object else ""]

    def slot(m: re.Match[str]) -> str:
        return FILLERS["{P}"] if any(e and _names(m.group(0), e) for e in ends) else m.group(0)

    return NAME_RX.sub(slot, text)


def _names(text: str, person: str) -> bool:
    """Whether the sentence names `person`: its first tokens, or its surname alone."""
    last = norm_name(person).split()[-1:]
    for m in NAME_RX.finditer(text):
        name = m.group(0)
        if same_person(name, person) or norm_name(name).split() == last:
            return True
    return False


def _names_another(text: str, person: str) -> bool:
    """Whether the sentence names in full someone who shares a name with `person` but is not them."""
    tokens = set(norm_name(person).split())
    for m in NAME_RX.finditer(text):
        parts = norm_name(m.group(0)).split()
        if len(parts) >= 2 and not same_person(m.group(0), person) and tokens & set(parts) and set(parts) != tokens:
            return True
    return False


def _has_pronoun(text: str, we: bool) -> bool:
    """Whether the sentence says the tie's other end by pronoun (or, where `we`, the pair by "we")."""
    words = {re.split(r"['’]", w.strip(".,!?;:'’\""))[0] for w in text.lower().split()}
    return bool(words & (_PRONOUNS if we else _PRONOUNS - _WE))


def end_of(a: ExtractedAssertion) -> str:
    return a.object.name if a.object else ""


def _sentence_of(text: str, spans: list[tuple[int, int]], a: ExtractedAssertion) -> str:
    return text[slice(*spans[sentence_at(spans, a.span_start)])]

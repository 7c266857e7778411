"""What the words around a claim do to it: the offline extractor's second pass.

The rules (rules/en/roles.py, rules/en/relations.py) find a pattern such as "I worked with
Sophie Martin"; this pass reads the sentence, the utterance and the speaker's next turn
around it, and decides what the claim is worth:

- **negation and hypotheticals** drop it: "I've never worked with X", "If I had known X",
  "Honestly, if I worked with X, ...", "I would have met X". The scope is the comma-clause
  that holds the claim, so "If you need anyone, I know X" stays.
- **retraction and sarcasm** drop it: a sentence that opens with "just kidding", "no,
  obviously not", "not really", "scratch that", ... right after the claim, in the same turn
  or the speaker's next one, cancels the sentence before it; "yeah right, I know X" is
  sarcasm. "Oh sure, I know X" alone only marks the claim `hedged`.
- **a role-play frame** drops it: "in this mock call I'm the VP of IT at Y" (EXERCISE_FRAME,
  before the claim in its sentence).
- **an earlier statement being corrected** drops it: "I said I had worked with X" in a turn that
  corrects it ("May I correct my earlier answer?"), "A previous version of this story said ...".
- **hedges** mark it `hedged`: "I think", "maybe", "if I remember correctly", "apparently".
- **reported speech** re-attributes it: in "X said / told us / was like: I worked with Y",
  first person inside the quote is X, not the speaker; the claim becomes X's, `reported`,
  `second_hand`. An indirect report ("Marc told me that Sophie joined Acme") keeps its
  subject and is marked `second_hand`. A quote whose speaker cannot be found is dropped
  when it speaks in the first person (we cannot say whose claim it is).

Every rule is a word list or a grammar pattern; none is a sentence of a test.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.mentions.names import NAME, NAME_RX, person_name, same_person
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.claim_words import (
    ANY_DIRECT,
    CLAUSE_CUT,
    CORRECTING,
    EARLIER_SAID,
    EXERCISE_FRAME,
    FIRST_PERSON_NEXT,
    FRAME,
    HEARSAY,
    HEARSAY_FR,
    HEDGE,
    HYPOTHETICAL,
    LIKE_VERBS,
    NEGATION,
    NOBODY_IN_PARTICULAR,
    POST_FRAME,
    PRONOUNS,
    QUOTE_CLOSE,
    REPORTIVE_CONDITIONAL_FR,
    RETRACT,
    RETRACT_HINT,
    RETRACT_TAIL,
    SARCASM_OPEN,
    SAY_HINT,
    SELF_BEFORE,
)
from backchannel.extraction.rules.core import Ctx, sentences
from backchannel.memory.text import norm_name


def qualify_claims(
    transcript: Transcript, items: list[ExtractedAssertion], known_people: frozenset[str] = frozenset()
) -> list[ExtractedAssertion]:
    """`items` with negated, hypothetical and retracted claims removed, hedges marked, and
    quoted speech attributed to whoever is quoted."""
    by_idx = {u.idx: u for u in transcript.utterances}
    order = [u.idx for u in transcript.utterances]
    # Sentence spans once per utterance, and only where needed: an unpunctuated 8k-word turn
    # is one long text, and most turns hold no claim, no retraction and no quote.
    spans = _SentenceCache(by_idx)
    cancelled = _retracted_sentences(transcript, spans)
    frames = {
        u.idx: _frames(u, spans[u.idx], transcript, order, known_people)
        for u in transcript.utterances
        if u.text and _may_quote(u.text)
    }
    out = []
    for a in items:
        u = by_idx.get(a.utterance_idx)
        if u is None:
            out.append(a)
            continue
        s0, s1 = _sentence_of(spans[u.idx], u.text, a.span_start)
        sent = u.text[s0:s1]
        core = _core_end(u.text, a)
        if (u.idx, s0) in cancelled or SARCASM_OPEN.match(sent) or RETRACT_TAIL.search(u.text[min(core, s1) : s1]):
            continue
        if EXERCISE_FRAME.search(u.text, s0, max(s0, min(core, s1))):
            continue  # a role-play: nobody holds the title they play
        if EARLIER_SAID.search(sent) and CORRECTING.search(u.text):
            continue  # the earlier words the turn corrects
        # Offsets below are within the sentence; hedges blanked so they read as neither
        # negation ("I'm not sure") nor condition ("if I remember correctly").
        masked = HEDGE.sub(lambda m: " " * len(m.group(0)), sent)
        if HEARSAY_FR.search(sent):  # "il paraît que X serait parti": the hearsay's conditional, no condition
            masked = REPORTIVE_CONDITIONAL_FR.sub(lambda m: " " * len(m.group(0)), masked)
        rel = max(0, min(core - s0, len(sent)))
        clause = _clause_start(masked, rel)
        # An ended tie ("I'd never work with X again", meaning/stage.py) is said with a negation:
        # the negation ends the tie, it does not deny that there was one; so is knowing *of* someone
        # ("I know the name, but we've never met"): the negation is what makes it no tie.
        if (
            a.predicate != "committed_to"
            and a.stance not in ("ended", "knows_of")
            and (NEGATION.search(masked, clause, rel) or HYPOTHETICAL.search(masked, clause, rel))
        ):
            continue
        if HEDGE.search(sent) and "hedged" not in a.trust_reasons:
            a = replace(a, trust_reasons=(*a.trust_reasons, "hedged"))
        if a.stance == "asserted" and a.predicate != "committed_to" and not a.subject.is_speaker:
            heard = HEARSAY.search(sent, 0, rel)
            if heard and not CLAUSE_CUT.search(sent, heard.end(), rel):
                # "word is she's off to Glanbia": what others say of her, passed on
                a = replace(a, stance="rumour", trust_reasons=(*a.trust_reasons, "rumour"))
        frame = next(
            (
                f
                for f in frames.get(u.idx, [])
                if f.body_start <= core < f.end or (core == a.span_end and f.body_start < core <= f.end)
            ),
            None,
        )
        if frame is not None:
            reported = _reported(a, frame)
            if reported is None:
                continue
            a = reported
        out.append(a)
    return out


# ---------------------------------------------------------------- positions


def _sentence_of(spans: list[tuple[int, int]], text: str, pos: int) -> tuple[int, int]:
    """The sentence (of `spans`, those of `text`) that holds `pos`, or the next one."""
    i = bisect_right(spans, (pos, len(text) + 1)) - 1
    if i >= 0 and spans[i][0] <= pos < spans[i][1]:
        return spans[i]
    if i + 1 < len(spans):
        return spans[i + 1]
    return spans[-1] if spans else (0, len(text))


def _core_end(text: str, a: ExtractedAssertion) -> int:
    """Where the claim's object is named inside its quote (the negation or the 'if' that
    governs the claim comes before it); the end of the quote when it cannot be found."""
    target = a.object.name if a.object is not None and not a.object.is_speaker else a.object_literal
    if target:
        i = text.find(target, a.span_start, a.span_end)
        if i >= 0:
            return i
    return a.span_end


def _clause_start(masked: str, pos: int) -> int:
    """Where the comma-clause holding `pos` starts in the (masked) sentence."""
    start = 0
    for m in CLAUSE_CUT.finditer(masked, 0, pos):
        start = m.end()
    return start


class _SentenceCache(dict):
    """utterance idx -> its sentence spans, computed on first use."""

    def __init__(self, by_idx: dict[int, Utterance]):
        super().__init__()
        self._by_idx = by_idx

    def __missing__(self, idx: int) -> list[tuple[int, int]]:
        u = self._by_idx.get(idx)
        self[idx] = sentences(u.text) if u is not None and u.text else []
        return self[idx]


def _retracted_sentences(transcript: Transcript, spans: _SentenceCache) -> set[tuple[int, int]]:
    """(utterance idx, sentence start) of every sentence a retraction takes back: the one
    right before it in the same turn, else the last sentence of the speaker's previous turn
    (at most one turn of someone else between, such as "Really?")."""
    out: set[tuple[int, int]] = set()
    utts = [u for u in transcript.utterances if u.text]
    for k, u in enumerate(utts):
        if RETRACT_HINT.search(u.text.lower()) is None:
            continue
        sents = spans[u.idx]
        for j, (s0, s1) in enumerate(sents[:3]):
            if not RETRACT.search(u.text[s0:s1]) or len(u.text[s0:s1].split()) > 8:
                continue
            if j > 0:
                out.add((u.idx, sents[j - 1][0]))
            else:
                prev = _previous_turn(utts, k)
                if prev is not None:
                    ps = spans[prev.idx]
                    if ps:
                        out.add((prev.idx, ps[-1][0]))
    return out


def _previous_turn(utts: list[Utterance], k: int) -> Utterance | None:
    speaker = utts[k].speaker
    if speaker is None:
        return None
    for back in (1, 2):
        if k - back >= 0 and utts[k - back].speaker == speaker:
            return utts[k - back]
    return None


# ---------------------------------------------------------------- reported speech


def _may_quote(text: str) -> bool:
    """A cheap test before the frame search: quote marks, or a say-verb frame."""
    if any(q in text for q in '"“«'):
        return True
    return SAY_HINT.search(text.lower()) is not None and (
        FRAME.search(text) is not None or ANY_DIRECT.search(text) is not None
    )


class _Frame:
    """A quote frame in one utterance: whose words text[body_start:end] are."""

    __slots__ = ("start", "body_start", "end", "who", "direct")

    def __init__(self, start: int, body_start: int, end: int, who: Mention | None, direct: bool):
        self.start, self.body_start, self.end, self.who, self.direct = start, body_start, end, who, direct


def _frames(
    u: Utterance, sents: list[tuple[int, int]], transcript: Transcript, order: list[int], known: frozenset[str]
) -> list[_Frame]:
    text = u.text
    ctx = Ctx(utt_idx=u.idx, speaker=u.speaker, text=text, s0=0, s1=len(text), anchor=None, out=[], known_people=known)
    out: list[_Frame] = []
    for m in FRAME.finditer(text):
        raw = m.group("who")
        if raw == "I" or (u.speaker and norm_name(raw) == norm_name(u.speaker)):
            continue  # the speaker quoting themselves: still their own claim
        sep, verb = m.group("sep"), " ".join(m.group("verb").lower().split())
        opened = any(q in sep for q in "\"“‘'«")
        direct = opened or ":" in sep or "," in sep
        if verb in LIKE_VERBS and not direct:
            if not FIRST_PERSON_NEXT.match(text, m.end()):
                continue  # "he went to Acme": going, not quoting
            direct = True  # "she was like I know him"
        if not direct and not sep.strip() and not _starts_clause(text, m.end()):
            continue  # "she said nothing": no reported clause follows
        _, s1 = _sentence_of(sents, text, m.start())
        end = s1
        if opened:
            close = QUOTE_CLOSE.search(text, m.end())
            end = close.start() if close else len(text)
        who = (
            None
            if norm_name(raw) in NOBODY_IN_PARTICULAR
            else _speaker_of_frame(ctx, raw, m.start(), transcript, order)
        )
        out.append(_Frame(m.start(), m.end(), max(end, m.end()), who, direct))
    # A direct quote after a say-verb whose sayer is no name ("someone at the bar said: I ..."):
    # its first person is nobody we know.
    for m in ANY_DIRECT.finditer(text):
        if any(f.start <= m.start() < f.body_start for f in out) or SELF_BEFORE.search(text, 0, m.start()):
            continue
        _, s1 = _sentence_of(sents, text, m.start())
        out.append(_Frame(m.start(), m.end(), max(s1, m.end()), None, True))
    for m in POST_FRAME.finditer(text):
        key = "who" if m.group("who") else "who_after"
        who = _speaker_of_frame(ctx, m.group(key), m.start(key), transcript, order)
        if who is not None and who.is_speaker:
            continue
        out.append(_Frame(m.start("body"), m.start("body"), m.end("body"), who, True))
    return out


_CLAUSE_OPENERS = re.compile(
    r"\s*(?:I|he|she|they|we|it|there|the|a|an|his|her|their|my|our|je|j['’]|il|elle|ils"
    r"|elles|on|nous|le|la|les|l['’]|un|une|" + NAME + r")\b"
)


def _starts_clause(text: str, pos: int) -> bool:
    return _CLAUSE_OPENERS.match(text, pos) is not None


def _speaker_of_frame(ctx: Ctx, raw: str, pos: int, transcript: Transcript, order: list[int]) -> Mention | None:
    if norm_name(raw) in NOBODY_IN_PARTICULAR:
        return None
    if raw.lower() not in PRONOUNS:
        return ctx.person(raw)
    found = ctx.antecedent(pos)
    if found is not None:
        return found
    # "She told the whole room: ..." right after a turn that named her.
    k = order.index(ctx.utt_idx)
    names = set()
    for u in transcript.utterances[max(0, k - 2) : k]:
        for m in NAME_RX.finditer(u.text or ""):
            n = person_name(m.group(0))
            if n and not (ctx.speaker and same_person(n, ctx.speaker)):
                names.add(n)
    distinct = {norm_name(n): n for n in names}
    if len(distinct) == 1:
        return ctx.person(next(iter(distinct.values())))
    return None


def _reported(a: ExtractedAssertion, frame: _Frame) -> ExtractedAssertion | None:
    """The claim as the quoted person's, marked second-hand; None when nobody can own it."""
    reasons = tuple(dict.fromkeys([*a.trust_reasons, "second_hand"]))
    # one stance per fact: words someone else said are reported speech, whatever the head read in them
    # (a rumour or an ended tie keeps its own)
    stance = "reported" if a.stance == "asserted" else a.stance
    first_person = a.subject.is_speaker or (a.object is not None and a.object.is_speaker)
    if not frame.direct or not first_person:
        return replace(a, trust_reasons=reasons, stance=stance)
    if frame.who is None:
        return None
    who = replace(frame.who)
    subject = who if a.subject.is_speaker else a.subject
    obj = who if a.object is not None and a.object.is_speaker else a.object
    if obj is not None and same_person(obj.name, subject.name):
        return None
    modality = "commitment" if a.predicate == "committed_to" else "reported"
    recipient = a.recipient
    if recipient is not None and recipient.is_speaker:
        recipient = None
    return replace(
        a, subject=subject, object=obj, modality=modality, trust_reasons=reasons, recipient=recipient, stance=stance
    )

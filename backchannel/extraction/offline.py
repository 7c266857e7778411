"""The `offline` extractor: rule-based English extraction with no language model.

`extract(transcript)` returns `ExtractedAssertion`s (predicates from
core.vocabulary.PREDICATES) whose quotes are exact slices of one utterance's text;
`self_introductions(transcript)` returns the names speakers give themselves
("Project Manager" said "I'm Sarah") so the writer can alias the label.

Each utterance is cut into sentences; each rule runs only on sentences that
contain one of its trigger words (a substring test on the lowercased
sentence), so a meeting of 8k words costs a few tens of milliseconds. First
person ("I", "me", "we" where it means the speaker) resolves to the
utterance's speaker label; an utterance without one yields no first-person
facts. Relative dates resolve against `transcript.meeting_date` (dates/en.py).
The rules themselves live in rules/en/roles.py (titles, employment, witness
lists, self-introductions) and rules/en/relations.py (worked_with, knows,
introductions, commitments); names, organisations and titles in
mentions/names.py; sentences, spans and emission in rules/core.py. A sentence that
looks French goes to the French rules instead (rules/fr/relations.py, dates/fr.py); one with
kana or kanji to the Japanese ones (rules/ja/relations.py, dates/ja.py).

Precision over recall: a rule fires only on a full pattern with validated names
(no pronoun, day, month or title taken for a person), "she"/"he" resolve only
to the single person named shortly before in the same utterance, and "we"
only to the single other person named around it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date

from backchannel.extraction.formats.transcript import Transcript
from backchannel.extraction.meaning import stage as meaning_stage
from backchannel.extraction.meaning.promise_context import laughed_off
from backchannel.extraction.meaning.tie_context import context_stances
from backchannel.extraction.meaning.tie_stance import tie_stances
from backchannel.extraction.mentions.acronyms import organisation_aliases
from backchannel.extraction.mentions.addressed_chair import addressed_chair
from backchannel.extraction.mentions.addressee import resolve_recipients
from backchannel.extraction.mentions.labels import label_facts
from backchannel.extraction.mentions.names import same_person
from backchannel.extraction.result import ExtractedAssertion
from backchannel.extraction.rules.claims import qualify_claims
from backchannel.extraction.rules.core import Ctx, sentences
from backchannel.extraction.rules.en.commitments import rule_commitment, rule_reported_commitment
from backchannel.extraction.rules.en.named_titles import TRIGGERS as _NAMED_TITLE_TRIGGERS
from backchannel.extraction.rules.en.named_titles import rule_named_title
from backchannel.extraction.rules.en.people import (
    asks_name,
    our_people,
    pronoun_facts,
    rule_from_org,
    rule_i_lead,
    rule_moves,
    rule_possessive_title,
    table_intro_name,
)
from backchannel.extraction.rules.en.pledges import rule_pledge
from backchannel.extraction.rules.en.relations import rule_knows, rule_my_ties, rule_worked_with
from backchannel.extraction.rules.en.roles import (
    rule_appositive,
    rule_copula,
    rule_employ,
    rule_self_intro,
    self_intro_name,
)
from backchannel.extraction.rules.fr.code_switch import EnglishClauseCtx, FrenchClauseCtx, gloss, language_runs
from backchannel.extraction.rules.fr.relations import FrCtx, looks_french, run_french_rules
from backchannel.extraction.rules.ja.relations import is_japanese, run_japanese_rules
from backchannel.memory.text import norm_name

__all__ = ["extract", "organisation_aliases", "self_introductions"]

_SELF_TRIGGERS = ("i'm", "i’m", "i 'm", "i am", "my name", "this is")
# Lowercased substrings that must occur in a sentence before a rule runs on it.
_RULES = (
    (
        (
            "is ",
            "'s ",
            "’s ",
            "'m ",
            "’m ",
            " am ",
            " was ",
            " been ",
            "became",
            "become",
            "appointed",
            "named",
            "promoted",
            "hired as",
            "elected",
            "took over",
            "taken over",
            "stepped up",
            "started as",
        ),
        rule_copula,
    ),
    (("work", "join", "left", "quit", "moved to", "retired", "resigned", "started at", "been at"), rule_employ),
    (("together", "work", "colleague", "boss", "manager", "founder", "partner", "mentor", "deputy"), rule_worked_with),
    (
        (
            "know",
            "met ",
            "friend",
            "introduced",
            "spoke",
            "talked",
            "talking",
            "chatted",
            "chatting",
            "speaking",
            "from ",
            "hello to",
            "hi to",
            "my best",
            "my regards",
            "my love",
            "my greetings",
        ),
        rule_knows,
    ),
    (("my ",), rule_my_ties),
    (
        (
            "'ll",
            "’ll",
            "will ",
            "shall",
            "going to",
            "let me",
            "gonna",
            "gon na",
            "happy to",
            "glad to",
            "pleased to",
            "i can ",
        ),
        rule_commitment,
    ),
    # rules/en/pledges.py: a promise by its frame ("we'll be setting a minimum standard"), after rule_commitment
    (
        (
            "'ll",
            "’ll",
            "will ",
            "shall",
            "going to",
            "gonna",
            "gon na",
            "happy to",
            "glad to",
            "pleased to",
            "look forward",
            "next step",
        ),
        rule_pledge,
    ),
    (("promised", "agreed", "offered", "said ", "told "), rule_reported_commitment),
    (_SELF_TRIGGERS, rule_self_intro),
    # rules/en/people.py: "X from Y", "joined from Y", "our CTO, X", "X, our head of data"
    ((" from ",), rule_from_org),
    (
        (
            "from ",
            "used to be",
            "spent ",
            "'s ",
            "’s ",
            "calling",
            "reached",
            "joined",
            "teaching",
            "lecturing",
            "nursing",
            "consulting",
        ),
        rule_moves,
    ),
    (("our ", "my ", "their ", "your ", ", the ", "'s ", "’s "), rule_possessive_title),
    (("i chair", "i lead", "i run", "i head", "i manage", "i also", "i currently", "i now", "i still"), rule_i_lead),
    # rules/en/named_titles.py: "Chair Dai Lloyd", "a researcher named X", "X, who chairs the Y group"
    (_NAMED_TITLE_TRIGGERS, rule_named_title),
)
# Rules that may follow "she"/"he" back to a person named in the previous turns (offline_people.pronoun_facts).
_ROLE_RULES = (rule_copula, rule_employ, rule_moves)
# One compiled alternation per rule: a C-speed substring test instead of a Python loop.
_RULES_RX = tuple((re.compile("|".join(map(re.escape, triggers))), rule) for triggers, rule in _RULES)
# Rules switched off by name (a rule function's name, or "our_people", "pronoun_facts", "qualify_claims"),
# comma-separated: bench/rule_ablation.py measures what each rule still adds beside the meaning stage.
RULES_OFF_ENV = "BACKCHANNEL_RULES_OFF"
_SELF_RX = re.compile("|".join(map(re.escape, _SELF_TRIGGERS)))
# A chair introducing a panel: commas may separate title from organisation.
_WITNESS_RX = re.compile(
    "welcome|with us|joined by|witness|panel|introduce|pleased to have|we have here|evidence from|;"
)


def _known_people(transcript: Transcript, owner_names: Sequence[str]) -> frozenset[str]:
    names = [*transcript.speakers(), *transcript.participants, *owner_names]
    return frozenset(n for n in (norm_name(x) for x in names if x) if n)


def _anchor(transcript: Transcript) -> date | None:
    d = transcript.meeting_date
    return d.date() if d is not None else None


def extract(
    transcript: Transcript, *, owner_names: Sequence[str] = (), meaning: bool = True
) -> list[ExtractedAssertion]:
    """Every assertion the rules and the meaning stage find in `transcript`, in utterance
    order, deduplicated.

    `owner_names` (the user's own names) count as known people: never taken for
    an organisation. `meaning=False` runs the rules alone (benches compare the two)."""
    anchor = _anchor(transcript)
    known = _known_people(transcript, owner_names)
    off = rules_off()
    out: list[ExtractedAssertion] = []
    speakers = tuple(transcript.speakers())
    recent: list[str] = []  # the last two turns' text, for a pronoun that points back across turns
    for u in transcript.utterances:
        before, recent = "\n".join(recent)[-600:], [*recent[-1:], u.text or ""]
        text = u.text
        if not text or len(text) < 6:
            continue
        utterance_french = None
        for s0, s1 in sentences(text):
            if is_japanese(text[s0:s1]):  # kana or kanji: the Japanese rules only (rules/ja/relations.py)
                run_japanese_rules(
                    dict(
                        utt_idx=u.idx,
                        speaker=u.speaker,
                        text=text,
                        s0=s0,
                        s1=s1,
                        anchor=anchor,
                        out=out,
                        known_people=known,
                        context_before=before,
                        speakers=speakers,
                    )
                )
                continue
            french = looks_french(text[s0:s1])
            if french is None:  # too short to tell: the utterance's language
                if utterance_french is None:
                    utterance_french = bool(looks_french(text[:400]))
                french = utterance_french
            # English and French in one sentence: each run of clauses gets its own language's rules
            runs = language_runs(text, s0, s1, "fr" if french else "en")
            mixed = len(runs) > 1
            glossed = gloss(text, runs)
            asked = text[s0:s1].rstrip().endswith("?")
            for r0, r1, lang in runs:
                if lang == "fr":
                    if asked:
                        continue  # "Tu connais Marc, do you know him?": a question, in either language
                    run_french_rules(
                        (FrenchClauseCtx if mixed else FrCtx)(
                            utt_idx=u.idx,
                            speaker=u.speaker,
                            text=text,
                            s0=r0,
                            s1=r1,
                            anchor=anchor,
                            out=out,
                            known_people=known,
                            context_before=before,
                            speakers=speakers,
                        )
                    )
                    continue
                ctx = (EnglishClauseCtx if mixed or glossed is not text else Ctx)(
                    utt_idx=u.idx,
                    speaker=u.speaker,
                    text=glossed,
                    s0=r0,
                    s1=r1,
                    anchor=anchor,
                    out=out,
                    known_people=known,
                    context_before=before,
                    speakers=speakers,
                )
                found_before = len(out)
                _english_rules(ctx, off)
                if glossed is not text:
                    _unglossed(out, found_before, text, glossed)
    out.extend(label_facts(transcript))  # titles written in speaker labels (mentions/labels.py)
    if "our_people" not in off:
        out.extend(our_people(transcript, out))  # "our CEO, X" said by someone whose employer we know
    if "pronoun_facts" not in off:
        # "- Did you hear Lena left? - Where did she go? - She's at Spotify now": a pronoun across turns
        out.extend(pronoun_facts(transcript, [r for r in _RULES_RX if r[1] in _ROLE_RULES and _on(r[1], off)], known))
    # Negation, hypotheticals, retraction, hedges and quoted speech (rules/claims.py), then recipients.
    # A fact read from a speaker label quotes the label, not the speech: no sentence frames it.
    spoken = [a for a in out if not a.quote_in_label]
    from_labels = [a for a in out if a.quote_in_label]
    # "Thank you, Chair." opening the members' turns: the one who gave them the floor chairs (no
    # sentence of the chair's frames it, so claim_context has nothing to weigh)
    from_labels += addressed_chair(transcript)
    if meaning:  # the trained head: new wordings of each relation, and the stance of every claim (meaning/stage.py)
        kept, found = meaning_stage.read(transcript, known_people=known, rule_claims=spoken)
        spoken = tie_stances(transcript, kept + found)  # a tie its turn says soured, or a name only (tie_stance.py)
        spoken = context_stances(transcript, spoken)  # a tie the talk after it takes back (tie_context.py)
        spoken = laughed_off(transcript, spoken)  # a promise the talk after it laughs off (promise_context.py)
    if "qualify_claims" not in off:
        spoken = qualify_claims(transcript, spoken, known)
    # a rule's "we" is resolved to a person only now (addressee.py): the stage may have said the same tie
    return _dedupe(resolve_recipients(transcript, spoken + from_labels, owner_names))


def rules_off() -> frozenset[str]:
    """The rule names RULES_OFF_ENV lists (none by default)."""
    return frozenset(n for n in (x.strip() for x in os.environ.get(RULES_OFF_ENV, "").split(",")) if n)


def _on(rule: Callable[..., None], off: frozenset[str]) -> bool:
    return rule.__name__ not in off


def _english_rules(ctx: Ctx, off: frozenset[str] = frozenset()) -> None:
    low = ctx.sent.lower()
    if "," in low and "rule_appositive" not in off:
        rule_appositive(ctx, lenient=_WITNESS_RX.search(low) is not None)
    for rx, rule in _RULES_RX:
        if rx.search(low) and _on(rule, off):
            rule(ctx)


def _unglossed(out: list[ExtractedAssertion], since: int, text: str, glossed: str) -> None:
    """The claims read on a glossed sentence (code_switch.gloss: same offsets) quoted from
    what was said; a literal taken from the glossed words is put back in them too."""
    for i in range(since, len(out)):
        a = out[i]
        literal = a.object_literal
        if literal:
            at = glossed.find(literal, a.span_start, a.span_end)
            if at >= 0:
                literal = text[at : at + len(literal)]
        out[i] = replace(a, quote=text[a.span_start : a.span_end], object_literal=literal)


def _dedupe(items: list[ExtractedAssertion]) -> list[ExtractedAssertion]:
    seen = set()
    kept = []
    for a in items:
        key = (
            a.utterance_idx,
            norm_name(a.subject.name),
            a.predicate,
            norm_name(a.object.name) if a.object else None,
            a.object_literal,
            a.qualifier,
        )
        if key in seen:
            continue
        seen.add(key)
        kept.append(a)
    return kept


def self_introductions(transcript: Transcript) -> dict[str, str]:
    """{speaker label: the name they give themselves} ('Project Manager' -> 'Sarah');
    the first introduction of each speaker wins; labels that already carry the name
    ('Nadia Haddad' saying "I'm Nadia") are left out."""
    found: dict[str, str] = {}
    said: list[str] = []  # what was said before, casefolded: a name said before is greeted, not introduced
    for u in transcript.utterances:
        said.append(u.text.casefold())
        if not u.speaker or u.speaker in found:
            continue
        text = u.text
        prev = transcript.utterances[u.idx - 1] if u.idx > 0 else None
        table = table_intro_name(
            text,
            u.speaker,
            " ".join(said[:-1]) if len(said) > 1 else "",
            asked_name=prev is not None and prev.speaker != u.speaker and asks_name(prev.text),
        )
        if table and not same_person(table[0], u.speaker):
            found[u.speaker] = table[0]  # around a table: "Ben Kowalski. I'm a senior engineer"
            continue
        for s0, s1 in sentences(text):
            low = text[s0:s1].lower()
            if not _SELF_RX.search(low):
                continue
            got = self_intro_name(Ctx(utt_idx=u.idx, speaker=u.speaker, text=text, s0=s0, s1=s1, anchor=None, out=[]))
            if got and not same_person(got[0], u.speaker):
                found[u.speaker] = got[0]
                break
    return found

"""claim_context on French sentences: the pass runs on every rule's output, the French rules'
included (they live on another branch), so its word lists carry French too. The claims are
built as a rule emits them (a verbatim clause of the utterance, first person = speaker)."""

from __future__ import annotations

from datetime import datetime

import pytest

from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.result import ExtractedAssertion, Mention
from backchannel.extraction.rules.claims import qualify_claims


def meeting(*cues: tuple[str, str]) -> Transcript:
    return Transcript(
        [Utterance(i, who, text) for i, (who, text) in enumerate(cues)], "text", meeting_date=datetime(2026, 5, 4, 10)
    )


def first_person_claim(t: Transcript, idx: int, clause: str, predicate: str = "worked_with") -> ExtractedAssertion:
    text = t.utterances[idx].text
    start = text.index(clause)
    return ExtractedAssertion(
        Mention(t.utterances[idx].speaker, "person", is_speaker=True),
        predicate,
        idx,
        start,
        start + len(clause),
        clause,
        object=Mention("Sophie Martin", "person"),
    )


@pytest.mark.parametrize(
    "text, clause",
    [
        ("Si j'avais connu Sophie Martin à l'époque, on aurait gagné le contrat.", "j'avais connu Sophie Martin"),
        (
            "Je n'ai jamais travaillé avec Sophie Martin, malheureusement.",
            "Je n'ai jamais travaillé avec Sophie Martin",
        ),
        ("Je connais Sophie Martin personnellement... Non, je plaisante.", "Je connais Sophie Martin personnellement"),
        ("Tu parles, je connais Sophie Martin personnellement.", "je connais Sophie Martin personnellement"),
    ],
)
def test_french_hypothetical_negation_and_retraction_drop_the_claim(text, clause):
    t = meeting(("Alex Moreau", "Et chez Globex ?"), ("Hugo Mercier", text))
    assert qualify_claims(t, [first_person_claim(t, 1, clause, "knows")]) == []


def test_french_retraction_in_the_next_turn():
    t = meeting(
        ("Hugo Mercier", "J'ai travaillé avec Sophie Martin chez Globex."),
        ("Alex Moreau", "Vraiment ?"),
        ("Hugo Mercier", "Non, pas vraiment."),
    )
    assert qualify_claims(t, [first_person_claim(t, 0, "J'ai travaillé avec Sophie Martin chez Globex")]) == []


def test_a_french_condition_in_another_clause_leaves_the_claim():
    t = meeting(("Hugo Mercier", "Si tu as besoin, je connais bien Sophie Martin."))
    (a,) = qualify_claims(t, [first_person_claim(t, 0, "je connais bien Sophie Martin", "knows")])
    assert a.subject.is_speaker and a.trust_reasons == ()


def test_french_hedge():
    t = meeting(("Hugo Mercier", "Je crois que j'ai travaillé avec Sophie Martin chez Globex."))
    (a,) = qualify_claims(t, [first_person_claim(t, 0, "j'ai travaillé avec Sophie Martin chez Globex")])
    assert a.trust_reasons == ("hedged",)


@pytest.mark.parametrize(
    "text",
    [
        "Paul Girard nous a dit : j'ai travaillé avec Sophie Martin chez Globex.",
        "« J'ai travaillé avec Sophie Martin chez Globex », a dit Paul Girard.",
    ],
)
def test_french_quote_frames_attribute_to_the_quoted_person(text):
    t = meeting(("Hugo Mercier", text))
    clause = (
        "j'ai travaillé avec Sophie Martin chez Globex"
        if "j'ai" in text
        else "J'ai travaillé avec Sophie Martin chez Globex"
    )
    (a,) = qualify_claims(t, [first_person_claim(t, 0, clause)])
    assert a.subject.name == "Paul Girard" and not a.subject.is_speaker
    assert a.modality == "reported" and a.trust_reasons == ("second_hand",)


def test_french_speaker_quoting_themselves_stays_first_hand():
    t = meeting(("Hugo Mercier", "Je leur ai dit : j'ai travaillé avec Sophie Martin chez Globex."))
    (a,) = qualify_claims(t, [first_person_claim(t, 0, "j'ai travaillé avec Sophie Martin chez Globex")])
    assert a.subject.is_speaker and a.trust_reasons == ()


def test_an_unowned_french_quote_yields_no_first_person_claim():
    t = meeting(("Hugo Mercier", "Quelqu'un au bar m'a dit : j'ai travaillé avec Sophie Martin chez Globex."))
    assert qualify_claims(t, [first_person_claim(t, 0, "j'ai travaillé avec Sophie Martin chez Globex")]) == []

"""French rules (rules/fr/relations.py, rules/claims.py, mentions/names_fr.py): the conditional of hearsay
reports a rumour ("il paraît que X serait parti de chez Y"), a sentence opener is no part of a name, a first
name stands for the one full name said before (neither of two), "il avait travaillé avec" has its subject in the frame.
Fresh sentences, in no suite and not in the evaluation set; the rules alone (no model)."""

from __future__ import annotations

from datetime import datetime

from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance


def facts(*lines: tuple[str, str]) -> list[tuple[str, str, str | None, str]]:
    t = Transcript(
        [Utterance(i, sp, text) for i, (sp, text) in enumerate(lines)],
        "text",
        title="Appel",
        meeting_date=datetime(2026, 4, 14, 10, 0),
        participants=["Alex Moreau", "Léa Garnier"],
    )
    return [
        (a.predicate, a.subject.name, a.object.name if a.object else None, a.stance)
        for a in offline.extract(t, meaning=False)
    ]


def test_the_conditional_of_hearsay_is_a_rumour_not_a_condition():
    said = facts(("Léa Garnier", "Il paraît que Noémie Vasseur serait partie de chez Danone, je crois."))
    assert said == [("left", "Noémie Vasseur", "Danone", "rumour")]


def test_the_conditional_without_hearsay_is_still_a_condition():
    assert facts(("Léa Garnier", "Noémie Vasseur serait partie de chez Danone si on lui avait laissé le choix.")) == []


def test_an_opening_adverb_is_no_part_of_the_name_after_it():
    assert facts(("Léa Garnier", "Apparemment Odile Brun a rejoint Safran en janvier.")) == [
        ("works_at", "Odile Brun", "Safran", "rumour")
    ]


def test_a_first_name_is_the_one_full_name_said_before_and_neither_when_two_fit():
    one = facts(
        ("Léa Garnier", "Hier j'ai déjeuné avec Thibault Lacroix, toujours aussi drôle."),
        ("Léa Garnier", "Apparemment Thibault aurait rejoint Decathlon."),
    )
    assert ("works_at", "Thibault Lacroix", "Decathlon", "rumour") in one
    two = facts(
        ("Léa Garnier", "Hier j'ai vu Thibault Lacroix et Thibault Marchand au salon."),
        ("Léa Garnier", "Apparemment Thibault aurait rejoint Decathlon."),
    )
    assert not any(f[0] == "works_at" and f[1] in ("Thibault Lacroix", "Thibault Marchand") for f in two)


def test_il_avait_travaille_avec_is_the_person_named_before_it():
    said = facts(("Léa Garnier", "Bastien Roche m'a dit qu'il avait travaillé avec Inès Carpentier chez Thales."))
    assert ("worked_with", "Bastien Roche", "Inès Carpentier", "reported") in said

"""French offline extraction: the relations the English rules find, said in
French, with the same verbatim-quote rule; French dates; the language check."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from backchannel.core.vocabulary import MODALITIES, PREDICATES
from backchannel.extraction.dates.en import resolve_phrase
from backchannel.extraction.dates.fr import find_date_phrases_fr
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.offline import extract
from backchannel.extraction.rules.fr.relations import looks_french

MEETING = datetime(2026, 10, 2, 10, 0)  # a Friday


def run(*texts: str, speaker: str = "Claire", lines=None, when: datetime = MEETING):
    lines = lines or [("Alex", "Bonjour à tous."), ("Bob", "Bonjour."), *((speaker, x) for x in texts)]
    t = Transcript([Utterance(i, sp, x) for i, (sp, x) in enumerate(lines)], "text", meeting_date=when)
    out = extract(t, owner_names=["Alex Moreau", "Alex"])
    for a in out:  # the contract every extraction keeps
        assert t.utterances[a.utterance_idx].text[a.span_start : a.span_end] == a.quote
        assert a.predicate in PREDICATES and a.modality in MODALITIES
        assert (a.object is None) != (a.object_literal is None)
    return out


def facts(out):
    return {(a.predicate, a.subject.name, a.object.name if a.object else a.object_literal, a.qualifier) for a in out}


def one(out, predicate):
    hits = [a for a in out if a.predicate == predicate]
    assert len(hits) == 1, out
    return hits[0]


# ---------------------------------------------------------------- the language check


@pytest.mark.parametrize(
    "text,french",
    [
        ("Marc travaille chez Acme depuis mars.", True),
        ("Je connais Marc.", True),
        ("Paul a quitté Globex l'an dernier.", True),
        ("Sophie Martin est la DSI de Globex.", True),
        ("I'll send you the pricing by Friday.", False),
        ("Jean-Pierre de la Fontaine is the managing director of Globex.", False),
        ("Élodie Durand is head of sales at the Bank of England.", False),
        ("Nick de la Fontaine introduced me to Marc Hughes.", None),  # too short: the utterance decides
    ],
)
def test_language_check(text, french):
    assert looks_french(text) is french


def test_english_sentence_with_french_names_stays_english():
    out = run("Élodie de la Fontaine left Cardiff and Vale College last year.", "I know Élodie de la Fontaine well.")
    assert ("left", "Élodie de la Fontaine", "Cardiff and Vale College", None) in facts(out)
    assert ("knows", "Claire", "Élodie de la Fontaine", None) in facts(out)


# ---------------------------------------------------------------- roles and employment


@pytest.mark.parametrize(
    "text,person,org,title",
    [
        ("Marc travaille chez Acme.", "Marc", "Acme", None),
        ("Sophie Martin est la DSI de Globex.", "Sophie Martin", "Globex", "CIO"),
        ("Sophie Martin est le PDG d'Initech.", "Sophie Martin", "Initech", "CEO"),
        ("Claire Dubois est directrice financière chez Acme.", "Claire Dubois", "Acme", "CFO"),
        (
            "Julie Petit, directrice générale de la Banque de France, était là.",
            "Julie Petit",
            "Banque de France",
            "managing director",
        ),
        ("La DSI d'Acme, c'est Sophie Martin.", "Sophie Martin", "Acme", "CIO"),
        ("Je suis chez Hooli.", "Claire", "Hooli", None),
        ("Je suis la directrice technique de Hooli.", "Claire", "Hooli", "CTO"),
    ],
)
def test_works_at(text, person, org, title):
    a = one(run(text), "works_at")
    assert (a.subject.name, a.object.name, a.qualifier) == (person, org, title)
    assert a.modality == ("stated" if a.subject.is_speaker else "reported")


def test_since_march_looks_backwards_in_french():
    a = one(run("Marc travaille chez Acme depuis mars."), "works_at")
    assert (a.valid_from, a.date_phrase) == (date(2026, 3, 1), "depuis mars")
    a = one(run("Sophie est devenue CTO chez Acme en mars."), "works_at")
    assert (a.qualifier, a.valid_from) == ("CTO", date(2026, 3, 1))


def test_joined_and_left():
    a = one(run("Sophie a rejoint Globex en 2019."), "works_at")
    assert (a.object.name, a.valid_from) == ("Globex", date(2019, 1, 1))
    a = one(run("Paul a quitté Globex l'an dernier."), "left")
    assert (a.object.name, a.valid_to) == ("Globex", date(2025, 12, 31))
    a = one(run("Paul est l'ancien DSI d'Acme."), "left")
    assert (a.subject.name, a.object.name, a.qualifier) == ("Paul", "Acme", "CIO")


# ---------------------------------------------------------------- people


def test_worked_with_and_dates():
    a = one(run("J'ai travaillé avec Marc Dupont chez Acme de 2016 à 2021."), "worked_with")
    assert (a.subject.name, a.object.name, a.qualifier) == ("Claire", "Marc Dupont", "Acme")
    assert (a.valid_from, a.valid_to) == (date(2016, 1, 1), date(2021, 12, 31))


@pytest.mark.parametrize(
    "text,other",
    [
        ("Marc Dupont et moi avons travaillé ensemble chez Acme.", "Marc Dupont"),
        ("Paul était mon ancien collègue chez Acme.", "Paul"),
        ("Mon ancienne collègue Sophie Martin est très bien.", "Sophie Martin"),
    ],
)
def test_worked_with_forms(text, other):
    a = one(run(text), "worked_with")
    assert (a.subject.name, a.object.name) == ("Claire", other)


def test_knows_and_introductions():
    assert ("knows", "Claire", "Sophie Martin", None) in facts(run("Je connais bien Sophie Martin."))
    out = run("Marc m'a présenté Sophie Martin il y a deux ans.")
    assert {
        ("knows", "Claire", "Sophie Martin", None),
        ("knows", "Marc", "Sophie Martin", None),
        ("introduced", "Marc", "Sophie Martin", None),
    } <= facts(out)
    out = run("Je vous présente Nadia Haddad.")
    assert facts(out) == {("knows", "Claire", "Nadia Haddad", None), ("introduced", "Claire", "Nadia Haddad", None)}
    assert ("knows", "Claire", "Julie Petit", None) in facts(run("Mon amie Julie Petit travaille pour Hooli."))


@pytest.mark.parametrize(
    "text",
    [
        "Je ne connais pas Sophie Martin.",
        "Si je connaissais Sophie Martin, ce serait plus simple.",
        "Est-ce que Marc travaille chez Acme ?",
        "Je n'ai jamais travaillé avec Paul.",
        "Bonjour Marc, merci d'être là.",
        "On se voit jeudi prochain.",
    ],
)
def test_negated_conditional_and_chatter_say_nothing(text):
    assert run(text) == []


# ---------------------------------------------------------------- commitments


def test_commitments_with_recipient_and_due_date():
    lines = [
        ("Alex", "Merci pour la démo. Pouvez-vous m'envoyer le devis ?"),
        ("Fatima", "Je vous envoie le devis d'ici vendredi."),
    ]
    a = one(run(lines=lines), "committed_to")
    assert (a.subject.name, a.object_literal, a.valid_to, a.recipient.name) == (
        "Fatima",
        "vous envoie le devis",
        date(2026, 10, 9),
        "Alex",
    )
    a = one(run("Je vais vous présenter Sophie Martin jeudi prochain."), "committed_to")
    assert (a.object_literal, a.valid_to) == ("vous présenter Sophie Martin", date(2026, 10, 8))
    assert a.recipient is None  # three people, nobody addressed


def test_someone_elses_commitment_in_french():
    a = one(run("Marc va m'envoyer le contrat d'ici le 15."), "committed_to")
    assert (a.subject.name, a.subject.is_speaker, a.recipient.name, a.valid_to) == (
        "Marc",
        False,
        "Claire",
        date(2026, 10, 15),
    )


@pytest.mark.parametrize(
    "text",
    [
        "Je vous rappelle plus tard.",
        "Je reviens vers vous.",
        "Je vous tiens au courant.",
        "Je vous envoie mes amitiés.",
        "Je prépare le budget.",  # a description of one's week, not a promise
        "Je ne vous enverrai pas le devis.",
        "Je pourrais vous envoyer le devis.",
    ],
)
def test_french_small_talk_is_not_a_commitment(text):
    assert [a for a in run(text) if a.predicate == "committed_to"] == []


# ---------------------------------------------------------------- dates

ANCHOR = date(2026, 10, 2)


@pytest.mark.parametrize(
    "phrase,start,end",
    [
        ("depuis mars", date(2026, 3, 1), None),
        ("depuis le printemps dernier", date(2026, 3, 1), None),
        ("il y a deux ans", date(2024, 10, 2), date(2024, 10, 2)),
        ("jeudi prochain", date(2026, 10, 8), date(2026, 10, 8)),
        ("d'ici vendredi", None, date(2026, 10, 9)),
        ("de 2016 à 2021", date(2016, 1, 1), date(2021, 12, 31)),
        ("entre 2016 et 2021", date(2016, 1, 1), date(2021, 12, 31)),
        ("en mars 2019", date(2019, 3, 1), date(2019, 3, 31)),
        ("la semaine prochaine", date(2026, 10, 5), date(2026, 10, 11)),
        ("l'an dernier", date(2025, 1, 1), date(2025, 12, 31)),
        ("demain", date(2026, 10, 3), date(2026, 10, 3)),
        ("dans deux semaines", date(2026, 10, 16), date(2026, 10, 16)),
        ("d'ici la fin du mois", None, date(2026, 10, 31)),
        ("d'ici le 15", None, date(2026, 10, 15)),
        ("vendredi dernier", date(2026, 9, 25), date(2026, 9, 25)),
        ("depuis trois ans", date(2023, 10, 2), None),  # started three years ago, still true
        ("ces dernières années", date(2023, 10, 2), date(2026, 10, 2)),
        ("de mars 2016 à juin 2021", date(2016, 3, 1), date(2021, 6, 30)),
        ("d'ici la fin de la journée", None, date(2026, 10, 2)),
        ("ce week-end", date(2026, 10, 3), date(2026, 10, 4)),
        ("avant le week-end prochain", None, date(2026, 10, 9)),
        ("cet après-midi", date(2026, 10, 2), date(2026, 10, 2)),
    ],
)
def test_french_date_phrases(phrase, start, end):
    assert [p for _, _, p in find_date_phrases_fr(f"Elle est là {phrase} , voilà.")] == [phrase]
    r = resolve_phrase(phrase, ANCHOR)
    assert (r.start, r.end, r.phrase) == (start, end, phrase)


@pytest.mark.parametrize("text", ["Mars est une planète.", "Elle a mai dans son nom.", "Le 15 du mois."])
def test_bare_french_months_need_a_preposition(text):
    assert find_date_phrases_fr(text) == []


# ---------------------------------------------------------------- a real ingest


def test_french_meeting_ingested_into_the_store(home: Path, store):
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import ingest_file

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\n')
    f = home / "point-acme.md"
    f.write_text(
        """---
title: Point Acme
date: 2026-10-02
participants: [Alex Moreau, Fatima Haddad]
---
Alex: Merci d'être venue. Où en est Acme ?
Fatima: Sophie Martin est la DSI d'Acme depuis mars. Je la connais bien, d'ailleurs j'ai travaillé avec Sophie Martin chez Globex de 2016 à 2021.
Alex: Parfait. Pouvez-vous me la présenter ?
Fatima: Oui, je vous présenterai Sophie Martin jeudi prochain. Et je vous envoie le devis d'ici vendredi.
Alex: Je vous rappelle plus tard.
""",
        encoding="utf-8",
    )
    assert ingest_file(store, load_settings(paths), f).status == "ingested"
    rows = store.query(
        """SELECT a.predicate, s.name AS subject, coalesce(o.name, a.object_literal) AS object, a.qualifier,
                  a.valid_from, a.valid_to, r.name AS recipient, a.quote, u.text, a.span_start, a.span_end
           FROM assertions a JOIN entities s ON s.id = a.subject_id LEFT JOIN entities o ON o.id = a.object_id
           LEFT JOIN entities r ON r.id = a.recipient_id
           JOIN utterances u ON u.source_id = a.source_id AND u.idx = a.utterance_idx
           ORDER BY a.utterance_idx, a.span_start, a.predicate"""
    )
    got = {
        (r["predicate"], r["subject"], r["object"], r["qualifier"], r["valid_from"], r["valid_to"], r["recipient"])
        for r in rows
    }
    assert got == {
        ("works_at", "Sophie Martin", "Acme", "CIO", date(2026, 3, 1), None, None),
        ("worked_with", "Fatima Haddad", "Sophie Martin", "Globex", date(2016, 1, 1), date(2021, 12, 31), None),
        ("knows", "Fatima Haddad", "Sophie Martin", None, None, None, None),  # "Je la connais bien"
        (
            "committed_to",
            "Fatima Haddad",
            "vous présenterai Sophie Martin",
            None,
            None,
            date(2026, 10, 8),
            "Alex Moreau",
        ),
        ("committed_to", "Fatima Haddad", "vous envoie le devis", None, None, date(2026, 10, 9), "Alex Moreau"),
    }
    for r in rows:  # the verbatim-quote rule, in the store
        assert r["text"][r["span_start"] : r["span_end"]] == r["quote"]


def test_french_pronouns_point_at_the_one_person_named_before_not_at_an_organisation():
    out = run("Marie Leroy a quitté Globex en septembre, elle est maintenant chez Hooli.")
    assert ("works_at", "Marie Leroy", "Hooli", None) in facts(out)
    assert ("left", "Marie Leroy", "Globex", None) in facts(out)
    assert ("knows", "Claire", "Thomas Bernard", None) in facts(run("Thomas Bernard ? Je le connais bien."))


def test_a_french_reply_to_a_request_names_the_recipient():
    lines = [
        ("Alex", "Bonjour."),
        ("Camille", "Bonjour."),
        ("Alex", "Tu pourrais nous mettre en relation ?"),
        ("Julien", "Oui, je t'envoie son contact demain."),
    ]
    a = one(run(lines=lines), "committed_to")
    assert (a.object_literal, a.recipient.name, a.valid_to) == ("t'envoie son contact", "Alex", date(2026, 10, 3))


@pytest.mark.parametrize(
    "text,promise,recipient,due",
    [
        (
            "Marc m'a dit qu'il m'enverrait le contrat d'ici vendredi.",
            "m'enverrait le contrat",
            "Claire",
            date(2026, 10, 9),
        ),
        (
            "Marc a promis de m'envoyer le devis la semaine prochaine.",
            "m'envoyer le devis",
            "Claire",
            date(2026, 10, 11),
        ),
    ],
)
def test_reported_french_commitments_are_second_hand(text, promise, recipient, due):
    a = one(run(text), "committed_to")
    assert (a.subject.name, a.object_literal, a.recipient.name, a.valid_to) == ("Marc", promise, recipient, due)
    assert "second_hand" in a.trust_reasons


def test_a_reported_refusal_is_no_commitment():
    assert run("Sophie m'a dit qu'elle ne m'enverrait pas le contrat.") == []


def test_a_french_self_introduction_with_a_title_is_the_speakers():
    a = one(run("Bonjour, je suis Léa, directrice financière de Orano Services.", speaker="Léa Moreau"), "works_at")
    assert (a.subject.name, a.subject.is_speaker, a.object.name, a.qualifier, a.modality) == (
        "Léa Moreau",
        True,
        "Orano Services",
        "CFO",
        "stated",
    )


def test_depuis_a_duration_starts_then_and_is_still_true():
    a = one(run("Je travaille chez Alpina depuis deux ans maintenant."), "works_at")
    assert (a.subject.name, a.object.name, a.valid_from, a.valid_to) == ("Claire", "Alpina", date(2024, 10, 2), None)


@pytest.mark.parametrize(
    "text,pred,person,org,title",
    [
        ("Marc Dupont dirige Globex depuis 2020, je crois.", "works_at", "Marc Dupont", "Globex", "head"),
        ("Sophie Martin a fondé Hooli en 2015.", "works_at", "Sophie Martin", "Hooli", "founder"),
        ("Paul a cofondé Initech avec deux amis.", "works_at", "Paul", "Initech", "co-founder"),
        ("Paul dirigeait Initech à l'époque.", "left", "Paul", "Initech", "head"),
    ],
)
def test_leading_and_founding(text, pred, person, org, title):
    a = one(run(text), pred)
    assert (a.subject.name, a.object.name, a.qualifier) == (person, org, title)


# ---------------------------------------------------------------- by mechanism: sentences in no suite


def _said(text: str, before: str = "Bonjour."):
    return run(lines=[("Alex", before), ("Inès Roy", text)])


def test_a_title_after_an_adverb_and_after_comme():
    assert ("has_title", "Inès Roy", "directrice commerciale", None) in facts(
        _said("Je suis simplement directrice commerciale, rien de plus.")
    )
    assert ("works_at", "Inès Roy", "Qonto", "CFO") in facts(
        _said("Depuis lundi je suis chez Qonto comme directrice financière.")
    )


def test_an_internship_is_a_past_post():
    a = one(_said("J'ai fait mon stage chez Dassault Systèmes en 2019."), "works_at")
    assert a.object.name == "Dassault Systèmes" and a.valid_to == date(2019, 12, 31)


def test_an_article_before_the_organisation():
    a = one(_said("Il y a deux ans j'ai quitté la Société Générale."), "left")
    assert a.object.name == "Société Générale"


def test_il_across_turns_and_hearsay_is_a_rumour():
    a = one(
        _said("Oui, apparemment il rejoint Danone comme DAF.", before="Tu te souviens de Hugo Perrin ?"), "works_at"
    )
    assert (a.subject.name, a.object.name, a.qualifier, a.stance) == ("Hugo Perrin", "Danone", "CFO", "rumour")


def test_a_conditional_without_hearsay_stays_hypothetical():
    assert not _said("Léa Garnier aurait quitté Orange si on l'avait augmentée.")


# ---------------------------------------------------------------- English and French in one sentence


def test_an_english_frame_with_a_french_preposition():
    a = one(_said("Honnêtement, I worked with Hugo Perrin chez Danone pendant deux ans."), "worked_with")
    assert (a.object.name, a.qualifier) == ("Hugo Perrin", "Danone")
    assert "chez Danone" in a.quote  # quoted as said, not as glossed


def test_each_clause_gets_its_language():
    got = facts(_said("J'ai quitté Orange l'an dernier, and now I'm at Qonto."))
    assert ("left", "Inès Roy", "Orange", None) in got
    out = _said("Je vous envoie le compte rendu, and I'll call you jeudi.")
    promises = [a for a in out if a.predicate == "committed_to"]
    assert len(promises) == 2
    assert any(a.valid_to == date(2026, 10, 8) for a in promises)  # "jeudi", a French day in an English clause


def test_a_mixed_question_asserts_nothing_in_french():
    assert not [a for a in _said("Tu connais Hugo Perrin, do you know him?") if a.predicate == "knows"]


def test_language_runs_of_a_mixed_sentence():
    from backchannel.extraction.rules.fr.code_switch import english_frame, language_runs

    s = "Bon, je t'envoie le devis, but I'll be late."
    runs = [(s[a:b].strip(" ,"), lang) for a, b, lang in language_runs(s, 0, len(s), "fr")]
    assert runs == [("Bon, je t'envoie le devis", "fr"), ("but I'll be late.", "en")]
    assert english_frame(s) and not english_frame("Je t'envoie le devis demain matin.")
    s = "I worked on it, on Monday, and Marc was there."
    assert [lang for _a, _b, lang in language_runs(s, 0, len(s), "en")] == ["en"]
    s = "Me and Priya worked on a pilot , and I think she will demo it ."  # English "on a", not "on a fait"
    assert [lang for _a, _b, lang in language_runs(s, 0, len(s), "en")] == ["en"]


def test_a_plan_announced_as_a_cleft_is_a_promise():
    a = one(_said("Ce que je vais faire, c'est vous préparer une proposition chiffrée lundi."), "committed_to")
    assert a.object_literal == "vous préparer une proposition chiffrée" and a.valid_to == date(2026, 10, 5)
    assert not _said("Ce que je vais faire ? Je ne sais pas encore.")


def test_an_elided_article_does_not_end_the_promise():
    a = one(_said("Ce que je veux faire, c'est partager le tableau avec l'équipe."), "committed_to")
    assert a.object_literal == "partager le tableau avec l'équipe"


def test_family_and_having_studied_together_are_ties():
    assert ("knows", "Inès Roy", "Théo Marchal", None) in facts(_said("Mon cousin Théo Marchal bosse dans la finance."))
    got = facts(_said("Romane Faure ? On s'est connues à la fac, à Lyon."))
    assert got == {("knows", "Inès Roy", "Romane Faure", None)}  # Lyon, after the words, is a place
    assert not _said("Avec Romane Faure, on n'a jamais fait de projet ensemble.")


def test_a_title_la_bas_is_at_the_organisation_asked_about():
    lines = [
        ("Alex", "Tu as quelqu'un chez Veolia ?"),
        ("Inès Roy", "Oui, Margot Lenoir, elle est directrice technique là-bas, on a fait Polytechnique ensemble."),
    ]
    got = facts(run(lines=lines))
    assert ("works_at", "Margot Lenoir", "Veolia", "CTO") in got
    assert ("knows", "Inès Roy", "Margot Lenoir", None) in got
    two = [
        ("Alex", "Tu connais quelqu'un chez Veolia ou chez Suez ?"),
        ("Inès Roy", "Oui, Margot Lenoir, elle est DSI là-bas."),
    ]
    assert not [a for a in run(lines=two) if a.predicate == "works_at"]  # two organisations: which one?


def test_knowing_the_name_only_is_no_tie_and_mais_ends_the_clause():
    # knowing *of* someone is no tie, said either way: stored as what it is, a knows of stance knows_of
    # (core/ties.py: no reader of ties takes it for one)
    for said in (
        "Romane Faure ? Je la connais de nom, mais je ne l'ai jamais rencontrée.",
        "Romane Faure ? Je connais son nom, c'est tout.",
    ):
        assert [(a.predicate, a.object.name, a.stance) for a in _said(said)] == [("knows", "Romane Faure", "knows_of")]
    a = one(_said("Romane Faure ? Je la connais bien, mais je ne l'ai pas vue depuis longtemps."), "knows")
    assert a.object.name == "Romane Faure" and "depuis" not in a.quote


def test_english_words_that_look_french_are_not_glossed_in_english():
    from backchannel.extraction.rules.fr.code_switch import gloss

    s = "She sang in an ensemble at Au Bon Pain, pour me a coffee."
    assert gloss(s, [(0, len(s), "en")]) == s
    s = "I worked with Marc chez Globex, c'est un ami."
    assert gloss(s, [(0, 31, "en"), (31, len(s), "fr")]).startswith("I worked with Marc at   Globex,")

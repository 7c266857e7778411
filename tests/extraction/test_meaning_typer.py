"""The name typer (extraction/meaning/typer.py): a lone one-word name with no evidence of being an
organisation is read as one from the words around it. On sentences written for this file only (in no
bank file, name list, story or split of the evaluation set), through the real embedding model and the
shipped typer.npz; the organisations named here are invented, so the model cannot know them."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from backchannel import embedding
from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.meaning import typer
from backchannel.extraction.mentions.evidence import lowercase_words


def _typed(*texts: str) -> set[str]:
    return typer.organisations(list(texts), excluded=lambda key: False, lowercase=lowercase_words(texts))


def _extract(*lines: tuple[str | None, str]):
    t = Transcript(
        utterances=[Utterance(idx=i, speaker=s, text=x) for i, (s, x) in enumerate(lines)],
        format="text",
        meeting_date=datetime(2026, 11, 3, 10, 0),
    )
    return offline.extract(t, owner_names=("Alex Moreau",))


def test_a_one_word_name_said_as_a_workplace_is_an_organisation():
    assert _typed("Honestly I think she's gone over to Brightwell, last I heard.") == {"brightwell"}
    assert _typed("He's been with Quorvia since the merger, handles their pricing.") == {"quorvia"}
    assert _typed("Last I heard he was headed to Tavora, something in procurement.") == {"tavora"}


def test_a_surname_said_alone_is_no_organisation():
    assert _typed("Oh, Okonkwo said the numbers looked fine to him.", "I'll ask Okonkwo again tomorrow.") == set()
    assert _typed("I bumped into Lindqvist at the conference, he says hi.") == set()


def test_words_whose_capital_says_nothing_are_not_read():
    # a sentence's first word, a word the meeting also writes in lower case, a platform people use
    assert _typed("Speculation grows that the merger is off.", "Hang on, my screen froze.") == set()
    assert _typed("The Harvest team signed off.", "We finished the harvest early this year.") == set()
    assert _typed("I only know him from LinkedIn, to be fair.") == set()
    # a brand the meeting says as a thing somewhere, after an article, is not typed anywhere in it
    assert (
        _typed("Because I'm gonna switch to the Brandle program.", "What bugs me about Brandle is the menus.") == set()
    )
    # a word of a longer name ("Habitat for Humanity") or of a run of capitals is the mentions stage's
    assert _typed("She chairs the Habitat for Humanity board.", "Ask Priya Venkatesan about it.") == set()


def test_a_word_read_in_several_sentences_is_typed_by_their_mean():
    texts = ["Talk to Marlow, he knows the figures.", "I think Marlow said he'd call.", "She moved to Marlow in May."]
    found = typer.candidates(texts, excluded=lambda key: False, lowercase=frozenset())
    assert [i for i, _, _ in found["marlow"]] == [0, 1, 2]
    vecs = embedding.span_vectors(texts, [[(a, b)] for _, a, b in found["marlow"]])
    mean = float(typer.p_organisation(vecs).mean())
    assert ("marlow" in _typed(*texts)) == (mean >= typer.BAR)
    assert mean < typer.BAR  # two sentences say a person: one that reads like a workplace is not enough


def test_the_typed_organisation_carries_the_fact():
    out = _extract(
        ("Alex Moreau", "Whatever happened to Mariam Haddad?"),
        ("Jon Pereira", "Mariam? She's with Brightwell now, she heads their pricing team."),
    )
    assert ("Mariam Haddad", "works_at", "Brightwell") in {
        (a.subject.name, a.predicate, a.object.name) for a in out if a.object
    }
    out = _extract(("Jon Pereira", "Ravi Menon and I were both on Halden's graduate scheme, years back."))
    ties = [a for a in out if a.predicate == "worked_with"]
    assert [(a.subject.name, a.object.name, a.qualifier) for a in ties] == [("Jon Pereira", "Ravi Menon", "Halden")]


def test_the_shipped_weights_say_how_they_were_made():
    import json

    meta = json.loads((typer.HERE / "typer.json").read_text())
    check = meta["check_on_unseen_names_and_sentences"]
    assert meta["examples"]["organisations"] > 1000 and check["one_word_names"] > 500
    w, b = typer._weights()
    assert w.shape == (embedding.DIM,) and np.isfinite(w).all() and np.isfinite(b)

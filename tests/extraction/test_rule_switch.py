"""The offline extractor's switch for its English rules (offline.RULES_OFF_ENV), which
bench/rule_ablation.py uses to measure what each rule adds beside the meaning stage, and the
embedding memo that bench turns on (embedding.remember)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from backchannel import embedding
from backchannel.extraction import offline
from backchannel.extraction.formats.transcript import Transcript, Utterance


def _introduced(text: str) -> set[tuple[str, str]]:
    t = Transcript([Utterance(0, "Marc", text)], "text", meeting_date=datetime(2026, 3, 10))
    return {(a.subject.name, a.object.name) for a in offline.extract(t) if a.predicate == "introduced" and a.object}


def test_a_rule_switched_off_by_name_finds_nothing(monkeypatch: pytest.MonkeyPatch):
    # "introduced" is a predicate only rule_knows reads (the meaning stage has no such relation)
    said = "Last spring Dana Whitlock introduced me to Priya Raman."
    assert _introduced(said) == {("Dana Whitlock", "Priya Raman")}
    monkeypatch.setenv(offline.RULES_OFF_ENV, "rule_knows")
    assert offline.rules_off() == {"rule_knows"}
    assert _introduced(said) == set()


def test_no_rule_is_off_by_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(offline.RULES_OFF_ENV, raising=False)
    assert offline.rules_off() == frozenset()
    monkeypatch.setenv(offline.RULES_OFF_ENV, " rule_knows, ,our_people ")
    assert offline.rules_off() == {"rule_knows", "our_people"}


def test_remembered_rows_are_the_rows_computed_afresh():
    texts = ["The boiler in block C is fixed.", "Nobody came to the second session."]
    fresh = embedding.embed(texts)
    embedding.remember(True)
    try:
        first = embedding.embed([texts[1], texts[0], texts[1]])
        again = embedding.embed(texts)
    finally:
        embedding.remember(False)
    assert np.allclose(first, fresh[[1, 0, 1]], atol=1e-6)
    assert np.allclose(again, fresh, atol=1e-6)

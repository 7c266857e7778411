"""Model extraction with a scripted model: verified quotes, speaker attribution,
dates from the meeting date, chunking, and nothing written on a budget stop."""

from __future__ import annotations

import json
import re
from datetime import date, datetime

import pytest

from backchannel.agent.models import Gateway, InvalidOutput, load_litellm
from backchannel.agent.scripted import register_scripted
from backchannel.config import Settings, resolve_paths
from backchannel.config.sections import BudgetSettings, ModelSettings
from backchannel.extractors.chunking import chunk_utterances
from backchannel.extractors.model_extract import extract_with_model, locate_quote, quote_is_verbatim
from backchannel.extractors.transcript import Transcript, Utterance

MEETING = datetime(2025, 9, 18, 10, 0)


@pytest.fixture(scope="module", autouse=True)
def _litellm_once():
    load_litellm()


def gateway(store, name, **models):
    models.setdefault("extract", f"scripted/{name}")
    models.setdefault("backoff_s", 0.0)
    return Gateway(Settings(models=ModelSettings(**models)), store, resolve_paths().ensure())


def transcript() -> Transcript:
    lines = [
        ("Marc", "Good to see you again."),
        ("Marc", "I  worked with Sophie Martin at Acme back in 2019, she was great."),
        ("Me", "Sophie is the CIO of Globex now, isn't she?"),
        ("Marc", "Yes. I 'll send you the pricing by Friday ."),
    ]
    return Transcript([Utterance(i, s, t) for i, (s, t) in enumerate(lines)], "text", title="Catch-up",
                      meeting_date=MEETING)


ANSWER = {"assertions": [
    # whitespace differs from the utterance ("I worked" vs "I  worked"): still verbatim words
    {"utterance": 1, "quote": "I worked with Sophie Martin at Acme back in 2019", "subject": "I",
     "predicate": "worked_with", "object": "Sophie Martin", "qualifier": "Acme", "date_phrase": "in 2019"},
    # cited under the wrong index: found in utterance 2 and attributed to its speaker
    {"utterance": 1, "quote": "Sophie is the CIO of Globex now", "subject": "Sophie Martin",
     "predicate": "works_at", "object": "Globex", "object_kind": "organisation", "qualifier": "CIO",
     "modality": "reported"},
    # hallucinated: Marc never said this
    {"utterance": 1, "quote": "Sophie hates Globex", "subject": "Sophie", "predicate": "mentioned_with",
     "object": "Globex"},
    {"utterance": 3, "quote": "I'll send you the pricing by Friday", "subject": "I", "predicate": "committed_to",
     "object_literal": "send the pricing", "date_phrase": "by Friday", "modality": "commitment"},
    # a pronoun subject cannot be attributed: dropped
    {"utterance": 0, "quote": "Good to see you again", "subject": "you", "predicate": "knows", "object": "Marc"},
]}


def test_hallucinated_quote_is_rejected_and_counted(store):
    script = register_scripted([{"content": ANSWER}], name="mx1")
    t = transcript()
    result = extract_with_model(t, gateway=gateway(store, "mx1"), run_id="R1", owner_names=["Me"])
    assert result.chunks == 1 and result.calls == 1 and len(script.calls) == 1
    assert result.rejected_quotes == 1 and result.unresolved == 1
    assert [r["why"] for r in result.rejected] == ["quote not in source", "unresolvable subject or object"]
    by_pred = {a.predicate: a for a in result.assertions}
    assert set(by_pred) == {"worked_with", "works_at", "committed_to"}
    utterances = {u.idx: u for u in t.utterances}
    assert all(quote_is_verbatim(a, utterances) for a in result.assertions)

    ww = by_pred["worked_with"]
    assert ww.quote == "I  worked with Sophie Martin at Acme back in 2019"  # mapped back to the exact span
    assert ww.subject.is_speaker and ww.subject.name == "Marc"
    assert ww.object.name == "Sophie Martin" and ww.qualifier == "Acme"
    assert (ww.valid_from, ww.valid_to) == (date(2019, 1, 1), date(2019, 12, 31))

    wa = by_pred["works_at"]
    assert wa.utterance_idx == 2 and wa.object.kind == "organisation" and wa.modality == "reported"

    c = by_pred["committed_to"]
    assert c.quote == "I 'll send you the pricing by Friday" and c.object_literal == "send the pricing"
    assert c.valid_to == date(2025, 9, 19) and c.valid_from is None  # the Friday after Thu 18 Sep 2025
    # the prompt carried the vocabulary, the meeting date and the numbered utterances
    prompt = script.calls[0].prompt
    assert "works_at" in prompt and "2025-09-18" in prompt and "[3] Marc:" in prompt


def test_locate_quote_normalises_whitespace_only():
    text = "Right . Yeah , I 've  never\nhandled them ."
    start, end = locate_quote("Yeah, I've never handled them", text)
    assert text[start:end] == "Yeah , I 've  never\nhandled them"
    assert locate_quote("I have never handled them", text) is None


def test_chunks_bound_the_calls_and_overlap_is_deduplicated(store):
    t = Transcript([Utterance(i, "Marc" if i % 2 else "Lea", f"Sentence number {i} says something about work "
                              f"at Initech, which is long enough to count.") for i in range(40)], "text",
                   meeting_date=MEETING)
    chunks = chunk_utterances(t.utterances, max_tokens=120, overlap=2)
    assert len(chunks) > 3 and all(c.tokens <= 120 for c in chunks)
    assert all(a.last_idx - b.first_idx == 1 for a, b in zip(chunks, chunks[1:]))  # two shared utterances

    def responder(messages):  # one assertion per utterance shown: overlaps repeat some
        idxs = [int(i) for i in re.findall(r"^\[(\d+)\]", messages[-1]["content"], re.M)]
        return {"assertions": [{"utterance": i, "quote": f"Sentence number {i} says something", "subject": "I",
                                "predicate": "works_at", "object": "Initech", "object_kind": "organisation"}
                               for i in idxs]}

    register_scripted([], name="mx2", responder=responder)
    result = extract_with_model(t, gateway=gateway(store, "mx2", chunk_tokens=120), run_id="R2")
    assert result.calls == result.chunks == len(chunks)
    assert sorted(a.utterance_idx for a in result.assertions) == list(range(40))  # each fact once


def test_malformed_answer_raises_after_one_repair(store):
    register_scripted([{"content": '{"assertions": [{"utterance": 1'}, {"content": {"facts": []}}], name="mx3")
    with pytest.raises(InvalidOutput):
        extract_with_model(transcript(), gateway=gateway(store, "mx3"), run_id="R3")
    outcomes = [r[0] for r in store.con.execute("SELECT outcome FROM model_calls ORDER BY id").fetchall()]
    assert outcomes == ["invalid_output", "invalid_output"]


def test_budget_stop_writes_nothing_for_the_source(store, home):
    from backchannel.extractors.ingest import ingest_file

    lines = "\n".join(f"{'Marc' if i % 2 else 'Lea'}: Item {i}: I worked with Sophie Martin at Acme for years."
                      for i in range(30))
    path = home / "2025-09-18 catch-up.txt"
    path.write_text(lines + "\n")
    answer = {"assertions": [{"utterance": 1, "quote": "I worked with Sophie Martin at Acme", "subject": "I",
                              "predicate": "worked_with", "object": "Sophie Martin", "qualifier": "Acme"}]}
    script = register_scripted([{"content": answer, "repeat": True}], name="mx4")
    gw = gateway(store, "mx4", chunk_tokens=150,
                 budget=BudgetSettings(per_run_tokens=1500, per_day_tokens=None, per_run_cost_usd=None))
    deferred = ingest_file(store, gw.settings, path, gateway=gw, run_id="R4")
    assert deferred.status == "deferred" and "budget" in deferred.error
    assert 1 <= len(script.calls) < 6  # some chunks were extracted, then the budget stopped the source
    for table in ("sources", "utterances", "assertions"):
        assert store.scalar(f"SELECT count(*) FROM {table}") == 0, table
    stopped = store.query("SELECT run_id, error FROM model_calls WHERE outcome = 'budget_stopped'")
    assert len(stopped) == 1 and stopped[0]["run_id"] == "R4" and "per-run" in stopped[0]["error"]
    # when budget returns (another run), the same file ingests whole
    gw.settings.models.budget.per_run_tokens = None
    out = ingest_file(store, gw.settings, path, gateway=gw, run_id="R5")
    assert out.status == "ingested" and out.assertions >= 1
    assert json.loads(json.dumps(out.to_dict()))["status"] == "ingested"

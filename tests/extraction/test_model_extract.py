"""Model extraction with a scripted model: verified quotes, speaker attribution,
dates from the meeting date, chunking, and nothing written on a budget stop."""

from __future__ import annotations

import json
import re
from datetime import date, datetime

import pytest

from backchannel.agent.models import Gateway, InvalidOutput, load_litellm
from backchannel.config import Settings, resolve_paths
from backchannel.config.sections import BudgetSettings, ModelSettings
from backchannel.extraction.chunking import chunk_utterances
from backchannel.extraction.formats.transcript import Transcript, Utterance
from backchannel.extraction.model import extract_with_model, locate_quote, quote_is_verbatim
from tests.support.scripted_models import register_scripted

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
    return Transcript(
        [Utterance(i, s, t) for i, (s, t) in enumerate(lines)], "text", title="Catch-up", meeting_date=MEETING
    )


ANSWER = {
    "assertions": [
        # whitespace differs from the utterance ("I worked" vs "I  worked"): still verbatim words
        {
            "utterance": 1,
            "quote": "I worked with Sophie Martin at Acme back in 2019",
            "subject": "I",
            "predicate": "worked_with",
            "object": "Sophie Martin",
            "qualifier": "Acme",
            "date_phrase": "in 2019",
        },
        # cited under the wrong index: found in utterance 2 and attributed to its speaker
        {
            "utterance": 1,
            "quote": "Sophie is the CIO of Globex now",
            "subject": "Sophie Martin",
            "predicate": "works_at",
            "object": "Globex",
            "object_kind": "organisation",
            "qualifier": "CIO",
            "modality": "reported",
        },
        # hallucinated: Marc never said this
        {
            "utterance": 1,
            "quote": "Sophie hates Globex",
            "subject": "Sophie",
            "predicate": "mentioned_with",
            "object": "Globex",
        },
        {
            "utterance": 3,
            "quote": "I'll send you the pricing by Friday",
            "subject": "I",
            "predicate": "committed_to",
            "object_literal": "send the pricing",
            "date_phrase": "by Friday",
            "modality": "commitment",
        },
        # a pronoun subject cannot be attributed: dropped
        {"utterance": 0, "quote": "Good to see you again", "subject": "you", "predicate": "knows", "object": "Marc"},
    ]
}


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
    t = Transcript(
        [
            Utterance(
                i,
                "Marc" if i % 2 else "Lea",
                f"Sentence number {i} says something about work at Initech, which is long enough to count.",
            )
            for i in range(40)
        ],
        "text",
        meeting_date=MEETING,
    )
    chunks = chunk_utterances(t.utterances, max_tokens=120, overlap=2)
    assert len(chunks) > 3 and all(c.tokens <= 120 for c in chunks)
    assert all(a.last_idx - b.first_idx == 1 for a, b in zip(chunks, chunks[1:]))  # two shared utterances

    def responder(messages):  # one assertion per utterance shown: overlaps repeat some
        idxs = [int(i) for i in re.findall(r"^\[(\d+)\]", messages[-1]["content"], re.M)]
        return {
            "assertions": [
                {
                    "utterance": i,
                    "quote": f"Sentence number {i} says something",
                    "subject": "I",
                    "predicate": "works_at",
                    "object": "Initech",
                    "object_kind": "organisation",
                }
                for i in idxs
            ]
        }

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
    from backchannel.extraction.ingest import ingest_file

    lines = "\n".join(
        f"{'Marc' if i % 2 else 'Lea'}: Item {i}: I worked with Sophie Martin at Acme for years." for i in range(30)
    )
    path = home / "2025-09-18 catch-up.txt"
    path.write_text(lines + "\n")
    answer = {
        "assertions": [
            {
                "utterance": 1,
                "quote": "I worked with Sophie Martin at Acme",
                "subject": "I",
                "predicate": "worked_with",
                "object": "Sophie Martin",
                "qualifier": "Acme",
            }
        ]
    }
    script = register_scripted([{"content": answer, "repeat": True}], name="mx4")
    gw = gateway(
        store,
        "mx4",
        chunk_tokens=150,
        budget=BudgetSettings(per_run_tokens=1500, per_day_tokens=None, per_run_cost_usd=None),
    )
    stopped = ingest_file(store, gw.settings, path, gateway=gw, run_id="R4")
    # A file that alone exceeds the per-run budget fails (waiting would not help) and says what to raise.
    assert stopped.status == "failed" and "per_run_tokens" in stopped.error
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


# -- the CLI end to end, a scripted model configured like a real one, no network --

AUDIT_RUNNER = r"""
import atexit, ipaddress, json, runpy, sys

seen = []

def _local(host):
    if host in (None, "", "localhost") or not isinstance(host, str):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name other than localhost: a lookup would leave the machine

def _hook(event, args):
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        addr = args[1] if len(args) > 1 else None
        if isinstance(addr, tuple) and not _local(addr[0]):
            seen.append([event, str(addr)])
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"):
        if not _local(args[0]):
            seen.append([event, str(args[0])])

sys.addaudithook(_hook)
report = sys.argv[1]
heavy = ("litellm", "torch")
atexit.register(lambda: open(report, "w").write(json.dumps(
    {"sockets": seen, "imported": [m for m in heavy if m in sys.modules]})))
module = sys.argv[2]
sys.argv = [module, *sys.argv[3:]]
runpy.run_module(module, run_name="__main__")
"""


def run_audited(home, tmp_path, env_extra, *args, module="backchannel"):
    import os
    import subprocess
    import sys

    runner = tmp_path / "audit_runner.py"
    runner.write_text(AUDIT_RUNNER)
    report = tmp_path / f"sockets-{len(list(tmp_path.glob('sockets-*')))}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_")}
    env.update({"BACKCHANNEL_HOME": str(home), **env_extra})
    env.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)  # the gateway must set it itself
    p = subprocess.run(
        [sys.executable, str(runner), str(report), module, *args], env=env, capture_output=True, text=True, timeout=120
    )
    audit = json.loads(report.read_text())
    run_audited.imported = audit["imported"]
    return p, audit["sockets"]


def test_the_socket_audit_sees_an_outside_connection(home, tmp_path):
    (tmp_path / "probe.py").write_text(
        "import socket\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.connect(('192.0.2.1', 9))\n"  # UDP: no packet needed for connect to be audited
        "s.connect(('127.0.0.1', 9))\n"
        "try:\n    socket.getaddrinfo('telemetry.example.invalid', 443)\nexcept OSError:\n    pass\n"
    )
    p, sockets = run_audited(home, tmp_path, {}, module="probe")
    assert p.returncode == 0, p.stderr
    assert sockets == [["socket.connect", "('192.0.2.1', 9)"], ["socket.getaddrinfo", "telemetry.example.invalid"]]


def test_cli_ingest_with_a_configured_scripted_model_stays_offline_and_resumes_after_budget(home, tmp_path):
    """`backchannel ingest` in a child process, [models] extract from config.toml and
    the script from BACKCHANNEL_SCRIPTED_MODELS: a budget stop defers the files and
    writes nothing; with budget back they ingest whole, the invented quote is
    rejected and counted, a later CIO supersedes the earlier one for
    `assertions --as-of`, and no socket ever leaves loopback."""
    (home / "config.toml").write_text('[models]\nextract = "scripted/e2e"\n\n[models.budget]\nper_day_tokens = 50\n')
    (home / "secrets").mkdir(exist_ok=True)
    (home / "secrets" / "scripted_api_key").write_text("Zq9SecretForScripted\n")
    first = home / "2024-03-10 lunch.txt"
    first.write_text(
        "Marc: I worked with Sophie Martin at Acme back in 2019.\n"
        "Me: And Sophie Martin is the CIO of Acme now, right?\n"
    )
    second = home / "2025-02-20 call.txt"
    second.write_text("Lea: Paul Leroy became the CIO of Acme last month.\nMe: Good to know.\n")
    answer = {
        "assertions": [
            {
                "utterance": 0,
                "quote": "I worked with Sophie Martin at Acme",
                "subject": "I",
                "predicate": "worked_with",
                "object": "Sophie Martin",
                "qualifier": "Acme",
                "date_phrase": "in 2019",
            },
            {
                "utterance": 1,
                "quote": "Sophie Martin is the CIO of Acme",
                "subject": "Sophie Martin",
                "predicate": "works_at",
                "object": "Acme",
                "object_kind": "organisation",
                "qualifier": "CIO",
            },
            {
                "utterance": 0,
                "quote": "Sophie runs Globex",
                "subject": "Sophie Martin",
                "predicate": "works_at",
                "object": "Globex",
                "object_kind": "organisation",
            },  # invented: rejected and counted
        ]
    }
    later = {
        "assertions": [
            {
                "utterance": 0,
                "quote": "Paul Leroy became the CIO of Acme last month",
                "subject": "Paul Leroy",
                "predicate": "works_at",
                "object": "Acme",
                "object_kind": "organisation",
                "qualifier": "CIO",
                "date_phrase": "last month",
                "modality": "reported",
            }
        ]
    }
    scripts = tmp_path / "scripts.json"
    scripts.write_text(
        json.dumps(
            {
                "e2e": [
                    {"match": "Name as mentioned", "content": {"match_id": None, "confidence": 0.1}, "repeat": True},
                    {"match": "I worked with Sophie", "content": answer, "repeat": True},
                    {"match": "Paul Leroy became", "content": later, "repeat": True},
                ]
            }
        )
    )
    from tests.support.scripted_models import PLUGIN_FILE

    env = {"BACKCHANNEL_PLUGINS": PLUGIN_FILE, "BACKCHANNEL_SCRIPTED_MODELS": str(scripts)}

    p, sockets = run_audited(home, tmp_path, env, "ingest", str(first), str(second), "--json")
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["ingested"] == 0 and len(out["deferred"]) == 2 and "budget" in out["deferred"][0]["error"]
    assert sockets == []
    assert run_audited.imported == []  # a spent budget refuses before litellm is imported

    env["BACKCHANNEL_MODELS__BUDGET__PER_DAY_TOKENS"] = "100000"  # the budget is back
    p, sockets = run_audited(home, tmp_path, env, "ingest", str(first), str(second), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["ingested"] == 2
    assert sockets == [] and "litellm" in run_audited.imported

    from backchannel.config import Settings, resolve_paths
    from backchannel.memory.store import Store
    from backchannel.ops import OpEnv, invoke

    s = Store.open(resolve_paths().db_file)
    try:

        def held_on(day):  # what `backchannel assertions --as-of DAY` lists
            rows = invoke(OpEnv(s, Settings(), resolve_paths()), "assertions", {"predicate": "works_at", "as_of": day})
            return [(r["subject"], r["qualifier"], r["object"]) for r in rows]

        assert held_on("2024-06-01") == [("Sophie Martin", "CIO", "Acme")]
        assert held_on("2025-03-01") == [("Paul Leroy", "CIO", "Acme")]
        rows = s.query("SELECT predicate, quote, extractor, valid_from, superseded_by FROM assertions ORDER BY id")
        assert [(r["predicate"], r["quote"], r["extractor"]) for r in rows] == [
            ("worked_with", "I worked with Sophie Martin at Acme", "scripted/e2e"),
            ("works_at", "Sophie Martin is the CIO of Acme", "scripted/e2e"),
            ("works_at", "Paul Leroy became the CIO of Acme last month", "scripted/e2e"),
        ]
        assert str(rows[0]["valid_from"]) == "2019-01-01" and rows[1]["superseded_by"] is not None
        calls = s.query("SELECT outcome, model FROM model_calls WHERE role = 'extract' ORDER BY id")
        assert [c["outcome"] for c in calls] == ["budget_stopped", "budget_stopped", "ok", "ok"]
        assert all(c["model"] == "scripted/e2e" for c in calls)
        ev = s.events(kind="model_extraction")
        assert sorted(e["data"]["rejected_quotes"] for e in ev) == [0, 1]
        assert all(e["data"]["calls"] >= 1 for e in ev)
        assert "Zq9SecretForScripted" not in json.dumps(s.query("SELECT * FROM model_calls"), default=str)
    finally:
        s.close()


def test_model_commitments_get_their_recipient_from_the_meeting(store):
    """A promise the model finds in a 1:1 is made to the other person."""
    register_scripted([{"content": ANSWER}], name="mx_recipient")
    result = extract_with_model(transcript(), gateway=gateway(store, "mx_recipient"), run_id="R9", owner_names=["Me"])
    (promise,) = [a for a in result.assertions if a.predicate == "committed_to"]
    assert (promise.subject.name, promise.recipient.name, promise.valid_to) == ("Marc", "Me", date(2025, 9, 19))

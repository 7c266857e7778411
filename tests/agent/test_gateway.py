"""The model gateway against a scripted model and a loopback fault server:
retries, Retry-After, timeouts, fallbacks, repair, budgets and the audit rows."""

from __future__ import annotations

import json

import pytest

from backchannel.agent.models import BudgetExhausted, Gateway, InvalidOutput, ModelError, OfflineRole, load_litellm
from backchannel.agent.schemas import ResolutionAnswer
from backchannel.config import Settings, resolve_paths
from backchannel.config.sections import BudgetSettings, ModelSettings
from tests.support.fault_server import FaultServer
from tests.support.scripted_models import register_scripted

GOOD = {"match_id": 7, "confidence": 0.9, "reason": "same person"}
MSGS = [
    {"role": "system", "content": "You resolve names."},
    {"role": "user", "content": "Is Marc the same as Marc D.?"},
]


@pytest.fixture(scope="module", autouse=True)
def _litellm_once():
    load_litellm()  # ~5 s, paid once for the module


def make_gateway(store, waits=None, **models):
    paths = resolve_paths().ensure()
    secrets = paths.config_dir / "secrets"
    secrets.mkdir(exist_ok=True)
    (secrets / "openai_api_key").write_text("sk-test-from-secrets\n")
    models.setdefault("retries", 2)
    models.setdefault("backoff_s", 0.01)
    gw = Gateway(Settings(models=ModelSettings(**models)), store, paths)
    if waits is not None:
        gw.sleep = waits.append  # record the waits instead of sleeping through them
    return gw


def calls(store):
    return store.query(
        "SELECT model, attempt, repair, outcome, prompt_tokens, completion_tokens, cost_usd,"
        " latency_ms, error, prompt_hash, run_id, role FROM model_calls ORDER BY id"
    )


def test_scripted_structured_answer_is_validated_and_recorded(store):
    script = register_scripted([{"content": GOOD}], name="gw1")
    gw = make_gateway(store, extract="scripted/gw1")
    c = gw.complete("extract", MSGS, run_id="R1", response_model=ResolutionAnswer, max_tokens=200)
    assert isinstance(c.parsed, ResolutionAnswer) and c.parsed.match_id == 7
    assert c.model == "scripted/gw1" and c.prompt_tokens > 10 and c.completion_tokens > 5
    assert c.cost_usd is None  # not in litellm's price map: unknown, not zero
    rows = calls(store)
    assert [r["outcome"] for r in rows] == ["ok"]
    assert rows[0]["run_id"] == "R1" and rows[0]["role"] == "extract" and len(rows[0]["prompt_hash"]) == 16
    assert rows[0]["prompt_tokens"] == c.prompt_tokens
    # JSON mode for a provider without schema support, with the schema in the prompt
    sent = script.calls[0]
    assert sent.params["response_format"] == {"type": "json_object"}
    assert "match_id" in sent.prompt and sent.params["max_tokens"] == 200


def test_rate_limit_then_success_is_retried_honouring_retry_after(store):
    waits: list[float] = []
    with FaultServer([{"kind": "429", "retry_after": 0.25}, {"kind": "ok", "content": GOOD}]) as srv:
        # a model name from litellm's price map: schema support and a known cost
        gw = make_gateway(store, waits, extract="openai/gpt-4.1-mini", api_base=srv.base_url)
        c = gw.complete("extract", MSGS, run_id="R2", response_model=ResolutionAnswer)
        assert srv.kinds == ["429", "ok"]
        assert srv.auth[0] == "Bearer sk-test-from-secrets"  # the key came from the secrets dir
        # openai models support json_schema: the schema goes as response_format
        assert srv.requests[1]["response_format"]["type"] == "json_schema"
    assert c.parsed.match_id == 7
    assert waits == [0.25]
    assert [(r["outcome"], r["attempt"]) for r in calls(store)] == [("rate_limited", 1), ("ok", 2)]
    assert c.cost_usd is not None and c.cost_usd > 0
    assert calls(store)[1]["cost_usd"] == pytest.approx(c.cost_usd)


def test_server_errors_exhaust_retries_then_fall_back(store):
    register_scripted([{"content": GOOD}], name="fallback")
    waits: list[float] = []
    with FaultServer(default={"kind": "500"}) as srv:
        gw = make_gateway(
            store,
            waits,
            extract="openai/fault-model",
            api_base=srv.base_url,
            retries=1,
            fallbacks=["scripted/fallback"],
        )
        c = gw.complete("extract", MSGS, run_id="R3", response_model=ResolutionAnswer)
        assert srv.kinds == ["500", "500"]
    assert c.model == "scripted/fallback"
    assert waits == [0.01]  # exponential backoff from backoff_s
    assert [(r["model"], r["outcome"]) for r in calls(store)] == [
        ("openai/fault-model", "error"),
        ("openai/fault-model", "error"),
        ("scripted/fallback", "ok"),
    ]


def test_hang_past_timeout_is_a_model_error(store):
    with FaultServer([{"kind": "hang", "seconds": 10}]) as srv:
        gw = make_gateway(store, [], extract="openai/fault-model", api_base=srv.base_url, retries=0, timeout_s=0.4)
        with pytest.raises(ModelError, match="timeout"):
            gw.complete("extract", MSGS, run_id="R4")
    rows = calls(store)
    assert [r["outcome"] for r in rows] == ["timeout"]
    assert 300 <= rows[0]["latency_ms"] < 5000


def test_truncated_json_is_repaired(store):
    with FaultServer([{"kind": "truncated", "content": GOOD}, {"kind": "ok", "content": GOOD}]) as srv:
        gw = make_gateway(store, [], extract="openai/fault-model", api_base=srv.base_url)
        c = gw.complete("extract", MSGS, run_id="R5", response_model=ResolutionAnswer)
        repair_msgs = srv.requests[1]["messages"]
    assert c.parsed.match_id == 7
    assert repair_msgs[-2]["role"] == "assistant" and "could not be used" in repair_msgs[-1]["content"]
    assert [(r["outcome"], r["repair"]) for r in calls(store)] == [("invalid_output", False), ("ok", True)]


def test_wrong_schema_twice_is_a_recorded_failure(store):
    with FaultServer(default={"kind": "wrong_schema"}) as srv:
        gw = make_gateway(store, [], extract="openai/fault-model", api_base=srv.base_url, fallbacks=["scripted/never"])
        with pytest.raises(InvalidOutput):
            gw.complete("extract", MSGS, run_id="R6", response_model=ResolutionAnswer)
        assert srv.kinds == ["wrong_schema", "wrong_schema"]  # one repair, no fallback for bad output
    rows = calls(store)
    assert [(r["outcome"], r["repair"]) for r in rows] == [("invalid_output", False), ("invalid_output", True)]
    assert "match_id" in rows[1]["error"]


def test_budget_stop_is_recorded_before_the_call(store):
    script = register_scripted([{"content": GOOD, "repeat": True}], name="budget")
    gw = make_gateway(
        store,
        extract="scripted/budget",
        budget=BudgetSettings(per_run_tokens=300, per_day_tokens=None, per_run_cost_usd=None),
    )
    gw.complete("extract", MSGS, run_id="R7", response_model=ResolutionAnswer)
    with pytest.raises(BudgetExhausted, match="per-run token budget"):
        gw.complete("extract", MSGS * 3, run_id="R7", response_model=ResolutionAnswer)
    assert len(script.calls) == 1  # the refused call never reached the model
    rows = calls(store)
    assert [r["outcome"] for r in rows] == ["ok", "budget_stopped"]
    assert "per-run" in rows[1]["error"]
    # another run still has its own budget
    gw.complete("extract", MSGS, run_id="R8", response_model=ResolutionAnswer)


def test_offline_role_refuses(store):
    gw = make_gateway(store)
    assert not gw.available("sweep")
    with pytest.raises(OfflineRole):
        gw.complete("sweep", MSGS, run_id=None)
    with pytest.raises(ValueError):
        gw.model_for("poet")
    assert json.dumps(calls(store)) == "[]"


def test_usage_reports_spend_by_day_and_role(store):
    from backchannel.ops import OpEnv, invoke

    register_scripted([{"content": GOOD, "repeat": True}], name="usage")
    gw = make_gateway(store, extract="scripted/usage", draft="scripted/usage")
    gw.complete("extract", MSGS, run_id="R9", response_model=ResolutionAnswer)
    gw.complete("judge", MSGS, run_id="R9")
    gw.complete("draft", MSGS, run_id="R9")
    data = invoke(OpEnv(store=store, settings=gw.settings, paths=gw.paths), "usage", {"days": 2})
    by_role = {r["role"]: r for r in data["rows"]}
    assert set(by_role) == {"extract", "judge", "draft"}
    assert by_role["extract"]["calls"] == 1 and by_role["extract"]["prompt_tokens"] > 0
    assert by_role["extract"]["cost_usd"] is None and by_role["extract"]["unpriced_calls"] == 1
    assert data["totals"]["calls"] == 3 and data["today"]["tokens"] == sum(
        r["prompt_tokens"] + r["completion_tokens"] for r in data["rows"]
    )


def test_script_file_answers_by_prompt_match_then_in_order(store, tmp_path):
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "entries": [
                    {"match": r"Dupont", "content": {"match_id": 1, "confidence": 0.9}},
                    {"content": {"match_id": None, "confidence": 0.2}},
                    {"error": 429},
                    {"content": {"match_id": 3, "confidence": 0.7}},
                ]
            }
        )
    )
    script = register_scripted(path, name="file")
    gw = make_gateway(store, [], extract="scripted/file")

    def ask(who: str) -> int | None:
        return gw.complete(
            "extract", [{"role": "user", "content": f"Is {who} known?"}], run_id=None, response_model=ResolutionAnswer
        ).parsed.match_id

    assert ask("Marc Durand") is None  # the Dupont entry is skipped: it matches only its prompts
    assert ask("Marc Dupont") == 1
    assert ask("Lea") == 3  # the scripted 429 was retried
    assert script.remaining == 0 and [c.error for c in script.calls] == [None, None, 429, None]
    assert [r["outcome"] for r in calls(store)] == ["ok", "ok", "rate_limited", "ok"]


def test_a_key_echoed_by_the_provider_never_reaches_rows_logs_or_output(store, caplog, capfd):
    import logging

    key = "Zq9ExoticKeyShape4711"  # no sk- prefix: only the exact-value redaction catches it
    caplog.set_level(logging.DEBUG)
    with FaultServer(default={"kind": "401"}) as srv:
        gw = make_gateway(store, [], extract="openai/fault-model", api_base=srv.base_url, retries=2)
        (gw.paths.config_dir / "secrets" / "openai_api_key").write_text(key + "\n")
        with pytest.raises(ModelError) as info:
            gw.complete("extract", MSGS, run_id="R10", response_model=ResolutionAnswer)
        assert srv.kinds == ["401"]  # an auth error is not retried
        assert srv.auth == [f"Bearer {key}"]  # the key was sent, and echoed back in the error
    rows = calls(store)
    assert [r["outcome"] for r in rows] == ["error"] and "[redacted]" in rows[0]["error"]
    dumped = json.dumps(store.query("SELECT * FROM model_calls"), default=str)
    out, err = capfd.readouterr()
    for where in (dumped, caplog.text, out, err, str(info.value)):
        assert key not in where


def test_cli_fast_paths_never_import_litellm_even_with_models_configured(home):
    import os
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from backchannel.cli.main import cli\n"
        "for args in (['--help'], ['sources'], ['status'], ['proposals'], ['usage'], ['entities']):\n"
        "    r = CliRunner().invoke(cli, args)\n"
        "    assert r.exit_code == 0, (args, r.output)\n"
        "print([m for m in ('litellm', 'torch', 'sentence_transformers', 'backchannel.agent.models')"
        " if m in sys.modules])\n"
    )
    env = {
        **os.environ,
        "BACKCHANNEL_HOME": str(home),
        "BACKCHANNEL_MODELS__EXTRACT": "openai/gpt-4.1-mini",
        "BACKCHANNEL_MODELS__DRAFT": "openai/gpt-4.1-mini",
        "BACKCHANNEL_MODELS__SWEEP": "openai/gpt-4.1-mini",
    }
    p = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_audit_rows_survive_the_callers_rollback_and_still_count_against_the_budget(store):
    register_scripted([{"content": GOOD, "repeat": True}], name="rollback")
    gw = make_gateway(
        store,
        extract="scripted/rollback",
        budget=BudgetSettings(per_run_tokens=None, per_day_tokens=None, per_run_cost_usd=None),
    )
    with pytest.raises(RuntimeError):
        with store.transaction():  # the writer's transaction around an entity-resolution call
            gw.complete("extract", MSGS, run_id="R11", response_model=ResolutionAnswer)
            raise RuntimeError("the source failed after the call")
    rows = calls(store)
    assert [r["outcome"] for r in rows] == ["ok"]
    gw.settings.models.budget.per_run_tokens = rows[0]["prompt_tokens"] + rows[0]["completion_tokens"]
    with pytest.raises(BudgetExhausted):  # what the rolled-back source spent still counts
        gw.complete("extract", MSGS, run_id="R11", response_model=ResolutionAnswer)


def test_a_missing_key_fails_at_once_with_a_message_naming_where_to_put_it(store, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    waits: list[float] = []
    with FaultServer([{"kind": "ok", "content": GOOD}]) as srv:
        gw = make_gateway(store, waits, extract="openai/local-model", api_base=srv.base_url)
        (gw.paths.config_dir / "secrets" / "openai_api_key").unlink()
        with pytest.raises(ModelError, match="Missing credentials.*secrets/openai_api_key"):
            gw.complete("extract", MSGS, run_id="R12")
        assert srv.kinds == []  # nothing was sent
    assert waits == [] and [r["outcome"] for r in calls(store)] == ["error"]  # not retried


def test_a_server_without_usage_is_charged_an_estimate(store):
    with FaultServer([{"kind": "ok", "content": GOOD, "usage": False}]) as srv:
        gw = make_gateway(store, [], extract="openai/local-model", api_base=srv.base_url)
        c = gw.complete("extract", MSGS, run_id="R13", response_model=ResolutionAnswer)
    row = calls(store)[0]
    assert c.prompt_tokens == row["prompt_tokens"] > 10 and c.completion_tokens == row["completion_tokens"] > 5


def test_model_providers_come_from_plugins_and_their_config_errors_reach_the_caller(store):
    """The gateway knows no provider by name: before a call it asks every plugin (pluggy,
    agent/plugins.py) to make the chain's models ready; a plugin's ValueError is the
    call's ModelError, recorded nowhere as a model call since none was made."""
    from backchannel.agent import plugins
    from backchannel.agent.models import ModelError

    seen: list[list[str]] = []

    class Provider:
        @plugins.hookimpl
        def prepare_models(self, models):
            seen.append(list(models))
            if "scripted/misconfigured" in models:
                raise ValueError("scripted/misconfigured: no script file")

    provider = Provider()
    plugins.register(provider)
    try:
        register_scripted([{"content": GOOD}], name="via-plugin")
        gw = make_gateway(store, extract="scripted/via-plugin", fallbacks=["scripted/other"])
        assert gw.complete("extract", MSGS, run_id=None).model == "scripted/via-plugin"
        assert seen[-1] == ["scripted/via-plugin", "scripted/other"]
        before = len(calls(store))
        with pytest.raises(ModelError, match="no script file"):
            make_gateway(store, extract="scripted/misconfigured").complete("extract", MSGS, run_id=None)
        assert len(calls(store)) == before
    finally:
        plugins.manager().unregister(provider)

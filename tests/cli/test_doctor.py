"""`backchannel doctor`: local checks with clear verdicts."""

from __future__ import annotations

import json
import subprocess
import sys


def doctor(*args: str) -> tuple[int, dict]:
    r = subprocess.run(
        [sys.executable, "-m", "backchannel", "doctor", "--json", *args], capture_output=True, text=True, timeout=120
    )
    return r.returncode, json.loads(r.stdout)


def by_name(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


def test_fresh_home_is_healthy(home):
    subprocess.run(
        [sys.executable, "-m", "backchannel", "init", "--name", "Alex"], check=True, capture_output=True, timeout=60
    )
    rc, report = doctor()
    checks = by_name(report)
    assert rc == 0 and report["ok"]
    assert checks["config"]["status"] == "ok" and "Alex" in checks["config"]["detail"]
    assert checks["database"]["status"] == "ok"
    assert checks["models"]["detail"].startswith("offline")
    assert checks["sandbox"]["status"] in ("ok", "warn") and "empty_env" in checks["sandbox"]["detail"]
    assert checks["daemon"]["status"] == "warn"  # not running


def test_loose_secret_permissions_fail(home):
    secrets = home / "secrets"
    secrets.mkdir(mode=0o700)
    f = secrets / "smtp_password"
    f.write_text("hunter2")
    f.chmod(0o644)
    rc, report = doctor()
    assert rc == 1
    detail = by_name(report)["secrets"]["detail"]
    assert "smtp_password" in detail and "chmod 600" in detail and "hunter2" not in json.dumps(report)


def test_bad_config_fails_with_the_key(home):
    (home / "config.toml").write_text("[gate]\nmax_per_dya = 3\n")
    rc, report = doctor()
    assert rc == 1 and "gate.max_per_dya" in by_name(report)["config"]["detail"]


def test_model_without_key_is_a_warning_and_nothing_is_contacted(home, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (home / "config.toml").write_text('[models]\nsweep = "openai/gpt-4.1-mini"\n')
    rc, report = doctor()
    models = by_name(report)["models"]
    assert models["status"] == "warn" and "openai_api_key" in models["detail"]


def test_a_model_name_typo_fails_doctor_with_the_key_and_the_nearest_name(home):
    f = home / "config.toml"
    f.write_text('[models]\nextract = "offlin"\n')
    rc, report = doctor()
    detail = by_name(report)["config"]["detail"]
    assert (
        rc == 1 and f"config error in {f}: models.extract: 'offlin' is not a model: did you mean \"offline\"?" in detail
    )
    # a bare model id: the provider litellm would take is the one whose key is looked for
    f.write_text('[models]\nsweep = "gpt-4.1-mini"\ndraft = "mymodel-1"\n')
    rc, report = doctor()
    models = by_name(report)["models"]["detail"]
    assert "sweep: no openai_api_key secret" in models and "draft: 'mymodel-1' names no provider" in models

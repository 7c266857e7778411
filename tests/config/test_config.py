"""Config: TOML file, env overrides with __ nesting, unknown keys named with their file."""

from __future__ import annotations

from pathlib import Path

import pytest

from backchannel.config import ConfigError, load_settings, read_secret, resolve_paths


def write_config(home: Path, text: str) -> Path:
    f = home / "config.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_defaults_without_a_file(home):
    s = load_settings()
    assert s.models.extract == "offline"
    assert s.owner.name == "Me"


def test_home_puts_everything_under_one_folder(home):
    p = resolve_paths()
    assert p.config_file == home.resolve() / "config.toml"
    assert p.db_file.is_relative_to(home.resolve())
    assert p.state_dir.is_relative_to(home.resolve())


def test_xdg_paths_without_home(monkeypatch, tmp_path):
    monkeypatch.delenv("BACKCHANNEL_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    p = resolve_paths()
    assert p.config_file == tmp_path / ".config/backchannel/config.toml"
    assert p.data_dir == tmp_path / ".local/share/backchannel"


def test_owner_table_and_nested_values(home):
    write_config(
        home,
        '[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\nemail = "a@example.org"\n'
        "[models.budget]\nper_day_tokens = 5\n",
    )
    s = load_settings()
    assert s.owner.name == "Alex Moreau" and s.owner.aliases == ["Alex"]
    assert s.models.budget.per_day_tokens == 5


def test_env_overrides_file_with_double_underscore(home, monkeypatch):
    write_config(home, '[models]\nsweep = "offline"\n')
    monkeypatch.setenv("BACKCHANNEL_MODELS__SWEEP", "openai/gpt-4.1-mini")
    monkeypatch.setenv("BACKCHANNEL_GATE__MAX_PER_DAY", "7")
    s = load_settings()
    assert s.models.sweep == "openai/gpt-4.1-mini"
    assert s.gate.max_per_day == 7


def test_unknown_top_level_key_names_key_and_file(home):
    f = write_config(home, '[ownr]\nname = "x"\n')
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "ownr" in str(err.value) and str(f) in str(err.value)


def test_unknown_nested_key_names_full_key_and_file(home):
    f = write_config(home, "[models.budget]\nper_day_tokenz = 5\n")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "models.budget.per_day_tokenz" in str(err.value) and str(f) in str(err.value)


def test_bad_value_names_key(home):
    write_config(home, '[gate]\nmax_per_day = "lots"\n')
    with pytest.raises(ConfigError, match="gate.max_per_day"):
        load_settings()


def test_invalid_toml_names_file(home):
    f = write_config(home, "[owner\nname=")
    with pytest.raises(ConfigError, match=str(f)):
        load_settings()


def test_config_path_from_env(home, monkeypatch, tmp_path):
    other = tmp_path / "elsewhere.toml"
    other.write_text('[owner]\nname = "Elsewhere"\n')
    monkeypatch.setenv("BACKCHANNEL_CONFIG", str(other))
    assert load_settings().owner.name == "Elsewhere"


def test_secrets_from_credentials_directory_first(home, monkeypatch, tmp_path):
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "smtp_password").write_text("from-systemd\n")
    (home / "secrets").mkdir()
    (home / "secrets" / "smtp_password").write_text("from-config-dir")
    (home / "secrets" / "other").write_text("only-here")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(creds))
    p = resolve_paths()
    assert read_secret(p, "smtp_password") == "from-systemd"
    assert read_secret(p, "other") == "only-here"
    assert read_secret(p, "missing") is None
    with pytest.raises(ValueError):
        read_secret(p, "../etc/passwd")


def test_cli_reports_config_error_without_traceback(home):
    import subprocess
    import sys

    write_config(home, "[inbox]\nquiet_period = 3\n")
    r = subprocess.run([sys.executable, "-m", "backchannel", "sources"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "inbox.quiet_period" in r.stderr and "config.toml" in r.stderr
    assert "Traceback" not in r.stderr


def test_env_with_unknown_table_is_an_error(home, monkeypatch):
    monkeypatch.setenv("BACKCHANNEL_MODLES__SWEEP", "offline")
    with pytest.raises(ConfigError, match="BACKCHANNEL_MODLES__SWEEP"):
        load_settings()


def test_data_and_state_folders_are_private(home):
    import os
    import stat

    old = os.umask(0o022)
    try:
        p = resolve_paths().ensure()
    finally:
        os.umask(old)
    for d in (p.data_dir, p.state_dir):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d


def test_misspelt_key_suggests_the_real_one(home):
    write_config(home, "[inbox]\nquiet_period = 3\n[models.budget]\nper_day_tokenz = 5\n[owner]\nzzz = 1\n")
    with pytest.raises(ConfigError) as err:
        load_settings()
    msg = str(err.value)
    assert "'inbox.quiet_period'" in msg and "did you mean 'quiet_period_s'" in msg
    assert "did you mean 'per_day_tokens'" in msg
    assert "'owner.zzz'" in msg and msg.count("did you mean") == 2


def test_a_wrong_channel_name_fails_at_load_with_key_index_and_file(home):
    f = write_config(home, '[delivery]\nchannels = ["email", "emial"]\n')
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == (
        f"config error in {f}: delivery.channels[1]: 'emial' is not one of email, slack, webhook, apprise"
    )


@pytest.mark.parametrize(
    "toml, key",
    [
        ('[delivery.email]\nsecurity = "ssl"\n', "delivery.email.security: 'ssl' is not one of starttls, tls, none"),
        ('[logging]\nlevel = "loud"\n', "logging.level: 'LOUD' is not one of DEBUG, INFO"),
        ("[signals]\ndrop_poll_s = 0\n", "signals.drop_poll_s: Input should be greater than 0, got 0"),
        ("[inbox]\nquiet_period_s = -1\n", "inbox.quiet_period_s: Input should be greater than or equal to 0"),
        ("[schedule]\ninterval_s = 0\n", "schedule.interval_s"),
        ("[gate]\nscore_threshold = 6\n", "gate.score_threshold: Input should be less than or equal to 1"),
        ('[delivery.email]\ndigest_time = "8am"\n', "delivery.email.digest_time: '8am' is not a time of day"),
        ("[api]\nport = 70000\n", "api.port"),
        ('[models]\nextract = " "\n', "models.extract"),
        ('[models]\nsumarize = "openai/gpt-4.1-mini"\n', "unknown key 'models.sumarize'"),
        ('[delivery]\nchannels = "email"\n', "delivery.channels: Input should be a valid list"),
        ("[mail]\nbatch = 0\n", "mail.batch"),
    ],
)
def test_bad_values_fail_at_load_naming_the_key_and_file(home, toml, key):
    f = write_config(home, toml)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value).startswith(f"config error in {f}: ") and key in str(err.value)


def test_words_are_read_in_any_case_as_before(home):
    write_config(home, '[delivery.email]\nsecurity = "STARTTLS"\n[logging]\nlevel = "debug"\n')
    s = load_settings()
    assert (s.delivery.email.security, s.logging.level) == ("starttls", "DEBUG")


def test_a_bad_environment_value_names_the_variable(home, monkeypatch):
    write_config(home, '[delivery]\nchannels = ["email"]\n')
    monkeypatch.setenv("BACKCHANNEL_DELIVERY__CHANNELS", '["slack", "teams"]')
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == (
        "config error in environment variable BACKCHANNEL_DELIVERY__CHANNELS: "
        "delivery.channels[1]: 'teams' is not one of email, slack, webhook, apprise"
    )
    monkeypatch.setenv("BACKCHANNEL_DELIVERY__CHANNELS", '["slack", "webhook"]')
    assert load_settings().delivery.channels == ["slack", "webhook"]


def test_load_settings_reads_the_environ_given_and_never_changes_os_environ(home, monkeypatch, tmp_path):
    import os

    other = tmp_path / "other"
    other.mkdir()
    (other / "config.toml").write_text('[owner]\nname = "Other"\n[gate]\nmax_per_day = 1\n')
    monkeypatch.setenv("BACKCHANNEL_GATE__MAX_PER_DAY", "9")  # the process's own: not read
    before = dict(os.environ)
    s = load_settings(environ={"BACKCHANNEL_HOME": str(other), "BACKCHANNEL_MODELS__DRAFT": "openai/x"})
    assert (s.owner.name, s.gate.max_per_day, s.models.draft) == ("Other", 1, "openai/x")
    assert dict(os.environ) == before
    assert load_settings().gate.max_per_day == 9  # and the default is still os.environ


def test_environ_given_is_not_swapped_into_os_environ_while_loading(home, monkeypatch):
    """Another thread reading os.environ during a load sees the process's own environment
    (the old load_settings swapped it out for the duration)."""
    import os
    import threading

    seen: list[str | None] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.append(os.environ.get("BACKCHANNEL_HOME"))

    t = threading.Thread(target=watch)
    t.start()
    try:
        for _ in range(200):
            load_settings(environ={"BACKCHANNEL_HOME": "/nonexistent/elsewhere"})
    finally:
        stop.set()
        t.join()
    assert seen and set(seen) == {str(home)}


def test_every_example_config_key_is_accepted(home):
    """config/backchannel.example.toml, with every commented-out `key = value` switched
    on, still loads: the validators refuse no documented key or default."""
    import re

    example = Path(__file__).resolve().parents[2] / "config" / "backchannel.example.toml"
    on = re.sub(r"^# (\w+ = .*)$", r"\1", example.read_text(), flags=re.M)
    write_config(home, on)
    s = load_settings()
    assert s.sandbox.cpu_s == 10 and s.gate.similarity_threshold == 0.75 and s.schedule.timezone == "Europe/Paris"


def test_doctor_reports_a_config_error_cleanly(home):
    import json
    import subprocess
    import sys

    f = write_config(home, '[delivery]\nchannels = ["emial"]\n')
    r = subprocess.run([sys.executable, "-m", "backchannel", "doctor", "--json"], capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    config = next(c for c in json.loads(r.stdout)["checks"] if c["name"] == "config")
    assert config["status"] == "fail"
    assert config["detail"] == (
        f"config error in {f}: delivery.channels[0]: 'emial' is not one of email, slack, webhook, apprise"
    )


def test_the_daemon_refuses_to_start_with_the_config_error(home):
    import subprocess
    import sys

    f = write_config(home, '[delivery]\nchannels = ["emial"]\n')
    r = subprocess.run([sys.executable, "-m", "backchannel", "run"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"config error in {f}: delivery.channels[0]: 'emial'" in r.stderr


@pytest.mark.parametrize(
    "value, said",
    [
        ("offlin", "models.extract: 'offlin' is not a model: did you mean \"offline\"?"),
        ("Offline", 'did you mean "offline"?'),
        ("openai", "models.extract: 'openai' is a provider, not a model: write \"openai/MODEL\""),
        ("anthropc", 'did you mean "anthropic/MODEL"?'),
        ("   ", 'a model is "offline" or a litellm model string'),
    ],
)
def test_a_model_name_typo_fails_at_load_naming_key_and_file(home, value, said):
    f = write_config(home, f'[models]\nextract = "{value}"\n')
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value).startswith(f"config error in {f}: ") and said in str(err.value)


def test_litellm_model_strings_are_accepted_without_importing_litellm(home):
    import subprocess
    import sys

    write_config(
        home,
        '[models]\nextract = "openai/gpt-4.1-mini"\nsweep = "ollama/qwen3"\n'
        'draft = "gpt-4.1-mini"\nfallbacks = ["anthropic/claude-sonnet-4-5", "hosted_vllm/my/model"]\n',
    )
    code = (
        "import sys; from backchannel.config import load_settings; s = load_settings(); "
        "print(s.models.extract, s.models.draft, 'litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["openai/gpt-4.1-mini", "gpt-4.1-mini", "False"], out

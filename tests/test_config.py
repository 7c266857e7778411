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
    write_config(home, '[owner]\nname = "Alex Moreau"\naliases = ["Alex"]\nemail = "a@example.org"\n'
                       '[models.budget]\nper_day_tokens = 5\n')
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
    f = write_config(home, '[models.budget]\nper_day_tokenz = 5\n')
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

    write_config(home, '[inbox]\nquiet_period = 3\n')
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
    write_config(home, '[inbox]\nquiet_period = 3\n[models.budget]\nper_day_tokenz = 5\n[owner]\nzzz = 1\n')
    with pytest.raises(ConfigError) as err:
        load_settings()
    msg = str(err.value)
    assert "'inbox.quiet_period'" in msg and "did you mean 'quiet_period_s'" in msg
    assert "did you mean 'per_day_tokens'" in msg
    assert "'owner.zzz'" in msg and msg.count("did you mean") == 2

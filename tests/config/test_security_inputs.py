"""Hostile local inputs: a config that is a FIFO or that others can edit, and JSONL
import lines built to crash the validator (deep nesting, huge integers, odd types)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from backchannel.config import ConfigError, load_settings, resolve_paths
from backchannel.doctor import check_config
from backchannel.graph.importer import ImportFailed, import_jsonl


def test_a_fifo_as_config_fails_at_once_instead_of_hanging(home, tmp_path, monkeypatch):
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("BACKCHANNEL_CONFIG", str(fifo))
    got: list = []

    def load() -> None:
        try:
            load_settings(resolve_paths())
            got.append("loaded")
        except ConfigError as exc:
            got.append(str(exc))

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(5.0)
    if t.is_alive():  # the old code blocks in open(): give it a writer so the thread ends
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5.0)
        pytest.fail("reading a FIFO config blocked")
    assert got and "not a regular file" in got[0]


@pytest.mark.parametrize(
    "mode, status, words",
    [
        (0o600, "ok", "owner"),
        (0o620, "warn", "writable by its group"),
        (0o646, "fail", "writable by anyone"),
    ],
)
def test_doctor_flags_a_config_others_can_edit(home, mode, status, words):
    cfg = home / "config.toml"
    cfg.write_text('[owner]\nname = "Alex"\n')
    cfg.chmod(mode)
    home.chmod(0o755)
    check, settings = check_config(resolve_paths())
    assert settings is not None
    assert check.status == status and words in check.detail, check.detail


def test_doctor_flags_a_config_folder_anyone_can_write(home):
    (home / "config.toml").write_text('[owner]\nname = "Alex"\n')
    (home / "config.toml").chmod(0o600)
    home.chmod(0o777)
    try:
        check, _ = check_config(resolve_paths())
        assert check.status == "fail" and "folder" in check.detail and "writable by anyone" in check.detail
        home.chmod(0o1777)  # sticky, like /tmp: others cannot replace a file they do not own
        assert check_config(resolve_paths())[0].status == "ok"
    finally:
        home.chmod(0o755)


HOSTILE = [
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"type":"entity","id":' + "9" * 5000 + ',"name":"A"}',
    json.dumps({"type": "assertion", "subject": "me", "predicate": ["knows"], "object": "me"}),
    json.dumps({"type": "assertion", "subject": "me", "predicate": {"has_title": 1}, "object_literal": "x"}),
]


def test_hostile_import_lines_fail_cleanly_with_their_line_numbers(store):
    with pytest.raises(ImportFailed) as err:
        import_jsonl(store, HOSTILE)
    assert sorted({int(p.split(":")[0].split()[1]) for p in err.value.problems}) == [1, 2, 3, 4, 5]
    assert "not usable JSON" in err.value.problems[0] and "predicate" in err.value.problems[3]
    assert store.scalar("SELECT count(*) FROM assertions") == 0

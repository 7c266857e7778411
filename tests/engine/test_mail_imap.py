"""IMAP against a real dovecot on loopback: incremental sync by UID, UIDVALIDITY
changes, per-message errors (too large: never downloaded), nothing marked read, a
refused login recorded for `status`."""

from __future__ import annotations

from backchannel.config import load_settings, resolve_paths
from backchannel.engine.mail_sync import folder_state, status, sync
from tests.support import mail_fixtures as fx
from tests.support.imap_server import PASSWORD, dovecot  # noqa: F401 - the fixture


def _setup(home, server, folders, **extra):
    (home / "config.toml").write_text(
        '[owner]\nname = "Alex Moreau"\nemail = "alex@example.com"\n' + server.config(folders, **extra)
    )
    (home / "secrets").mkdir(exist_ok=True)
    (home / "secrets" / "imap_password").write_text(PASSWORD + "\n")
    paths = resolve_paths().ensure()
    return load_settings(paths), paths


def test_incremental_sync_uidvalidity_and_bad_messages(home, store, dovecot):  # noqa: F811
    dovecot.append("INBOX", [fx.INTRO, fx.REPLY, fx.UNKNOWN_CHARSET_BINARY])
    dovecot.append("Projects", [fx.HTML_ONLY, fx.with_attachment(1_500_000, "<big@x>")])
    settings, paths = _setup(home, dovecot, ["INBOX", "Projects"], max_message_mb=1, batch=2)

    first = sync(store, settings, paths)
    assert first["errors"] == []
    assert (first["ingested"], first["failed"]) == (3, 2)
    inbox = folder_state(store, first["account"], "INBOX")
    assert inbox["last_uid"] == 3 and inbox["messages"] == 2 and inbox["failed"] == 1
    errors = {r["origin"].rsplit("/", 1)[-1]: r["error"] for r in store.query("SELECT * FROM mail_errors")}
    assert any("unknown charset" in e for e in errors.values())
    assert any("too large" in e and "not downloaded" in e for e in errors.values())
    assert store.scalar("SELECT count(*) FROM sources WHERE format = 'email'") == 3
    marc = store.scalar("SELECT entity_id FROM aliases WHERE norm = 'marc.dupont@initech.example'")
    assert (
        store.scalar("SELECT count(*) FROM assertions WHERE subject_id = ? AND predicate = 'introduced'", [marc]) >= 2
    )

    # Nothing new: nothing read. One new message: only it.
    assert sync(store, settings, paths)["ingested"] == 0
    dovecot.append("INBOX", [fx.OUTLOOK_REPLY])
    again = sync(store, settings, paths)
    assert (again["ingested"], again["failed"], again["folders"]["INBOX"]["new"]) == (1, 0, 1)

    # The server renumbers a folder (deleted and re-created): read from UID 1 again; the
    # message seen before is known by its Message-ID, the new one is stored.
    c = dovecot.client()
    c.delete_folder("Projects")
    c.logout()
    dovecot.append("Projects", [fx.HTML_ONLY, fx.UNKNOWN_CHARSET_UTF8])
    renum = sync(store, settings, paths)
    assert renum["folders"]["Projects"] == {
        "uidvalidity": renum["folders"]["Projects"]["uidvalidity"],
        "new": 2,
        "ingested": 1,
        "skipped": 1,
        "failed": 0,
    }
    assert len(store.events(kind="mail.uidvalidity_changed")) == 1
    assert store.scalar("SELECT count(*) FROM sources") == 5
    assert store.scalar("SELECT count(DISTINCT message_id) FROM mail_messages") == 5

    # Read with BODY.PEEK: the user's mail stays unread.
    c = dovecot.client()
    c.select_folder("INBOX", readonly=True)
    assert c.search(["SEEN"]) == []
    c.logout()
    st = status(store, settings)
    assert st["configured"] and {f["folder"] for f in st["folders"]} == {"INBOX", "Projects"}
    assert all(f["last_sync_at"] and f["last_error"] is None for f in st["folders"])


def test_refused_login_and_missing_folder_are_recorded(home, store, dovecot):  # noqa: F811
    settings, paths = _setup(home, dovecot, ["INBOX", "Nope"])
    dovecot.append("INBOX", [fx.INTRO])
    out = sync(store, settings, paths)
    assert out["ingested"] == 1 and any(e.startswith("Nope:") for e in out["errors"])
    (home / "secrets" / "imap_password").write_text("wrong\n")
    out = sync(store, settings, paths)
    assert out["folders"] == {} and "login as 'alex' refused" in out["errors"][0]
    st = status(store, settings)
    assert all("refused" in f["last_error"] for f in st["folders"])
    (home / "secrets" / "imap_password").unlink()
    assert "no IMAP password" in sync(store, settings, paths)["errors"][0]


def test_doctor_checks_mail_settings_and_logs_in_when_deep(home, dovecot):  # noqa: F811
    import json
    import subprocess
    import sys

    from backchannel.doctor_mail import check_mail

    settings, paths = _setup(home, dovecot, ["INBOX", "Archive"])
    dovecot.append("Archive", [fx.INTRO])
    (home / "secrets" / "imap_password").unlink()
    r = subprocess.run(
        [sys.executable, "-m", "backchannel", "doctor", "--json"], capture_output=True, text=True, timeout=120
    )
    mail = {c["name"]: c for c in json.loads(r.stdout)["checks"]}["mail"]
    assert r.returncode == 1 and mail["status"] == "fail" and "'imap_password' missing" in mail["detail"]
    (home / "secrets" / "imap_password").write_text(PASSWORD)
    ok = check_mail(settings, paths)
    assert ok.status == "ok" and "--deep" in ok.detail
    deep = check_mail(settings, paths, deep=True)
    assert deep.status == "ok" and "Archive: 1 messages" in deep.detail
    settings.mail.folders = ["INBOX", "Nope"]
    assert check_mail(settings, paths, deep=True).status == "fail"
    settings.mail.host = "mail.example.org"
    assert "clear text" in check_mail(settings, paths).detail


def test_wake_mail_without_a_daemon_syncs_and_status_shows_it(home, dovecot):  # noqa: F811
    import json
    import subprocess
    import sys

    _setup(home, dovecot, ["INBOX"])
    dovecot.append("INBOX", [fx.INTRO, fx.BROKEN_MIME])

    def bc(*args):
        r = subprocess.run([sys.executable, "-m", "backchannel", *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = json.loads(bc("wake", "mail", "--json"))
    run = out["runs"][0]
    assert run["kind"] == "mail" and run["status"] == "done"
    assert (run["detail"]["mail"]["ingested"], run["detail"]["mail"]["failed"]) == (1, 1)
    text = bc("status")
    assert "mail: 1 messages stored" in text and "INBOX: last sync" in text
    assert "unreadable imap:" in text and "broken MIME" in text


def test_a_long_sync_goes_on_in_slices(home, store, dovecot):  # noqa: F811
    dovecot.append("INBOX", fx.numbered(5))
    settings, paths = _setup(home, dovecot, ["INBOX"], max_per_sync=2, batch=1)
    seen = []
    while True:
        out = sync(store, settings, paths)
        seen.append(out["ingested"])
        if not out.get("more"):
            break
    assert seen == [2, 2, 1] and store.scalar("SELECT count(*) FROM mail_messages") == 5

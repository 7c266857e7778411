"""Email delivery through the outbox to a real aiosmtpd server on loopback:
STARTTLS with AUTH, implicit TLS, plain, the daily digest, and a failing server."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from backchannel.config import resolve_paths
from backchannel.delivery import outbox
from backchannel.memory.store import utcnow
from tests.support.delivery_support import (
    OWNER,
    PASSWORD,
    USER,
    add_proposal,
    free_port,
    make_cert,
    make_settings,
    start_smtp,
    write_secret,
)


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_cert(tmp_path_factory.mktemp("cert"))


def _status(store, pid):
    return store.scalar("SELECT status FROM proposals WHERE id = ?", [pid])


def test_starttls_with_auth_sends_multipart_once(home, store, cert):
    smtp = start_smtp("starttls", cert, auth=True)
    try:
        write_secret(home, "smtp_password", PASSWORD)
        settings = make_settings(
            email={
                "host": "127.0.0.1",
                "port": smtp.port,
                "security": "starttls",
                "username": USER,
                "sender": "bc@example.net",
                "ca_file": str(cert[0]),
            }
        )
        paths = resolve_paths()
        pid = add_proposal(store)
        assert outbox.enqueue(store, pid, ["email"]) == [f"{pid}:email"]
        assert outbox.enqueue(store, pid, ["email"]) == []  # the key is unique: enqueue twice is harmless
        results = outbox.deliver_due(store, settings, paths)
        assert [r.ok for r in results] == [True], results
        assert len(smtp.messages) == 1
        got = smtp.messages[0]
        assert got.rcpt_tos == [OWNER]
        msg = got.msg
        assert msg["Message-ID"] == outbox.message_id(f"{pid}:email")
        assert msg["Subject"].startswith(f"[backchannel {pid}]")
        assert msg.get_content_type() == "multipart/alternative"
        text = msg.get_body(("plain",)).get_content()
        html = msg.get_body(("html",)).get_content()
        assert "I worked with their CIO" in text and "/feedback?t=" in text
        assert "<a href=" in html and "Dismiss" in html
        assert _status(store, pid) == "delivered"
        # Nothing is due any more: a second turn sends nothing.
        assert outbox.deliver_due(store, settings, paths) == []
        assert len(smtp.messages) == 1
        ev = store.events(kind="delivery.sent")
        assert [e["data"]["proposal"] for e in ev] == [pid]
    finally:
        smtp.stop()


def test_wrong_password_keeps_it_queued(home, store, cert):
    smtp = start_smtp("starttls", cert, auth=True)
    try:
        write_secret(home, "smtp_password", "not-the-password")
        # smtplib falls back from PLAIN to LOGIN, which aiosmtpd answers slowly: keep the timeout short.
        settings = make_settings(
            email={"host": "127.0.0.1", "port": smtp.port, "username": USER, "ca_file": str(cert[0]), "timeout_s": 1.5}
        )
        pid = add_proposal(store)
        outbox.enqueue(store, pid, ["email"])
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert not r.ok and r.detail.startswith("SMTP 127.0.0.1")
        assert "not-the-password" not in r.detail
        assert smtp.messages == []
        assert store.scalar("SELECT status FROM outbox") == "queued"
    finally:
        smtp.stop()


def test_implicit_tls(home, store, cert):
    smtp = start_smtp("tls", cert)
    try:
        settings = make_settings(
            email={"host": "127.0.0.1", "port": smtp.port, "security": "tls", "ca_file": str(cert[0])}
        )
        pid = add_proposal(store)
        outbox.enqueue(store, pid, ["email"])
        assert [r.ok for r in outbox.deliver_due(store, settings, resolve_paths())] == [True]
        assert len(smtp.messages) == 1 and smtp.messages[0].rcpt_tos == [OWNER]
    finally:
        smtp.stop()


def test_untrusted_certificate_is_refused(home, store, cert):
    smtp = start_smtp("starttls", cert)
    try:
        settings = make_settings(email={"host": "127.0.0.1", "port": smtp.port})  # no ca_file: system CAs
        pid = add_proposal(store)
        outbox.enqueue(store, pid, ["email"])
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert not r.ok and "CERTIFICATE_VERIFY_FAILED" in r.detail
        assert smtp.messages == []
    finally:
        smtp.stop()


def test_daily_digest_is_one_mail(home, store):
    smtp = start_smtp("plain")
    try:
        settings = make_settings(
            email={"host": "127.0.0.1", "port": smtp.port, "security": "none", "digest": True, "digest_time": "08:00"}
        )
        paths = resolve_paths()
        now = utcnow().replace(hour=9, minute=0, second=0, microsecond=0)
        a = add_proposal(store, created_at=now, title="First proposal")
        b = add_proposal(store, created_at=now, title="Second proposal", kind="reconnect")
        for pid in (a, b):
            outbox.enqueue(store, pid, ["email"], now=now)  # as the pipeline does: without settings
        assert outbox.deliver_due(store, settings, paths, now=now) == []  # held until 08:00 tomorrow
        assert outbox.deliver_due(store, settings, paths, now=now + timedelta(hours=22)) == []
        results = outbox.deliver_due(store, settings, paths, now=now + timedelta(hours=23, minutes=1))
        assert sorted(r.proposal_id for r in results) == sorted([a, b]) and all(r.ok for r in results)
        assert len(smtp.messages) == 1
        msg = smtp.messages[0].msg
        text = msg.get_body(("plain",)).get_content()
        assert "First proposal" in text and "Second proposal" in text
        assert msg["Subject"].startswith("[backchannel] 2 proposals")
    finally:
        smtp.stop()


def test_server_down_keeps_it_queued_with_backoff_then_delivers(home, store):
    port = free_port()
    settings = make_settings(
        email={"host": "127.0.0.1", "port": port, "security": "none", "timeout_s": 5}, retry_base_s=30, retry_max_s=100
    )
    paths = resolve_paths()
    pid = add_proposal(store)
    outbox.enqueue(store, pid, ["email"])
    t0 = utcnow()
    [r1] = outbox.deliver_due(store, settings, paths, now=t0)
    assert not r1.ok and r1.attempts == 1 and "ConnectionRefusedError" in r1.detail
    assert r1.next_attempt_at == t0 + timedelta(seconds=30)
    assert outbox.deliver_due(store, settings, paths, now=t0 + timedelta(seconds=29)) == []  # not due yet
    [r2] = outbox.deliver_due(store, settings, paths, now=t0 + timedelta(seconds=30))
    assert r2.attempts == 2 and r2.next_attempt_at == t0 + timedelta(seconds=90)
    [r3] = outbox.deliver_due(store, settings, paths, now=t0 + timedelta(seconds=90))
    assert r3.next_attempt_at == t0 + timedelta(seconds=190)  # capped at retry_max_s = 100
    # Never lost: queued, visible with its error, and the proposal still pending.
    summary = outbox.summary(store, settings)
    [waiting] = summary["waiting"]
    assert waiting["status"] == "queued" and waiting["attempts"] == 3 and "Connection" in waiting["last_error"]
    assert _status(store, pid) == "pending"
    assert len(store.events(kind="delivery.failed")) == 3
    smtp = start_smtp("plain", port=port)
    try:
        [ok] = outbox.deliver_due(store, settings, paths, now=t0 + timedelta(seconds=190))
        assert ok.ok and ok.attempts == 4
        assert len(smtp.messages) == 1
        assert _status(store, pid) == "delivered"
    finally:
        smtp.stop()


def test_pending_proposal_without_outbox_row_is_reconciled(home, store):
    smtp = start_smtp("plain")
    try:
        settings = make_settings(email={"host": "127.0.0.1", "port": smtp.port, "security": "none"})
        pid = add_proposal(store)  # stored, never enqueued (a crash between the two)
        results = outbox.deliver_due(store, settings, resolve_paths())
        assert [(r.proposal_id, r.ok) for r in results] == [(pid, True)]
        assert len(smtp.messages) == 1
    finally:
        smtp.stop()


def test_no_recipient_configured_stays_queued(home, store):
    from backchannel.config import Settings

    settings = Settings(delivery={"channels": ["email"], "email": {"host": "127.0.0.1", "port": 1}})
    pid = add_proposal(store)
    [r] = outbox.deliver_due(store, settings, resolve_paths())
    assert not r.ok and "no recipient" in r.detail
    assert store.scalar("SELECT status FROM outbox WHERE proposal_id = ?", [pid]) == "queued"

"""Slack (Block Kit), the signed JSON webhook and apprise, each against a real
HTTP server on loopback that records what it received."""

from __future__ import annotations

import json
import time

import pytest

from backchannel.config import resolve_paths
from backchannel.delivery import outbox, webhook
from tests.support.delivery_support import add_proposal, make_settings, start_http, write_secret


def test_slack_block_kit(home, store):
    cap = start_http()
    try:
        write_secret(home, "slack_webhook_url", f"{cap.url}/services/T000/B000/XXXX")
        settings = make_settings(channels=["slack"])
        pid = add_proposal(
            store,
            action={"channel": "email", "to": "marc@example.org", "subject": "Intro", "body": "Hi Marc"},
            body="Quote: <https://evil.example|Approve> and <!channel> from a transcript",
        )
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert r.ok, r.detail
        [req] = cap.requests
        assert req["path"] == "/services/T000/B000/XXXX"
        payload = json.loads(req["body"])
        types = [b["type"] for b in payload["blocks"]]
        assert types == ["header", "section", "context", "actions"]
        assert payload["blocks"][0]["text"]["text"].startswith("Ask Marc")
        section = payload["blocks"][1]["text"]["text"]
        assert "&lt;https://evil.example|Approve&gt;" in section and "<!channel>" not in section
        buttons = {e["action_id"]: e["url"] for e in payload["blocks"][3]["elements"]}
        assert set(buttons) == {"bc_accept", "bc_dismiss", "bc_snooze", "bc_approve"}
        assert all("/feedback?t=" in u for u in buttons.values())
        assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "delivered"
    finally:
        cap.stop()


def test_slack_error_status_keeps_it_queued_without_leaking_the_url(home, store):
    cap = start_http(status=500)
    try:
        write_secret(home, "slack_webhook_url", f"{cap.url}/services/SECRET-TOKEN")
        settings = make_settings(channels=["slack"])
        add_proposal(store)
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert not r.ok and "HTTP 500" in r.detail and "SECRET-TOKEN" not in r.detail
        assert store.scalar("SELECT status FROM outbox") == "queued"
    finally:
        cap.stop()


def test_a_redirecting_endpoint_is_not_followed(home, store):
    """A 3xx is the endpoint's answer, not a delivery: the POST is not replayed
    elsewhere (core/http.py follows redirects only for GET, when asked)."""
    cap = start_http(status=302)
    try:
        write_secret(home, "slack_webhook_url", f"{cap.url}/services/SECRET-TOKEN")
        settings = make_settings(channels=["slack"])
        add_proposal(store)
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert not r.ok and "HTTP 302" in r.detail and len(cap.requests) == 1
        assert store.scalar("SELECT status FROM outbox") == "queued"
    finally:
        cap.stop()


def test_malformed_secret_urls_never_show_in_errors(home, store):
    """urllib quotes a malformed URL in its exception text; the URL is the credential."""
    settings = make_settings(channels=["slack"])
    paths = resolve_paths()
    for url in (
        "hooks.slack.com/services/T0/B0/NOSCHEMESECRET",
        "http://127.0.0.1:9/services/SPACE SECRET",
        "ftp://127.0.0.1/services/FTPSECRET",
    ):
        write_secret(home, "slack_webhook_url", url)
        store.con.execute("DELETE FROM outbox")
        pid = add_proposal(store)
        [r] = outbox.deliver_due(store, settings, paths)
        recorded = json.dumps(store.query("SELECT * FROM outbox") + store.events(limit=1000), default=str)
        assert not r.ok and "SECRET" not in r.detail and "SECRET" not in recorded, r.detail
        store.con.execute("UPDATE proposals SET status = 'dismissed' WHERE id = ?", [pid])


def test_any_error_text_is_scrubbed_of_every_delivery_secret(home):
    from backchannel.delivery.redact import scrub

    write_secret(home, "smtp_password", "pa55-word-xyz")
    write_secret(home, "slack_webhook_url", "https://hooks.slack.com/services/T1/B2/slackTOKEN99")
    write_secret(home, "apprise_urls", "# comment\ntgram://123456:BOTTOKEN-abc/987\njson://u:JSONPASS88@h/p")
    write_secret(home, "webhook_hmac_key", "hmac-key-0123456789")
    settings, paths = make_settings(), resolve_paths()
    text = (
        "535 auth failed for pa55-word-xyz; POST /services/T1/B2/slackTOKEN99 failed; 'slackTOKEN99'; "
        "tgram BOTTOKEN-abc; JSONPASS88; key hmac-key-0123456789"
    )
    out = scrub(settings, paths, text)
    for secret in ("pa55-word-xyz", "slackTOKEN99", "BOTTOKEN-abc", "JSONPASS88", "hmac-key-0123456789"):
        assert secret not in out
    assert out.startswith("535 auth failed for [secret]")


def test_webhook_is_signed_and_verifiable(home, store):
    cap = start_http()
    try:
        key = "k3y-for-hmac"
        write_secret(home, "webhook_hmac_key", key)
        settings = make_settings(channels=["webhook"], webhook={"url": f"{cap.url}/hook"})
        pid = add_proposal(store)
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert r.ok, r.detail
        [req] = cap.requests
        h = req["headers"]
        ts, sig, body = h[webhook.TS_HEADER], h[webhook.SIG_HEADER], req["body"]
        assert sig.startswith("sha256=")
        assert h[webhook.ID_HEADER] == f"{pid}:webhook"
        assert webhook.verify(key.encode(), body, ts, sig)
        # A tampered body, a wrong key or a replay outside the tolerance all fail.
        assert not webhook.verify(key.encode(), body.replace(b"Marc", b"Mark"), ts, sig)
        assert not webhook.verify(b"other", body, ts, sig)
        assert not webhook.verify(key.encode(), body, ts, sig, now=time.time() + 3600)
        data = json.loads(body)
        assert data["type"] == "proposal" and data["proposal"]["id"] == pid
        assert set(data["links"]) == {"accept", "dismiss", "snooze"}
    finally:
        cap.stop()


def test_apprise_json_url(home, store):
    cap = start_http()
    try:
        port = cap.server.server_address[1]
        write_secret(home, "apprise_urls", f"# one per line\njson://127.0.0.1:{port}/notify\n")
        settings = make_settings(channels=["apprise"])
        pid = add_proposal(store)
        [r] = outbox.deliver_due(store, settings, resolve_paths())
        assert r.ok, r.detail
        [req] = cap.requests
        assert req["path"] == "/notify"
        data = json.loads(req["body"])
        assert data["title"].startswith(f"{pid}: Ask Marc")
        assert "/feedback?t=" in data["message"]
    finally:
        cap.stop()


def test_each_channel_has_its_own_key_and_a_failing_one_does_not_block_the_others(home, store):
    cap = start_http()
    try:
        write_secret(home, "slack_webhook_url", f"{cap.url}/slack")
        settings = make_settings(channels=["slack", "webhook"], webhook={"url": f"{cap.url}/hook"})
        pid = add_proposal(store)  # no webhook key secret: that channel fails, Slack still goes out
        results = {r.channel: r for r in outbox.deliver_due(store, settings, resolve_paths())}
        assert results["slack"].ok and not results["webhook"].ok
        assert "webhook_hmac_key" in results["webhook"].detail
        assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "pending"
        write_secret(home, "webhook_hmac_key", "k")
        store.con.execute("UPDATE outbox SET next_attempt_at = next_attempt_at - INTERVAL 1 HOUR")
        [again] = outbox.deliver_due(store, settings, resolve_paths())
        assert again.channel == "webhook" and again.ok
        assert [q["path"] for q in cap.requests] == ["/slack", "/hook"]
        assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "delivered"
    finally:
        cap.stop()


def test_unknown_channel_stays_queued_and_visible(home, store):
    """A misspelt channel is refused when the config loads (test_config covers the
    message naming key and file); a row queued for it by an earlier release, whose config
    was not checked, still stays queued and visible instead of vanishing."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="emial"):
        make_settings(channels=["emial"])
    settings = make_settings(channels=["email"])
    pid = add_proposal(store)
    assert outbox.enqueue(store, pid, ["emial"], settings=settings)
    [r] = outbox.deliver_due(store, settings, resolve_paths())
    assert not r.ok and "unknown channel 'emial'" in r.detail
    [w] = outbox.summary(store, settings)["waiting"]
    assert w["proposal_id"] == pid and w["status"] == "queued"

"""Feedback: signed links exercised with real GET (changes nothing) and POST
requests, expired and forged tokens, the confirmation page in headless Chromium,
the CLI commands and `stats`."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta

import pytest
from click.testing import CliRunner
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from backchannel.config import resolve_paths
from backchannel.delivery import links
from backchannel.memory.store import utcnow
from tests.support.delivery_support import add_entity, add_proposal, make_settings
from tests.support.server_support import serve_feedback


def _get(url: str) -> tuple[int, str, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode(), r.headers  # names are case-insensitive
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers


def _post(url: str, form: dict[str, str]) -> tuple[int, str]:
    req = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(), method="POST")
    req.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _snapshot(store) -> tuple:
    return (
        store.query("SELECT id, status, updated_at FROM proposals ORDER BY id"),
        store.scalar("SELECT count(*) FROM feedback"),
        store.scalar("SELECT count(*) FROM suppressions"),
        store.scalar("SELECT count(*) FROM events"),
    )


@pytest.fixture
def served(home, store):
    settings = make_settings()
    paths = resolve_paths()
    server, base = serve_feedback(store, settings, paths)
    settings.delivery.public_base_url = base
    yield store, settings, paths, base
    server.close()


def _token(url: str) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["t"][0]


def test_key_is_private_and_stable(home):
    paths = resolve_paths()
    k1 = links.link_key(paths)
    f = paths.data_dir / links.KEY_FILE
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert links.link_key(paths) == k1 and len(k1) >= 64


def test_get_changes_nothing_post_dismisses(served):
    store, settings, paths, base = served
    marc = add_entity(store, "Marc Dupont")
    pid = add_proposal(store, entity_ids=[marc], body="Body with <script>alert(1)</script> from a transcript")
    url = links.links_for(settings, paths, {"id": pid})["dismiss"]
    assert url.startswith(base + "/feedback?t=")
    before = _snapshot(store)
    for _ in range(3):  # a mail scanner, a link preview, the user: all GETs
        status, html, headers = _get(url)
        assert status == 200
        assert 'method="post"' in html and _token(url) in html and 'name="reason"' in html
        assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html  # escaped
        assert headers["Referrer-Policy"] == "no-referrer" and headers["Cache-Control"] == "no-store"
    assert _snapshot(store) == before
    status, html = _post(base + "/feedback", {"t": _token(url), "reason": "not a target account", "scope": "entity"})
    assert status == 200 and "Dismissed (entity)" in html
    assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "dismissed"
    fb = store.query("SELECT verdict, reason, scope, via FROM feedback")
    assert fb == [{"verdict": "dismiss", "reason": "not a target account", "scope": "entity", "via": "link"}]
    assert store.scalar("SELECT entity_ids FROM suppressions") == [marc]
    # Posting again is a no-op; the GET now says it is done, with no form.
    assert _post(base + "/feedback", {"t": _token(url)})[0] == 200
    assert store.scalar("SELECT count(*) FROM feedback") == 1
    status, html, _ = _get(url)
    assert status == 200 and "already dismissed" in html and "<form" not in html


def test_accept_and_snooze_links(served):
    store, settings, paths, base = served
    a, b = add_proposal(store), add_proposal(store)
    acc = links.links_for(settings, paths, {"id": a})["accept"]
    assert _post(base + "/feedback", {"t": _token(acc)})[0] == 200
    assert store.scalar("SELECT status FROM proposals WHERE id = ?", [a]) == "accepted"
    snz = links.links_for(settings, paths, {"id": b})["snooze"]
    status, html = _post(base + "/feedback", {"t": _token(snz)})  # no date
    assert status == 400 and "--until" in html
    until = (utcnow() + timedelta(days=2)).date().isoformat()
    assert _post(base + "/feedback", {"t": _token(snz), "until": until})[0] == 200
    assert store.scalar("SELECT status FROM proposals WHERE id = ?", [b]) == "snoozed"


def test_forged_expired_and_wrong_method_tokens(served):
    store, settings, paths, base = served
    pid = add_proposal(store)
    good = _token(links.links_for(settings, paths, {"id": pid})["dismiss"])
    forged = good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB")
    assert _get(f"{base}/feedback?t={forged}")[0] == 403
    assert _post(base + "/feedback", {"t": forged})[0] == 403
    other_key = URLSafeTimedSerializer(b"x" * 64, salt=links.SALT).dumps({"p": pid, "v": "dismiss"})
    assert _post(base + "/feedback", {"t": other_key})[0] == 403

    class PastSigner(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - (settings.delivery.link_ttl_hours + 1) * 3600

    old = URLSafeTimedSerializer(
        links.link_key(paths), salt=links.SALT, signer=PastSigner, signer_kwargs={"digest_method": hashlib.sha256}
    ).dumps({"p": pid, "v": "dismiss"})
    status, html, _ = _get(f"{base}/feedback?t={old}")
    assert status == 410 and "expired" in html
    assert _post(base + "/feedback", {"t": old})[0] == 410
    # A JSON post (not a form) is refused before anything is read.
    req = urllib.request.Request(base + "/feedback", data=json.dumps({"t": good}).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 415
    assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "pending"
    assert store.scalar("SELECT count(*) FROM feedback") == 0


def test_confirmation_page_in_headless_chromium(served, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    store, settings, paths, _base = served
    pid = add_proposal(store)
    url = links.links_for(settings, paths, {"id": pid})["dismiss"]
    before = _snapshot(store)
    out = subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium'}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-1000:]
    dom = out.stdout
    assert f"Dismiss: {pid}?" in dom and 'id="confirm"' in dom and 'name="scope"' in dom
    assert _snapshot(store) == before  # a real browser's GET (and any prefetch) changed nothing


def test_cli_commands_and_stats(home):
    from backchannel.cli.main import cli
    from backchannel.memory import Store

    paths = resolve_paths().ensure()
    with Store.open(paths.db_file) as store:
        marc = add_entity(store, "Marc Dupont")
        a, b, c = (
            add_proposal(store, entity_ids=[marc]),
            add_proposal(store, kind="brief", entity_ids=[marc]),
            add_proposal(store, kind="reconnect"),
        )
        store.append_event("gate.suppressed", {"check": "rejection", "reason": "suppressed: 0.91 similar to P-1, x"})
        store.append_event("gate.suppressed", {"check": "rate_day", "reason": "3 proposals today"})
    runner = CliRunner()
    env = {"BACKCHANNEL_HOME": str(home)}
    r = runner.invoke(cli, ["dismiss", a, "--reason", "not a target account", "--scope", "kind"], env=env)
    assert r.exit_code == 0, r.output
    assert f"{a} dismissed (scope kind): not a target account" in r.output
    assert runner.invoke(cli, ["accept", b], env=env).exit_code == 0
    until = (utcnow() + timedelta(days=5)).date().isoformat()
    assert runner.invoke(cli, ["snooze", c, "--until", until], env=env).exit_code == 0
    bad = runner.invoke(cli, ["snooze", c, "--until", "2001-01-01"], env=env)
    assert bad.exit_code != 0 and "not in the future" in str(bad.exception or bad.output)
    r = runner.invoke(cli, ["stats", "--json"], env=env)
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["proposals"] == 3 and s["acceptance_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert s["dismissal_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert s["verdicts"] == {"dismiss": 1, "accept": 1, "snooze": 1}
    assert s["suppressed_by_check"] == {"rejection": 1, "rate_day": 1}
    assert s["rejections_by_scope"] == {"semantic": 1}
    assert s["dismissal_reasons"] == [{"reason": "not a target account", "scope": "kind", "n": 1}]
    assert s["active_suppressions"] == {"kind": 1}
    r = runner.invoke(cli, ["stats"], env=env)
    assert r.exit_code == 0 and "accepted 33%" in r.output and "not a target account" in r.output


def test_snoozed_proposal_comes_back(home, store):
    from backchannel.delivery import outbox
    from tests.support.delivery_support import start_smtp

    smtp = start_smtp("plain")
    try:
        settings = make_settings(email={"host": "127.0.0.1", "port": smtp.port, "security": "none"})
        paths = resolve_paths()
        from backchannel.ops import OpEnv
        from backchannel.ops import feedback_ops as ops

        pid = add_proposal(store)
        outbox.deliver_due(store, settings, paths)
        until = (utcnow() + timedelta(days=1)).date().isoformat()
        ops.snooze(OpEnv(store, settings, paths), pid, until=until)
        assert outbox.deliver_due(store, settings, paths) == []
        later = utcnow() + timedelta(days=2)
        [r] = outbox.deliver_due(store, settings, paths, now=later)
        assert r.ok and r.idem_key == f"{pid}:email:r1"
        assert len(smtp.messages) == 2
        assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "delivered"
    finally:
        smtp.stop()


def test_rates_count_the_latest_verdict_once(store, home):
    from backchannel.config import Settings, resolve_paths
    from backchannel.ops import OpEnv, invoke
    from tests.support.delivery_support import add_proposal

    env = OpEnv(store=store, settings=Settings(), paths=resolve_paths())
    changed, kept = add_proposal(store, entity_ids=[1]), add_proposal(store, entity_ids=[2], kind="reconnect")
    invoke(env, "accept", {"id": changed})
    invoke(env, "dismiss", {"id": changed, "reason": "changed my mind"})
    invoke(env, "accept", {"id": kept})
    stats = invoke(env, "stats", {})
    assert stats["proposals"] == 2
    assert stats["acceptance_rate"] == 0.5 and stats["dismissal_rate"] == 0.5


def test_approve_without_a_mail_server_says_what_to_configure(store, home):
    from backchannel.config import Settings, resolve_paths
    from backchannel.delivery.approval import action_hash
    from backchannel.ops import OpEnv, OpError, invoke
    from tests.support.delivery_support import add_proposal

    action = {"channel": "email", "to": "marc@example.org", "subject": "Intro", "body": "Hi Marc"}
    pid = add_proposal(store, entity_ids=[1], action=action)
    env = OpEnv(store=store, settings=Settings(), paths=resolve_paths())
    try:
        invoke(env, "approve", {"id": pid, "expected_hash": action_hash(action)})
    except OpError as exc:
        assert "[delivery.email] host" in str(exc)
    else:
        raise AssertionError("approve must refuse when no mail server is configured")
    assert store.scalar("SELECT status FROM proposals WHERE id = ?", [pid]) == "pending"
    assert store.scalar("SELECT count(*) FROM outbox") == 0

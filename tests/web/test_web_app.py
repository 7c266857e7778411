"""The web app over real HTTP on loopback: served by the daemon with
`[web] enabled` (its forms go through the daemon's queue, an edited draft is approved
only under its own hash), served by `backchannel web` alone (a forgotten person is on
no page), and its guards (Host, Origin, CSRF, one-time and expiring links, the token)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from tests.support.delivery_support import PASSWORD, DaemonProc, email_toml, start_smtp, wait_for
from tests.support.web_support import Browserless, WebProc, story_home, subprocess_env

pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")


@pytest.fixture
def smtp():
    server = start_smtp("plain", auth=True)
    yield server
    server.stop()


def _csrf(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_the_daemon_serves_the_app_and_an_edited_draft_is_approved_under_its_own_hash(home, smtp):
    ids = story_home(home, "[web]\nenabled = true\n[delivery]\nchannels = []\n" + email_toml(smtp.port, auth=True))
    (home / "secrets").mkdir(exist_ok=True)
    (home / "secrets" / "smtp_password").write_text(PASSWORD)
    intro, reconnect = ids.intro, ids.reconnect
    d = DaemonProc(home)
    try:
        d.wait_log(lambda x: x.get("msg") == "web app listening")
        port = int((home / "state" / "web.port").read_text())
        assert f"web app: http://127.0.0.1:{port}" in d.cli("status").stdout
        r = d.cli("web")  # the daemon serves it: this only prints a login link, and returns
        assert r.returncode == 0, r.stderr
        link = re.search(r"login link[^:]*: (http://\S+)", r.stdout).group(1)
        assert link.startswith(f"http://127.0.0.1:{port}/login?t=")
        b = Browserless(f"http://127.0.0.1:{port}")
        status, page = b.get(link)
        assert status == 200 and "<h1>Proposals</h1>" in page
        # A verdict through the daemon's queue, seen by the CLI through the daemon's API.
        status, page = b.post(
            f"/proposals/{reconnect}/dismiss", {"reason": "no", "scope": "this"}, csrf_from=f"/proposals/{reconnect}"
        )
        assert status == 200 and "Dismissed" in page
        shown = json.loads(d.cli("show", reconnect, "--json").stdout)
        assert shown["status"] == "dismissed"
        # Edit the draft: the review page shows exactly what would go out, and its hash.
        status, review = b.post(
            f"/proposals/{intro}/edit",
            {"to": "sophie.assistant@example.org", "subject": "Hello", "body": "Hi,\r\nplease forward.\r\n"},
            csrf_from=f"/proposals/{intro}",
        )
        assert status == 200 and "sophie.assistant@example.org" in review
        action = json.loads(re.search(r'name="action" value="([^"]+)"', review).group(1).replace("&#34;", '"'))
        digest = re.search(r'name="expected_hash" value="([0-9a-f]{64})"', review).group(1)
        assert action == {
            "channel": "email",
            "to": "sophie.assistant@example.org",
            "subject": "Hello",
            "body": "Hi,\nplease forward.\n",
        }
        # A payload changed after review (same hash) is refused, and nothing is sent.
        tampered = dict(action, to="someone@example.org")
        status, page = b.post(
            f"/proposals/{intro}/approve",
            {"action": json.dumps(tampered), "expected_hash": digest},
            csrf_from=f"/proposals/{intro}",
        )
        assert status == 400 and "changed since it was shown" in page
        assert smtp.messages == []
        status, page = b.post(
            f"/proposals/{intro}/approve",
            {"action": json.dumps(action), "expected_hash": digest},
            csrf_from=f"/proposals/{intro}",
        )
        assert status == 200 and "Approved and sent to sophie.assistant@example.org" in page
        wait_for(lambda: smtp.messages, what="the approved mail")
        [sent] = smtp.messages
        assert sent.rcpt_tos == ["sophie.assistant@example.org"] and sent.msg["Subject"] == "Hello"
        trace = json.loads(d.cli("trace", intro, "--json").stdout)
        assert [f["via"] for f in trace["feedback"]] == ["web"]
    finally:
        assert d.stop() == 0
    assert not (home / "state" / "web.port").exists()


def test_a_forgotten_person_is_on_no_page(home):
    story_home(home)
    web = WebProc(home)
    try:
        b = Browserless(web.base)
        assert b.get(web.link)[0] == 200
        _, listing = b.get("/memory")
        marc = int(re.search(r'href="/memory/(\d+)">Marc Dupont<', listing).group(1))
        assert b.get(f"/memory/{marc}")[0] == 200
        # Forgetting needs no daemon, and the running web app does not hold the database.
        r = subprocess.run(
            [sys.executable, "-m", "backchannel", "forget", "Marc Dupont", "--yes"],
            env=subprocess_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        status, gone = b.get(f"/memory/{marc}")
        assert status == 400 and "no entity with id" in gone
        pages = ["/proposals", "/memory", "/memory?kind=person", "/activity", "/usage"]
        _, activity = b.get("/activity")
        _, proposals = b.get("/proposals")
        _, memory = b.get("/memory")
        pages += sorted({f"/trace/{r}" for r in re.findall(r'href="/trace/(R[0-9a-f]+)"', activity)})
        pages += sorted({f"/proposals/{p}" for p in re.findall(r'href="/proposals/(P-\d+)"', proposals)})
        pages += sorted({f"/trace/{p}" for p in re.findall(r'href="/proposals/(P-\d+)"', proposals)})
        pages += sorted({f"/memory/{e}" for e in re.findall(r'href="/memory/(\d+)"', memory)})
        assert len(pages) > 10
        for path in pages:
            status, html = b.get(path)
            assert status == 200, (path, html[:500])
            hit = re.search(r".{0,80}(\bMarc\b|Dupont).{0,80}", html)
            assert hit is None, (path, hit.group(0))
        for q in ("Marc", "Dupont"):
            _, found = b.get("/memory?q=" + q)
            assert "No person or organisation by that name" in found
            # The search box, the heading and the title say what was asked; the results must not.
            results = found.replace(f'value="{q}"', "").replace(f"“{q}”", "").replace(f"Search: {q}", "")
            assert not re.search(r"\bMarc\b|Dupont", results)
        assert "No quote mentions it" in b.get("/memory?q=Dupont")[1]
    finally:
        web.stop()


def test_guards_host_origin_csrf_links_and_the_token(home):
    story_home(home, sweep=False)
    web = WebProc(home, env={"BACKCHANNEL_WEB__LOGIN_LINK_MINUTES": "0.02"})  # links last 1.2 s here
    try:
        from backchannel.config import resolve_paths
        from backchannel.web.auth import login_link

        b = Browserless(web.base)
        time.sleep(2.6)  # the signature carries whole seconds
        status, page = b.get(web.link)
        assert status == 403 and "expired" in page
        status, page = b.get(web.link[:-3] + "abc")
        assert status == 403 and "not valid" in page
        # Anything else leads to the login form; nothing is shown, nothing posted is done.
        status, page = b.get("/proposals/P-1")
        assert status == 200 and "<h1>Log in</h1>" in page and "Marc" not in page
        assert b.post("/proposals/P-1/accept", {})[0] == 403
        # The token login (the API token file), with the login form's own CSRF token.
        status, page = b.post("/login", {"token": "wrong"}, csrf_from="/login")
        assert status == 403 and "not the API token" in page
        token = (home / "state" / "api.token").read_text().strip()
        status, page = b.post("/login", {"token": token}, csrf_from="/login")
        assert status == 200 and "<h1>Proposals</h1>" in page
        # A fresh link works once.
        fresh = login_link(web.base, resolve_paths({"BACKCHANNEL_HOME": str(home)}).state_dir)
        other = Browserless(web.base)
        assert other.get(fresh)[0] == 200
        assert Browserless(web.base).get(fresh)[0] == 403
        # Logged in, a form still needs its token, and a foreign Origin or Host is refused.
        assert b.post("/proposals/P-1/accept", {"csrf": "forged"})[0] == 403
        req = urllib.request.Request(
            web.base + "/proposals/P-1/accept",
            method="POST",
            data=urllib.parse.urlencode({"csrf": _csrf(b.get("/proposals/P-1")[1])}).encode(),
            headers={"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            b.opener.open(req, timeout=30)
        assert refused.value.code == 403
        req = urllib.request.Request(web.base + "/proposals", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as rebinding:
            b.opener.open(req, timeout=30)
        assert rebinding.value.code == 421
        assert "pending" in b.get("/proposals/P-1")[1]  # none of that changed anything
        # Scripts only from the app's own static files, no inline script, nothing from another
        # origin; the headers say so too.
        with b.opener.open(web.base + "/proposals/P-1", timeout=30) as r:
            html = r.read().decode()
            csp = r.headers["Content-Security-Policy"]
            assert "script-src 'self';" in csp and "unsafe" not in csp and "default-src 'none'" in csp
            assert r.headers["X-Frame-Options"] == "DENY" and r.headers["Referrer-Policy"] == "no-referrer"
        scripts = re.findall(r"<script[^>]*>", html.lower())
        assert all(
            re.fullmatch(r'<script defer src="/static/[\w./-]+">|<script type="application/json" id="[\w-]+">', t)
            for t in scripts
        ), scripts
        assert not re.search(r'(src|href)="(https?:)?//', html)
        css = b.get("/static/style.css")
        assert css[0] == 200 and "url(" not in css[1] and "@import" not in css[1]
        # Logging out ends the session.
        assert b.post("/logout", {}, csrf_from="/proposals")[0] == 200
        assert "<h1>Log in</h1>" in b.get("/proposals")[1]
    finally:
        web.stop()


def test_backchannel_web_beside_a_daemon_that_does_not_serve_it_goes_through_its_api(home):
    ids = story_home(home, sweep=False)
    d = DaemonProc(home)
    try:
        d.wait_log(lambda x: x.get("msg") == "daemon ready")
        web = WebProc(home)  # the daemon holds the database: every operation travels over its API
        try:
            b = Browserless(web.base)
            assert b.get(web.link)[0] == 200
            status, page = b.post(
                f"/proposals/{ids[0]}/snooze", {"until": "2099-01-01"}, csrf_from=f"/proposals/{ids[0]}"
            )
            assert status == 200 and "Snoozed until 2099-01-01" in page
            assert json.loads(d.cli("show", ids[0], "--json").stdout)["status"] == "snoozed"
            status, page = b.post(
                f"/proposals/{ids[0]}/snooze", {"until": "1999-01-01"}, csrf_from=f"/proposals/{ids[0]}"
            )
            assert status == 400 and "is not in the future" in page  # the operation's own refusal, shown
        finally:
            web.stop()
    finally:
        assert d.stop() == 0


def test_search_matches_literally_and_refuses_empty_text(store):
    from backchannel.config import Settings, resolve_paths
    from backchannel.ops import OpEnv, OpError, invoke
    from tests.support.delivery_support import add_entity

    add_entity(store, "Anna 100% Smith")
    add_entity(store, "Bob Jones")
    env = OpEnv(store=store, settings=Settings(), paths=resolve_paths())
    assert [e["name"] for e in invoke(env, "search", {"query": "100%"})["entities"]] == ["Anna 100% Smith"]
    assert invoke(env, "search", {"query": "%"})["entities"][0]["name"] == "Anna 100% Smith"
    assert invoke(env, "search", {"query": "_ob"})["entities"] == []  # `_` is not a wildcard
    assert [e["name"] for e in invoke(env, "search", {"query": "jones"})["entities"]] == ["Bob Jones"]
    with pytest.raises(OpError, match="needs some text"):
        invoke(env, "search", {"query": "  "})


LATER_MEETING = """---
title: Catch-up with Julie
date: 2026-11-25 10:00
participants: [Alex Moreau, Julie Bernard]
---
[00:00:03] Alex Moreau: Any news from Acme?
[00:00:09] Julie Bernard: Karl Weber is now the CIO of Acme, he took over in November.
"""


def test_memory_pages_show_superseded_facts_and_merge_then_split(home, tmp_path):
    later = tmp_path / "2026-11-25 catch-up with Julie.txt"
    later.write_text(LATER_MEETING)
    story_home(home, sweep=False, extra_files=[later])
    web = WebProc(home)
    try:
        b = Browserless(web.base)
        assert b.get(web.link)[0] == 200
        _, listing = b.get("/memory")
        ids = dict((name, int(i)) for i, name in re.findall(r'href="/memory/(\d+)">([^<]+)</a>', listing))
        _, acme = b.get(f"/memory/{ids['Acme']}")
        current, _, superseded = acme.partition("<h2>Superseded</h2>")
        assert "Karl Weber is now the CIO of Acme" in current.split("<h2>Current facts</h2>")[1]
        assert "Sophie Martin is now the CIO of Acme" in superseded.split("</section>")[0]
        assert "<h2>Timeline</h2>" in acme
        # Merge Paul Girard into Karl Weber from Karl's page, then split him out again.
        status, page = b.post(
            f"/memory/{ids['Karl Weber']}/merge",
            {"other": "Paul Girard", "reason": "test"},
            csrf_from=f"/memory/{ids['Karl Weber']}",
        )
        assert status == 200 and "Merged Paul Girard into this entity" in page  # the person, not "#7"
        merge_id = re.search(r'name="merge" value="(M\d+)"', page).group(1)
        _, listing = b.get("/memory")
        assert f'href="/memory/{ids["Paul Girard"]}"' not in listing  # one entity now, Paul an alias of it
        assert "Paul Girard" in page.split("Also known as:")[1].split("</p>")[0]
        status, merged_page = b.get(f"/memory/{ids['Paul Girard']}")  # the merged id leads to the live entity
        assert status == 200 and "<h1>Karl Weber" in merged_page
        status, page = b.post("/memory/split", {"merge": merge_id}, csrf_from=f"/memory/{ids['Karl Weber']}")
        assert status == 200 and f"Split {merge_id}" in page and "<h1>Paul Girard" in page
        status, page = b.post(
            f"/memory/{ids['Karl Weber']}/merge", {"other": "Nobody Atall"}, csrf_from=f"/memory/{ids['Karl Weber']}"
        )
        assert status == 400 and "Nobody Atall" in page  # the operation's refusal, on the page
    finally:
        web.stop()


def test_the_mails_signed_feedback_links_work_on_the_web_app_too(home):
    from backchannel.config import resolve_paths
    from backchannel.delivery.links import make_token

    ids = story_home(home, sweep=False)
    web = WebProc(home)
    try:
        token = make_token(resolve_paths({"BACKCHANNEL_HOME": str(home)}), ids[0], "dismiss")
        b = Browserless(web.base)  # not logged in: the signed token is the credential
        status, page = b.get(f"/feedback?t={token}")
        assert status == 200 and 'name="t"' in page and "Nothing changes until you confirm" in page
        status, page = b.post(f"/feedback?t={token}", {"t": token, "reason": "from the mail", "scope": "this"})
        assert status == 200 and "Dismissed" in page
        assert b.get(f"/feedback?t={token[:-4]}AAAA")[0] == 403
        assert b.get("/proposals")[1].count("<h1>Log in</h1>") == 1  # the rest still needs a login
        r = subprocess.run(
            [sys.executable, "-m", "backchannel", "trace", ids[0], "--json"],
            env=subprocess_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        [fb] = json.loads(r.stdout)["feedback"]
        assert (fb["verdict"], fb["via"], fb["reason"]) == ("dismiss", "link", "from the mail")
    finally:
        web.stop()


def test_usage_page_shows_spend_by_day_and_role(home):
    """Calls recorded as the gateway records them (tests/agent/test_gateway.py covers the recording)."""
    from datetime import timedelta

    from backchannel.memory import Store
    from backchannel.memory.store import utcnow

    story_home(home, sweep=False)
    now = utcnow()
    with Store.open(home / "data" / "backchannel.duckdb") as st:
        for role, model, tokens, cost, outcome, when in [
            ("sweep", "openai/gpt-4.1-mini", (900, 300), 0.0012, "ok", now),
            ("draft", "anthropic/claude-haiku", (400, 200), 0.0007, "ok", now),
            ("draft", "anthropic/claude-haiku", (0, 0), None, "timeout", now),
            ("extract", "ollama/qwen3", (5000, 800), None, "ok", now - timedelta(days=2)),
        ]:
            st.con.execute(
                """INSERT INTO model_calls (run_id, role, model, prompt_tokens, completion_tokens, cost_usd,
                       latency_ms, outcome, prompt_hash, created_at) VALUES ('R1', ?, ?, ?, ?, ?, 800, ?, 'h', ?)""",
                [role, model, *tokens, cost, outcome, when],
            )
    web = WebProc(home)
    try:
        b = Browserless(web.base)
        assert b.get(web.link)[0] == 200
        _, page = b.get("/usage?days=7")
        rows = re.findall(r"<tr><td>(\d{4}-\d\d-\d\d)</td><td>(\w+)</td><td>(\d+)</td><td>(\d+)</td>", page)
        today, earlier = str(now.date()), str((now - timedelta(days=2)).date())
        assert sorted(rows) == sorted(
            [(earlier, "extract", "1", "0"), (today, "draft", "2", "1"), (today, "sweep", "1", "0")]
        )
        assert "unknown" in page  # the local model's calls have no price: unknown, not free
        _, one_day = b.get("/usage?days=1")
        assert "extract" not in one_day
        status, bad = b.get("/usage?days=zero")
        assert status == 400 and "whole number" in bad
    finally:
        web.stop()

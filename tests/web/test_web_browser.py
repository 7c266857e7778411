"""The web app in a real browser (Debian's chromium, driven by Playwright) against
`backchannel web` on loopback and a real SMTP server: log in with the
one-time link, dismiss a proposal and find it in the list, approve the drafted
introduction and see exactly that mail arrive; every page is screenshotted.

Set WEB_SCREENSHOTS_DIR=DIR to keep the screenshots (docs/screenshots/ holds a set)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.delivery_support import PASSWORD, email_toml, start_smtp, wait_for
from tests.support.web_support import WebProc, story_home


def _arrived(page, url_pattern: str) -> None:
    """Wait until the page has navigated to a URL matching `url_pattern` and is loaded."""
    page.wait_for_url(re.compile(url_pattern))
    page.wait_for_load_state("load")


pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def smtp():
    server = start_smtp("plain", auth=True)
    yield server
    server.stop()


@pytest.fixture
def browser():
    """A function that launches chromium: call it after the in-process setup, because
    Playwright's sync API keeps an event loop running in this thread."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it: apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    started: list = []

    def launch():
        p = sync_playwright().start()
        started.append(p)
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])  # root in CI: no user namespaces
        started.append(b)
        return b

    yield launch
    for thing in reversed(started):
        thing.close() if hasattr(thing, "close") else thing.stop()


def _shot(page, tmp_path: Path, name: str) -> None:
    target = tmp_path / f"{name}.png"
    height = min(page.evaluate("document.documentElement.scrollHeight"), 1400)  # long pages: their top
    page.screenshot(path=str(target), full_page=True, clip={"x": 0, "y": 0, "width": 1100, "height": height})
    keep = os.environ.get("WEB_SCREENSHOTS_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(target, Path(keep) / target.name)


def test_log_in_dismiss_and_approve_in_a_real_browser(home, smtp, browser, tmp_path):
    ids = story_home(home, "[delivery]\nchannels = []\n" + email_toml(smtp.port, auth=True))
    (home / "secrets").mkdir(exist_ok=True)
    (home / "secrets" / "smtp_password").write_text(PASSWORD)
    intro, reconnect = ids.intro, ids.reconnect
    # `backchannel web --open` hands its one-time link to the browser ($BROWSER: here, a recorder).
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser.sh"
    recorder.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    recorder.chmod(0o755)
    web = WebProc(home, "--open", env={"BROWSER": str(recorder)})
    wait_for(lambda: opened.exists() and opened.read_text(), what="the browser to be opened")
    assert opened.read_text() == web.link
    browser = browser()
    try:
        ctx = browser.new_context(viewport={"width": 1100, "height": 800})
        page = ctx.new_page()
        # Not logged in: every page leads to the login form.
        page.goto(web.base + "/proposals")
        assert page.url == web.base + "/login" and page.locator("h1").inner_text() == "Log in"
        _shot(page, tmp_path, "login")
        # The one-time link logs in, then leaves the address bar.
        page.goto(web.link)
        assert page.url == web.base + "/proposals"
        rows = page.locator("table.list tbody tr")
        assert rows.count() == len(ids)
        assert "Marc Dupont worked with Sophie Martin" in page.locator("table.list").inner_text()  # the why-now
        assert page.get_by_role("link", name="Ask Marc Dupont for an introduction to Sophie Martin").is_visible()
        _shot(page, tmp_path, "proposals")
        port = web.base.rsplit(":", 1)[1]
        cookie = next(c for c in ctx.cookies() if c["name"] == f"bc_session_{port}")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        # The link works once.
        other = browser.new_context().new_page()
        other.goto(web.link)
        assert "already used" in other.locator(".flash.error").inner_text()
        assert other.url.endswith("/login?" + web.link.split("?", 1)[1])

        # Dismiss the reconnect proposal, with a reason; it shows as dismissed in the list.
        page.goto(f"{web.base}/proposals/{reconnect}")
        page.locator("form[action$='/dismiss'] input[name=reason]").fill("we talk every week anyway")
        page.locator("form[action$='/dismiss'] select[name=scope]").select_option("this")
        page.get_by_role("button", name="Dismiss").click()
        assert "Dismissed" in page.locator(".flash.ok").inner_text()
        page.goto(web.base + "/proposals?status=dismissed")
        listed = page.locator("table.list tbody tr")
        assert listed.count() == 1 and reconnect in listed.inner_text() and "dismissed" in listed.inner_text()

        # The introduction: why now, verbatim evidence with speaker and date, the exact draft.
        page.goto(f"{web.base}/proposals/{intro}")
        assert page.locator("ul.evidence li").count() >= 1
        assert "Sophie Martin" in page.locator("ul.evidence").inner_text()
        assert page.locator("dl.payload dd").first.inner_text() == "marc@example.org"
        draft_body = page.locator("section.draft pre.message").inner_text()
        _shot(page, tmp_path, "proposal")
        # Editing shows the edited draft back, exactly as it would go, under its own hash; cancel it here.
        page.locator("section.draft summary").click()
        page.locator("form[action$='/edit'] input[name=subject]").fill("Would you introduce me to Sophie?")
        page.get_by_role("button", name="Review the edited draft").click()
        assert page.locator("h1").inner_text() == "Send this?"
        assert page.locator("dl.payload dd").nth(1).inner_text() == "Would you introduce me to Sophie?"
        _shot(page, tmp_path, "approve-review")
        page.get_by_role("link", name="Cancel").click()
        assert smtp.messages == []
        page.get_by_role("button", name="Approve and send").first.click()
        assert "Approved and sent to marc@example.org" in page.locator(".flash.ok").inner_text()
        wait_for(lambda: smtp.messages, what="the approved mail")
        [sent] = smtp.messages
        assert sent.rcpt_tos == ["marc@example.org"]
        assert sent.msg.get_content().replace("\r\n", "\n").strip() == draft_body.strip()
        page.goto(f"{web.base}/proposals/{intro}")
        assert page.locator(".meta .badge").first.inner_text() == "sent"
        assert page.get_by_role("button", name="Approve and send").count() == 0  # nothing to send twice

        # Why it exists, step by step; the memory behind it; activity and usage.
        page.goto(f"{web.base}/trace/{intro}")
        assert "Trigger" in page.inner_text("main") and "approve via web" in page.inner_text("main")
        _shot(page, tmp_path, "trace")
        page.goto(web.base + "/memory")
        _shot(page, tmp_path, "memory")
        page.locator("input[name=q]").fill("Marc")
        page.get_by_role("button", name="Search").click()
        assert "Sophie Martin" in page.inner_text("main")
        _shot(page, tmp_path, "search")
        page.get_by_role("link", name="Marc Dupont").first.click()
        assert page.locator("h1").inner_text().startswith("Marc Dupont")
        assert "Current facts" in page.inner_text("main") and page.locator("blockquote").count() >= 1
        _shot(page, tmp_path, "entity")
        page.goto(web.base + "/ask")
        page.locator("input[name=question]").fill("who can introduce me to the CIO of Acme?")
        page.get_by_role("button", name="Ask").click()
        answer = page.locator("ol.answers > li").first.inner_text()
        assert "Marc Dupont" in answer and "Sophie Martin" in answer and "“" in answer  # with its evidence
        _shot(page, tmp_path, "ask")
        page.goto(web.base + "/activity")
        run_link = page.locator("table.list tbody tr a").first
        assert run_link.inner_text().startswith("R")
        _shot(page, tmp_path, "activity")
        run_link.click()
        assert "why each was or was not proposed" in page.inner_text("main")
        _shot(page, tmp_path, "trace-run")
        page.goto(web.base + "/usage")
        _shot(page, tmp_path, "usage")

        # A form posted without its token is refused, and changes nothing.
        untouched = next(i for i in ids if i not in (intro, reconnect))
        refused = page.request.post(f"{web.base}/proposals/{untouched}/accept", form={"x": "1"})
        assert refused.status == 403
        page.goto(f"{web.base}/proposals/{untouched}")
        assert page.locator(".meta .badge").first.inner_text() == "pending"
        # Logging out ends the session.
        page.get_by_role("button", name="Log out").click()
        page.goto(web.base + "/proposals")
        assert page.url == web.base + "/login"
    finally:
        web.stop()


def test_first_use_pages_in_a_real_browser(home, browser, tmp_path):
    """A long entity page in pages of 50, one fact from three meetings shown once, the
    file-date caveat, a validity span in words, and a possible duplicate merged by a click."""
    from click.testing import CliRunner
    from test_web_first_use import _meetings

    from backchannel.cli.main import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--name", "Alex Moreau"]).exit_code == 0
    _meetings(tmp_path / "m")
    assert runner.invoke(cli, ["ingest", str(tmp_path / "m")]).exit_code == 0
    web = WebProc(home)
    browser = browser()
    try:
        page = browser.new_context(viewport={"width": 1100, "height": 800}).new_page()
        page.goto(web.link)
        page.goto(web.base + "/memory")
        dupes = page.locator("#duplicates")
        assert "WLGA" in dupes.inner_text() and "Elizabeth May" in dupes.inner_text()
        _shot(page, tmp_path, "memory-duplicates")
        page.get_by_role("link", name="Nina Roy").first.click()
        _arrived(page, r"/memory/\d+$")  # a click returns before the next page is parsed
        facts = page.locator("section:not(.ties)").first.locator("li.assertion")
        assert facts.count() == 50 and page.locator("nav.pager").first.is_visible()
        height = page.evaluate("document.documentElement.scrollHeight")
        page.locator("nav.pager").first.get_by_role("link", name="next →").click()
        _arrived(page, r"\?page=2$")
        assert (
            page.url.endswith("?page=2")
            and page.locator("section:not(.ties)").first.locator("li.assertion").count() == 10
        )
        _shot(page, tmp_path, "entity-page-2")
        assert height > page.evaluate("document.documentElement.scrollHeight")  # the rest, not all again
        page.goto(web.base + "/memory")
        page.get_by_role("link", name="Marc Dupont").first.click()
        _arrived(page, r"/memory/\d+$")
        current = page.locator("section:not(.ties)").first
        text = current.inner_text()
        assert current.locator("li.assertion").count() == 3  # the deck, Initech, and Globex once (three sources)
        assert "due 2025-06-30" in text and "valid from 2024-01-01 to now" in text and "true ?" not in text
        assert "date unknown (file date 2026-11-20)" in text
        current.locator("details.also summary").click()
        assert current.locator("details.also li").count() == 2
        _shot(page, tmp_path, "entity-one-fact")
        # merge a proposed duplicate with its button; it leaves the list of duplicates
        page.goto(web.base + "/memory")
        page.locator("#duplicates button", has_text="WLGA").click()
        assert "Merged WLGA into this entity" in page.locator(".flash").inner_text()
        page.goto(web.base + "/memory")
        assert "WLGA" not in (page.locator("#duplicates").inner_text() if page.locator("#duplicates").count() else "")
    finally:
        web.stop()

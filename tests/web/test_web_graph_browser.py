"""The ties graph and the timeline in a real browser (Debian's chromium, driven by
Playwright) against `backchannel web` on loopback: a person's page from the
demo's story and from a QMSum ingest, the graph's nodes and the timeline's items found in
the DOM, a node clicked on the canvas to navigate, the introduction's path, the page with
JavaScript off, and no request to any host but the app's own.

Set WEB_SCREENSHOTS_DIR=DIR to keep the screenshots (docs/screenshots/ holds a set)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.web_support import WebProc, story_home

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def browser():
    """Launch chromium after the in-process setup (Playwright's sync API keeps an event
    loop running in this thread)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it: apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    started: list = []

    def launch():
        p = sync_playwright().start()
        started.append(p)
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        started.append(b)
        return b

    yield launch
    for thing in reversed(started):
        thing.close() if hasattr(thing, "close") else thing.stop()


def _shot(target, tmp_path: Path, name: str) -> None:
    """A screenshot of a page's top or of one element, kept under WEB_SCREENSHOTS_DIR if set."""
    path = tmp_path / f"{name}.png"
    if hasattr(target, "goto"):
        height = min(target.evaluate("document.documentElement.scrollHeight"), 1600)
        target.screenshot(path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": 1100, "height": height})
    else:
        target.screenshot(path=str(path))
    keep = os.environ.get("WEB_SCREENSHOTS_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)


class Watch:
    """Every request the page makes, every script error and every CSP refusal."""

    def __init__(self, page):
        self.requests: list[str] = []
        self.problems: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on(
            "console",
            lambda m: (
                self.problems.append(f"console {m.type}: {m.text}")
                if m.type == "error" and "favicon.ico" not in str(m.location)
                else None
            ),
        )


def _env(home: Path):
    from backchannel.config import load_settings, resolve_paths
    from backchannel.memory import Store
    from backchannel.ops import OpEnv

    env_vars = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env_vars).ensure()
    return Store.open(paths.db_file), lambda st: OpEnv(
        store=st, settings=load_settings(paths, environ=env_vars), paths=paths
    )


def _expected(home: Path, ref: str) -> tuple[int, dict, dict]:
    from backchannel.ops import invoke

    st, env = _env(home)
    with st:
        tl = invoke(env(st), "entity_timeline", {"ref": ref})
        ties = invoke(env(st), "entity_ties", {"ref": ref, "max_nodes": 40})
    return tl["entity"]["id"], ties, tl


def _graph_ready(page) -> None:
    page.locator(".ties-graph[data-layout-ms]").first.wait_for(state="attached")


def _click_node(page, node_id: int, url: str) -> None:
    """Click where the canvas draws the node (what a person does), not its link, and wait for its
    page. The node's position is read again before each try: under load the drawing can still be
    settling (scroll, a screenshot's resize) when it is first read, and a click at a stale point
    lands on empty canvas, which navigates nowhere."""
    from playwright.sync_api import TimeoutError as PageTimeout

    for attempt in range(3):
        page.locator(".ties-graph").first.scroll_into_view_if_needed()
        box = page.locator(".ties-graph").first.bounding_box()
        pos = page.evaluate(
            "(id) => window.backchannelTies.graphs[0].cy.getElementById(String(id)).renderedPosition()", node_id
        )
        page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])
        try:
            page.wait_for_url(url, timeout=10_000)
            return
        except PageTimeout:
            if attempt == 2:
                raise


def _check_entity_page(page, base: str, eid: int, ties: dict, tl: dict) -> None:
    page.goto(f"{base}/memory/{eid}")
    _graph_ready(page)
    drawn = page.locator(".ties-graph a.ties-node")
    assert drawn.count() == len(ties["nodes"]) >= 2
    names = {n["name"] for n in ties["nodes"]}
    assert {drawn.nth(i).inner_text() for i in range(drawn.count())} == names
    assert page.locator(".ties-graph a.ties-node.center").get_attribute("href") == f"/memory/{eid}"
    assert page.locator(".ties-graph canvas").count() >= 1
    rows = page.locator("svg.timeline-svg g.tl-item")
    assert rows.count() == min(80, len(tl["items"])) >= 1
    assert {rows.nth(i).get_attribute("data-id") for i in range(rows.count())} == {
        str(i["id"]) for i in tl["items"][-80:]
    }
    assert page.locator("details.ties-list").get_attribute("open") is None  # the drawing replaces the list


def test_demo_story_graph_timeline_and_path_in_a_real_browser(home, browser, tmp_path):
    ids = story_home(home, sweep=False)
    sophie, ties, tl = _expected(home, "Sophie Martin")
    marc = next(n["id"] for n in ties["nodes"] if n["name"] == "Marc Dupont")
    owner = next(n for n in ties["nodes"] if n["is_owner"])
    web = WebProc(home)
    b = browser()
    try:
        ctx = b.new_context(viewport={"width": 1100, "height": 900})
        page = ctx.new_page()
        watch = Watch(page)
        page.goto(web.link)
        _check_entity_page(page, web.base, sophie, ties, tl)
        assert page.locator(".ties-graph a.ties-node.owner").inner_text() == owner["name"]
        assert page.locator("li.tie.owners").count() >= 1  # the owner's own ties, marked in the list too
        # The timeline: the span 2016-2021 as a bar, an open end as such, the superseded struck.
        worked = next(i for i in tl["items"] if i["predicate"] == "worked_with")
        assert page.locator(f"g.tl-item[data-id='{worked['id']}'] rect.tl-bar").count() == 1
        assert page.locator("g.tl-item line.tl-unknown").count() >= 1
        assert "2016-01-01 to 2021-12-31" in page.locator(f"g.tl-item[data-id='{worked['id']}'] title").text_content()
        # Hovering an edge shows its quote, speaker and date.
        page.evaluate("""() => { const cy = window.backchannelTies.graphs[0].cy;
                                  cy.edges('.worked_with').first().emit('mouseover'); }""")
        tip = page.locator(".ties-tip.shown")
        assert "worked with" in tip.inner_text() and worked["quote"] in tip.inner_text()
        assert "said by Marc Dupont" in tip.inner_text() and worked["said_at"][:10] in tip.inner_text()
        page.evaluate("() => window.backchannelTies.graphs[0].cy.edges('.worked_with').first().emit('mouseout')")
        _shot(page.locator("section.ties"), tmp_path, "entity-graph")
        _shot(page.locator("figure.timeline-chart"), tmp_path, "entity-timeline")
        _shot(page, tmp_path, "entity-with-graph")
        # Click Marc on the canvas: his page.
        _click_node(page, marc, f"{web.base}/memory/{marc}")
        assert page.locator("h1").inner_text().startswith("Marc Dupont")
        _graph_ready(page)
        promise = page.locator("g.tl-item.tl-promise")  # his promise: its due date, and its state
        assert promise.count() >= 1 and "due " in promise.first.locator("text.tl-state").text_content()
        _shot(page.locator("figure.timeline-chart"), tmp_path, "entity-timeline-promise")
        # The introduction: the path the sweep found, from the owner to Sophie.
        page.goto(f"{web.base}/proposals/{ids.intro}")
        _graph_ready(page)
        path = [
            page.locator(".ties-graph a.ties-node").nth(i).inner_text()
            for i in range(page.locator(".ties-graph a.ties-node").count())
        ]
        assert {"Marc Dupont", "Sophie Martin", owner["name"]} <= set(path)
        assert page.locator("li.tie.met").count() == 1 and page.locator("li.tie.worked_with").count() == 1
        _shot(page.locator("section.ties"), tmp_path, "proposal-path")
        # "and N more": the full page of ties; from it, the same graph at up to 200 nodes.
        page.goto(f"{web.base}/memory/{sophie}/ties")
        _graph_ready(page)
        assert page.locator(".ties-graph a.ties-node").count() == len(ties["nodes"])
        assert watch.problems == []
    finally:
        web.stop()


def test_the_pages_work_with_javascript_off(home, browser, tmp_path):
    story_home(home, sweep=False)
    sophie, ties, tl = _expected(home, "Sophie Martin")
    web = WebProc(home)
    b = browser()
    try:
        page = b.new_context(viewport={"width": 1100, "height": 900}, java_script_enabled=False).new_page()
        page.goto(web.link)
        page.goto(f"{web.base}/memory/{sophie}")
        assert not page.locator(".ties-graph").is_visible()  # no drawing, and no empty box
        assert page.locator("details.ties-list").get_attribute("open") is not None
        assert page.locator("ul.ties-rows li").count() == len(ties["edges"])
        assert page.locator("ul.ties-rows li a").first.is_visible()
        assert page.locator("svg.timeline-svg g.tl-item").count() == len(tl["items"])  # the SVG needs no script
        assert page.locator("section.ties noscript").count() == 1
        _shot(page.locator("section.ties"), tmp_path, "entity-graph-no-javascript")
    finally:
        web.stop()


def test_a_qmsum_persons_page_in_a_real_browser(home, browser, corpora, tmp_path):
    from backchannel.ops import invoke

    files = sorted(str(f) for f in (corpora / "meetings" / "qmsum").glob("*.json") if f.name != "INDEX.json")
    st, env = _env(home)
    with st:
        assert invoke(env(st), "ingest", {"paths": files})["ingested"] == len(files)
        # The person with the most ties to others.
        [row] = st.query("""SELECT e.id FROM entities e JOIN assertions a ON e.id IN (a.subject_id, a.object_id)
                            WHERE a.object_id IS NOT NULL AND e.kind = 'person' AND a.superseded_at IS NULL
                            GROUP BY e.id ORDER BY count(*) DESC, e.id LIMIT 1""")
    eid, ties, tl = _expected(home, str(row["id"]))
    other = next(n for n in ties["nodes"] if not n["center"])
    web = WebProc(home)
    b = browser()
    try:
        page = b.new_context(viewport={"width": 1100, "height": 900}).new_page()
        watch = Watch(page)
        page.goto(web.link)
        _check_entity_page(page, web.base, eid, ties, tl)
        # QMSum's files carry no date: each meeting is dated by the file, and marked so.
        assert page.locator("g.tl-item.tl-file-dated").count() == page.locator("g.tl-item").count()
        assert "not the transcript's" in page.locator("g.tl-item title").first.text_content()
        _shot(page.locator("section.ties"), tmp_path, "qmsum-graph")
        _shot(page.locator("figure.timeline-chart"), tmp_path, "qmsum-timeline")
        _shot(page, tmp_path, "qmsum-entity")
        _click_node(page, other["id"], f"{web.base}/memory/{other['id']}")
        assert page.locator("h1").inner_text().startswith(other["name"])
        assert watch.problems == []
    finally:
        web.stop()


def test_no_page_requests_any_host_but_the_apps_own(home, browser):
    ids = story_home(home, sweep=True)
    sophie, _, _ = _expected(home, "Sophie Martin")
    web = WebProc(home)
    b = browser()
    try:
        ctx = b.new_context(viewport={"width": 1100, "height": 900})
        own = urlsplit(web.base).netloc
        seen: list[str] = []
        foreign: list[str] = []

        def route(r):  # every request of every page passes here; a foreign one is refused and noted
            seen.append(r.request.url)
            if urlsplit(r.request.url).netloc != own:
                foreign.append(r.request.url)
                return r.abort()
            return r.continue_()

        ctx.route("**/*", route)
        page = ctx.new_page()
        watch = Watch(page)
        page.goto(web.link)
        for path in (
            "/proposals",
            f"/proposals/{ids.intro}",
            f"/proposals/{ids.reconnect}",
            "/memory",
            "/memory?q=Marc",
            f"/memory/{sophie}",
            f"/memory/{sophie}/ties",
            "/ask",
            "/activity",
            "/usage",
            f"/trace/{ids.intro}",
        ):
            page.goto(web.base + path)
            page.wait_for_load_state("networkidle")
        assert foreign == []
        assert any(u.endswith("/static/vendor/cytoscape/cytoscape.min.js") for u in seen)
        assert any(u.endswith("/static/graph.js") for u in seen)
        assert watch.problems == []  # no script error, no Content-Security-Policy refusal
    finally:
        web.stop()

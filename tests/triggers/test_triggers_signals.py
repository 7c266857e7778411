"""Signals: RSS and Atom files, a feed served over loopback HTTP, the JSON drop
folder, organisation matching, and the trigger's signal wakes."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backchannel.config.sections import SignalSettings
from backchannel.triggers.signals import FeedError, Signal, SignalTrigger, load_feed, match_orgs, scan_drop_dir

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
<channel>
  <title>Public tenders</title>
  <link>https://tenders.example.org/</link>
  <description>Calls for tender</description>
  <item>
    <title>Acme publishes a tender for a data platform</title>
    <link>https://tenders.example.org/acme-2026-114</link>
    <guid>tender-2026-114</guid>
    <description>&lt;p&gt;&lt;b&gt;Acme&lt;/b&gt; (Lyon) seeks a partner &amp;amp; integrator.&lt;/p&gt;</description>
    <pubDate>Sun, 29 Nov 2026 07:30:00 +0100</pubDate>
  </item>
  <item>
    <title>Globex renews its cloud contract</title>
    <link>https://tenders.example.org/globex-77</link>
    <pubDate>Fri, 27 Nov 2026 16:00:00 GMT</pubDate>
  </item>
</channel>
</rss>
"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Industry news</title>
  <id>urn:uuid:feed-1</id>
  <updated>2026-11-28T10:00:00Z</updated>
  <entry>
    <title>Initech appoints a new CIO</title>
    <id>urn:uuid:entry-1</id>
    <link href="https://news.example.com/initech-cio"/>
    <updated>2026-11-28T10:00:00Z</updated>
    <summary>Société Générale veteran joins Initech.</summary>
  </entry>
</feed>
"""


def drain(q: asyncio.Queue) -> list:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def test_rss_file(tmp_path: Path):
    p = tmp_path / "tenders.rss"
    p.write_text(RSS, encoding="utf-8")
    sigs = load_feed(str(p))
    assert [s.title for s in sigs] == [
        "Acme publishes a tender for a data platform",
        "Globex renews its cloud contract",
    ]
    acme, globex = sigs
    assert acme.summary == "Acme (Lyon) seeks a partner & integrator."
    assert acme.url == "https://tenders.example.org/acme-2026-114"
    assert acme.published_at == datetime(2026, 11, 29, 6, 30, tzinfo=UTC)  # +0100 converted to UTC
    assert globex.published_at == datetime(2026, 11, 27, 16, 0, tzinfo=UTC)
    assert len({acme.id, globex.id}) == 2 and len(acme.id) == 64
    assert load_feed(str(p))[0].id == acme.id  # stable across loads
    assert Signal.from_dict(acme.to_dict()) == acme


def test_atom_file(tmp_path: Path):
    p = tmp_path / "news.atom"
    p.write_text(ATOM, encoding="utf-8")
    (sig,) = load_feed(str(p))
    assert sig.title == "Initech appoints a new CIO"
    assert sig.url == "https://news.example.com/initech-cio"
    assert sig.published_at == datetime(2026, 11, 28, 10, 0, tzinfo=UTC)
    assert "Initech" in sig.summary


def test_broken_feeds_raise_feed_error(tmp_path: Path):
    with pytest.raises(FeedError, match="cannot read"):
        load_feed(str(tmp_path / "missing.rss"))
    (tmp_path / "junk.rss").write_bytes(b"\x00\xffnot xml at all <<<")
    with pytest.raises(FeedError):
        load_feed(str(tmp_path / "junk.rss"))


class _Feed(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):  # noqa: N802
        if self.path != "/feed.rss":
            self.send_error(404)
            return
        type(self).hits += 1
        body = RSS.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def feed_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Feed)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_rss_over_loopback_http(feed_server: str):
    sigs = load_feed(f"{feed_server}/feed.rss", timeout_s=5)
    assert len(sigs) == 2 and all(s.source == f"{feed_server}/feed.rss" for s in sigs)
    with pytest.raises(FeedError, match="404"):
        load_feed(f"{feed_server}/missing.rss", timeout_s=5)


def test_drop_dir_objects_lists_and_malformed_reported_once(tmp_path: Path):
    d = tmp_path / "signals"
    d.mkdir()
    (d / "one.json").write_text(
        json.dumps(
            {
                "title": "Acme publishes a tender",
                "summary": "Data platform, Lyon",
                "url": "https://acme.example/tender",
                "published_at": "2026-11-29T07:00:00+01:00",
            }
        )
    )
    (d / "many.json").write_text(
        json.dumps(
            [
                {"title": "Globex opens an office in Paris", "source": "press"},
                {"title": "Initech hires", "summary": "<b>three</b> engineers"},
            ]
        )
    )
    (d / "bad.json").write_text("{not json")
    (d / "notitle.json").write_text(json.dumps({"summary": "no title here"}))
    (d / ".partial.json").write_text("{")
    (d / "readme.txt").write_text("ignored: not .json")
    skip: set[str] = set()
    errors: list[str] = []
    sigs = scan_drop_dir(d, skip, errors)
    assert sorted(s.title for s in sigs) == [
        "Acme publishes a tender",
        "Globex opens an office in Paris",
        "Initech hires",
    ]
    acme = next(s for s in sigs if s.title.startswith("Acme"))
    assert acme.source == "drop:one.json" and acme.published_at == datetime(2026, 11, 29, 6, 0, tzinfo=UTC)
    assert next(s for s in sigs if s.title == "Initech hires").summary == "three engineers"
    assert next(s for s in sigs if s.title.startswith("Globex")).source == "press"
    assert len(errors) == 2 and any("bad.json" in e for e in errors) and any("notitle.json" in e for e in errors)
    # Second scan: the same signals, the malformed files skipped silently.
    errors2: list[str] = []
    assert {s.id for s in scan_drop_dir(d, skip, errors2)} == {s.id for s in sigs}
    assert errors2 == []
    # A malformed file that gets fixed is read again (new content, new hash).
    (d / "bad.json").write_text(json.dumps({"title": "Fixed now"}))
    assert "Fixed now" in [s.title for s in scan_drop_dir(d, skip, errors2)]


def test_match_orgs_whole_words_case_and_accents():
    orgs = [
        (1, ["Acme", "Acme Corp"]),
        (2, ["Société Générale", "SocGen"]),
        (3, ["Globex"]),
        (4, ["AT&T"]),
        (5, ["I"]),  # too short to mean anything
    ]
    assert match_orgs("ACME publishes a tender", orgs) == [1]
    assert match_orgs("Acmeville council meets; Globexx too", orgs) == []
    assert match_orgs("A veteran of SOCIETE GENERALE joins Globex.", orgs) == [2, 3]
    assert match_orgs("acmé's new CIO, ex-AT&T", orgs) == [1, 4]
    assert match_orgs("", orgs) == []


def test_trigger_feeds_and_drop_dir(tmp_path: Path, feed_server: str):
    rss = tmp_path / "local.rss"
    rss.write_text(RSS, encoding="utf-8")
    drop = tmp_path / "signals"

    async def main():
        q: asyncio.Queue = asyncio.Queue()
        settings = SignalSettings(
            feeds=[f"{feed_server}/feed.rss", str(rss), f"{feed_server}/gone.rss"], refresh_s=3600, drop_poll_s=0.1
        )
        trig = SignalTrigger(settings, drop, q)
        trig.start()
        try:
            for _ in range(300):
                await asyncio.sleep(0.01)
                if q.qsize() >= 4:
                    break
            first = drain(q)
            (drop / "acme.json").write_text(
                json.dumps({"title": "Acme publishes a tender", "url": "https://acme.example/t"})
            )
            for _ in range(300):
                await asyncio.sleep(0.01)
                if not q.empty():
                    break
            await asyncio.sleep(0.3)  # a few more drop scans: nothing new
            second = drain(q)
            again = await trig.poll()  # `backchannel wake signals`: all known already
        finally:
            await trig.stop()
        return first, second, again, trig

    first, second, again, trig = asyncio.run(main())
    assert len(first) == 4 and all(w.kind == "signal" for w in first)  # 2 items x 2 sources
    assert all(w.key == f"signal:{w.payload['id']}" for w in first)
    assert [w.payload["title"] for w in second] == ["Acme publishes a tender"]
    assert again == []
    assert any("gone.rss" in e for e in trig.errors)

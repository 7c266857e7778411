"""External signals ("Acme publishes a tender"): RSS/Atom feeds the user
configured, and a drop folder of JSON files, each new item a `signal` wake.

Feeds are fetched here through core/http.py with a timeout and a size cap
(feedparser never touches the network: it only parses the bytes). `Signal` is
defined in core/payloads.py: it crosses to the engine as a wake's payload. Linking a signal to organisations needs the
store, so the daemon does it, with `match_orgs`, a pure function.
"""

from __future__ import annotations

import asyncio
import calendar as _cal
import hashlib
import html
import json
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from backchannel.config.sections import SignalSettings
from backchannel.core.payloads import Signal, signal_id
from backchannel.core.timeutil import as_aware_utc
from backchannel.core.wake import Wake
from backchannel.memory.text import norm_name
from backchannel.triggers.calendar import fetch_source
from backchannel.triggers.inbox import is_ignored
from backchannel.triggers.wake import SYSTEM_CLOCK, Clock, SeenKeys, cancel_task, enqueue

log = logging.getLogger(__name__)

_TAGS = re.compile(r"<[^>]+>")
_WS = re.compile(r"\s+")


class FeedError(Exception):
    """A feed could not be fetched or parsed."""


def plain_text(value: str | None) -> str:
    """Feed summaries are HTML: tags out, entities decoded, spaces collapsed."""
    if not value:
        return ""
    return _WS.sub(" ", html.unescape(_TAGS.sub(" ", value))).strip()


def _parse_when(value: Any) -> datetime | None:
    if not value:
        return None
    if isinstance(value, datetime):
        return as_aware_utc(value)
    text = str(value).strip()
    try:
        return as_aware_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return as_aware_utc(parsedate_to_datetime(text))
    except (TypeError, ValueError):
        return None


# -- feeds -------------------------------------------------------------------


def parse_feed(data: bytes, source: str) -> list[Signal]:
    """Signals from RSS/Atom bytes. Raises FeedError when nothing usable is in them."""
    import feedparser

    parsed = feedparser.parse(data)
    if parsed.get("bozo") and not parsed.entries:
        raise FeedError(f"{source}: not a feed: {parsed.get('bozo_exception')}")
    out: list[Signal] = []
    for entry in parsed.entries:
        title = plain_text(entry.get("title"))
        link = entry.get("link") or None
        ident = entry.get("id") or link or title
        if not ident:
            continue  # nothing to tell it apart from the next one
        when = None
        for key in ("published_parsed", "updated_parsed"):
            st = entry.get(key)
            if st:
                # feedparser gives a UTC struct_time; timegm, not mktime (local time).
                when = datetime.fromtimestamp(_cal.timegm(st), UTC)
                break
        out.append(
            Signal(
                id=signal_id(source, ident),
                source=source,
                title=title or (link or ""),
                summary=plain_text(entry.get("summary") or entry.get("description")),
                url=link,
                published_at=when,
            )
        )
    return out


def load_feed(source: str, timeout_s: float = 20.0) -> list[Signal]:
    """Fetch (http(s) URL, with a timeout) or read (path) a feed and parse it.
    Raises FeedError with the reason."""
    try:
        data = fetch_source(source, timeout_s)
    except Exception as exc:
        # As for calendars: "No such file or directory" without the path said twice.
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        raise FeedError(f"{source}: cannot read: {why}") from exc
    return parse_feed(data, source)


# -- drop folder ---------------------------------------------------------------


def _drop_item(item: Any, file: Path) -> Signal:
    if not isinstance(item, dict):
        raise ValueError("each signal must be a JSON object")
    title = item.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ValueError('a signal needs a non-empty "title"')
    source = str(item.get("source") or f"drop:{file.name}")
    url = item.get("url") or None
    ident = str(item.get("id") or item.get("guid") or url or title)
    return Signal(
        id=signal_id(source, ident),
        source=source,
        title=title.strip(),
        summary=plain_text(str(item.get("summary") or "")),
        url=str(url) if url else None,
        published_at=_parse_when(item.get("published_at")),
    )


def scan_drop_dir(
    drop_dir: Path | str,
    skip: set[str] | None = None,
    errors: list[str] | None = None,
) -> list[Signal]:
    """Signals from every `*.json` in `drop_dir`: one object
    `{"title", "summary", "url", "published_at", "source"?}` or a list of them.
    A malformed file is reported in `errors` once and remembered in `skip` (by
    content hash) so the next scans pass over it quietly; files stay in place."""
    folder = Path(drop_dir)
    skip = set() if skip is None else skip
    errors = [] if errors is None else errors
    out: list[Signal] = []
    if not folder.is_dir():
        return out
    for file in sorted(folder.iterdir()):
        if not file.is_file() or is_ignored(file.name) or file.suffix.lower() != ".json":
            continue
        try:
            data = file.read_bytes()
        except OSError as exc:
            errors.append(f"{file}: cannot read: {exc}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest in skip:
            continue
        try:
            doc = json.loads(data)
            items = doc if isinstance(doc, list) else [doc]
            signals = [_drop_item(item, file) for item in items]
        except (ValueError, UnicodeDecodeError) as exc:
            skip.add(digest)
            errors.append(f"{file}: malformed signal file: {exc}")
            continue
        out.extend(signals)
    return out


# -- linking ---------------------------------------------------------------------


# Words that continue an organisation's proper name: "Lumen Health Ventures" is
# another organisation than "Lumen Health", "Acme Capital" than "Acme".
ORG_CONTINUATION = frozenset(
    """
ventures venture capital partners partnership foundation fund funds holdings holding group bank trust
labs lab systems technologies technology tech solutions consulting media pharma pharmaceuticals logistics
motors airlines airways hospital hospitals university institute insurance financial finance properties
realty studios studio energy health healthcare networks network software services industries international
global foods retail investments investment securities asset assets management advisors advisory
""".split()
)
MIN_MATCH_CONFIDENCE = 0.5  # below this a match is recorded, not linked
_WORD_RX = re.compile(r"[^\W_]+(?:&[^\W_]+)*")  # "AT&T" is one word; "ex-AT&T" and "Acme's" are two


@dataclass(frozen=True)
class OrgMatch:
    """An organisation found in a signal's text, how surely, and why."""

    org_id: int
    name: str  # the name or alias that matched
    confidence: float
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"org_id": self.org_id, "name": self.name, "confidence": self.confidence, "reason": self.reason}


def match_org_details(signal_text: str, orgs: list[tuple[int, list[str]]]) -> list[OrgMatch]:
    """Every organisation whose name or alias occurs in `signal_text` as whole words
    (ignoring case and accents), longest name first where matches overlap, each with
    a confidence: 1.0 for a clean match; 0.0 when the next word continues a longer
    proper name ("Lumen Health Ventures" is not "Lumen Health"); 0.7 when the next
    word is merely capitalised mid-sentence (perhaps a longer name)."""
    words = [(m.group(0), norm_name(m.group(0))) for m in _WORD_RX.finditer(signal_text)]
    if not words:
        return []
    norms = [w[1] for w in words]
    joined = " " + " ".join(norms) + " "
    capitals = sum(1 for w, _ in words if w[:1].isupper())
    title_case = capitals >= 0.6 * len(words)  # a headline: capitals say nothing
    spans: list[tuple[int, int, int, str]] = []  # (start word, end word, org id, name)
    for org_id, names in orgs:
        for name in names:
            needle = [norm_name(t) for t in _WORD_RX.findall(name)]
            if not needle or len(" ".join(needle)) < 2 or f" {' '.join(needle)} " not in joined:
                continue  # cheap test first: most organisations are absent
            k = len(needle)
            for i in range(len(norms) - k + 1):
                if norms[i : i + k] == needle:
                    spans.append((i, i + k, org_id, name))
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken: set[int] = set()
    best: dict[int, OrgMatch] = {}
    for a, b, org_id, name in spans:
        if taken & set(range(a, b)):
            continue  # inside a longer known name already matched here
        taken |= set(range(a, b))
        nxt = words[b][0] if b < len(words) else ""
        if nxt[:1].isupper() and norm_name(nxt) in ORG_CONTINUATION:
            m = OrgMatch(org_id, name, 0.0, f"'{name} {nxt}' is a longer name than '{name}'")
        elif nxt[:1].isupper() and not title_case and not nxt.isupper():
            m = OrgMatch(org_id, name, 0.7, f"'{name}' is followed by the capitalised '{nxt}'")
        else:
            m = OrgMatch(org_id, name, 1.0)
        if org_id not in best or m.confidence > best[org_id].confidence:
            best[org_id] = m
    order = {org_id: i for i, (org_id, _) in enumerate(orgs)}
    return sorted(best.values(), key=lambda m: order.get(m.org_id, 0))


def match_orgs(signal_text: str, orgs: list[tuple[int, list[str]]]) -> list[int]:
    """Ids of the organisations the signal is about (`match_org_details` with
    confidence at least MIN_MATCH_CONFIDENCE): "ACME" and "Acmé" match "Acme",
    "Acmeville" and "Acme Ventures" do not. In the order given, each id once."""
    return [m.org_id for m in match_org_details(signal_text, orgs) if m.confidence >= MIN_MATCH_CONFIDENCE]


# -- the trigger -------------------------------------------------------------------


class SignalTrigger:
    """Polls `[signals] feeds` every `refresh_s` and the drop folder every
    `drop_poll_s`; enqueues `Wake("signal", key="signal:<id>", payload=signal)`
    for each signal not seen before by this process (the daemon's log makes it
    once across restarts)."""

    def __init__(
        self, settings: SignalSettings, drop_dir: Path | str | None, queue: asyncio.Queue, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self._settings = settings
        self.drop_dir = Path(drop_dir) if drop_dir is not None else None
        self._queue = queue
        self._clock = clock
        self._seen = SeenKeys()
        self._bad_files: set[str] = set()
        self.errors: list[str] = []
        self._task: asyncio.Task | None = None
        self._last_feeds: float | None = None

    def reload(self, settings: SignalSettings, drop_dir: Path | str | None = None) -> None:
        """New settings (SIGHUP). A running trigger takes them at its next tick:
        `restart()` applies them now."""
        self._settings = settings
        self._last_feeds = None
        if drop_dir is not None and Path(drop_dir) != self.drop_dir:
            self.drop_dir = Path(drop_dir)
            self._bad_files.clear()

    async def restart(self) -> None:
        """Stop and start again, so a new poll period or drop folder applies at once."""
        await self.stop()
        self.start()

    def _emit(self, signals: list[Signal]) -> list[Wake]:
        out: list[Wake] = []
        for s in signals:
            key = f"signal:{s.id}"
            if self._seen.add(key):
                wake = Wake("signal", key=key, payload=s.to_dict(), created_at=self._clock.now())
                enqueue(self._queue, wake)
                out.append(wake)
        return out

    async def poll_feeds(self) -> list[Wake]:
        """Fetch every feed now; a failing feed is logged and skipped."""
        self._last_feeds = self._clock.monotonic()
        wakes: list[Wake] = []
        for source in self._settings.feeds:
            try:
                signals = await asyncio.to_thread(load_feed, source, self._settings.timeout_s)
            except FeedError as exc:
                self.errors.append(str(exc))
                log.warning("feed problem", extra={"error": str(exc)})
                continue
            wakes.extend(self._emit(signals))
        return wakes

    async def poll_drop_dir(self) -> list[Wake]:
        if self.drop_dir is None:
            return []
        errors: list[str] = []
        signals = await asyncio.to_thread(scan_drop_dir, self.drop_dir, self._bad_files, errors)
        for err in errors:
            log.warning("signal drop problem", extra={"error": err})
        self.errors.extend(errors)
        return self._emit(signals)

    async def poll(self) -> list[Wake]:
        """Feeds and drop folder now (what `backchannel wake signals` asks for)."""
        return await self.poll_feeds() + await self.poll_drop_dir()

    async def _run(self) -> None:
        while True:
            tick = max(0.05, min(self._settings.drop_poll_s, self._settings.refresh_s))
            try:
                if self._settings.feeds and (
                    self._last_feeds is None or self._clock.monotonic() - self._last_feeds >= self._settings.refresh_s
                ):
                    await self.poll_feeds()
                await self.poll_drop_dir()
                del self.errors[:-100]  # keep the recent ones for status
            except Exception:  # retried at the next tick
                log.exception("signal poll failed")
            await self._clock.sleep(tick)

    def start(self) -> None:
        if self._task is None:
            if self.drop_dir is not None:
                self.drop_dir.mkdir(parents=True, exist_ok=True)
            self._task = asyncio.get_running_loop().create_task(self._run(), name="signals")

    async def stop(self) -> None:
        await cancel_task(self._task)
        self._task = None

"""The demo's story with its proposals made, for the web app and MCP tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.delivery_support import demo_home

# Low enough that the sweep's reconnect candidates become proposals too (something to dismiss).
GATE = "score_threshold = 0.05\nmax_per_day = 50\nmax_per_week = 100\n"


class StoryIds(list):
    """Proposal ids, oldest first, and which one is the introduction and which the last
    reconnect: which kinds come first depends on the judge, not on what these tests check."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__(r["id"] for r in rows)
        self.intro = next((r["id"] for r in rows if r["kind"] == "introduction"), None)
        self.reconnect = (
            [r["id"] for r in rows if r["kind"] == "reconnect"][-1]
            if any(r["kind"] == "reconnect" for r in rows)
            else None
        )


def story_home(
    home: Path, extra_toml: str = "", *, sweep: bool = True, extra_files: list[Path] | None = None
) -> StoryIds:
    """demo_home, then the calendar and signal wakes (the introduction to Sophie through
    Marc, with a draft to marc@example.org) and, with `sweep`, a sweep's reconnect
    proposals; all run in-process, no daemon. Returns the proposal ids, oldest first."""
    from backchannel.config import load_settings, resolve_paths
    from backchannel.memory import Store
    from backchannel.ops import OpEnv, invoke

    demo_home(home, extra_toml, gate=GATE, extra_files=extra_files)
    env_vars = {"BACKCHANNEL_HOME": str(home)}
    paths = resolve_paths(env_vars).ensure()
    settings = load_settings(paths, environ=env_vars)
    with Store.open(paths.db_file) as st:
        env = OpEnv(store=st, settings=settings, paths=paths)
        for kind in ("calendar", "signals") + (("sweep",) if sweep else ()):
            invoke(env, "wake", {"kind": kind})
        rows = invoke(env, "proposals", {"limit": 100})
    return StoryIds(list(reversed(rows)))


def subprocess_env(home: Path, **extra: str) -> dict[str, Any]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKCHANNEL_") and k != "NOTIFY_SOCKET"}
    env.update(BACKCHANNEL_HOME=str(home), PYTHONUNBUFFERED="1", **extra)
    return env


class WebProc:
    """`backchannel web --port 0` in `home`: the app served by its own process (no daemon),
    its one-time login link read from what it prints."""

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None):
        import re
        import subprocess
        import sys
        import time

        self.log_path = home / "web.log"
        self.out_path = home / "web.out"
        with self.log_path.open("w") as err, self.out_path.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "backchannel", "web", "--port", "0", *args],
                env={**subprocess_env(home), **(env or {})},
                stdout=out,
                stderr=err,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"login link[^:]*: (http://\S+)", self.out_path.read_text())
            if found:
                self.link = found.group(1)
                self.base = self.link.split("/login")[0]
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise AssertionError(f"`backchannel web` did not start: {self.log_path.read_text()}")

    def stop(self) -> None:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except Exception:  # noqa: BLE001 - a hung server must not outlive the test
                self.proc.kill()
                self.proc.wait(timeout=10)


class Browserless:
    """A real HTTP client with a cookie jar, for the tests that need no rendering:
    GET a page, POST a form with the page's CSRF token."""

    def __init__(self, base: str):
        import http.cookiejar
        import urllib.request

        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, url: str) -> tuple[int, str]:
        import urllib.error

        try:
            with self.opener.open(url if url.startswith("http") else self.base + url, timeout=120) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def post(self, path: str, fields: dict[str, str], csrf_from: str | None = None) -> tuple[int, str]:
        import re
        import urllib.error
        import urllib.parse
        import urllib.request

        if csrf_from is not None:
            _, page = self.get(csrf_from)
            fields = {"csrf": re.search(r'name="csrf" value="([^"]+)"', page).group(1), **fields}
        req = urllib.request.Request(
            self.base + path,
            data=urllib.parse.urlencode(fields).encode(),
            method="POST",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            with self.opener.open(req, timeout=120) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

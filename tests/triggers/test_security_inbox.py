"""Hostile inbox drops: links to secrets, FIFOs, hard links, oversized files.

None may be read, hashed or ingested; each goes to failed/ with a reason, unread."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from backchannel.config import Settings, resolve_paths
from backchannel.extraction.formats.parse import parse_file
from backchannel.extraction.formats.transcript import TranscriptError
from backchannel.triggers.inbox import InboxTrigger

SECRET_VTT = "WEBVTT\n\n00:00.000 --> 00:01.000\nMarc: the vault password is hunter2\n"
GOOD_VTT = "WEBVTT\n\n00:00.000 --> 00:01.000\nMarc: hello there, see you Thursday\n"


async def _run_trigger(inbox: Path, seconds: float, **kw) -> list:
    q: asyncio.Queue = asyncio.Queue()
    trig = InboxTrigger(inbox, q, quiet_period_s=0.2, poll_interval_s=0.05, **kw)
    await trig.start()
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and any(inbox.iterdir()):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
    finally:
        await trig.stop()
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def test_trigger_refuses_links_fifos_hard_links_and_big_files_unread(tmp_path: Path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    secret = tmp_path / "secret.vtt"
    secret.write_text(SECRET_VTT)
    os.symlink(secret, inbox / "link.vtt")
    os.symlink(tmp_path / "nowhere", inbox / "dangling.vtt")
    os.mkfifo(inbox / "pipe.vtt")
    os.link(secret, inbox / "hard.vtt")
    (inbox / "big.vtt").write_bytes(b"WEBVTT\n\n" + b"x" * 3000)
    (inbox / "ok.vtt").write_text(GOOD_VTT)

    wakes = asyncio.run(_run_trigger(inbox, 5.0, max_bytes=2000))

    assert [Path(w.payload["path"]).name for w in wakes] == ["ok.vtt"]
    failed = tmp_path / "failed"
    reasons = {
        n: (failed / f"{n}.error.txt").read_text()
        for n in ("link.vtt", "dangling.vtt", "pipe.vtt", "hard.vtt", "big.vtt")
    }
    assert "symbolic link" in reasons["link.vtt"] and "symbolic link" in reasons["dangling.vtt"]
    assert "FIFO" in reasons["pipe.vtt"] and "hard link" in reasons["hard.vtt"]
    assert "too large" in reasons["big.vtt"] and "max_file_mb" in reasons["big.vtt"]
    # The link itself moved out, its target untouched where it was.
    assert (failed / "link.vtt").is_symlink() and secret.read_text() == SECRET_VTT
    assert (inbox / "ok.vtt").exists() and not (inbox / "link.vtt").exists()


def test_parse_file_strict_refuses_links_and_fifos_without_blocking(tmp_path: Path):
    secret = tmp_path / "secret.vtt"
    secret.write_text(SECRET_VTT)
    os.symlink(secret, tmp_path / "link.vtt")
    os.mkfifo(tmp_path / "pipe.vtt")
    os.link(secret, tmp_path / "hard.vtt")
    # Named on the command line, a link is the user's own choice: followed.
    assert parse_file(tmp_path / "link.vtt").utterances[0].text.endswith("hunter2")
    for name, words in (("link.vtt", "symbolic link"), ("pipe.vtt", "FIFO"), ("hard.vtt", "hard link")):
        with pytest.raises(TranscriptError, match=words):
            parse_file(tmp_path / name, strict=True)
    with pytest.raises(TranscriptError, match="FIFO"):  # never blocks on open, even unstrict
        parse_file(tmp_path / "pipe.vtt")
    big = tmp_path / "big.vtt"
    big.write_bytes(b"WEBVTT\n\n" + b"a" * 5000)
    with pytest.raises(TranscriptError, match="too large"):
        parse_file(big, max_bytes=4096)


def test_inbox_wake_for_a_swapped_in_link_ingests_nothing(home, store):
    """The trigger saw a plain file; by the time the wake runs it is a link to a secret."""
    from backchannel.engine.pipeline import run_wake_once

    paths = resolve_paths().ensure()
    settings = Settings()
    inbox = paths.data_dir / "inbox"
    inbox.mkdir(parents=True)
    secret = paths.data_dir / "secret.vtt"
    secret.write_text(SECRET_VTT)
    src = inbox / "meeting.vtt"
    os.symlink(secret, src)
    out = run_wake_once(store, settings, paths, {"kind": "inbox", "key": "inbox:x", "payload": {"path": str(src)}})
    assert out.detail["ingest"]["status"] == "failed"
    assert store.scalar("SELECT count(*) FROM sources") == 0
    assert store.scalar("SELECT count(*) FROM utterances") == 0
    assert "symbolic link" in (paths.data_dir / "failed" / "meeting.vtt.error.txt").read_text()
    assert (paths.data_dir / "failed" / "meeting.vtt").is_symlink() and secret.is_file()

    # Too big for [inbox] max_file_mb: refused unread, with the reason.
    settings.inbox = settings.inbox.model_copy(update={"max_file_mb": 0.001})
    big = inbox / "big.vtt"
    big.write_text(GOOD_VTT * 100)
    out = run_wake_once(store, settings, paths, {"kind": "inbox", "key": "inbox:y", "payload": {"path": str(big)}})
    assert out.detail["ingest"]["status"] == "failed"
    assert "too large" in (paths.data_dir / "failed" / "big.vtt.error.txt").read_text()
    assert store.scalar("SELECT count(*) FROM sources") == 0


def test_hostile_file_names_still_end_in_failed_with_their_reason(home, store):
    from backchannel.engine.pipeline import run_wake_once

    paths = resolve_paths().ensure()
    inbox = paths.data_dir / "inbox"
    inbox.mkdir(parents=True)
    for name in ("a" * 250 + ".vtt", "x\nEvil: header.vtt", "..\\..\\evil.vtt", "é" * 120 + ".vtt"):
        src = inbox / name
        src.write_text("not a transcript")
        out = run_wake_once(
            store, Settings(), paths, {"kind": "inbox", "key": f"inbox:{len(name)}", "payload": {"path": str(src)}}
        )
        assert out.detail["ingest"]["status"] == "failed" and not src.exists(), name
    failed = sorted(os.listdir(paths.data_dir / "failed"))
    assert len(failed) == 8  # each file beside its .error.txt, nothing outside failed/
    for n in failed:
        assert len(os.fsencode(n)) <= 255
        if n.endswith(".error.txt"):
            assert "WebVTT" in (paths.data_dir / "failed" / n).read_text()
    assert [f.parent for f in home.rglob("*evil*")] == [paths.data_dir / "failed"] * 2  # no escape by "..\\"

"""The mail schedule only enqueues `mail` wakes: one at start, then one per interval;
nothing without an IMAP host; a bad [mail] value is a config error naming the key."""

from __future__ import annotations

import asyncio

import pytest

from backchannel.config import ConfigError, load_settings, resolve_paths
from backchannel.config.sections import MailSettings
from backchannel.triggers.mail import MailTrigger


def test_fires_at_start_then_every_interval_and_never_without_a_host():
    async def scenario():
        queue: asyncio.Queue = asyncio.Queue()
        trig = MailTrigger(MailSettings(host="127.0.0.1", sync_interval_s=1.0), queue)
        trig.start()
        await asyncio.sleep(1.3)
        await trig.stop()
        wakes = [queue.get_nowait() for _ in range(queue.qsize())]
        idle_queue: asyncio.Queue = asyncio.Queue()
        idle = MailTrigger(MailSettings(), idle_queue)
        idle.start()
        await asyncio.sleep(0.1)
        await idle.stop()
        await trig.reload(MailSettings(host="127.0.0.1", enabled=False))
        return wakes, idle_queue.qsize(), trig.active

    wakes, idle_n, active_after = asyncio.run(scenario())
    assert [w.kind for w in wakes] == ["mail", "mail"] and len({w.key for w in wakes}) == 2
    assert wakes[0].payload == {"reason": "schedule"}
    assert idle_n == 0 and active_after is False


def test_a_bad_security_value_is_an_error_naming_the_key(home):
    (home / "config.toml").write_text('[mail]\nhost = "imap.example.org"\nsecurity = "ssl"\n')
    with pytest.raises(ConfigError) as err:
        load_settings(resolve_paths())
    assert "mail.security" in str(err.value)

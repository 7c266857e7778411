"""A `mail` wake: an IMAP sync (engine/mail_sync.py). The mail trigger makes it on its
schedule; asked for, the daemon's trigger fires it, or in-process it is made here."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from backchannel.config import Paths, Settings
from backchannel.core.timeutil import aware_now
from backchannel.core.wake import Wake
from backchannel.engine.wakes.kind import Kind, WakeRequest

if TYPE_CHECKING:
    from backchannel.engine.run import Run
    from backchannel.triggers.setup import Triggers


def handle(run: Run) -> None:
    from backchannel.core.crashpoints import crash_point
    from backchannel.engine import runs
    from backchannel.engine.mail_sync import configured, sync

    if not configured(run.settings):
        run.outcome.status, run.outcome.reason = "closed", "no IMAP account configured ([mail] host is not set)"
        return
    summary = sync(
        run.store,
        run.settings,
        run.paths,
        gateway=run.gateway,
        run_id=run.run_id,
        checkpoint=run.checkpoint,
        crashpoint=crash_point,
    )
    runs.step(run.store, run.run_id, "mail.synced", summary)
    run.outcome.detail["mail"] = summary
    if summary["errors"]:
        run.outcome.reason = "; ".join(summary["errors"])[:1000]
        if not summary["folders"]:
            run.outcome.status = "failed"  # no folder could be read at all


def unavailable(settings: Settings) -> str | None:
    if settings.mail.enabled and settings.mail.host:
        return None
    return "no IMAP account to sync: set [mail] host, username and the imap_password secret"


def collect(settings: Settings, paths: Paths) -> list[Wake]:
    now = aware_now()
    return [Wake("mail", key=f"mail:{now.isoformat()}", payload={"reason": "manual"}, created_at=now)]


def on_trigger(triggers: Triggers) -> Coroutine[Any, Any, None]:
    mail = triggers.mail
    if mail is None:
        raise ValueError("unknown wake 'mail'; use sweep, calendar or signals")

    async def fire() -> None:
        mail.fire("manual")

    return fire()


def answer(settings: Settings, triggers: Triggers) -> dict[str, Any]:
    return {"enqueued": "mail", "account": f"{settings.mail.username}@{settings.mail.host}"}


REQUEST = WakeRequest("mail", unavailable, collect=collect, on_trigger=on_trigger, answer=answer)
WAKE = Kind(("mail",), handle, REQUEST)

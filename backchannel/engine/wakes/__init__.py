"""One module per kind of wake, found from one table by kind.

    inbox        -> ingest the file, then move it (processed/ or failed/)   inbox.py
    calendar     -> upsert calendar_events, attendees resolved to entities  calendar.py
    meeting_soon -> sweep with the meeting as context                       meeting.py
    signal       -> store the signal with the organisations it mentions,
                    read it like speech, then sweep                         signal.py
    sweep/manual -> sweep                                                   sweep.py
    mail         -> IMAP sync                                               mail.py
    retention    -> the retention sweep                                     retention.py

Each module says how its wake is handled (`handle(run)`) and, for those a user can ask
for, how the wake is made (`WakeRequest`, kind.py): the daemon, `backchannel wake` and
the retention operation all read the same row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from backchannel.engine.wakes import calendar, inbox, mail, meeting, retention, signal, sweep
from backchannel.engine.wakes.kind import Kind, WakeRequest

if TYPE_CHECKING:
    from backchannel.engine.run import Run

__all__ = ["KINDS", "Kind", "WakeRequest", "handler", "request"]

KINDS: tuple[Kind, ...] = (  # requests in the order `backchannel wake` lists them
    sweep.WAKE,
    calendar.WAKE,
    signal.WAKE,
    mail.WAKE,
    inbox.WAKE,
    meeting.WAKE,
    retention.WAKE,
)
_HANDLERS: dict[str, Callable[[Run], None]] = {k: w.handle for w in KINDS for k in w.kinds}
_REQUESTS: dict[str, WakeRequest] = {w.request.name: w.request for w in KINDS if w.request is not None}
# What `backchannel wake` offers; retention has its own command (`retention run`).
WAKE_COMMAND: tuple[str, ...] = tuple(name for name in _REQUESTS if name != "retention")


def _unknown(run: Run) -> None:
    run.outcome.status, run.outcome.reason = "closed", f"no handler for wake kind {run.wake.kind!r}"


def handler(kind: str) -> Callable[[Run], None]:
    """The handler of a `Wake.kind`; an unknown kind closes its run with the reason."""
    return _HANDLERS.get(kind, _unknown)


def request(name: str) -> WakeRequest:
    """The request `name` (sweep, calendar, signals, mail, retention); ValueError otherwise."""
    found = _REQUESTS.get(name)
    if found is None:
        raise ValueError(f"unknown wake {name!r}; use sweep, calendar or signals")
    return found

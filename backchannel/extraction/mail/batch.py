"""Email messages written several to a transaction: one BEGIN/COMMIT for a batch of
messages instead of one per message (the COMMIT is the dearest of a message's ~15
statements). Each message's statements are the ones `ingest_message` runs alone, in the
same order, so a message sees the rows of the messages before it in its batch exactly
as it would see them committed: entities, aliases, Message-IDs, content hashes.

Failure: a message whose write fails inside the batch (a bug's exception, an extractor
error raised mid-write) leaves rows that cannot be told apart from the others' (DuckDB has
no savepoints), so the whole batch rolls back and is replayed one message per
transaction, as without batches: the bad message gets its own error, the others are
stored once. A kill -9 leaves whole batches or nothing of one; an unfinished batch is
read again on the next run and nothing of it was stored (no double).

Only offline extraction is batched: a model's extraction writes its spending to the
store and costs far more than a commit, so with a model each message stays its own
transaction (`batchable`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict, Unpack

from backchannel.config import Settings
from backchannel.extraction.formats.transcript import TranscriptError
from backchannel.memory.store import Store

if TYPE_CHECKING:
    from backchannel.agent.models import Gateway
    from backchannel.extraction.ingest import IngestOutcome

BATCH_MESSAGES = 50  # per transaction; past a few dozen the commit's share is small anyway

# A message to ingest: where it comes from, and how to read its bytes (read when its
# turn comes, and again if its batch is replayed: a batch's bodies are never all held).
Message = tuple[str, Callable[[], bytes]]


class _MessageArgs(TypedDict):
    """What `ingest_message` is given for each message of a batch, beside the message."""

    gateway: Gateway | None
    run_id: str | None
    max_bytes: int | None


def batchable(settings: Settings, gateway: Gateway | None) -> bool:
    """Offline extraction: nothing but memory's own rows is written per message."""
    return settings.models.extract == "offline" or gateway is None


def ingest_messages(
    store: Store,
    settings: Settings,
    messages: Sequence[Message],
    *,
    gateway: Gateway | None = None,
    run_id: str | None = None,
    max_bytes: int | None = None,
    size: int | None = None,
) -> list[IngestOutcome]:
    """IngestOutcomes for `messages`, in order, written `size` (default BATCH_MESSAGES)
    to a transaction when `batchable`, else one per transaction."""
    size = BATCH_MESSAGES if size is None else max(1, size)
    if not batchable(settings, gateway):
        size = 1
    out: list[IngestOutcome] = []
    for i in range(0, len(messages), size):
        out += _batch(store, settings, messages[i : i + size], gateway=gateway, run_id=run_id, max_bytes=max_bytes)
    return out


def _batch(
    store: Store, settings: Settings, messages: Sequence[Message], **kw: Unpack[_MessageArgs]
) -> list[IngestOutcome]:
    if len(messages) > 1:
        outcomes: list[IngestOutcome] = []
        try:
            with store.batch() as batch:
                for origin, read in messages:
                    outcomes.append(_one(store, settings, origin, read, **kw))
                    if batch.failed:
                        break  # the batch ends here (BatchFailed): the rest would only be rolled back
            return outcomes
        except Exception:  # noqa: BLE001 - BatchFailed, or an error that left the batch: rolled back whole
            pass  # noqa: S110 - replayed below, one message per transaction (an error comes back there)
    return [_one(store, settings, origin, read, **kw) for origin, read in messages]


def _one(
    store: Store, settings: Settings, origin: str, read: Callable[[], bytes], **kw: Unpack[_MessageArgs]
) -> IngestOutcome:
    from backchannel.extraction.ingest import IngestOutcome
    from backchannel.extraction.mail.ingest import ingest_message

    try:
        data = read()
    except TranscriptError as exc:
        return IngestOutcome(origin, "failed", error=exc.reason)
    except OSError as exc:
        return IngestOutcome(origin, "failed", error=f"cannot read: {exc.strerror or exc}")
    return ingest_message(store, settings, data, origin, **kw)

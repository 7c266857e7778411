"""An `inbox` wake: a transcript (or any file) was dropped in the inbox folder and the
inbox trigger saw it settle (triggers/inbox.py makes the wake). Ingest it, then move it
out through the run's inbox port (processed/, or failed/ with its .error.txt); while
the model budget is spent it stays in the inbox, offered again at the reset. What the
new meeting taught may make an earlier signal or an upcoming meeting relevant: an
ingest re-evaluates them (engine/reevaluate.py)."""

from __future__ import annotations

import os
from pathlib import Path

from backchannel.core.crashpoints import crash_point
from backchannel.engine import runs
from backchannel.engine.run import Run, rollback_quietly
from backchannel.engine.wakes.kind import Kind
from backchannel.memory import sources


def handle(run: Run) -> None:
    path = Path(run.wake.payload.get("path", ""))
    if not os.path.lexists(path):  # a link is not followed here: strict ingest refuses it, and it moves out
        run.outcome.status, run.outcome.reason = "closed", f"{path} is gone (already moved?)"
        return
    from backchannel.extraction import ingest

    try:
        # strict: a link, FIFO or hard link swapped in since the trigger looked is still refused.
        result = ingest.ingest_file(
            run.store,
            run.settings,
            path,
            gateway=run.gateway,
            run_id=run.run_id,
            strict=True,
            max_bytes=int(run.settings.inbox.max_file_mb * 1_000_000),
        )
        status, error, detail = result.status, result.error, result.to_dict()
    except Exception as exc:  # noqa: BLE001 - a bug in one file's ingest must not wedge the inbox
        rollback_quietly(run.store)
        status, error, detail = "failed", f"internal error: {type(exc).__name__}: {exc}", {"path": str(path)}
    runs.step(run.store, run.run_id, "ingest.done", {**detail, "status": status})
    run.outcome.detail["ingest"] = {**detail, "status": status}
    crash_point("inbox.after_ingest")
    if status == "deferred":
        # The daily model budget is spent: the file stays in the inbox and is offered
        # again when the budget resets (or on SIGHUP, after a budget change).
        from backchannel.agent.budget import next_reset

        retry_after = max(60.0, (next_reset(run.now) - run.now).total_seconds())
        run.inbox.defer(path, retry_after)
        runs.step(run.store, run.run_id, "inbox.deferred", {"path": str(path), "retry_after_s": round(retry_after)})
        run.outcome.status, run.outcome.reason = "budget_stopped", error
        return
    ok = status in ("ingested", "skipped")
    dest = run.inbox.finish(path, ok, error)
    crash_point("inbox.after_move")
    if status == "ingested" and detail.get("source_id"):
        # `show` then says where the transcript is now (processed/), not where it was dropped.
        sources.set_path(run.store, detail["source_id"], str(dest), str(path))
    runs.step(run.store, run.run_id, "inbox.moved", {"to": str(dest), "ok": ok})
    if status == "ingested":
        from backchannel.engine.reevaluate import after_ingest

        after_ingest(run, detail.get("source_id"))
    if not ok:
        # The file failed (it is in failed/ with its .error.txt); say so in status and trace.
        run.outcome.status, run.outcome.reason = "failed", error


WAKE = Kind(("inbox",), handle)

"""The `replay` operation: a past run's wake again, on a copy of memory as it was then."""

from __future__ import annotations

from typing import Any

from backchannel.ops import OpEnv, OpError, op


@op(read=True)
def replay(env: OpEnv, run_id: str) -> dict[str, Any]:
    """Run the wake of run `run_id` again against memory as known when it started, with
    today's code and settings, offline, on a copy (the store is only read); what differs
    from what the run recorded: candidates, scores, vetoes, gate decisions, drafts."""
    from backchannel.engine.replay import ReplayError
    from backchannel.engine.replay import replay as replay_run

    ref = str(run_id).strip()
    if ref[:1] in ("r", "R"):
        ref = "R" + ref[1:].lower()
    try:
        return replay_run(env.store, env.settings, env.paths, ref)
    except ReplayError as exc:
        raise OpError(str(exc)) from None

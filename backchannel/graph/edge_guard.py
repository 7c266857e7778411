"""The program -> graph API edge: what a sweep's programs may read, enforced where the
sandbox serves the API (parent side), whatever the program does with the refusal.

`GuardedAPI` wraps a GraphAPI for one sweep. Each method the sandbox serves checks
`[edges.program]` before it runs (`may_reach`, `max_api_calls`) and before its answer
crosses to the program (`max_assertions` touched; `max_bytes` returned, on the encoded
answer the sandbox is about to send: `admit_answer`). A refusal is an
error the program sees; the first one also stops the edge for the rest of the sweep
(every later call is refused too), and the caller, seeing `stopped`, stops the run with
the reason. A program cannot catch its way past a limit: the parent keeps the tally.

Parent-side reads (the drafter filling evidence, the pipeline's own look-ups) go to the
wrapped API directly: they are not the program's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from backchannel.graph.api import API_METHODS
from backchannel.memory import edges
from backchannel.memory.edges import Crossing

if TYPE_CHECKING:
    from backchannel.config.edges import ProgramEdge
    from backchannel.memory.store import Store


class EdgeRefused(Exception):
    """What the program sees when the edge refuses a call (the sandbox sends its message)."""


class GuardedAPI:
    def __init__(self, api: Any, limits: ProgramEdge):
        self.api = api
        self.limits = limits
        self.calls: Counter[str] = Counter()
        self.total_calls = 0
        self.refused = 0
        self.touched = 0
        self._pending_touched = 0
        self.bytes = 0
        self.stopped: str | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)  # store, settings, evidence(): the parent's own reads

    # -- what the sandbox serves ---------------------------------------------
    def rpc_methods(self) -> dict[str, Any]:
        return {name: self._guarded(name, fn) for name, fn in self.api.rpc_methods().items()}

    def take_touched(self) -> int:
        n, self._pending_touched = self._pending_touched, 0
        return n

    def _refuse(self, reason: str) -> None:
        self.refused += 1
        self.stopped = self.stopped or reason
        raise EdgeRefused(f"edge program: {reason}")

    def _guarded(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        lim = self.limits
        # Decided once per method, not per call: a naive program makes thousands of calls.
        not_reachable = edges.outside("program", [name], lim.may_reach)
        take_touched = self.api.take_touched

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.stopped:
                self._refuse(self.stopped)
            if not_reachable:
                self._refuse(not_reachable)
            self.total_calls += 1
            if lim.max_api_calls is not None and self.total_calls > lim.max_api_calls:
                self.total_calls -= 1
                self._refuse(
                    edges.over("program", "max_api_calls", self.total_calls + 1, lim.max_api_calls, "API calls") or ""
                )
            self.calls[name] += 1
            try:
                value = fn(*args, **kwargs)
            finally:
                n = int(take_touched() or 0)
                self.touched += n
                self._pending_touched += n
            if lim.max_assertions is not None and self.touched > lim.max_assertions:
                self._refuse(
                    edges.over("program", "max_assertions", self.touched, lim.max_assertions, "assertions touched")
                    or ""
                )
            return value

        return call

    def admit_answer(self, size: int) -> str | None:
        """The sandbox's hook, with each answer encoded and not yet sent: its bytes are counted
        (the frame the program receives), and `max_bytes` refuses the one that would cross it."""
        limit = self.limits.max_bytes
        reason = None if limit is None else edges.over("program", "max_bytes", self.bytes + size, limit, "answer bytes")
        if reason:
            self.refused += 1
            self.stopped = self.stopped or reason
            return f"EdgeRefused: edge program: {reason}"
        self.bytes += size
        return None

    # -- the record ----------------------------------------------------------
    def crossing(
        self,
        run_id: str | None,
        skill: str | None,
        stats: dict[str, Any],
        evidence_ids: list[int],
        event_seq: int | None = None,
    ) -> Crossing:
        actor = "generated program" if skill in (None, "generated") else f"skill {skill}"
        c = Crossing(
            "program",
            actor,
            "graph API",
            list(self.limits.may_reach or API_METHODS),
            sorted(self.calls),
            run_id=run_id,
            bytes=self.bytes,
            spent={
                "api_calls": self.total_calls,
                "calls_by_method": dict(self.calls),
                "refused": self.refused,
                "assertions_touched": self.touched,
                **{k: stats[k] for k in ("rows_returned", "cpu_s", "wall_s", "runs") if k in stats},
            },
            evidence={"assertions": sorted({int(i) for i in evidence_ids})},
        )
        if event_seq is not None:
            c.evidence["events"] = [int(event_seq)]
        if self.stopped:
            c.stop(self.stopped)
        return c

    def record(
        self,
        store: Store,
        run_id: str | None,
        skill: str | None,
        stats: dict[str, Any],
        evidence_ids: list[int],
        event_seq: int | None = None,
    ) -> None:
        """Write this sweep's program edge row (in the caller's transaction, if one is open)."""
        edges.record(store.con, self.crossing(run_id, skill, stats, evidence_ids, event_seq))

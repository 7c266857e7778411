"""The parent side of the sandbox: spawn a fresh child, serve the API to it over
JSON on pipes, enforce the budgets and the wall clock, and always tear down the
child's whole process group.

Nothing the child does can raise in the caller: every failure of the program or
of the child (syntax, policy, exception, signal, limits, bad frames) comes back
as `SandboxResult(ok=False, error=...)`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import fcntl
import os
import resource  # noqa: F401 - os.wait4 imports it lazily; load it while the install is readable
import select
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import policy, rpc, workdir

CHILD_SCRIPT = str(Path(__file__).with_name("child.py"))
_F_SETPIPE_SZ = 1031
_PIPE_SIZE = 1 << 20
_READ_CHUNK = 1 << 20


@dataclasses.dataclass
class SandboxResult:
    """What a sandboxed run produced. `result` is a JSON value; `error` says why
    a run failed; `stats` holds api_calls, assertions_touched, cpu_s, wall_s,
    max_rss_mb, rows_returned, output_bytes, startup_s, isolation, error_kind...
    `output` is what the program printed (capped)."""

    ok: bool
    result: Any = None
    error: str | None = None
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)
    output: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "result": self.result, "error": self.error, "stats": self.stats, "output": self.output}


def jsonable(value: Any) -> Any:
    """`default=` for encoding API results: the parent's own types into JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    for attr in ("model_dump", "tolist", "item"):  # pydantic models, numpy arrays and scalars
        fn = getattr(value, attr, None)
        if callable(fn):
            return fn(mode="json") if attr == "model_dump" else fn()
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")


def isolation_mode(isolation: list[str]) -> str:
    """One word for the OS isolation a run had: `root` (namespaces, chroot, uid
    nobody), `userns` (a user namespace holding the same, no capabilities),
    `unisolated` (no OS isolation, run anyway by `allow_unisolated`; landlock and
    seccomp may still apply) or `none` (no OS layer: refused, or switched off)."""
    if "chroot" in isolation and "uid_nobody" in isolation:
        return "root"
    if "chroot" in isolation and "userns" in isolation and "no_caps" in isolation:
        return "userns"
    return "unisolated" if "unisolated_allowed" in isolation else "none"


def _limits_dict(limits: SandboxSettings) -> dict[str, Any]:
    return limits.model_dump()


# The children running now (pid; each leads its own process group). The daemon's forced
# exit kills exactly these: they are in sessions of their own, so its exit would not reach them.
_live: set[int] = set()
_live_lock = threading.Lock()


def live_children() -> list[int]:
    """PIDs of the sandbox children this process runs now; each leads its own process group."""
    with _live_lock:
        return sorted(_live)


class _Session:
    """One child, used for exactly one program: `start` spawns it and sends the
    limits (it confines itself and waits), `run` sends the program, serves it and
    tears everything down. Between the two the child may wait as the spare."""

    # The language layer makes errors readable and is not the boundary (the OS
    # layers are, docs/sandbox.md). No setting, argument or API turns it off: only a
    # test-only subclass does (tests/support/sandbox_bypass.py), to test the OS layers alone.
    language_layer = True

    def __init__(self, limits: SandboxSettings):
        self.limits = limits
        self.limits_key = rpc.encode(_limits_dict(limits))
        self.stats: dict[str, Any] = {
            "api_calls": 0,
            "api_errors": 0,
            "assertions_touched": 0,
            "rows_returned": 0,
            "cpu_s": 0.0,
            "wall_s": 0.0,
            "max_rss_mb": 0.0,
            "startup_s": None,
            "start_s": None,
            "api_s": 0.0,
            "output_bytes": 0,
            "output_truncated": False,
            "prestarted": False,
            "isolation": ["fresh_process", "empty_env", "new_session", "temp_cwd"],
            "error_kind": None,
            "exit": None,
            "pid": None,
        }
        self.api: Any = None
        self.methods: dict[str, Callable[..., Any]] = {}
        self.take_touched: Any = None
        self.admit_answer: Any = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.fds: list[int] = []
        self.outbuf = bytearray()
        self.output = bytearray()
        self.frames = rpc.FrameBuffer(max(int(limits.max_result_bytes), 1 << 16) + 4096)
        self.done: dict[str, Any] | None = None
        self.failure: tuple[str, str] | None = None
        self.rpc_eof = False
        self.ready_at: float | None = None
        self.tmpdir: str | None = None

    # -- lifecycle --------------------------------------------------------
    def start(self) -> None:
        """Spawn the child and send it the limits; it confines itself and waits."""
        self.spawned_at = time.perf_counter()
        self.tmpdir = workdir.make()
        try:
            self._spawn()
        except BaseException:
            self._teardown()
            raise

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def discard(self) -> None:
        """A spare never used: kill it and remove its directory."""
        self._teardown()

    def run(
        self, code: str, api: Any, methods: dict[str, Callable[..., Any]], context: dict[str, Any]
    ) -> SandboxResult:
        self.t0 = time.perf_counter()
        self.api, self.methods = api, methods
        self.take_touched = getattr(api, "take_touched", None) if api is not None else None
        # An API may bound what its answers carry (graph/edge_guard.py): it sees each encoded
        # answer's size, and a reason it returns is sent instead of the answer.
        self.admit_answer = getattr(api, "admit_answer", None) if api is not None else None
        if callable(self.take_touched):
            self.take_touched()  # what the parent itself read before this run is not the program's
        try:
            if self.proc is None:
                self.start()
            else:
                self.stats["prestarted"] = True
            self._send(rpc.encode({"t": "run", "code": code, "methods": sorted(methods), "context": context}))
            self._loop()
        finally:
            self.ended_at = time.perf_counter()
            self._teardown()
        self.stats["teardown_s"] = round(time.perf_counter() - self.ended_at, 4)
        return self._result()

    def _spawn(self) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        out_r, out_w = os.pipe()
        self.fds = [to_child_r, to_child_w, from_child_r, from_child_w, out_r, out_w]
        for fd in (to_child_w, from_child_r):
            try:  # bigger pipes: fewer wake-ups for large API results
                fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_SIZE)
            except OSError:
                pass
        argv = [sys.executable or "python3", "-I", "-S", "-X", "utf8", CHILD_SCRIPT, str(from_child_w)]
        self.proc = subprocess.Popen(
            argv,
            stdin=to_child_r,
            stdout=out_w,
            stderr=out_w,
            pass_fds=(from_child_w,),
            env={},
            cwd=self.tmpdir,
            start_new_session=True,
            close_fds=True,
        )
        self.pgid = self.stats["pid"] = self.proc.pid
        with _live_lock:
            _live.add(self.proc.pid)
        for fd in (to_child_r, from_child_w, out_w):
            os.close(fd)
            self.fds.remove(fd)
        self.to_child, self.from_child, self.out_r = to_child_w, from_child_r, out_r
        for fd in (to_child_w, from_child_r, out_r):
            os.set_blocking(fd, False)
        init = rpc.encode({"t": "init", "limits": _limits_dict(self.limits), "language": self.language_layer})
        try:  # a few hundred bytes into an empty pipe: never blocks
            os.write(self.to_child, init)
        except BrokenPipeError:
            pass

    def _peak_rss_mb(self) -> float | None:
        """VmHWM of the child's own image while it still runs (wait4's ru_maxrss
        would include the parent's memory at fork time)."""
        try:
            with open(f"/proc/{self.proc.pid}/status", "rb") as fh:  # type: ignore[union-attr]
                for line in fh:
                    if line.startswith(b"VmHWM:"):
                        return round(int(line.split()[1]) / 1024, 1)
        except (OSError, ValueError, IndexError):
            pass
        return None

    def _await_exit(self, timeout: float) -> None:
        """Give a child that is ending by itself (done frame sent, or its pipe
        closed) a moment to do so: with a PID namespace the process we started
        reaps the program's process and ends the same way, which the group kill
        would otherwise pre-empt (losing its CPU time and the SIGXCPU)."""
        try:
            fd = os.pidfd_open(self.proc.pid)  # type: ignore[union-attr]
        except (AttributeError, OSError):
            return
        try:
            select.select([fd], [], [], timeout)
        except OSError:
            pass
        finally:
            os.close(fd)

    def _teardown(self) -> None:
        try:
            self._stop_child()
        except Exception as exc:  # noqa: BLE001 - a teardown that raises would hide the run's outcome
            self.stats["teardown_errors"] = [f"{type(exc).__name__}: {exc}"]
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        errors = workdir.remove_tree(self.tmpdir) if self.tmpdir is not None else []
        self.tmpdir = None
        if errors:
            self.stats.setdefault("teardown_errors", []).extend(errors)

    def _stop_child(self) -> None:
        if self.proc is not None and self.proc.returncode is not None:  # reaped already (a dead spare)
            with _live_lock:
                _live.discard(self.proc.pid)
        if self.proc is not None and self.proc.returncode is None:
            peaks = [self._peak_rss_mb(), (self.done or {}).get("rss_mb")]
            reported = self.failure is None and self.done is not None and self.done.get("cpu_s") is not None
            if reported:
                # The child said how it ended and what CPU it used: kill it now and
                # reap it off the caller's path (the group is dead either way).
                self._kill_and_reap_later(peaks)
                return
            if self.failure is None and (self.done is not None or self.rpc_eof):
                self._await_exit(0.5)
            # The whole group, always: an orphan or a lingering child dies here.
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            with _live_lock:  # killed; until wait4 reaps it the PID cannot be reused
                _live.discard(self.proc.pid)
            try:
                _, status, usage = os.wait4(self.proc.pid, 0)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.stats["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 4)
                known = [p for p in peaks if isinstance(p, (int, float))]
                self.stats["max_rss_mb"] = max(known) if known else round(usage.ru_maxrss / 1024, 1)
            except ChildProcessError:
                pass

    def _kill_and_reap_later(self, peaks: list[Any]) -> None:
        proc = self.proc
        assert proc is not None and self.done is not None
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.stats["cpu_s"] = round(float(self.done["cpu_s"]), 4)
        known = [p for p in peaks if isinstance(p, (int, float))]
        self.stats["max_rss_mb"] = max(known) if known else None

        def reap() -> None:
            try:
                _, status, _ = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                pass
            finally:
                with _live_lock:  # reaped: only now may the PID be reused
                    _live.discard(proc.pid)

        threading.Thread(target=reap, name="sandbox-reap", daemon=True).start()

    # -- the loop -----------------------------------------------------------
    def _fail(self, kind: str, message: str) -> None:
        if self.failure is None:
            self.failure = (kind, message)

    def _finished(self) -> bool:
        return self.failure is not None or self.done is not None or self.rpc_eof

    def _loop(self) -> None:
        sel = selectors.DefaultSelector()
        self.sel = sel
        sel.register(self.from_child, selectors.EVENT_READ, "rpc")
        sel.register(self.out_r, selectors.EVENT_READ, "out")
        self._writing = False
        self._sync_writer()
        deadline = self.t0 + float(self.limits.wall_s)
        try:
            while not self._finished():
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    self._fail("timeout", f"wall-clock limit of {self.limits.wall_s} s exceeded")
                    break
                for key, _ in sel.select(remaining):
                    if key.data == "rpc":
                        self._read_rpc()
                    elif key.data == "out":
                        self._read_output()
                    else:
                        self._flush()
                    if self._finished():
                        break
            if self.failure is None:
                self._drain_output()
        finally:
            sel.close()

    def _sync_writer(self) -> None:
        want = bool(self.outbuf)
        if want and not self._writing:
            self.sel.register(self.to_child, selectors.EVENT_WRITE, "in")
        elif not want and self._writing:
            self.sel.unregister(self.to_child)
        self._writing = want

    def _send(self, frame: bytes) -> None:
        self.outbuf += frame
        self._flush()

    def _flush(self) -> None:
        try:
            while self.outbuf:
                n = os.write(self.to_child, self.outbuf)
                del self.outbuf[:n]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            self.outbuf.clear()  # the child is gone; its exit tells the rest
        if hasattr(self, "sel"):
            self._sync_writer()

    def _read_output(self) -> None:
        try:
            data = os.read(self.out_r, _READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            self.sel.unregister(self.out_r)
            return
        self._take_output(data)

    def _take_output(self, data: bytes) -> None:
        cap = int(self.limits.max_output_bytes)
        self.stats["output_bytes"] += len(data)
        room = cap - len(self.output)
        if room > 0:
            self.output += data[:room]
        if len(data) > room:
            self.stats["output_truncated"] = True
            self._fail("output", f"output exceeded the limit of {cap} bytes (max_output_bytes)")

    def _drain_output(self) -> None:
        while self.failure is None:
            try:
                data = os.read(self.out_r, _READ_CHUNK)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self._take_output(data)

    def _read_rpc(self) -> None:
        try:
            data = os.read(self.from_child, _READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            self.rpc_eof = True
            return
        try:
            for frame in self.frames.feed(data):
                self._handle(rpc.decode(frame))
                if self._finished():
                    return
        except rpc.ProtocolError as exc:
            self._fail("protocol", f"sandbox protocol violation: {exc}")

    def _handle(self, msg: dict[str, Any]) -> None:
        kind = rpc.check_child_message(msg)
        if kind == "ready":
            if self.ready_at is not None:
                raise rpc.ProtocolError("second ready frame")
            self.ready_at = time.perf_counter()
            # Spawn to ready, as the parent sees it; a spare's ready frame waits in
            # the pipe until its run, so the child's own count stands for it then.
            self.stats["startup_s"] = round(
                float(msg["startup_s"]) if self.stats["prestarted"] else self.ready_at - self.spawned_at, 4
            )
            self.stats["isolation"] += msg["isolation"]
            self.stats["isolation_mode"] = isolation_mode(self.stats["isolation"])
        elif kind == "started":
            if self.ready_at is None or self.stats["start_s"] is not None:
                raise rpc.ProtocolError("started frame out of order")
            self.stats["start_s"] = round(time.perf_counter() - self.t0, 4)
        elif kind == "call":
            if self.stats["start_s"] is None:
                raise rpc.ProtocolError("call before the program started")
            self._serve(msg)
        else:
            self.done = msg

    # -- serving the API ----------------------------------------------------
    def _reply_error(self, call_id: int, error: str, fatal: bool = False) -> None:
        self._send(rpc.encode({"t": "ret", "id": call_id, "ok": False, "error": error[:4000], "fatal": fatal}))

    def _serve(self, msg: dict[str, Any]) -> None:
        call_id, name = msg["id"], msg["m"]
        budget = int(self.limits.max_api_calls)
        if self.stats["api_calls"] >= budget:
            error = f"API call budget of {budget} calls exceeded (max_api_calls)"
            self._reply_error(call_id, error, fatal=True)
            self._fail("api_budget", error)
            return
        fn = self.methods.get(name)
        if fn is None:
            self._reply_error(call_id, f"api has no method {name!r}")
            return
        self.stats["api_calls"] += 1
        t = time.perf_counter()
        try:
            value = fn(*msg["a"], **msg["k"])
        except Exception as exc:  # noqa: BLE001 - an API error is the program's to handle
            self.stats["api_errors"] += 1
            self._reply_error(call_id, f"{type(exc).__name__}: {exc}")
            return
        finally:
            self.stats["api_s"] += time.perf_counter() - t
            if callable(self.take_touched):
                self.stats["assertions_touched"] += int(self.take_touched() or 0)
        self.stats["rows_returned"] += rpc.count_rows(value)
        if self.stats["rows_returned"] > int(self.limits.max_rows):
            error = f"row budget of {self.limits.max_rows} rows exceeded (max_rows)"
            self._reply_error(call_id, error, fatal=True)
            self._fail("row_budget", error)
            return
        try:
            frame = rpc.encode({"t": "ret", "id": call_id, "ok": True, "v": value}, default=jsonable)
        except (TypeError, ValueError, RecursionError) as exc:
            self._reply_error(call_id, f"api.{name} returned a value JSON cannot carry: {exc}")
            return
        if callable(self.admit_answer):
            refusal = self.admit_answer(len(frame))
            if refusal:
                self.stats["api_errors"] += 1
                self._reply_error(call_id, str(refusal))
                return
        self._send(frame)

    # -- the outcome --------------------------------------------------------
    def _exit_text(self) -> str:
        rc = self.proc.returncode if self.proc is not None else None
        if rc is None:
            return "unknown"
        if rc < 0:
            try:
                return signal.Signals(-rc).name
            except ValueError:
                return f"signal {-rc}"
        return f"exit {rc}"

    def _death_error(self) -> tuple[str, str]:
        rc = self.proc.returncode if self.proc is not None else None
        cpu = self.stats["cpu_s"]
        if rc == -signal.SIGXCPU or (rc == -signal.SIGKILL and cpu >= int(self.limits.cpu_s)):
            return "cpu", f"CPU limit of {self.limits.cpu_s} s exceeded"
        if rc is not None and rc < 0:
            return "killed", f"the program was killed by {self._exit_text()}"
        tail = bytes(self.output[-500:]).decode("utf-8", "replace").strip()
        return "crash", f"the sandbox child ended ({self._exit_text()}) without a result" + (
            f": {tail}" if tail else ""
        )

    def _result(self) -> SandboxResult:
        self.stats["wall_s"] = round(time.perf_counter() - self.t0, 4)
        self.stats["api_s"] = round(self.stats["api_s"], 4)
        # After a "done" frame the teardown's SIGKILL may beat the child's own _exit.
        self.stats["exit"] = "finished" if self.done is not None else self._exit_text()
        output = bytes(self.output).decode("utf-8", "replace")
        if self.failure is not None:
            kind, error = self.failure
        elif self.done is not None and self.done["ok"]:
            return SandboxResult(True, self.done["result"], None, self.stats, output)
        elif self.done is not None:
            kind, error = self.done["kind"], self.done["error"]
        else:
            kind, error = self._death_error()
        self.stats["error_kind"] = kind
        return SandboxResult(False, None, error[:8000], self.stats, output)


def _early_failure(kind: str, error: str) -> SandboxResult:
    return SandboxResult(
        False,
        None,
        error,
        {"api_calls": 0, "assertions_touched": 0, "cpu_s": 0.0, "wall_s": 0.0, "max_rss_mb": 0.0, "error_kind": kind},
    )


def _execute(
    code: str, api: Any, limits: SandboxSettings | None, context: dict[str, Any] | None, session_class: type[_Session]
) -> SandboxResult:
    limits = limits or SandboxSettings()
    if not isinstance(code, str):
        return _early_failure("internal", "the program must be a str")
    if session_class.language_layer:
        try:
            policy.check_source(code)
        except SyntaxError as exc:
            return _early_failure("syntax", f"SyntaxError: {exc.msg} (line {exc.lineno})")
        except policy.PolicyViolation as exc:
            return _early_failure("policy", f"policy: {exc}")
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
            return _early_failure("syntax", f"cannot parse the program: {type(exc).__name__}: {exc}")
    try:
        methods = dict(api.rpc_methods()) if api is not None else {}
        methods = {
            k: v
            for k, v in methods.items()
            if isinstance(k, str) and k.isidentifier() and not k.startswith("_") and callable(v)
        }
    except Exception as exc:  # noqa: BLE001 - the caller's api object, reported not raised
        return _early_failure("internal", f"api.rpc_methods() failed: {type(exc).__name__}: {exc}")
    try:
        ctx = rpc.decode(rpc.encode(dict(context or {}), default=jsonable)[:-1])
    except (TypeError, ValueError, RecursionError, rpc.ProtocolError) as exc:
        return _early_failure("internal", f"the context is not JSON: {exc}")
    session = spare.take(limits) if session_class is _Session else None
    try:
        return (session or session_class(limits)).run(code, api, methods, ctx)
    except Exception as exc:  # noqa: BLE001 - e.g. no process could be spawned
        return _early_failure("internal", f"sandbox failure: {type(exc).__name__}: {exc}")
    finally:
        if session_class is _Session:
            spare.refill()


def run_program(
    code: str, api: Any = None, limits: SandboxSettings | None = None, *, context: dict[str, Any] | None = None
) -> SandboxResult:
    """Run `code` in a fresh sandboxed child with `api` served to it.

    The program sees globals `api` (the methods of `api.rpc_methods()`),
    `context` (a copy of `context`), `Candidate` and `ApiError`. Its result is
    the value of the variable `result`, or else of its last bare expression,
    converted to JSON. Never raises for anything the program does. Uses the
    child started ahead (`prestart`) when there is one for these limits.
    """
    return _execute(code, api, limits, context, _Session)


execute = run_program  # the older name


class _Spare:
    """At most one child started ahead, confined and waiting for its program, for
    the limits given to `prestart`. A run takes it (never shares or reuses it) and
    a new one is started after the run, from one long-lived thread: a child's
    death signal follows the thread that spawned it, so that thread never ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wanted: SandboxSettings | None = None
        self.session: _Session | None = None
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None

    def keep(self, limits: SandboxSettings | None) -> None:
        with self.lock:
            self.wanted = limits
            old = self.session
            if old is not None and limits is not None and old.limits_key == rpc.encode(_limits_dict(limits)):
                old = None  # the spare waiting now already has these limits
            if old is not None:
                self.session = None
            if limits is not None and self.thread is None:
                self.thread = threading.Thread(target=self._serve, name="sandbox-spare", daemon=True)
                self.thread.start()
        if old is not None:
            old.discard()
        self.refill()

    def take(self, limits: SandboxSettings) -> _Session | None:
        with self.lock:
            session = self.session
            if session is None or session.limits_key != rpc.encode(_limits_dict(limits)):
                return None
            self.session = None
        if session.alive():
            return session
        session.discard()  # died while waiting (killed from outside): start cold
        return None

    def refill(self) -> None:
        if self.wanted is not None:
            self.wake.set()

    def ready(self, timeout: float) -> bool:
        """True once a spare has been spawned and said it is confined (benches wait on it)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self.lock:
                session = self.session
            if session is not None and _has_input(session.from_child, 0.01):
                return True
            time.sleep(0.005)
        return False

    def _serve(self) -> None:
        while True:
            self.wake.wait()
            self.wake.clear()
            with self.lock:
                limits = self.wanted if self.session is None else None
            if limits is None:
                continue
            session = _Session(limits)
            try:
                session.start()
            except Exception:  # noqa: BLE001 - no spare: runs start cold, as without one
                continue
            with self.lock:
                kept = (
                    self.session is None
                    and self.wanted is not None
                    and rpc.encode(_limits_dict(self.wanted)) == session.limits_key
                )
                if kept:
                    self.session = session
            if not kept:  # stopped, or the limits changed while it started
                session.discard()


def _has_input(fd: int, timeout: float) -> bool:
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    except (OSError, ValueError):
        return False


spare = _Spare()


def prestart(limits: SandboxSettings) -> None:
    """Keep one confined child started ahead for runs with these limits, so a
    program starts in milliseconds; each is used for one program, never reused."""
    spare.keep(limits)


def stop_prestarting() -> None:
    """Kill the spare child, if any, and start no more."""
    spare.keep(None)

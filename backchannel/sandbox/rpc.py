"""The wire between parent and child: newline-delimited JSON over pipes.

Nothing but JSON crosses: never pickle, never eval. Each frame is one JSON object
on one line (JSON escapes every newline inside strings, and `ensure_ascii` keeps
the bytes plain ASCII). The parent validates the shape of every message the
child sends before acting on it.

Child -> parent messages:
  {"t": "ready", "isolation": [str, ...], "startup_s": float}   (confined, waiting for its program)
  {"t": "started"}                                             (the program is about to run)
  {"t": "call", "id": int, "m": str, "a": [..], "k": {..}}
  {"t": "done", "ok": true, "result": <json>, "rss_mb": float|null, "cpu_s": float}
  {"t": "done", "ok": false, "error": str, "kind": str, "rss_mb": float|null, "cpu_s": float}
  ("cpu_s" may be absent: a frame without it makes the parent wait for the exit)
Parent -> child messages:
  {"t": "init", "limits": {..}, "language": bool}   (see child.py; sent at spawn)
  {"t": "run", "code": str, "methods": [str], "context": {..}}   (exactly once)
  {"t": "ret", "id": int, "ok": true, "v": <json>}
  {"t": "ret", "id": int, "ok": false, "error": str, "fatal": bool}

Stdlib only: the child loads this file by path, without site-packages.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))

# Error kinds a child may report in a "done" frame.
CHILD_ERROR_KINDS = frozenset({"syntax", "policy", "exception", "memory", "result", "api", "internal", "isolation"})


class ProtocolError(Exception):
    """A frame that is not valid JSON or not a message of the expected shape."""


def _no_constants(name: str) -> Any:
    raise ProtocolError(f"non-standard JSON constant {name}")


def _finite_float(text: str) -> float:
    # json.loads turns 1e999 into inf: refuse it, as NaN and Infinity are refused.
    value = float(text)
    if value != value or value in (_INF, -_INF):
        raise ProtocolError(f"number {text[:40]} is not finite")
    return value


_INF = float("inf")


def encode(message: dict[str, Any], default: Any = None) -> bytes:
    """One frame: compact ASCII JSON plus a newline. Raises TypeError/ValueError
    for values JSON cannot carry (NaN included)."""
    if default is None:
        return (_ENCODER.encode(message) + "\n").encode("ascii")
    enc = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=default)
    return (enc.encode(message) + "\n").encode("ascii")


# A number that may parse to infinity: an exponent of three digits or more, or a
# run of 300 digits. Frames without one (nearly all) skip the per-float check.
_MAYBE_HUGE = re.compile(rb"[0-9][eE][+-]?[0-9]{3}|[0-9]{300}")


def decode(line: bytes) -> dict[str, Any]:
    """Parse one frame (without its newline) into a dict, strictly."""
    try:
        if _MAYBE_HUGE.search(line) is None:
            obj = json.loads(line, parse_constant=_no_constants)
        else:
            obj = json.loads(line, parse_constant=_no_constants, parse_float=_finite_float)
    except ProtocolError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"frame is not valid JSON: {exc}") from None
    except RecursionError:
        # A frame nested deeper than the interpreter's stack is the sender's fault.
        raise ProtocolError("frame is nested too deeply") from None
    if not isinstance(obj, dict):
        raise ProtocolError("frame is not a JSON object")
    return obj


class FrameBuffer:
    """Accumulates bytes read from a pipe and yields complete frames.

    `max_frame` bounds a single frame, so a child that never sends a newline
    cannot make the parent buffer without limit."""

    def __init__(self, max_frame: int):
        self.max_frame = max_frame
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        frames: list[bytes] = []
        start = 0
        while True:
            nl = self._buf.find(b"\n", start)
            if nl < 0:
                break
            if nl - start > self.max_frame:
                raise ProtocolError(f"frame of {nl - start} bytes exceeds the limit of {self.max_frame}")
            frames.append(bytes(self._buf[start:nl]))
            start = nl + 1
        if start:
            del self._buf[:start]
        if len(self._buf) > self.max_frame:
            raise ProtocolError(f"frame exceeds the limit of {self.max_frame} bytes")
        return frames

    @property
    def pending(self) -> int:
        return len(self._buf)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


MAX_DEPTH = 100  # the child's own encoder stops at 64 levels


def _depth(value: Any) -> int:
    """Nesting depth of a decoded JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_child_message(msg: dict[str, Any]) -> str:
    """Validate a message from the child; return its type. Raises ProtocolError."""
    if _depth(msg) > MAX_DEPTH:
        raise ProtocolError(f"frame nested deeper than {MAX_DEPTH} levels")
    t = msg.get("t")
    if t == "call":
        if set(msg) != {"t", "id", "m", "a", "k"}:
            raise ProtocolError("call frame must have exactly t, id, m, a, k")
        if not _is_int(msg["id"]) or not isinstance(msg["m"], str):
            raise ProtocolError("call frame: id must be an integer and m a string")
        if not isinstance(msg["a"], list) or not isinstance(msg["k"], dict):
            raise ProtocolError("call frame: a must be a list and k an object")
        if any(not k.isidentifier() or k.startswith("_") for k in msg["k"]):
            raise ProtocolError("call frame: keyword names must be public identifiers")
        return t
    if t == "done":
        rss = msg.get("rss_mb")
        if rss is not None and (not isinstance(rss, (int, float)) or isinstance(rss, bool)):
            raise ProtocolError("done frame: rss_mb must be a number or null")
        cpu = msg.get("cpu_s", 0.0)
        if not isinstance(cpu, (int, float)) or isinstance(cpu, bool) or not 0 <= cpu < 1e7:
            raise ProtocolError("done frame: cpu_s must be a non-negative number")
        keys = set(msg) - {"cpu_s"}
        if msg.get("ok") is True:
            if keys != {"t", "ok", "result", "rss_mb"}:
                raise ProtocolError("done frame must have exactly t, ok, result, rss_mb (and cpu_s)")
            return t
        if msg.get("ok") is False:
            if keys != {"t", "ok", "error", "kind", "rss_mb"}:
                raise ProtocolError("failed done frame must have exactly t, ok, error, kind, rss_mb (and cpu_s)")
            if not isinstance(msg["error"], str) or msg["kind"] not in CHILD_ERROR_KINDS:
                raise ProtocolError("failed done frame: bad error or kind")
            return t
        raise ProtocolError("done frame: ok must be true or false")
    if t == "ready":
        if set(msg) != {"t", "isolation", "startup_s"}:
            raise ProtocolError("ready frame must have exactly t, isolation, startup_s")
        iso = msg["isolation"]
        if not isinstance(iso, list) or not all(isinstance(x, str) and len(x) < 64 for x in iso):
            raise ProtocolError("ready frame: isolation must be a list of short strings")
        if not isinstance(msg["startup_s"], (int, float)) or isinstance(msg["startup_s"], bool):
            raise ProtocolError("ready frame: startup_s must be a number")
        return t
    if t == "started":
        if set(msg) != {"t"}:
            raise ProtocolError("started frame must have exactly t")
        return t
    raise ProtocolError(f"unknown frame type {str(t)[:40]!r}")


def count_rows(value: Any) -> int:
    """Rows in an API result, for the row budget: the length of a list; for an
    object, the summed lengths of its list values (1 when it has none); 0 for
    None; 1 for any other scalar."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, dict):
        n = sum(len(v) for v in value.values() if isinstance(v, (list, tuple)))
        return n or 1
    return 1

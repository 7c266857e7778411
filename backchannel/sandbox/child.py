"""The sandbox child: started fresh as `python -I -S -X utf8 child.py FD` by the
parent, with an empty environment, in a new session, in a temp directory.

Order of events:
1. read the init frame (the limits) from stdin (fd 0); replies to API calls come
   the same way; enter the namespaces (PID, mount, network, IPC, UTS, user when
   not root; limits.py): with a PID namespace this process forks, and only the
   copy, PID 1 of the namespace, goes on (the original waits for it outside);
2. preload the allowlisted modules (the program's `import` only ever returns a
   view of one of these, exports.py) and build the restricted builtins;
3. lock the process down (limits.py): a tmpfs as its directory, chroot,
   privilege drop, landlock, seccomp, rlimits; where no OS isolation could be
   had, refuse to run any program unless the limits say `allow_unisolated` and
   the kernel gave a read-only landlock domain and the seccomp filter;
4. say "ready" and wait: up to here no program is known, so the parent may
   start a child ahead of its run (runner.py keeps one spare);
5. read the run frame (the one program this child will ever run), parse and
   check it (policy.py), compile it, build the `api` proxy, install the audit
   hook, say "started", run the program;
6. send the result (or the error) as one JSON frame on fd FD, then _exit, so no
   atexit hook, thread or finaliser of the program ever runs.

Stdlib only: with -S there is no site-packages; policy, rpc and limits are
loaded from this file's directory.
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import _thread  # noqa: E402
import builtins  # noqa: E402
import dataclasses  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import exports as _exports  # noqa: E402
import limits as _limits  # noqa: E402
import policy as _policy  # noqa: E402
import rpc as _rpc  # noqa: E402

sys.path.remove(_HERE)

# For the type checker only: the child imports nothing it does not need (no typing at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType, ModuleType
    from typing import Any

FILENAME = "<program>"
LAST_EXPR = "__last_expr__"  # a dunder, so the program itself cannot name it
_MAX_DEPTH = 64

# Private modules the allowlisted ones import lazily (e.g. datetime.strptime).
_LAZY_DEPS = ("_strptime", "encodings.idna", "unicodedata")


class ApiError(Exception):
    """An API call failed in the parent (bad arguments, unknown entity, ...)."""


class ApiBudgetExceeded(BaseException):
    """The run spent its API call or row budget; the run ends."""


class SandboxRefused(PermissionError):
    """The audit hook refused an operation."""


@dataclasses.dataclass
class Candidate:
    """A proposed action: kind (e.g. "introduction"), the entity ids involved;
    then by keyword the path (entity ids), the evidence (assertion ids), a score
    in 0..1, a one-line why and any extra JSON. Mirrors graph.types.Candidate."""

    kind: str
    entities: list = dataclasses.field(default_factory=list)
    _: dataclasses.KW_ONLY
    path: list = dataclasses.field(default_factory=list)
    evidence: list = dataclasses.field(default_factory=list)
    score: float = 0.5
    why: str = ""
    extra: dict = dataclasses.field(default_factory=dict)


# -- the channel to the parent ---------------------------------------------
class Channel:
    def __init__(self, rfd: int, wfd: int):
        self._r = open(rfd, "rb", buffering=1 << 20, closefd=False)
        self._wfd = wfd

    def send(self, frame: bytes) -> None:
        view = memoryview(frame)
        while view:
            n = os.write(self._wfd, view)
            view = view[n:]

    def recv(self) -> dict:
        line = self._r.readline()
        if not line:
            os._exit(3)  # the parent has gone: nothing left to do
        return _rpc.decode(line)


# -- JSON conversion of arguments and results ------------------------------
def plain(value: Any, depth: int = 0, where: str = "result") -> Any:
    """A JSON value built from `value`: dataclasses become objects, tuples and
    sets lists, dates ISO strings. Raises TypeError naming the offending path."""
    if depth > _MAX_DEPTH:
        raise TypeError(f"{where}: nested deeper than {_MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, str)):
        return str.__str__(value) if isinstance(value, str) else value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TypeError(f"{where}: NaN or infinity is not JSON")
        return float(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in dict.items(value):
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                raise TypeError(f"{where}: object key of type {type(k).__name__} is not JSON")
            key = k if isinstance(k, str) else plain(k, depth + 1, where)
            out[str(key) if not isinstance(key, str) else key] = plain(v, depth + 1, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        items = [plain(v, depth + 1, f"{where}[*]") for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: plain(object.__getattribute__(value, f.name), depth + 1, f"{where}.{f.name}")
            for f in dataclasses.fields(value)
        }
    import datetime as _dt

    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    import decimal as _dec
    import fractions as _frac

    if isinstance(value, (_dec.Decimal, _frac.Fraction)):
        return plain(float(value), depth, where)
    raise TypeError(f"{where}: a value of type {type(value).__name__} is not JSON")


# -- the program's world ---------------------------------------------------
def preload() -> dict[str, ModuleType]:
    """Import the allowlisted modules now, while files may still be read; return
    every loaded module the program may import, by full name."""
    import importlib

    for name in sorted(_policy.ALLOWED_MODULES) + list(_LAZY_DEPS):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    time.localtime()  # read the zone file before the chroot hides it
    allowed = {}
    for name, mod in list(sys.modules.items()):
        parts = name.split(".")
        if mod is not None and parts[0] in _policy.ALLOWED_MODULES and not any(p.startswith("_") for p in parts):
            allowed[name] = mod
    return allowed


def internal_views() -> dict[str, Any]:
    """Views of the private modules C code imports lazily; `_strptime` keeps the
    two private functions datetime's C code calls."""
    present = {name: sys.modules[name] for name in _LAZY_DEPS if name in sys.modules}
    views = _exports.make_views(present)
    if "_strptime" in present:
        for attr in ("_strptime_datetime", "_strptime_time"):
            if hasattr(present["_strptime"], attr):
                setattr(views["_strptime"], attr, getattr(present["_strptime"], attr))
    return views


def make_import(allowed: dict[str, Any]) -> Callable[..., Any]:
    """`allowed` maps module names to the views the program may have."""
    internal = internal_views()

    def sandbox_import(
        name: str, globals: object = None, locals: object = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if not level and name in internal:
            # C code imports these lazily through __import__ (datetime.strptime).
            return internal[name]
        if level or name not in allowed:
            raise ImportError(f"import of {name!r} is not allowed in the sandbox")
        for item in fromlist or ():
            # C code passes ["__doc__"] as fromlist.
            if not isinstance(item, str) or (item.startswith("_") and item != "__doc__"):
                raise ImportError(f"import of {item!r} from {name!r} is not allowed")
        if fromlist:
            return allowed[name]
        return allowed[name.split(".")[0]]

    return sandbox_import


def make_builtins(allowed: dict[str, Any], restricted: bool) -> dict[str, Any]:
    b = dict(builtins.__dict__)
    if not restricted:
        return b
    for name in _policy.FORBIDDEN_NAMES:
        b.pop(name, None)
    for name in ("__loader__", "__spec__", "__package__"):
        b.pop(name, None)
    # Views, not the modules: no allowlisted module may hand out builtins, sys or os.
    b["__import__"] = make_import(_exports.make_views(allowed))
    return b


def make_api(methods: list[str], call: Callable[[str, tuple, dict], Any]) -> object:
    """The `api` global: one stub per method the parent serves."""
    doc = "The graph API, served by the parent. Methods: " + ", ".join(methods)
    ns: dict[str, Any] = {"__slots__": (), "__doc__": doc, "__repr__": lambda self: f"<api: {', '.join(methods)}>"}

    def missing(self: object, name: str) -> Any:
        raise AttributeError(f"api has no method {name!r}; available: {', '.join(methods)}")

    def make_stub(name: str) -> staticmethod:
        def stub(*args: Any, **kwargs: Any) -> Any:
            return call(name, args, kwargs)

        stub.__name__ = stub.__qualname__ = name
        return staticmethod(stub)

    ns["__getattr__"] = missing
    for name in methods:
        if isinstance(name, str) and name.isidentifier() and not name.startswith("_"):
            ns[name] = make_stub(name)
    return type("Api", (), ns)()


def make_caller(chan: Channel) -> Callable[[str, tuple, dict], Any]:
    seq = [0]

    def call(name: str, args: tuple, kwargs: dict) -> Any:
        seq[0] += 1
        try:
            frame = _rpc.encode(
                {
                    "t": "call",
                    "id": seq[0],
                    "m": name,
                    "a": plain(list(args), where="args"),
                    "k": plain(dict(kwargs), where="kwargs"),
                }
            )
        except (TypeError, ValueError) as exc:
            raise TypeError(f"api.{name}: arguments must be JSON values ({exc})") from None
        chan.send(frame)
        reply = chan.recv()
        if reply.get("t") != "ret" or reply.get("id") != seq[0]:
            raise ApiBudgetExceeded("sandbox protocol out of step")
        if reply.get("ok") is True:
            return reply.get("v")
        if reply.get("fatal"):
            raise ApiBudgetExceeded(str(reply.get("error")))
        raise ApiError(str(reply.get("error")))

    return call


# -- the audit hook --------------------------------------------------------
def _source_file(module: ModuleType) -> str:
    if module.__file__ is None:  # never for dataclasses and collections; realpath(None) would raise too
        raise TypeError(f"module {module.__name__} has no file to trust")
    return module.__file__


# Events stdlib code fires in normal use; anything not named here is refused.
_SILENT = frozenset({"builtins.id", "time.sleep", "object.__delattr__"})
_HOOK_OWN_EVENTS = frozenset({"sys._getframe", "object.__getattr__"})


def install_audit_hook(program_code: CodeType, workroot: str, max_created: int) -> None:
    trusted_compilers = tuple(os.path.realpath(_source_file(m)) for m in (dataclasses, sys.modules["collections"]))
    getframe = sys._getframe
    realpath, join, getcwd = os.path.realpath, os.path.join, os.getcwd
    get_ident = _thread.get_ident
    busy: set = set()  # threads inside the hook (its own calls fire events too)
    created: set = set()  # paths opened with O_CREAT: bounded where no tmpfs bounds the inodes
    o_creat = os.O_CREAT

    def caller_file() -> str:
        frame = getframe(3)  # caller_file <- judge <- hook <- the code that fired the event
        return frame.f_code.co_filename if frame is not None else ""

    def judge(event: str, args: tuple) -> str | None:
        # Exact types only: a str or bytes subclass would run the program's own
        # methods inside the hook.
        if event == "open":
            path = args[0]
            if type(path) is bytes:
                path = bytes.decode(path, "utf-8", "replace")
            if type(path) is not str:
                return "opening anything but a plain str or bytes path is not allowed"
            full = realpath(join(getcwd(), path))
            if full != workroot and not full.startswith(workroot.rstrip("/") + "/"):
                return f"opening {path!r} is not allowed (only the working directory)"
            flags = args[2] if len(args) > 2 else 0
            if type(flags) is int and flags & o_creat and full not in created:
                if len(created) >= max_created:
                    return f"creating more than {max_created} files is not allowed (workdir_inodes)"
                created.add(full)
            return None
        if event == "exec":
            if args and args[0] is program_code:
                return None
            return None if realpath(caller_file()) in trusted_compilers else "running new code is not allowed"
        if event == "compile":
            return None if realpath(caller_file()) in trusted_compilers else "compiling code is not allowed"
        if event == "import":
            if type(args[0]) is not str:
                return "import of a name that is not a plain str is not allowed"
            top = args[0].split(".")[0]
            return None if top in _policy.ALLOWED_MODULES else f"import of {args[0]!r} is not allowed"
        if event in ("object.__getattr__", "object.__setattr__", "sys._getframe"):
            # Frame, traceback and code attributes; stdlib code may, the program may not.
            return "attribute access refused" if caller_file() == FILENAME else None
        return f"operation {event!r} is not allowed"

    def hook(event: str, args: tuple) -> None:
        if event in _SILENT:
            return
        me = get_ident()
        if me in busy:
            # Only the hook's own frame lookups (sys._getframe, frame.f_code) may
            # fire inside it; nothing the hook does runs program code, so any other
            # nested event is an attack.
            if event in _HOOK_OWN_EVENTS:
                return
            raise SandboxRefused(f"sandbox: {event!r} inside the audit hook is not allowed")
        busy.add(me)
        try:
            refusal = judge(event, args)
        finally:
            busy.discard(me)
        if refusal:
            raise SandboxRefused(f"sandbox: {refusal}")

    sys.addaudithook(hook)


# -- running ---------------------------------------------------------------
def prepare(source: str, check: bool) -> CodeType:
    """Parse, check, rewrite a trailing bare expression into LAST_EXPR, compile."""
    import ast

    tree = _policy.check_source(source, FILENAME) if check else ast.parse(source, FILENAME)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(LAST_EXPR, ast.Store())], value=last.value)
        tree.body[-1] = ast.copy_location(assign, last)
        ast.fix_missing_locations(tree)
    return compile(tree, FILENAME, "exec", dont_inherit=True)


def describe(exc: BaseException, lines: list) -> str:
    """The program's own frames and the exception line, like a short traceback."""
    summary = traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)
    out = []
    for fr in summary:
        if fr.filename != FILENAME:
            continue
        src = lines[fr.lineno - 1].strip() if fr.lineno and 0 < fr.lineno <= len(lines) else ""
        out.append(f"  line {fr.lineno}, in {fr.name}\n    {src}")
    try:
        msg = str(exc)
    except BaseException:  # noqa: BLE001 - the program's own __str__ may fail
        msg = "<unprintable>"
    head = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    if len(head) > 2000:
        head = head[:2000] + "..."
    if out:
        return "Traceback (program frames only):\n" + "\n".join(out[-20:]) + "\n" + head
    return head


def _rss_reader() -> Callable[[], float | None]:
    """A function giving this process's peak RSS in MB (VmHWM), from a
    /proc/self/status handle opened now, before the chroot hides /proc."""
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return lambda: None

    def peak_mb() -> float | None:
        try:
            for line in os.pread(fd, 16384, 0).decode("ascii", "replace").splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except (OSError, ValueError, IndexError):
            pass
        return None

    return peak_mb


def _cpu_s() -> float:
    """CPU time (user + system) of this process, the one that ran the program
    (getrusage: microseconds, where os.times counts clock ticks)."""
    usage = _limits.resource.getrusage(_limits.resource.RUSAGE_SELF)
    return round(usage.ru_utime + usage.ru_stime, 4)


def _kind(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, ApiBudgetExceeded):
        return "api"
    return "exception"


def _refusal(reason: str | None, isolation: list, limits: dict) -> str | None:
    """Why the program may not run here, or None: no chroot and no opt-in, or an
    opt-in (`allow_unisolated`) without the kernel walls it needs."""
    if reason is None and not _limits.bounded_writes(isolation):
        reason = "no private tmpfs and no read-only landlock domain bound what the program may write"
    if reason is None:
        return None
    if not limits.get("allow_unisolated"):
        return (
            f"no OS isolation for generated code: {reason}. Run the daemon as root, enable "
            "unprivileged user namespaces, or set [sandbox] allow_unisolated = true to accept "
            "landlock (read-only) and seccomp without namespaces"
        )
    missing = _limits.unisolated_walls(isolation)
    if missing is not None:
        return f"no OS isolation for generated code: {reason}; allow_unisolated is set, but {missing}"
    isolation.append("unisolated_allowed")
    return None


def main() -> None:
    wfd = int(sys.argv[1])
    chan = Channel(0, wfd)
    sys.stdin = io.StringIO("")

    # Replaced once this is the process that runs the program.
    peak_mb: Callable[[], float | None] = lambda: None  # noqa: E731

    def finish(message: dict) -> None:
        message["rss_mb"] = peak_mb()
        message["cpu_s"] = _cpu_s()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - the output pipe may be gone
                pass
        try:
            chan.send(_rpc.encode(message))
        finally:
            os._exit(0)

    # Phase 1, before any program is known (so a child can be started ahead of its
    # run): confine this process completely.
    init = chan.recv()
    # The language layer (AST check, restricted builtins, import views, audit hook)
    # makes errors readable; only a test-only session turns it off (docs/sandbox.md).
    language = init.get("language") is not False
    limits = init["limits"]
    # Fork into the PID namespace first: the preloads below then happen in the copy
    # that runs the program, not before a fork that would copy them.
    confinement = _limits.Confinement()
    confinement.enter_namespaces()
    peak_mb = _rss_reader()
    allowed = preload()
    program_builtins = make_builtins(allowed, restricted=language)
    workdir = os.getcwd()
    isolation, reason = confinement.lock_down(workdir, limits)
    del confinement
    refusal = _refusal(reason, isolation, limits)
    workroot = "/" if "chroot" in isolation else os.path.realpath(workdir)
    isolation += ["rlimit_" + n for n in _limits.set_rlimits(limits)]
    if language:
        isolation += ["audit_hook", "ast", "builtins"]
    chan.send(_rpc.encode({"t": "ready", "isolation": isolation, "startup_s": round(time.perf_counter() - _T0, 6)}))
    if refusal is not None:
        finish({"t": "done", "ok": False, "kind": "isolation", "error": refusal})

    # Phase 2: the one program this child will ever run.
    run = chan.recv()
    if run.get("t") != "run":
        finish({"t": "done", "ok": False, "kind": "internal", "error": "expected a run frame"})
    source = run["code"]
    try:
        code = prepare(source, check=language)
    except SyntaxError as exc:
        finish({"t": "done", "ok": False, "kind": "syntax", "error": f"SyntaxError: {exc.msg} (line {exc.lineno})"})
    except _policy.PolicyViolation as exc:
        finish({"t": "done", "ok": False, "kind": "policy", "error": f"policy: {exc}"})
    except (ValueError, RecursionError, MemoryError) as exc:
        finish(
            {
                "t": "done",
                "ok": False,
                "kind": "syntax",
                "error": f"cannot parse the program: {type(exc).__name__}: {exc}",
            }
        )
    env = {
        "__builtins__": program_builtins,
        "__name__": "program",
        "api": make_api(list(run.get("methods", [])), make_caller(chan)),
        "context": run.get("context") or {},
        "Candidate": Candidate,
        "ApiError": ApiError,
    }
    if language:
        install_audit_hook(code, workroot, int(limits.get("workdir_inodes", 2048)))
    chan.send(_rpc.encode({"t": "started"}))
    lines = source.splitlines()
    try:
        exec(code, env)
        value = env["result"] if "result" in env else env.get(LAST_EXPR)
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a value
        try:
            finish({"t": "done", "ok": False, "kind": _kind(exc), "error": describe(exc, lines)})
        except BaseException:  # noqa: BLE001
            finish({"t": "done", "ok": False, "kind": "exception", "error": type(exc).__name__})
    try:
        frame = _rpc.encode({"t": "done", "ok": True, "result": plain(value), "rss_mb": peak_mb(), "cpu_s": _cpu_s()})
    except BaseException as exc:  # noqa: BLE001
        finish({"t": "done", "ok": False, "kind": "result", "error": f"result is not JSON-serialisable: {exc}"})
    cap = int(limits["max_result_bytes"])
    if len(frame) - 40 > cap:
        finish(
            {
                "t": "done",
                "ok": False,
                "kind": "result",
                "error": f"result is {len(frame)} bytes, over the limit of {cap} (max_result_bytes)",
            }
        )
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    chan.send(frame)
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
        try:
            os.write(
                int(sys.argv[1]),
                _rpc.encode(
                    {
                        "t": "done",
                        "ok": False,
                        "kind": "internal",
                        "error": f"sandbox child failed: {type(exc).__name__}: {exc}",
                    }
                ),
            )
        finally:
            os._exit(2)

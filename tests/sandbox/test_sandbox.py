"""The sandbox as a tool: results, the API over RPC, budgets, errors, policy,
the entry point, and its speed. Escapes and abuse are in test_sandbox_escapes.py."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backchannel.config.sections import SandboxSettings
from backchannel.sandbox import SandboxResult, run_program
from backchannel.sandbox.policy import ALLOWED_MODULES, PolicyViolation, check_source

ROOT = Path(__file__).resolve().parents[2]


@dataclasses.dataclass
class Person:
    id: int
    name: str
    since: dt.date


class ToyApi:
    """A small API with the GraphAPI's serving surface: rpc_methods and take_touched."""

    def __init__(self) -> None:
        self.touched = 0
        self.calls: list[tuple] = []

    def rpc_methods(self) -> dict:
        return {
            "echo": self.echo,
            "people": self.people,
            "fail": self.fail,
            "rows": self.rows,
            "opaque": self.opaque,
            "person": self.person,
        }

    def take_touched(self) -> int:
        n, self.touched = self.touched, 0
        return n

    def echo(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        self.touched += 2
        return {"args": list(args), "kwargs": kwargs}

    def people(self, ids):
        self.touched += 10 * len(ids)
        return [{"id": i, "name": f"P{i}"} for i in ids]

    def fail(self, why="bad id"):
        raise ValueError(why)

    def rows(self, n):
        return list(range(n))

    def opaque(self):
        return object()

    def person(self):
        return Person(7, "Marc", dt.date(2025, 1, 2))

    def not_served(self):  # present on the object, absent from rpc_methods
        return "secret"


def run(code: str, api=None, **limits) -> SandboxResult:
    return run_program(code, api if api is not None else ToyApi(), SandboxSettings(**limits) if limits else None)


def test_result_variable_and_stats():
    r = run("result = {'a': [1, 2.5, None, True], 'b': 'x'}")
    assert r.ok, r.error
    assert r.result == {"a": [1, 2.5, None, True], "b": "x"}
    for key in (
        "api_calls",
        "assertions_touched",
        "cpu_s",
        "wall_s",
        "max_rss_mb",
        "rows_returned",
        "output_bytes",
        "startup_s",
        "isolation",
    ):
        assert key in r.stats
    assert "audit_hook" in r.stats["isolation"] and "rlimit_cpu" in r.stats["isolation"]
    assert 0 < r.stats["max_rss_mb"] < 200


def test_last_bare_expression_is_the_result_unless_result_is_set():
    assert run("x = 3\nx * 2").result == 6
    assert run("result = 'named'\n'ignored'").result == "named"
    assert run("x = 1").result is None


def test_context_candidate_and_conversion():
    code = (
        "from dataclasses import dataclass\n"
        "import datetime, collections\n"
        "@dataclass\nclass Hit:\n    who: str\n    score: float\n"
        "P = collections.namedtuple('P', 'a b')\n"
        "result = {'q': context['q'], 'c': Candidate('introduction', [1, 2], path=[0, 1, 2], evidence=[9],"
        " score=0.8, why='met'), 'hit': Hit('x', 0.5), 'tup': (1, 2), 'set': {3, 1}, 'p': P(1, 2),"
        " 'day': datetime.date(2026, 1, 2)}\n"
    )
    r = run_program(code, ToyApi(), context={"q": "who knows the CIO?"})
    assert r.ok, r.error
    assert r.result["q"] == "who knows the CIO?"
    assert r.result["c"] == {
        "kind": "introduction",
        "entities": [1, 2],
        "path": [0, 1, 2],
        "evidence": [9],
        "score": 0.8,
        "why": "met",
        "extra": {},
    }
    assert r.result["hit"] == {"who": "x", "score": 0.5}
    assert r.result["tup"] == [1, 2] and r.result["set"] == [1, 3] and r.result["p"] == [1, 2]
    assert r.result["day"] == "2026-01-02"


def test_output_is_captured():
    r = run("print('hello'); print('world')\nresult = 1")
    assert r.ok and r.output == "hello\nworld\n" and r.stats["output_bytes"] == 12


def test_api_calls_args_touched_and_rows():
    api = ToyApi()
    r = run("a = api.echo(1, 'two', [3], k={'x': (1, 2)})\nb = api.people([1, 2, 3])\nresult = [a, b]", api)
    assert r.ok, r.error
    assert r.result[0] == {"args": [1, "two", [3]], "kwargs": {"k": {"x": [1, 2]}}}
    assert [p["name"] for p in r.result[1]] == ["P1", "P2", "P3"]
    assert api.calls == [((1, "two", [3]), {"k": {"x": [1, 2]}})]
    assert r.stats["api_calls"] == 2
    assert r.stats["assertions_touched"] == 32
    assert r.stats["rows_returned"] == 3 + 3  # the object's list values, then a list


def test_api_without_take_touched_and_parent_types():
    class Bare:
        def rpc_methods(self):
            return {"person": ToyApi().person}

    r = run("result = api.person()", Bare())
    assert r.ok, r.error
    assert r.result == {"id": 7, "name": "Marc", "since": "2025-01-02"}
    assert r.stats["assertions_touched"] == 0


def test_api_errors_reach_the_program():
    r = run("try:\n    api.fail('no such person')\nexcept ApiError as e:\n    result = str(e)")
    assert r.ok and r.result == "ValueError: no such person"
    r = run("api.fail()")
    assert not r.ok and "ApiError: ValueError: bad id" in r.error and "line 1" in r.error
    r = run("result = api.opaque()")
    assert not r.ok and "JSON" in r.error
    r = run("api.not_served()")
    assert not r.ok and "AttributeError" in r.error and "not_served" in r.error
    r = run("api.echo(object())")
    assert not r.ok and "JSON" in r.error


def test_api_call_budget_ends_the_run_even_if_the_program_catches():
    code = (
        "for i in range(50):\n    try:\n        api.echo(i)\n    except Exception:\n        pass\nresult = 'survived'"
    )
    r = run(code, max_api_calls=5)
    assert not r.ok
    assert "max_api_calls" in r.error and r.stats["error_kind"] == "api_budget"
    assert r.stats["api_calls"] == 5


def test_row_budget():
    r = run("a = api.rows(6)\nb = api.rows(6)\nresult = 1", max_rows=10)
    assert not r.ok and "max_rows" in r.error and r.stats["error_kind"] == "row_budget"


def test_program_errors_become_values_with_program_frames_only():
    r = run("def f(x):\n    return 1 / x\n\nf(0)")
    assert not r.ok and r.stats["error_kind"] == "exception"
    assert "line 4, in <module>" in r.error and "line 2, in f" in r.error and "return 1 / x" in r.error
    assert r.error.endswith("ZeroDivisionError: division by zero")
    assert "child.py" not in r.error
    r = run("def broken(:\n  pass")
    assert not r.ok and r.error.startswith("SyntaxError") and r.stats["error_kind"] == "syntax"


def test_non_json_results_fail_clearly():
    for code in (
        "result = object()",
        "result = lambda: 1",
        "result = {(1, 2): 3}",
        "result = float('nan')",
        "class C: pass\nresult = C",
    ):
        r = run(code)
        assert not r.ok and r.stats["error_kind"] == "result", code
        assert "JSON" in r.error


@pytest.mark.parametrize(
    "code",
    [
        "import os",
        "import sys",
        "from importlib import import_module",
        "import ctypes",
        "import pickle",
        "import marshal",
        "import subprocess",
        "import socket",
        "from json import _default_encoder",
        "from . import x",
        "__import__('os')",
        "x = ().__class__",
        "open('/etc/passwd')",
        "eval('1')",
        "exec('x=1')",
        "compile('1', 'f', 'eval')",
        "getattr(1, 'real')",
        "vars()",
        "globals()",
        "dir()",
        "x = __builtins__",
        "def g():\n    yield 1\ng().gi_frame",
        "'{0.__class__}'.format(1)",
        "'{x.real}'.format(x=1)",
        "t = '{}'\nt.format(1)",
        "'{}'.format_map({})",
        "import operator\noperator.attrgetter('x')",
        "import string\nstring.Formatter()",
        "match 1:\n    case int(__class__=c):\n        pass",
        "class M(type): pass\nclass X(metaclass=M): pass",
        "def __getattr__(name): pass",
        "breakpoint()",
        "input()",
        "memoryview(b'')",
    ],
)
def test_policy_rejects(code):
    with pytest.raises(PolicyViolation):
        check_source(code)
    r = run(code)
    assert not r.ok and r.stats["error_kind"] == "policy" and r.error.startswith("policy:")
    assert r.stats["wall_s"] == 0.0  # refused in the parent: no child was spawned


@pytest.mark.parametrize(
    "code",
    [
        "x = f'{1 + 1:>4} {\"a\"}'",
        "'{} {:.2f} {name}'.format(1, 2.0, name='n')",
        "_private = 1\nfor _ in range(2): pass",
        "class A:\n    def __init__(self):\n        self.x = 1\nclass B(A):\n    def __init__(self):\n        super().__init__()",
        "from collections import defaultdict, Counter\nimport collections.abc",
        "from typing import Any, Optional",
        "import math, statistics, itertools, functools, heapq, bisect, operator, textwrap, random, decimal, fractions",
        "hasattr(1, 'real')",
    ],
)
def test_policy_accepts(code):
    check_source(code)
    r = run(code)
    assert r.ok, r.error


def test_every_allowlisted_module_imports_and_works():
    code = "\n".join(f"import {m}" for m in sorted(ALLOWED_MODULES)) + (
        "\nresult = [math.sqrt(16), statistics.median([3, 1, 2]), json.dumps({'a': 1}),"
        " re.findall(r'\\d+', 'a1b22'), str(decimal.Decimal('1.10') + 1), str(fractions.Fraction(1, 3)),"
        " datetime.datetime.strptime('2026-03-04', '%Y-%m-%d').isoformat(), textwrap.shorten('a b c d e', 5),"
        " random.Random(1).randint(1, 9) > 0, heapq.nsmallest(2, [5, 1, 3])]"
    )
    r = run(code)
    assert r.ok, r.error
    assert r.result[:4] == [4.0, 2, '{"a": 1}', ["1", "22"]]
    assert r.result[6] == "2026-03-04T00:00:00"


def test_bad_api_object_or_context_is_an_error_value():
    r = run_program("result = 1", object())
    assert not r.ok and "rpc_methods" in r.error
    r = run_program("result = 1", None, context={"x": object()})
    assert not r.ok and "context" in r.error
    assert run_program("result = context", None, context={"d": dt.date(2026, 1, 1)}).result == {"d": "2026-01-01"}


def test_rpc_round_trip_and_startup_are_fast():
    n = 2000
    r = run(f"for i in range({n}):\n    api.echo(i)\nresult = 1")
    assert r.ok, r.error
    per_call_us = (r.stats["wall_s"] - r.stats["startup_s"]) / n * 1e6
    print(json.dumps({"rpc_us_per_call": round(per_call_us, 1), "startup_s": r.stats["startup_s"]}))
    # Generous bounds for a shared 2-core machine; bench/sandbox_rpc.py measures properly.
    assert per_call_us < 1000
    assert r.stats["startup_s"] < 2.0


# -- the entry point ---------------------------------------------------------
TOY_MODULE = """
class Api:
    def __init__(self, store, settings):
        self.store, self.n = store, 0
    def rpc_methods(self):
        return {"count_sources": self.count_sources, "echo": self.echo}
    def take_touched(self):
        n, self.n = self.n, 0
        return n
    def count_sources(self):
        self.n += 1
        return self.store.scalar("SELECT count(*) FROM sources")
    def echo(self, x):
        return x
"""


def _cli(home: Path, tmp_path: Path, program: str, *extra: str) -> tuple[int, dict]:
    (tmp_path / "toyapi_mod.py").write_text(TOY_MODULE)
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    env = dict(os.environ, BACKCHANNEL_HOME=str(home), PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    p = subprocess.run(
        [sys.executable, "-m", "backchannel.sandbox", "run", str(prog), "--json", "--api", "toyapi_mod:Api", *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return p.returncode, json.loads(p.stdout)


def test_entry_point_runs_against_the_store(home, store, tmp_path):
    store.close()  # the CLI opens the file read-only; DuckDB wants no writer meanwhile
    rc, out = _cli(
        home, tmp_path, "result = {'n': api.count_sources(), 'ctx': context}", "--arg", "name=Marc", "--arg", "k=3"
    )
    assert rc == 0, out
    assert out["ok"] is True and out["error"] is None
    assert out["result"] == {"n": 0, "ctx": {"name": "Marc", "k": 3}}
    assert out["stats"]["api_calls"] == 1 and out["stats"]["assertions_touched"] == 1
    for key in ("cpu_s", "wall_s", "max_rss_mb"):
        assert key in out["stats"]
    rc, out = _cli(home, tmp_path, "import os")
    assert rc == 1 and out["ok"] is False and "import of 'os'" in out["error"]


def test_entry_point_without_a_store_reports(tmp_path, monkeypatch):
    empty = tmp_path / "nohome"
    empty.mkdir()
    rc, out = _cli(empty, tmp_path, "result = 1")
    assert rc == 1 and out["ok"] is False and "no database" in out["error"]


def test_entry_point_with_the_graph_api(home, store, tmp_path):
    pytest.importorskip("backchannel.graph.api")
    store.close()
    prog = tmp_path / "g.py"
    prog.write_text("result = {'net': api.network(), 'now': api.now()}\n")
    env = dict(os.environ, BACKCHANNEL_HOME=str(home))
    p = subprocess.run(
        [sys.executable, "-m", "backchannel.sandbox", "run", str(prog), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    out = json.loads(p.stdout)
    assert set(out) >= {"ok", "result", "error", "stats"}
    assert out["stats"]["api_calls"] >= 1, out
    assert p.returncode == (0 if out["ok"] else 1)


def test_touched_counts_only_this_runs_calls():
    class Counting:
        def __init__(self):
            self.touched = 0

        def rpc_methods(self):
            return {"read": self.read}

        def read(self, n):
            self.touched += n
            return n

        def take_touched(self):
            n, self.touched = self.touched, 0
            return n

    api = Counting()
    api.read(1000)  # the parent's own reads (e.g. the drafter) before the run
    r = run_program("result = api.read(7) + api.read(5)", api)
    assert r.ok and r.result == 12 and r.stats["assertions_touched"] == 12


def test_child_dies_with_a_killed_parent(tmp_path):
    """A kill -9 of the daemon must not leave generated code running."""
    import signal
    import subprocess
    import sys
    import time

    driver = tmp_path / "driver.py"
    driver.write_text(
        "import sys\n"
        "from backchannel.config.sections import SandboxSettings\n"
        "from backchannel.sandbox import run_program\n"
        "class Api:\n"
        "    def rpc_methods(self):\n"
        "        return {'hello': lambda: print('child up', flush=True) or 1}\n"
        "run_program('x = api.hello()\\nwhile True:\\n    pass', Api(), SandboxSettings(cpu_s=30, wall_s=60))\n"
    )
    parent = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "child up"
        children = subprocess.run(["pgrep", "-P", str(parent.pid)], capture_output=True, text=True).stdout.split()
        assert children, "the sandbox child should be running"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        alive = children
        while alive and time.monotonic() < deadline:
            alive = [
                c for c in children if os.path.exists(f"/proc/{c}") and open(f"/proc/{c}/stat").read().split()[2] != "Z"
            ]
            time.sleep(0.05)
        assert not alive, f"sandbox child {alive} outlived its killed parent"
    finally:
        parent.kill()

"""The governed edges (memory/edges.py, config/edges.py): a wake run through the engine
with scripted models and a real loopback SMTP server records one `edges` row per
crossing (program -> graph API, judge and drafter -> model, outbox -> email), `trace`
shows them (CLI table and --json), and each `[edges.*]` limit, set low, stops the run
(or the delivery, or the MCP answer) with a reason naming the key, before anything
crosses."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from backchannel.config import ConfigError, load_settings, resolve_paths
from backchannel.memory import Store, edges, entities

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "backchannel" / "demo" / "corpus"
BASE = (
    '[owner]\nname = "Alex Moreau"\n[gate]\nquiet_hours = "off"\nmin_gap_minutes = 0\n'
    '[models]\ndraft = "scripted/{name}"\nretries = 0\n'
)
SIGNAL = {"id": "e1", "source": "drop", "title": "Acme publishes a tender"}
# One worker ingests the demo corpus once (`ingested`) for every test here.
pytestmark = pytest.mark.xdist_group("edges")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus ingested once (offline); each test starts from a copy of the file."""
    from backchannel.config import Settings
    from backchannel.extraction.ingest import ingest_file

    db = tmp_path_factory.mktemp("edges") / "memory.duckdb"
    s = Settings.model_validate({"owner": {"name": "Alex Moreau"}})
    with Store.open(db) as st:
        entities.ensure_owner(st, s.owner.name)
        for f in sorted(CORPUS.iterdir()):
            ingest_file(st, s, f)
    return db


@pytest.fixture
def scripted() -> Any:
    from tests.support.scripted_models import register_scripted, unregister_scripted

    name = "bc-edges"
    script = register_scripted(
        [
            {
                "match": "deserves to interrupt",
                "repeat": True,
                "content": {"worth_it": True, "score": 0.95, "reason": "tender + meeting"},
            },
            {
                "repeat": True,
                "content": {
                    "title": "Ask Marc about Sophie at Acme",
                    "body": "Marc worked with Sophie.",
                    "message": "Hi Marc, could you introduce me to Sophie?",
                },
            },
        ],
        name=name,
    )
    yield script
    unregister_scripted(name)


def _home(home: Path, ingested: Path, extra: str = "") -> tuple[Any, Any]:
    paths = resolve_paths().ensure()
    shutil.copy(ingested, paths.db_file)
    paths.config_file.write_text(BASE.format(name="bc-edges") + extra)
    return paths, load_settings(paths)


def _wake(store: Store, settings: Any, paths: Any, sid: str = "e1") -> Any:
    from backchannel.engine.pipeline import run_wake_once
    from backchannel.memory.calendar import upsert_events

    upsert_events(
        store,
        [
            {
                "uid": "m",
                "summary": "Coffee with Marc",
                "attendees": ["Marc Dupont"],
                "starts_at": (datetime.now(UTC) + timedelta(hours=30)).isoformat(),
            }
        ],
    )
    sig = {**SIGNAL, "id": sid, "published_at": datetime.now(UTC).isoformat()}
    return run_wake_once(store, settings, paths, {"kind": "signal", "key": f"signal:{sid}", "payload": sig})


def _trace(store: Store, settings: Any, paths: Any, ref: str) -> dict[str, Any]:
    from backchannel.ops import OpEnv, invoke

    return invoke(OpEnv(store=store, settings=settings, paths=paths), "trace", {"id": ref})


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "backchannel", *args], capture_output=True, text=True, env=env, timeout=120
    )


# -- the record ------------------------------------------------------------------


def test_a_wake_records_every_edge_and_trace_shows_the_table(home, ingested, scripted):
    from tests.support.delivery_support import start_smtp

    smtp = start_smtp()
    try:
        paths, s = _home(
            home,
            ingested,
            f'[delivery]\nchannels = ["email"]\n[delivery.email]\nhost = "127.0.0.1"\n'
            f'port = {smtp.port}\nsecurity = "none"\nsender = "bc@example.net"\n'
            'to = "owner@example.net"\n',
        )
        with Store.open(paths.db_file) as store:
            out = _wake(store, s, paths)
            assert out.status == "done" and len(out.proposals) == 1, out.to_dict()
            from backchannel.delivery import outbox

            [sent] = outbox.deliver_due(store, s, paths)
            assert sent.ok and len(smtp.messages) == 1
            rows = edges.for_run(store, out.run_id)
            assert [r["edge"] for r in rows] == ["program", "judge", "draft", "delivery"]
            program, judged, drafted, delivered = rows
            # The program: who ran, what it could reach and did, what it read, and the sweep's event.
            assert program["actor"] == "skill introductions" and program["target"] == "graph API"
            assert set(program["reached"]) <= set(program["may_reach"]) and program["reached"]
            assert program["spent"]["api_calls"] > 0 and program["spent"]["assertions_touched"] > 0
            assert program["bytes"] > 0 and program["outcome"] == "ok"
            [seq] = program["evidence"]["events"]
            assert store.scalar("SELECT kind FROM events WHERE seq = ?", [seq]) == "sweep.done"
            # The judge and the drafter: the scripted model, the excerpts and tokens, the audit rows.
            for r, actor in ((judged, "judge"), (drafted, "drafter")):
                assert r["actor"] == actor and r["target"] == "scripted/bc-edges" and r["reached"] == [r["target"]]
                assert r["excerpts"] == 2 and r["tokens"] > 0 and r["bytes"] > 0
                assert (
                    len(r["evidence"]["assertions"]) == 2 and r["dedupe_key"] and r["proposal_id"] == out.proposals[0]
                )
                ids = r["evidence"]["model_calls"]
                tokens = store.scalar(
                    "SELECT sum(prompt_tokens + completion_tokens) FROM model_calls WHERE list_contains(?, id)", [ids]
                )
                assert tokens == r["tokens"]
            assert store.scalar("SELECT count(*) FROM model_calls WHERE run_id = ?", [out.run_id]) == 2
            # The delivery: the channel, the message's size, the outbox row, the proposal's evidence.
            assert delivered["actor"] == "outbox" and delivered["target"] == "email" and delivered["outcome"] == "ok"
            assert delivered["bytes"] > 200 and delivered["excerpts"] >= 1
            assert store.scalar("SELECT status FROM outbox WHERE id = ?", delivered["evidence"]["outbox"]) == "sent"
            t = _trace(store, s, paths, out.proposals[0])
            assert [e["edge"] for e in t["edges"]] == ["program", "judge", "draft", "delivery"]
            assert [e["edge"] for e in _trace(store, s, paths, out.run_id)["edges"]] == [r["edge"] for r in rows]
            # A sweep judging several candidates: each judge call is its candidate's, none is another's.
            from backchannel.engine.pipeline import run_wake_once

            swept = run_wake_once(store, s, paths, {"kind": "manual", "key": "manual:e", "payload": {}})
            judged = [r for r in edges.for_run(store, swept.run_id) if r["edge"] == "judge"]
            assert len(judged) >= 2 and len({r["dedupe_key"] for r in judged}) == len(judged)
            assert None not in {r["dedupe_key"] for r in judged}
        shown = _cli("trace", out.proposals[0])
        assert shown.returncode == 0, shown.stderr
        table = shown.stdout[shown.stdout.index("edges:") :]
        assert re.search(r"program\s+skill introductions -> graph API\s+0 excerpts", table)
        assert re.search(r"draft\s+drafter -> scripted/bc-edges\s+2 excerpts, [\d.]+ k?B, \d+ tokens", table)
        assert re.search(r"delivery\s+outbox -> email", table) and "model call" in table and "outbox" in table
        as_json = json.loads(_cli("trace", out.proposals[0], "--json").stdout)
        assert [e["edge"] for e in as_json["edges"]] == ["program", "judge", "draft", "delivery"]
    finally:
        smtp.stop()


# -- each limit, set low, stops the run with its reason ---------------------------------

STOPS = [
    ("draft", "[edges.draft]\nmax_excerpts = 1\n", "2 evidence excerpts would cross; [edges.draft] max_excerpts = 1"),
    (
        "draft",
        '[edges.draft]\nmay_reach = ["ollama/*"]\n',
        'scripted/bc-edges is not in [edges.draft] may_reach = ["ollama/*"]',
    ),
    ("draft", "[edges.draft]\nmax_bytes = 100\n", "prompt bytes would cross; [edges.draft] max_bytes = 100"),
    ("judge", "[edges.judge]\nmax_tokens = 50\n", "[edges.judge] max_tokens = 50"),
    ("program", '[edges.program]\nmay_reach = ["me", "resolve"]\n', "is not in [edges.program] may_reach"),
    (
        "program",
        "[edges.program]\nmax_assertions = 1\n",
        "assertions touched would cross; [edges.program] max_assertions = 1",
    ),
    ("program", "[edges.program]\nmax_api_calls = 1\n", "2 API calls would cross; [edges.program] max_api_calls = 1"),
    ("program", "[edges.program]\nmax_bytes = 10\n", "answer bytes would cross; [edges.program] max_bytes = 10"),
]


@pytest.mark.parametrize(
    ("edge", "toml", "reason"), STOPS, ids=[f"{e}-{t.split(chr(10))[1].split(' ')[0]}" for e, t, _ in STOPS]
)
def test_a_limit_set_low_stops_the_run_with_its_reason(home, ingested, scripted, edge, toml, reason):
    paths, s = _home(home, ingested, toml)
    with Store.open(paths.db_file) as store:
        out = _wake(store, s, paths)
        assert out.status == "failed" and out.proposals == [], out.to_dict()
        assert f"stopped at edge {edge}" in out.reason and reason in out.reason
        run = store.query("SELECT status, reason FROM runs WHERE id = ?", [out.run_id])[0]
        assert run["status"] == "failed" and reason in run["reason"]  # what `status` and the run list show
        stopped = edges.stopped(store, out.run_id)
        assert stopped["edge"] == edge and reason in stopped["reason"]
        t = _trace(store, s, paths, out.run_id)
        assert reason in t["run"]["reason"] and any(e["outcome"] == "stopped" for e in t["edges"])
        [ev] = store.events(run_id=out.run_id, kind="edge.stopped")
        assert ev["data"]["edge"] == edge
        called = [c for c in scripted.calls]
        if edge == "program":
            assert called == []  # the run stopped before any model saw anything
        elif edge == "judge":
            assert (
                called == []
                and store.scalar(
                    "SELECT count(*) FROM model_calls WHERE run_id = ? AND outcome = 'budget_stopped'", [out.run_id]
                )
                == 1
            )
        else:  # the judge's call went out; the drafter's never did
            assert len(called) == 1 and "deserves to interrupt" in called[0].prompt
            assert stopped["reached"] == [] and stopped["tokens"] == 0


def test_a_program_cannot_catch_its_way_past_the_edge(home, ingested):
    """Generated code that swallows the refusal and keeps reading is refused at every later
    call, and the run still stops: the parent keeps the tally, not the program."""
    from backchannel.config import Settings
    from backchannel.graph.api import GraphAPI
    from backchannel.graph.edge_guard import GuardedAPI
    from backchannel.sandbox import run_program

    paths, _ = _home(home, ingested)
    s = Settings.model_validate({"edges": {"program": {"may_reach": ["me", "resolve"]}}})
    program = (
        "out = []\nfor step in ('Marc', 'Sophie', None):\n    try:\n"
        "        out.append(api.links(api.resolve(step)) if step else api.me())\n"
        "    except ApiError as e:\n        out.append(str(e))\nresult = out\n"
    )
    with Store.open(paths.db_file) as store:
        api = GuardedAPI(GraphAPI(store, s), s.edges.program)
        res = run_program(program, api, s.sandbox)
        assert res.ok, res.error
        assert all("edge program" in str(x) for x in res.result), res.result  # even api.me() once stopped
        assert api.stopped and "links is not in [edges.program] may_reach" in api.stopped
        assert api.calls == {"resolve": 1} and api.refused == 3


def test_a_delivery_over_its_limit_is_blocked_and_nothing_is_sent(home, ingested, scripted):
    from tests.support.delivery_support import start_smtp

    smtp = start_smtp()
    try:
        paths, s = _home(
            home,
            ingested,
            f'[delivery]\nchannels = ["email"]\n[delivery.email]\nhost = "127.0.0.1"\n'
            f'port = {smtp.port}\nsecurity = "none"\nsender = "bc@example.net"\n'
            'to = "owner@example.net"\n[edges.delivery]\nmax_bytes = 100\n',
        )
        with Store.open(paths.db_file) as store:
            out = _wake(store, s, paths)
            assert len(out.proposals) == 1
            from backchannel.delivery import outbox

            [res] = outbox.deliver_due(store, s, paths)
            assert res.blocked and not res.ok and "[edges.delivery] max_bytes = 100" in res.detail
            assert smtp.messages == []
            t = _trace(store, s, paths, out.proposals[0])
            assert t["delivery"][0]["status"] == "blocked" and "max_bytes" in t["delivery"][0]["last_error"]
            [d] = [e for e in t["edges"] if e["edge"] == "delivery"]
            assert d["outcome"] == "stopped" and d["reached"] == [] and d["bytes"] > 100
    finally:
        smtp.stop()


def test_the_mcp_edge_refuses_an_operation_and_an_answer_too_large(home, ingested):
    from backchannel.ops import OpEnv, OpError, invoke
    from backchannel.web.bridge import OpFailed, ThreadedOperations
    from backchannel.web.mcp_server import build_server

    paths, _ = _home(home, ingested, '[edges.mcp]\nmay_reach = ["search", "export_entity"]\nmax_excerpts = 7\n')
    s = load_settings(paths)

    class Ctx:
        settings = s

    with Store.open(paths.db_file) as store:

        def run(name: str, args: dict[str, Any]) -> Any:
            try:
                return invoke(OpEnv(store=store, settings=s, paths=paths), name, args)
            except OpError as exc:
                raise OpFailed(str(exc)) from None

        server = build_server(Ctx(), ThreadedOperations(run))

        async def steps() -> list[Any]:
            out = []
            for tool, args in (
                # six quotes under the limit (Sophie's are eight since the owner's "I've heard her name"
                # is kept as a knows_of), Marc's eight over it
                ("search_memory", {"query": "Globex"}),
                ("list_proposals", {}),
                ("about", {"name_or_id": "Marc Dupont"}),
            ):
                try:
                    out.append(await server.call_tool(tool, args))
                except Exception as exc:  # the SDK raises the ToolError for a direct call
                    out.append(exc)
            return out

        found, listed, about = asyncio.run(steps())
        assert not isinstance(found, Exception)
        assert "proposals is not in [edges.mcp] may_reach" in str(listed)
        assert "evidence quotes would cross; [edges.mcp] max_excerpts = 7" in str(about)
        rows = store.query("SELECT target, outcome, reason, excerpts, bytes FROM edges WHERE edge = 'mcp' ORDER BY id")
        assert [(r["target"], r["outcome"]) for r in rows] == [
            ("search", "ok"),
            ("proposals", "stopped"),
            ("export_entity", "stopped"),
        ]
        assert rows[0]["bytes"] > 0 and rows[2]["excerpts"] > 7


# -- config --------------------------------------------------------------------------


def test_the_edge_vocabularies_match_what_the_runtime_serves():
    from backchannel.config.edges import GRAPH_METHODS, MCP_OPERATIONS
    from backchannel.graph.api import API_METHODS

    assert GRAPH_METHODS == API_METHODS
    server = (ROOT / "backchannel" / "web" / "mcp_server.py").read_text()
    assert set(re.findall(r'call\("(\w+)"', server)) == set(MCP_OPERATIONS)


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("[edges.draft]\nmax_exerpts = 2\n", "unknown key 'edges.draft.max_exerpts' (did you mean 'max_excerpts'?)"),
        ("[edges.drfat]\nmax_tokens = 2\n", "unknown key 'edges.drfat' (did you mean 'draft'?)"),
        ('[edges.program]\nmay_reach = ["linkz"]\n', "edges.program.may_reach[0]: 'linkz' is not one of me, now"),
        ("[edges.judge]\nmax_tokens = -1\n", "edges.judge.max_tokens: Input should be greater than or equal to 0"),
        ('[edges.delivery]\nmay_reach = ["fax"]\n', "edges.delivery.may_reach[0]"),
        ('[edges.sweep]\nmay_reach = ["offline"]\n', "edges.sweep.may_reach[0]"),
        ("[edges.delivery]\nmax_tokens = 5\n", "unknown key 'edges.delivery.max_tokens'"),
    ],
)
def test_bad_edge_config_names_the_key_and_the_file(home, toml, says):
    paths = resolve_paths().ensure()
    paths.config_file.write_text(toml)
    with pytest.raises(ConfigError) as err:
        load_settings(paths)
    assert says in str(err.value) and str(paths.config_file) in str(err.value)


def test_ask_records_its_edges_and_stops_at_a_limit(home, ingested, scripted):
    from backchannel.ops import OpEnv, invoke

    paths, s = _home(home, ingested)
    question = "who can introduce me to the CIO of Acme?"
    with Store.open(paths.db_file) as store:
        env = OpEnv(store=store, settings=s, paths=paths)
        ok = invoke(env, "ask", {"question": question})
        assert ok["status"] == "done" and ok["candidates"]
        rows = edges.for_run(store, ok["run_id"])
        assert [r["edge"] for r in rows] == ["program"] + ["draft"] * len(ok["candidates"])
        assert all(r["outcome"] == "ok" for r in rows) and rows[0]["spent"]["api_calls"] > 0
        low = s.model_copy(
            update={
                "edges": s.edges.model_copy(
                    update={"program": s.edges.program.model_copy(update={"may_reach": ["me"]})}
                )
            }
        )
        stopped = invoke(OpEnv(store=store, settings=low, paths=paths), "ask", {"question": question})
        assert stopped["status"] == "failed" and stopped["candidates"] == []
        assert "is not in [edges.program] may_reach" in stopped["why_nothing"]
        run = store.query("SELECT status, reason FROM runs WHERE id = ?", [stopped["run_id"]])[0]
        assert run["status"] == "failed" and "stopped at edge program" in run["reason"]
        assert len(scripted.calls) == len(ok["candidates"])  # the stopped ask drafted nothing

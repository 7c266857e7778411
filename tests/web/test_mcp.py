"""`backchannel mcp` driven by the MCP SDK's own client over stdio, on the demo's story:
the tools and resources an assistant sees, answers with evidence, feedback
only behind its switch, nothing that can send, and nothing about a forgotten person."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.web_support import story_home, subprocess_env

READ_TOOLS = {"search_memory", "about", "ask", "list_proposals"}


async def _session(home: Path, steps: Any) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "backchannel", "mcp"], env=subprocess_env(home))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await steps(session)


def run_session(home: Path, steps: Any) -> Any:
    return asyncio.run(asyncio.wait_for(_session(home, steps), 240))


def _json(result: Any) -> Any:
    assert not result.isError, result.content
    if result.structuredContent is not None:
        sc = result.structuredContent
        return sc["result"] if set(sc) == {"result"} else sc
    return json.loads(result.content[0].text)


def test_tools_and_resources_answer_with_evidence_and_nothing_can_send(home):
    ids = story_home(home)

    async def steps(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        found = _json(await s.call_tool("search_memory", {"query": "Sophie"}))
        about = _json(await s.call_tool("about", {"name_or_id": "Marc Dupont"}))
        asked = _json(await s.call_tool("ask", {"question": "who can introduce me to the CIO of Acme?"}))
        listed = _json(await s.call_tool("list_proposals", {}))
        refused = await s.call_tool("give_feedback", {"proposal_id": ids[0], "verdict": "dismiss"})
        missing = await s.call_tool("about", {"name_or_id": "Nobody Atall"})
        resources = {str(r.uri) for r in (await s.list_resources()).resources}
        templates = {t.uriTemplate for t in (await s.list_resource_templates()).resourceTemplates}
        one = await s.read_resource(f"backchannel://proposals/{ids.intro}")
        ents = await s.read_resource("backchannel://entities")
        return tools, found, about, asked, listed, refused, missing, resources, templates, one, ents

    tools, found, about, asked, listed, refused, missing, resources, templates, one, ents = run_session(home, steps)
    assert set(tools) == READ_TOOLS  # no feedback tool without the switch, and never anything that sends
    assert not any(w in name for name in tools for w in ("approve", "send", "deliver", "mail"))
    assert tools["search_memory"].annotations.readOnlyHint is True
    assert "Sophie Martin" in {e["name"] for e in found["entities"]}
    assert any("Sophie" in a["quote"] for a in found["assertions"])
    assert about["entity"]["name"] == "Marc Dupont"
    fact = next(f for f in about["current_facts"] if "Sophie Martin" in f["statement"])
    assert fact["quote"] and fact["speaker"] and fact["said_at"]  # evidence: verbatim, attributed, dated
    assert asked["candidates"], asked
    assert "Marc Dupont" in json.dumps(asked["candidates"])
    assert asked["candidates"][0]["evidence"]
    assert [p["id"] for p in listed] == list(reversed(ids))
    assert refused.isError  # the tool does not exist
    assert missing.isError and "Nobody Atall" in missing.content[0].text
    assert {"backchannel://proposals", "backchannel://entities"} <= resources
    assert {"backchannel://proposals/{proposal_id}", "backchannel://entities/{entity_id}"} <= templates
    shown = json.loads(one.contents[0].text)
    assert shown["id"] == ids.intro and shown["evidence"] and shown["action"]["to"] == "marc@example.org"
    assert "Marc Dupont" in {e["name"] for e in json.loads(ents.contents[0].text)}


def test_feedback_tool_only_behind_its_switch_and_it_records_a_dismissal(home):
    ids = story_home(home, "[mcp]\nallow_feedback = true\n")

    async def steps(s):
        tools = {t.name for t in (await s.list_tools()).tools}
        dismissed = _json(
            await s.call_tool(
                "give_feedback", {"proposal_id": ids[-1], "verdict": "dismiss", "reason": "not now", "scope": "this"}
            )
        )
        bad = await s.call_tool("give_feedback", {"proposal_id": ids[-1], "verdict": "approve"})
        listed = _json(await s.call_tool("list_proposals", {"status": "dismissed"}))
        return tools, dismissed, bad, listed

    tools, dismissed, bad, listed = run_session(home, steps)
    assert tools == READ_TOOLS | {"give_feedback"}
    assert dismissed["status"] == "dismissed"
    assert bad.isError  # approve is not a verdict the MCP server knows
    assert [p["id"] for p in listed] == [ids[-1]]
    trace = subprocess.run(
        [sys.executable, "-m", "backchannel", "trace", ids[-1], "--json"],
        env=subprocess_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert trace.returncode == 0, trace.stderr
    [fb] = json.loads(trace.stdout)["feedback"]
    assert fb["verdict"] == "dismiss" and fb["via"] == "mcp" and fb["reason"] == "not now"


def test_a_forgotten_person_is_in_no_answer(home):
    story_home(home)
    forget = subprocess.run(
        [sys.executable, "-m", "backchannel", "forget", "Marc Dupont", "--yes"],
        env=subprocess_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert forget.returncode == 0, forget.stderr

    async def steps(s):
        out = [
            await s.call_tool("search_memory", {"query": "Marc"}),
            await s.call_tool("search_memory", {"query": "Dupont"}),
            await s.call_tool("list_proposals", {}),
            await s.call_tool("about", {"name_or_id": "Sophie Martin"}),
            await s.call_tool("ask", {"question": "who can introduce me to the CIO of Acme?"}),
        ]
        gone = await s.call_tool("about", {"name_or_id": "Marc Dupont"})
        res = [await s.read_resource("backchannel://proposals"), await s.read_resource("backchannel://entities")]
        return out, gone, res

    out, gone, res = run_session(home, steps)
    assert gone.isError
    answers = [
        {k: v for k, v in _json(r).items() if k != "query"} if isinstance(_json(r), dict) else _json(r) for r in out
    ] + [json.loads(r.contents[0].text) for r in res]
    text = json.dumps(answers)
    assert not re.search(r"\bMarc\b|Dupont", text), re.search(r".{80}(\bMarc\b|Dupont).{80}", text).group(0)
    assert _json(out[1]) == {"query": "Dupont", "entities": [], "assertions": []}
    assert "Sophie Martin" in text  # the rest of the memory still answers


def test_streamable_http_on_loopback_needs_the_api_token(home):
    import urllib.error
    import urllib.request

    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    ids = story_home(home, sweep=False)
    log = home / "mcp.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "backchannel", "mcp", "--http", "--port", "0"],
            env=subprocess_env(home),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        from tests.support.delivery_support import wait_for

        url = wait_for(
            lambda: (m := re.search(r"at (http://\S+/mcp)", log.read_text())) and m.group(1), what="the MCP HTTP server"
        )
        token = (home / "state" / "api.token").read_text().strip()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(
                urllib.request.Request(url, data=b"{}", method="POST", headers={"Content-Type": "application/json"}),
                timeout=30,
            )
        assert refused.value.code == 401

        async def steps():
            async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    return (
                        {t.name for t in (await s.list_tools()).tools},
                        _json(await s.call_tool("list_proposals", {})),
                    )

        tools, listed = asyncio.run(asyncio.wait_for(steps(), 120))
        assert tools == READ_TOOLS
        assert [p["id"] for p in listed] == list(reversed(ids))
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_server_says_its_own_version_and_an_empty_list_is_an_empty_json_list(home):
    from importlib.metadata import version

    from click.testing import CliRunner

    from backchannel.cli.main import cli

    assert CliRunner().invoke(cli, ["init", "--name", "Alex Moreau"]).exit_code == 0

    async def _initialized(home: Path) -> Any:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable, args=["-m", "backchannel", "mcp"], env=subprocess_env(home)
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                return init, await session.call_tool("list_proposals", {})

    init, listed = asyncio.run(asyncio.wait_for(_initialized(home), 240))
    assert init.serverInfo.name == "backchannel"
    assert init.serverInfo.version == version("backchannel") != version("mcp")
    assert not listed.isError and [c.text for c in listed.content] == ["[]"]
    assert listed.structuredContent == {"result": []}

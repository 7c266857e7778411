"""`backchannel mcp`: the memory for the assistant a person already uses, over MCP
(the official Python SDK's FastMCP), on stdio or streamable HTTP on loopback.

Tools: search_memory, about (everything on a person or organisation, with evidence),
ask (the same `ask` operation as the CLI), list_proposals; give_feedback only when
`[mcp] allow_feedback = true` (accept, dismiss, snooze: never approve). Resources:
proposals and entities. Nothing here can send a message: no tool or resource reaches
`approve`, a delivery or the outbox. Every call is an operation run the way the CLI
runs it (cli.client.web_operations, handed in), so `forget` and every privacy rule apply unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from backchannel.core.ties import link_words
from backchannel.web.bridge import OpFailed

INSTRUCTIONS = (
    "backchannel is the user's memory of their meetings: dated, attributed assertions with verbatim quotes, "
    "and proposals it made on its own. Search it, read everything about a person or organisation, ask a "
    "question (a program walks the graph and answers with evidence), or list proposals. Quote evidence with "
    "its speaker and date. Nothing here sends a message."
)
MAX_ITEMS = 200  # per list in one answer: an assistant's context is not a database dump


def _fact(a: dict[str, Any]) -> dict[str, Any]:
    """One assertion as an assistant should read it: the statement, then its evidence."""
    obj = a.get("object") or a.get("object_literal") or ""
    return {
        "assertion_id": a["id"],
        "statement": " ".join(x for x in (a["subject"], link_words(a["predicate"], a.get("stance")), obj) if x),
        "quote": a["quote"],
        "speaker": a.get("speaker"),
        "said_at": a.get("said_at"),
        "valid_from": a.get("valid_from"),
        "valid_to": a.get("valid_to"),
        "superseded_at": a.get("superseded_at"),
        "modality": a.get("modality"),
        "stance": a.get("stance") or "asserted",
        "source_id": a.get("source_id"),
    }


def about_entity(data: dict[str, Any]) -> dict[str, Any]:
    """export_entity, shaped for an assistant: current facts, superseded ones, what they said."""
    me = data["entity"]["id"]
    about = [a for a in data["assertions"] if me in (a["subject_id"], a["object_id"])]
    said = [a for a in data["assertions"] if a["speaker_id"] == me and me not in (a["subject_id"], a["object_id"])]
    current = [_fact(a) for a in about if not a["superseded_at"]]
    superseded = [_fact(a) for a in about if a["superseded_at"]]
    return {
        "entity": data["entity"],
        "aliases": sorted({a["alias"] for a in data["aliases"]}),
        "current_facts": current[:MAX_ITEMS],
        "superseded_facts": superseded[:MAX_ITEMS],
        "said_about_others": [_fact(a) for a in said][:MAX_ITEMS],
        "utterances_spoken": len(data["utterances"]),
        "proposals": data["proposals"][:MAX_ITEMS],
        "truncated": max(len(current), len(superseded), len(said), len(data["proposals"])) > MAX_ITEMS,
    }


def json_list(rows: list[dict[str, Any]]) -> Any:
    """A list as one JSON text (and as structured content): FastMCP would send one text per
    item, so an empty list would answer nothing at all instead of `[]`."""
    import json

    from mcp.types import CallToolResult, TextContent

    text = json.dumps(rows, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structuredContent={"result": rows})


def package_version() -> str:
    """The installed backchannel's version (its metadata), else the source tree's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("backchannel")
    except PackageNotFoundError:
        from backchannel import __version__

        return __version__


def build_server(ctx: Any, ops: Any, **fastmcp_args: Any) -> Any:
    """`ops` runs the operations (cli.client.web_operations); `ctx` gives the settings."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = FastMCP("backchannel", instructions=INSTRUCTIONS, **fastmcp_args)
    # The SDK reports its own version unless the server has one: clients see ours.
    server._mcp_server.version = package_version()
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

    async def call(name: str, **args: Any) -> Any:
        from backchannel.web.mcp_edge import cross

        try:
            return await cross(ops, ctx.settings, name, args)  # the MCP edge: limits, and its record
        except OpFailed as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=read_only)
    async def search_memory(query: str, limit: int = 20) -> dict[str, Any]:
        """Find people and organisations by name or alias, and statements whose quote mentions the text."""
        found = await call("search", query=query, limit=max(1, min(limit, MAX_ITEMS)))
        return {
            "query": found["query"],
            "entities": found["entities"],
            "assertions": [_fact(a) | {"source_title": a.get("source_title")} for a in found["assertions"]],
        }

    @server.tool(annotations=read_only)
    async def about(name_or_id: str) -> dict[str, Any]:
        """Everything held about one person or organisation (a name, an alias or an id): current and
        superseded facts with verbatim quotes, speakers and dates; aliases; proposals about them."""
        return about_entity(await call("export_entity", ref=name_or_id, reader="mcp"))

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False))
    async def ask(question: str) -> dict[str, Any]:
        """Ask the memory a question ("who can introduce me to the CIO of Acme?"): a program walks the
        graph in the sandbox; ranked answers come back with their evidence. Records a run; sends nothing."""
        out = await call("ask", question=question, reader="mcp")
        keep = (
            "run_id",
            "question",
            "skill",
            "candidates",
            "why_nothing",
            "errors",
            "status",
            "assertions_touched",
            "excerpts_sent",
        )
        return {k: out.get(k) for k in keep}

    @server.tool(annotations=read_only)
    async def list_proposals(status: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """Proposals the daemon made, newest first; status filters (pending, delivered, accepted,
        dismissed, snoozed, approved, sent, expired)."""
        return json_list(await call("proposals", status=status, limit=max(1, min(limit, MAX_ITEMS))))

    if ctx.settings.mcp.allow_feedback:

        @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False))
        async def give_feedback(
            proposal_id: str,
            verdict: Literal["accept", "dismiss", "snooze"],
            reason: str | None = None,
            scope: Literal["this", "entity", "kind"] = "this",
            until: str | None = None,
        ) -> dict[str, Any]:
            """Answer a proposal for the user: accept, dismiss (reason and scope teach what not to propose
            again; until = YYYY-MM-DD limits it), or snooze until a date. Approving a draft, which sends it,
            is only possible in the CLI or the web app."""
            if verdict == "accept":
                return await call("accept", id=proposal_id, via="mcp")
            if verdict == "snooze":
                return await call("snooze", id=proposal_id, until=until, via="mcp")
            return await call("dismiss", id=proposal_id, reason=reason, scope=scope, until=until, via="mcp")

    @server.resource("backchannel://proposals", mime_type="application/json")
    async def proposals_resource() -> list[dict[str, Any]]:
        """The latest proposals (id, title, kind, status, score)."""
        return await call("proposals", limit=MAX_ITEMS)

    @server.resource("backchannel://proposals/{proposal_id}", mime_type="application/json")
    async def proposal_resource(proposal_id: str) -> dict[str, Any]:
        """One proposal: why now, the verbatim evidence, the message, the draft (which only the user can approve)."""
        return await call("proposal", id=proposal_id)

    @server.resource("backchannel://entities", mime_type="application/json")
    async def entities_resource() -> list[dict[str, Any]]:
        """Every person, organisation and role in memory, with aliases and how much is known."""
        return (await call("entities"))[:5000]

    @server.resource("backchannel://entities/{entity_id}", mime_type="application/json")
    async def entity_resource(entity_id: str) -> dict[str, Any]:
        """Everything about one entity, as the `about` tool returns it."""
        return about_entity(await call("export_entity", ref=entity_id, reader="mcp"))

    return server


def serve_stdio(ctx: Any, ops: Any) -> None:
    build_server(ctx, ops, log_level="WARNING").run("stdio")


def serve_http(ctx: Any, ops: Any, host: str, port: int, token: str) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp; every request needs `Authorization: Bearer
    <api token>` (the TCP port is open to every local user; the memory is not)."""
    import sys

    import uvicorn

    from backchannel.web.http_limits import MAX_TCP_CONNECTIONS, Limits
    from backchannel.web.server import base_url, bind, config

    sock = bind(host, port)
    # Stateless JSON answers: each request stands alone (no session or event stream to keep open).
    server = build_server(
        ctx, ops, log_level="WARNING", host=host, port=sock.getsockname()[1], stateless_http=True, json_response=True
    )
    app = BearerGuard(server.streamable_http_app(), token)
    print(
        f"backchannel MCP (streamable HTTP) at {base_url(sock)}/mcp; send Authorization: Bearer "
        f"<the token in {ctx.paths.api_token_file}>",
        file=sys.stderr,
        flush=True,
    )
    try:
        # The local server's head limits and connection cap; FastMCP starts its session manager in the lifespan.
        uvicorn.Server(config(app, Limits(max_connections=MAX_TCP_CONNECTIONS), lifespan="auto")).run(sockets=[sock])
    finally:
        sock.close()


class BearerGuard:
    """ASGI: refuse any HTTP request without the API token as its bearer token."""

    def __init__(self, app: Any, token: str):
        self.app, self.token = app, token

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        from backchannel.web.local_api import bearer_ok  # the local API's own check

        if scope["type"] == "http":
            auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
            if not bearer_ok(auth, self.token):
                body = b'{"error": "missing or wrong bearer token"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

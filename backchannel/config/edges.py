"""The [edges.*] tables of config.toml: limits on each consequential edge, enforced by the
runtime at the edge (never asked of a model). Every edge is recorded whether or not it
has limits (table `edges`, `backchannel trace`); a limit crossed stops the edge and the
run with the reason (docs/config.md, docs/privacy.md).

    program        a sweep's program -> the graph API (the sandbox's RPC)
    sweep, draft,  an agent role -> its model (the gateway)
    judge, extract,
    resolve
    delivery       the outbox -> a channel (email, slack, webhook, apprise) or an approved action
    mcp            an MCP client -> the operations behind its tools

A limit left out (None) is no limit; 0 lets nothing of that kind cross."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import AfterValidator, Field

from backchannel.config.sections import Channel, Count, Section, Size
from backchannel.core.vocabulary import API_METHODS

# The graph API's methods (core.vocabulary.API_METHODS, served by graph/api.py).
if TYPE_CHECKING:
    GraphMethod = str
else:
    GraphMethod = Literal[API_METHODS]
# The operations the MCP server's tools and resources call (web/mcp_server.py; tested the same way).
McpOperation = Literal[
    "search", "export_entity", "ask", "proposals", "proposal", "entities", "accept", "snooze", "dismiss"
]
DeliveryTarget = Channel | Literal["action"]  # "action": an approved message to its recipient
MODEL_EDGES = ("sweep", "draft", "judge", "extract", "resolve")


def _model_pattern(v: str) -> str:
    """A litellm model string, or a shell pattern over them ("ollama/*")."""
    name = v.strip()
    if not name or any(c.isspace() for c in name):
        raise ValueError(f'{v!r} is not a model or a pattern such as "ollama/*"')
    if name == "offline":
        raise ValueError('"offline" is not a model an edge reaches (offline work crosses no model edge)')
    return name


ModelPattern = Annotated[str, AfterValidator(_model_pattern)]


class ProgramEdge(Section):
    """A sweep's program (a prepared skill or generated code) reading through the graph API."""

    may_reach: list[GraphMethod] | None = None  # the API methods it may call; None: all of them
    max_api_calls: Size | None = None  # per sweep, every program of it together
    max_assertions: Count | None = None  # assertions its calls may touch, per sweep
    max_bytes: Count | None = None  # bytes of API answers that may reach the program, per sweep


class ModelEdge(Section):
    """An agent role calling its model through the gateway."""

    may_reach: list[ModelPattern] | None = None  # models (or patterns) it may call; None: its configured chain
    max_excerpts: Count | None = None  # evidence excerpts one call may carry
    max_tokens: Count | None = None  # tokens (prompt + completion) of this role per run
    max_bytes: Count | None = None  # bytes of one call's prompt


class DeliveryEdge(Section):
    """The outbox sending a proposal to a channel, or an approved action to its recipient."""

    may_reach: list[DeliveryTarget] | None = None  # None: every configured channel, and approved actions
    max_excerpts: Count | None = None  # evidence quotes one message may carry
    max_bytes: Count | None = None  # bytes of one message


class McpEdge(Section):
    """An MCP client reading (or, with [mcp] allow_feedback, answering) through the operations."""

    may_reach: list[McpOperation] | None = None  # None: every operation the tools call
    max_excerpts: Count | None = None  # quotes one answer may carry
    max_bytes: Count | None = None  # bytes of one answer


class EdgeSettings(Section):
    program: ProgramEdge = Field(default_factory=ProgramEdge)
    sweep: ModelEdge = Field(default_factory=ModelEdge)
    draft: ModelEdge = Field(default_factory=ModelEdge)
    judge: ModelEdge = Field(default_factory=ModelEdge)
    extract: ModelEdge = Field(default_factory=ModelEdge)
    resolve: ModelEdge = Field(default_factory=ModelEdge)
    delivery: DeliveryEdge = Field(default_factory=DeliveryEdge)
    mcp: McpEdge = Field(default_factory=McpEdge)

    def model(self, role: str) -> ModelEdge:
        """The limits of a model role's edge (every gateway role has one)."""
        return getattr(self, role) if role in MODEL_EDGES else ModelEdge()


GRAPH_METHODS: tuple[str, ...] = API_METHODS
MCP_OPERATIONS: tuple[str, ...] = get_args(McpOperation)

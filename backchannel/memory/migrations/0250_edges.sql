-- The governed edges: one row each time something crossed (or was stopped at) a
-- consequential boundary: a program's reads through the graph API, an agent's call to a
-- model, a delivery to a channel, an MCP client's call to an operation. Who acted, what
-- it could reach, what it reached, what crossed and what it spent, and the ids of the
-- records that survive it (events, model_calls, outbox, assertions). memory/edges.py
-- owns it; the limits are [edges.*] in config.toml (docs/config.md).

CREATE SEQUENCE edge_ids START 1;

CREATE TABLE edges (
    id           BIGINT PRIMARY KEY DEFAULT nextval('edge_ids'),
    run_id       VARCHAR,                -- NULL: an MCP call outside any run
    edge         VARCHAR NOT NULL,       -- program, sweep, draft, judge, extract, resolve, delivery, mcp
    actor        VARCHAR NOT NULL,       -- who acted: 'skill introductions', 'drafter', 'outbox', 'mcp client'
    target       VARCHAR NOT NULL,       -- what it reached: 'graph API', a model string, a channel, an operation
    may_reach    VARCHAR[] NOT NULL,     -- what it could reach (the configured may_reach, or all of its kind)
    reached      VARCHAR[] NOT NULL,     -- what it did reach: API methods, models, the channel, the operation
    excerpts     INTEGER NOT NULL DEFAULT 0,  -- evidence quotes that crossed
    bytes        BIGINT NOT NULL DEFAULT 0,   -- bytes that crossed (the prompt, the message, the answer)
    tokens       BIGINT NOT NULL DEFAULT 0,   -- model tokens, prompt and completion
    spent        JSON,                   -- {cost_usd, calls, attempts, api_calls, cpu_s, ...}
    evidence     JSON,                   -- {events: [seq], model_calls: [id], outbox: [id], assertions: [id]}
    dedupe_key   VARCHAR,                -- the candidate it served, when one
    proposal_id  VARCHAR,
    outcome      VARCHAR NOT NULL CHECK (outcome IN ('ok', 'failed', 'stopped')),
    reason       VARCHAR,                -- why it failed or was stopped
    created_at   TIMESTAMP NOT NULL      -- naive UTC
);

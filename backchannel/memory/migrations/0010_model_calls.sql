-- Every model call attempt the gateway makes (including failures and budget
-- stops), for audit, `backchannel usage` and the budgets checked before each call.

CREATE SEQUENCE model_call_ids START 1;

CREATE TABLE model_calls (
    id                 BIGINT PRIMARY KEY DEFAULT nextval('model_call_ids'),
    run_id             VARCHAR,
    role               VARCHAR NOT NULL,   -- extract, sweep, draft, judge, resolve
    model              VARCHAR NOT NULL,   -- the litellm model string actually called
    attempt            INTEGER NOT NULL DEFAULT 1,  -- 1-based, per model within one complete()
    repair             BOOLEAN NOT NULL DEFAULT false,  -- the one repair attempt after invalid output
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    cost_usd           DOUBLE,             -- litellm's price map; NULL when unknown
    latency_ms         INTEGER,
    outcome            VARCHAR NOT NULL CHECK (outcome IN
                         ('ok', 'invalid_output', 'rate_limited', 'timeout', 'error', 'budget_stopped')),
    error              VARCHAR,
    prompt_hash        VARCHAR NOT NULL,   -- sha256 of the canonical messages, first 16 hex
    created_at         TIMESTAMP NOT NULL  -- naive UTC
);

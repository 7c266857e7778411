-- Delivery and feedback: the outbox (one row per proposal x channel, unique
-- idempotency key), the user's verdicts, structured suppressions and the
-- rejection memory's embeddings.

CREATE SEQUENCE outbox_ids START 1;
CREATE SEQUENCE feedback_ids START 1;
CREATE SEQUENCE suppression_ids START 1;

CREATE TABLE outbox (
    id               BIGINT PRIMARY KEY DEFAULT nextval('outbox_ids'),
    idem_key         VARCHAR NOT NULL UNIQUE,  -- 'P-7:email', 'P-7:slack:r1' (after a snooze), 'action:P-7:<hash>'
    proposal_id      VARCHAR NOT NULL,
    channel          VARCHAR NOT NULL,         -- email, slack, webhook, apprise, action
    status           VARCHAR NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'blocked', 'cancelled')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMP NOT NULL,
    last_error       VARCHAR,
    message_id       VARCHAR,                  -- derived from idem_key: a re-send carries the same one
    payload_hash     VARCHAR,                  -- for 'action': the approved sha256
    claimed_by       VARCHAR,                  -- the process that marked it 'sending'
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL,
    sent_at          TIMESTAMP
);

CREATE TABLE feedback (
    id           BIGINT PRIMARY KEY DEFAULT nextval('feedback_ids'),
    proposal_id  VARCHAR NOT NULL,
    verdict      VARCHAR NOT NULL CHECK (verdict IN ('dismiss', 'accept', 'snooze', 'approve')),
    reason       VARCHAR,
    scope        VARCHAR,                      -- dismiss: this | entity | kind
    until        TIMESTAMP,                    -- dismiss/snooze: when it lapses
    action       JSON,                         -- approve: the exact payload approved
    action_hash  VARCHAR,                      -- approve: sha256 of the canonical payload
    via          VARCHAR NOT NULL,             -- cli, link, api
    created_at   TIMESTAMP NOT NULL
);

CREATE TABLE suppressions (
    id           BIGINT PRIMARY KEY DEFAULT nextval('suppression_ids'),
    scope        VARCHAR NOT NULL CHECK (scope IN ('this', 'entity', 'kind')),
    proposal_id  VARCHAR,                      -- the dismissed proposal it came from
    kind         VARCHAR,                      -- this, kind: the proposal kind
    entity_ids   BIGINT[] NOT NULL DEFAULT [], -- this: the sorted entity ids; entity: the one suppressed entity
    reason       VARCHAR,
    until        TIMESTAMP,                    -- NULL: for good
    feedback_id  BIGINT,
    created_at   TIMESTAMP NOT NULL,
    lifted_at    TIMESTAMP
);

CREATE TABLE rejection_embeddings (
    proposal_id  VARCHAR PRIMARY KEY,
    kind         VARCHAR NOT NULL,
    entity_ids   BIGINT[] NOT NULL DEFAULT [],
    text         VARCHAR NOT NULL,             -- what was embedded: title + body
    vector       FLOAT[384],                   -- NULL until the rejection memory embeds it
    reason       VARCHAR,
    dismissed_at TIMESTAMP NOT NULL,
    until        TIMESTAMP
);

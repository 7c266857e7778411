-- Runs (one per wake) and proposals. Steps of a run go to the event log
-- (events.run_id) with idempotency keys; this table is the run's header.

CREATE TABLE runs (
    id            VARCHAR PRIMARY KEY,   -- 'R' + time-ordered hex
    wake_kind     VARCHAR NOT NULL,      -- sweep, inbox, meeting_soon, signal, ask, manual
    wake_key      VARCHAR,               -- the wake's idempotency key
    wake_payload  JSON,
    status        VARCHAR NOT NULL CHECK (status IN ('running', 'done', 'failed', 'closed', 'budget_stopped')),
    reason        VARCHAR,               -- why it failed or was closed
    started_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP,
    assertions_touched BIGINT NOT NULL DEFAULT 0,
    excerpts_sent INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE proposals (
    id            VARCHAR PRIMARY KEY,   -- 'P-' + number, as users type it
    run_id        VARCHAR NOT NULL,
    dedupe_key    VARCHAR NOT NULL,      -- kind + sorted entity ids
    kind          VARCHAR NOT NULL,      -- introduction, brief, reconnect, commitment, ...
    entity_ids    BIGINT[] NOT NULL,
    title         VARCHAR NOT NULL,
    body          VARCHAR NOT NULL,      -- what the user reads
    score         DOUBLE NOT NULL,
    why           VARCHAR,
    evidence      JSON NOT NULL,         -- [{assertion_id, quote, speaker, said_at, source_id}]
    action        JSON,                  -- the outbound payload to approve, if any: {channel, to, subject, body}
    action_hash   VARCHAR,               -- sha256 of the canonical action JSON; approval binds to it
    status        VARCHAR NOT NULL CHECK (status IN ('pending', 'delivered', 'accepted', 'dismissed', 'snoozed', 'approved', 'sent', 'expired')),
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);

CREATE SEQUENCE proposal_numbers START 1;

-- Upcoming meetings (from calendars) and external signals (feeds, drop folder).
CREATE TABLE calendar_events (
    uid           VARCHAR NOT NULL,
    starts_at     TIMESTAMP NOT NULL,    -- UTC
    ends_at       TIMESTAMP,
    summary       VARCHAR,
    location      VARCHAR,
    attendees     VARCHAR[] NOT NULL DEFAULT [],      -- names or emails as written
    attendee_ids  BIGINT[] NOT NULL DEFAULT [],       -- resolved entities
    calendar      VARCHAR,
    seen_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (uid, starts_at)
);

CREATE TABLE signals (
    id            VARCHAR PRIMARY KEY,   -- hash of feed + guid/link
    source        VARCHAR NOT NULL,      -- feed URL or drop file
    title         VARCHAR NOT NULL,
    summary       VARCHAR,
    url           VARCHAR,
    published_at  TIMESTAMP,
    org_ids       BIGINT[] NOT NULL DEFAULT [],       -- organisations in memory it mentions
    seen_at       TIMESTAMP NOT NULL
);

-- Core memory: sources, utterances, entities with aliases and merge log,
-- assertions with evidence, and the append-only event log.

CREATE SEQUENCE entity_ids START 1;
CREATE SEQUENCE assertion_ids START 1;
CREATE SEQUENCE merge_ids START 1;
CREATE SEQUENCE event_seq START 1;

CREATE TABLE sources (
    id                  VARCHAR PRIMARY KEY,      -- 'S' + first 12 hex of content_hash
    content_hash        VARCHAR NOT NULL UNIQUE,  -- sha256 of the normalised utterances
    path                VARCHAR,
    title               VARCHAR,
    format              VARCHAR NOT NULL,         -- vtt, srt, text, json, import
    meeting_date        TIMESTAMP,
    meeting_date_origin VARCHAR,                  -- front_matter, json, vtt_note, filename, mtime, import
    participants        VARCHAR[] NOT NULL DEFAULT [],
    utterance_count     INTEGER NOT NULL DEFAULT 0,
    assertion_count     INTEGER NOT NULL DEFAULT 0,
    extractor           VARCHAR,
    ingested_at         TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE utterances (
    source_id    VARCHAR NOT NULL,
    idx          INTEGER NOT NULL,
    speaker      VARCHAR,          -- the label as written in the file
    speaker_id   BIGINT,           -- resolved entity, when known
    start_s      DOUBLE,           -- offsets into the recording, seconds
    end_s        DOUBLE,
    text         VARCHAR NOT NULL,
    PRIMARY KEY (source_id, idx)
);

CREATE TABLE entities (
    id           BIGINT PRIMARY KEY DEFAULT nextval('entity_ids'),
    kind         VARCHAR NOT NULL CHECK (kind IN ('person', 'organisation', 'role')),
    name         VARCHAR NOT NULL,
    norm         VARCHAR NOT NULL,  -- casefolded, accents stripped, spaces collapsed
    is_owner     BOOLEAN NOT NULL DEFAULT false,
    merged_into  BIGINT,            -- set when merged away; rows are never deleted by a merge
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE aliases (
    entity_id    BIGINT NOT NULL,
    alias        VARCHAR NOT NULL,
    norm         VARCHAR NOT NULL,
    source_id    VARCHAR,           -- where it was seen first, if from a transcript
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (entity_id, norm)
);

CREATE TABLE entity_merges (
    id           BIGINT PRIMARY KEY DEFAULT nextval('merge_ids'),
    kept_id      BIGINT NOT NULL,
    merged_id    BIGINT NOT NULL,
    method       VARCHAR NOT NULL,  -- exact, alias, fuzzy, embedding, model, user
    score        DOUBLE,
    reason       VARCHAR,
    moved        JSON,              -- what moved, so that a split can undo it exactly
    merged_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    undone_at    TIMESTAMP
);

CREATE TABLE assertions (
    id              BIGINT PRIMARY KEY DEFAULT nextval('assertion_ids'),
    subject_id      BIGINT NOT NULL,
    predicate       VARCHAR NOT NULL,
    object_id       BIGINT,           -- an entity, or
    object_literal  VARCHAR,          -- a literal value
    qualifier       VARCHAR,          -- e.g. the title for works_at ("CIO"), the org for worked_with
    speaker_id      BIGINT,           -- who said it; distinct from the subject
    said_at         TIMESTAMP,
    valid_from      DATE,
    valid_to        DATE,
    recorded_at     TIMESTAMP NOT NULL DEFAULT current_timestamp,
    superseded_at   TIMESTAMP,
    superseded_by   BIGINT,
    confidence      DOUBLE NOT NULL DEFAULT 0.5,
    modality        VARCHAR NOT NULL CHECK (modality IN ('stated', 'reported', 'commitment', 'opinion')),
    source_id       VARCHAR,
    utterance_idx   INTEGER,
    span_start      INTEGER,          -- character span of quote within the utterance text
    span_end        INTEGER,
    quote           VARCHAR,          -- verbatim
    date_phrase     VARCHAR,          -- the words the dates came from, if any
    extractor       VARCHAR NOT NULL DEFAULT 'offline'
);

CREATE TABLE events (
    seq          BIGINT PRIMARY KEY DEFAULT nextval('event_seq'),
    occurred_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    run_id       VARCHAR,
    kind         VARCHAR NOT NULL,
    key          VARCHAR UNIQUE,    -- idempotency key; a replayed step is a no-op
    data         JSON
);

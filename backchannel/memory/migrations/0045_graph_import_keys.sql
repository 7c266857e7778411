-- Idempotent imports (`backchannel import assertions FILE.jsonl`): one row per
-- imported assertion line, keyed by the line's "id" or the hash of its content,
-- so importing the same line again is a no-op.

CREATE TABLE import_keys (
    key           VARCHAR PRIMARY KEY,   -- 'import:' + line id, or 'import:sha256:' + content hash
    assertion_id  BIGINT NOT NULL,
    source_file   VARCHAR,
    line          INTEGER,
    imported_at   TIMESTAMP NOT NULL
);

-- Consent, scope, retention, rectification and the access record.

-- Each source's scope (work, personal, a client) and consent state: ok, redacted (turns of
-- people who withdrew consent were dropped before extraction), owner_only (a no-capture
-- meeting of which only the owner's turns were kept). utterances_trimmed_at: when the
-- retention sweep removed its raw utterances (the quoted spans may remain).
ALTER TABLE sources ADD COLUMN scope VARCHAR DEFAULT 'default';
ALTER TABLE sources ADD COLUMN consent VARCHAR DEFAULT 'ok';
ALTER TABLE sources ADD COLUMN utterances_trimmed_at TIMESTAMP;

-- People who withdrew consent, kept only as sha256 hashes of their normalised names,
-- aliases and addresses: the file never holds the name of someone who asked not to be in it.
CREATE TABLE consent_withdrawals (
    name_hash     VARCHAR PRIMARY KEY,
    person        VARCHAR NOT NULL,       -- groups the hashes of one person (a random id)
    label         VARCHAR NOT NULL,       -- initials only, so a list can be read: 'K. W.'
    speaker_only  BOOLEAN NOT NULL DEFAULT false,  -- a first name: matched as a speaker label only
    via           VARCHAR NOT NULL,       -- cli, mail_header, calendar
    withdrawn_at  TIMESTAMP NOT NULL
);

-- Rectification history: who changed which assertion, when and why. The old row stays
-- (superseded); a correction's new row has the owner as its speaker.
CREATE SEQUENCE assertion_change_ids START 1;
CREATE TABLE assertion_changes (
    id             BIGINT PRIMARY KEY DEFAULT nextval('assertion_change_ids'),
    assertion_id   BIGINT NOT NULL,
    action         VARCHAR NOT NULL CHECK (action IN ('correct', 'retract')),
    new_id         BIGINT,                -- correct: the assertion that replaces it
    reason         VARCHAR,
    changed_by     VARCHAR NOT NULL,      -- the owner's name as configured
    via            VARCHAR NOT NULL,      -- cli, web
    before         JSON NOT NULL,         -- the fields as they were
    changed_at     TIMESTAMP NOT NULL
);

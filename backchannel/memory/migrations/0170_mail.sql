-- Email as a source. One row per message stored, keyed by its identity
-- (Message-ID, else 'sha256:' + a hash of sender, date, subject and body): the same
-- message found in IMAP, a Maildir and an mbox is stored once. Attachments are never
-- stored; only their count is kept.
CREATE TABLE mail_messages (
    message_id    VARCHAR PRIMARY KEY,
    source_id     VARCHAR NOT NULL,
    sender        VARCHAR,            -- address
    recipients    VARCHAR[],          -- addresses (To, Cc)
    sent_at       TIMESTAMP,          -- the Date header, UTC
    subject       VARCHAR,
    origin        VARCHAR,            -- where it was read first: a path, 'mbox#12', 'imap:account/INBOX/42'
    attachments   INTEGER NOT NULL DEFAULT 0,
    html_only     BOOLEAN NOT NULL DEFAULT false,
    ingested_at   TIMESTAMP NOT NULL
);

-- IMAP sync state, one row per (account, folder): messages with a UID above last_uid
-- are new. A changed UIDVALIDITY means the server renumbered the folder: last_uid
-- starts again from 0 (Message-IDs keep the re-read messages from doubling).
CREATE TABLE mail_sync_state (
    account       VARCHAR NOT NULL,
    folder        VARCHAR NOT NULL,
    uidvalidity   BIGINT,
    last_uid      BIGINT NOT NULL DEFAULT 0,
    messages      BIGINT NOT NULL DEFAULT 0,  -- stored through this folder
    failed        BIGINT NOT NULL DEFAULT 0,
    last_sync_at  TIMESTAMP,
    last_error    VARCHAR,                    -- the folder's last sync error (connection, login...), NULL when fine
    PRIMARY KEY (account, folder)
);

-- Messages that could not be read, with why: shown by `status`, never retried blindly
-- (a broken message stays broken); a new UIDVALIDITY gives them another chance.
CREATE TABLE mail_errors (
    origin        VARCHAR PRIMARY KEY,        -- 'imap:account/folder/uidvalidity/uid' or a file path
    message_id    VARCHAR,
    error         VARCHAR NOT NULL,
    seen_at       TIMESTAMP NOT NULL
);

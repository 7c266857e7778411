-- What a replay of a run needs that the store did not keep (engine/replay.py):
-- the clock the run judged with and the settings that shaped its decisions; when a
-- calendar event was first seen (seen_at moves at every refresh); and the end date an
-- assertion had before a later fact closed it (closing overwrites valid_to).
ALTER TABLE runs ADD COLUMN clock_at TIMESTAMP;
ALTER TABLE runs ADD COLUMN decided_by JSON;      -- {"code": version, "gate": {...}, "models": {...}, ...}
ALTER TABLE calendar_events ADD COLUMN first_seen_at TIMESTAMP;

CREATE TABLE assertion_closings (
    assertion_id     BIGINT NOT NULL,
    valid_to_before  DATE,                 -- NULL: it was open
    closed_at        TIMESTAMP NOT NULL
);

-- A meeting dated only by its file's mtime has an unknown date. The mtime is kept in
-- file_date, shown beside "date unknown"; meeting_date and said_at stay NULL, so no time
-- computation (overdue, silence, "next Friday") ever runs against a copy or a download's
-- date. `ingest --date FILE=DATE`, a dates manifest and `sources redate` set it later.
ALTER TABLE sources ADD COLUMN file_date TIMESTAMP;
UPDATE sources SET file_date = meeting_date, meeting_date = NULL WHERE meeting_date_origin = 'mtime';
UPDATE assertions SET said_at = NULL
WHERE source_id IN (SELECT id FROM sources WHERE meeting_date_origin = 'mtime');
-- Dates resolved from a phrase against the file's date ("next Friday", "in January") go too;
-- a phrase with a year ("since 2019", "by 30 June 2025") never needed the meeting's date.
UPDATE assertions SET valid_from = NULL, valid_to = NULL
WHERE date_phrase IS NOT NULL AND NOT regexp_matches(date_phrase, '(^|[^0-9])[0-9]{4}([^0-9]|$)')
  AND source_id IN (SELECT id FROM sources WHERE meeting_date_origin = 'mtime');

-- How each signal was linked to organisations: [{org_id, name, confidence, reason}] as JSON,
-- including the matches refused (a longer proper name: "Lumen Health Ventures" is not
-- "Lumen Health"); and when later ingests last re-linked it (daemon/reevaluate.py).
ALTER TABLE signals ADD COLUMN org_matches VARCHAR;
ALTER TABLE signals ADD COLUMN relinked_at TIMESTAMP;

-- Trust per assertion: how far the judge and the skills may rely on a fact, and why.
-- `confidence` stays what the extractor thought of its own reading; `trust` folds in
-- who said it, how (reported, hedged) and where (a meeting the owner attended, a voicemail).
ALTER TABLE assertions ADD COLUMN trust DOUBLE;
ALTER TABLE assertions ADD COLUMN trust_reasons VARCHAR[];
-- committed_to: the person the promise was made to ("I'll send you the quote" said to Fatima).
ALTER TABLE assertions ADD COLUMN recipient_id BIGINT;
UPDATE assertions SET trust = confidence, trust_reasons = [] WHERE trust IS NULL;

-- How the words hold each claim (core/vocabulary.py STANCES, classified by extractors/meaning).
-- DuckDB cannot add a column with a CHECK, so the list is an ENUM: a value outside it is refused
-- the same way. Rows written before this migration were read as plain assertions.
CREATE TYPE assertion_stance AS ENUM ('asserted', 'negated', 'hypothetical', 'rumour', 'reported', 'joke',
                                      'exercise', 'ended', 'knows_of');
ALTER TABLE assertions ADD COLUMN stance assertion_stance DEFAULT 'asserted';
UPDATE assertions SET stance = 'asserted' WHERE stance IS NULL;

-- Memory's name normalisation now drops a Japanese honorific after a kana or kanji name, and
-- a space between two kana or kanji (memory/text.py: 田中さん is 田中, 田中 太郎 is 田中太郎).
-- Names stored before keep the old form in `norm`: normalise them again, so a lookup of 田中
-- finds the 田中さん of an older meeting. An alias whose new form the entity already has is
-- dropped (same entity, same norm: one alias).
CREATE OR REPLACE TEMP MACRO ja_renorm(x) AS
    regexp_replace(
        regexp_replace(x, '([\x{3040}-\x{30ff}\x{4e00}-\x{9fff}])\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$', '\1'),
        '([\x{3040}-\x{30ff}\x{4e00}-\x{9fff}])\s+([\x{3040}-\x{30ff}\x{4e00}-\x{9fff}])', '\1\2', 'g');

INSERT INTO aliases (entity_id, alias, norm, source_id, created_at)
SELECT entity_id, alias, new_norm, source_id, created_at FROM (
    SELECT a.*, ja_renorm(a.norm) AS new_norm,
           row_number() OVER (PARTITION BY a.entity_id, ja_renorm(a.norm) ORDER BY a.created_at) AS k
    FROM aliases a WHERE ja_renorm(a.norm) <> a.norm
) fresh
WHERE k = 1 AND NOT EXISTS (SELECT 1 FROM aliases b WHERE b.entity_id = fresh.entity_id AND b.norm = fresh.new_norm);

DELETE FROM aliases WHERE ja_renorm(norm) <> norm;

UPDATE entities SET norm = ja_renorm(norm) WHERE ja_renorm(norm) <> norm;

DROP MACRO ja_renorm;

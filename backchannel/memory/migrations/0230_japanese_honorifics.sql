-- Memory's name normalisation now drops a Japanese honorific after a kana or kanji name
-- (memory/text.py: 田中さん is 田中). Names stored before keep their honorific in `norm`:
-- normalise them again, so a lookup of 田中 finds the 田中さん of an older meeting. An alias
-- whose new form the entity already has is dropped (same entity, same norm: one alias).
INSERT INTO aliases (entity_id, alias, norm, source_id, created_at)
SELECT entity_id, alias, new_norm, source_id, created_at FROM (
    SELECT a.*, regexp_replace(a.norm, '([\x{3040}-\x{30ff}\x{4e00}-\x{9fff}])\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$', '\1') AS new_norm,
           row_number() OVER (PARTITION BY a.entity_id, regexp_replace(a.norm, '([\x{3040}-\x{30ff}\x{4e00}-\x{9fff}])\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$', '\1') ORDER BY a.created_at) AS k
    FROM aliases a
    WHERE regexp_matches(a.norm, '[\x{3040}-\x{30ff}\x{4e00}-\x{9fff}]\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$')
) fresh
WHERE k = 1 AND NOT EXISTS (SELECT 1 FROM aliases b WHERE b.entity_id = fresh.entity_id AND b.norm = fresh.new_norm);

DELETE FROM aliases WHERE regexp_matches(norm, '[\x{3040}-\x{30ff}\x{4e00}-\x{9fff}]\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$');

UPDATE entities SET norm = regexp_replace(norm, '([\x{3040}-\x{30ff}\x{4e00}-\x{9fff}])\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$', '\1')
WHERE regexp_matches(norm, '[\x{3040}-\x{30ff}\x{4e00}-\x{9fff}]\s*(さん|さま|様|氏|くん|君|ちゃん|先生|殿)$');

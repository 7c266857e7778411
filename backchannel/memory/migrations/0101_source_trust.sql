-- Source reliability, once per source: owner_absent, voicemail, self_verifying (when the whole
-- text asks to be believed), unknown_speaker / self_verifying when some speaker is; `show SOURCE`
-- prints them. Each assertion carries its own list in assertions.trust_reasons.
ALTER TABLE sources ADD COLUMN trust_reasons VARCHAR[];

"""Rules where they are exact: per-language phrase rules and the claim pass shared by all."""

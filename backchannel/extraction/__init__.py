"""Extraction: a transcript becomes assertions, stage by stage (formats, mentions, rules, meaning, resolve, writer)."""

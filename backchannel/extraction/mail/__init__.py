"""Email as a source: messages parsed, bodies cut, written in batches."""

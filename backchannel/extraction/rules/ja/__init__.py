"""Japanese rules."""

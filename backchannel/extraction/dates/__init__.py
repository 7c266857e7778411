"""Date phrases found and resolved against the meeting date, per language."""

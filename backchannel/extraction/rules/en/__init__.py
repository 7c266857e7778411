"""English rules."""

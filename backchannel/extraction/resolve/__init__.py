"""Entity resolution: speaker labels and mentioned names to entities."""

"""French rules."""

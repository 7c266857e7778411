"""Delivery: proposals reach the owner by email, Slack, a signed webhook or any
apprise URL, through an outbox with one idempotency key per (proposal, channel).
Feedback comes back through signed links (GET confirms, POST acts)."""

"""The model gateway (litellm), budgets, and the roles that call models."""

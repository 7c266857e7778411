"""Mentions: who and what a sentence names, and whom its pronouns mean."""

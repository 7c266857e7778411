"""backchannel: meeting transcripts in, dated attributed memory and quiet proposals out."""

__version__ = "0.1.0"

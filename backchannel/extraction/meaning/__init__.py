"""Extraction by meaning: which relation a sentence states and how (its stance), read by a
small head over the packaged sentence-embedding model instead of enumerated phrasings.

bank/ holds the labelled sentences (ours), train.py trains the heads (head.npz, head.json),
classifier.py applies them, stage.py finds the candidate sentences of a transcript, masks
their mentions and classifies them in one batch, and fill.py fills the slots structurally.
"""

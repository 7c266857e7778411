"""The bottom layer: the vocabulary every layer shares (predicates, modalities,
entity kinds) and the typed values that cross layers (`Wake`). Imports nothing of
ours, and nothing heavy, so any module may import it (docs/architecture.md, Layers).
"""

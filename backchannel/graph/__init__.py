"""The graph API served to generated code (parent side only), its in-memory CSR
index, typed results and stubs, and the JSONL import/export. Submodules are
imported directly."""

"""Code only the tests and benches use: scripted models, the fault
server, synthetic graphs. Imported as `tests.support.<module>` (the repository root is
on sys.path under `python -m pytest`; the benches insert it themselves)."""

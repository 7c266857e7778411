"""Code only the tests and benches use (issue 9, item 4): scripted models, the fault
server, synthetic graphs. Imported as `tests.support.<module>` (the repository root is
on sys.path under `python -m pytest`; the benches insert it themselves)."""

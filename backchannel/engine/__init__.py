"""What one wake does, wherever it runs: the run lifecycle (pipeline.py), the run and its
sweep, gate, judge, draft and proposal (run.py, sweeping.py, proposal.py), one module per
kind of wake found from one table (wakes/), the gate and the judge, durable runs and
their event log, the judge's calibration, re-evaluation after an ingest, and IMAP sync.

It sits below `ops` because operations run a wake in-process when no daemon runs
(`backchannel wake`), and read runs and the gate's keys; `daemon` is the process
around it (service, queue, local API, units), reached only through the ports of
core/ports.py. Submodules are imported directly; `import backchannel.engine` costs nothing.
"""

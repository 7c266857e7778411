"""What one wake does, wherever it runs: the pipeline (ingest, sweep, gate, judge,
draft, propose), the gate and the judge, durable runs and their event log, the
judge's calibration, re-evaluation after an ingest, and IMAP sync.

It sits below `ops` because operations run a wake in-process when no daemon runs
(`backchannel wake`), and read runs and the gate's keys; `daemon` is the process
around it (service, queue, local API, units). Submodules are imported directly;
`import backchannel.engine` costs nothing.
"""

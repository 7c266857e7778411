"""The service process: lifecycle, one event queue, one writer thread, the lock
file, the local API and the service units. What a wake does (pipeline, gate,
judge, durable runs) is `backchannel.engine`, which operations also run in-process.

Modules import lazily from here; `import backchannel.daemon` costs nothing.
"""

"""The service: lifecycle, one event queue, the wake pipeline, the gate, the
judge, durable runs, the local API and the service units.

Modules import lazily from here; `import backchannel.daemon` costs nothing.
"""

from backchannel.memory.store import Store, StoreError, StoreLocked, utcnow

__all__ = ["Store", "StoreError", "StoreLocked", "utcnow"]

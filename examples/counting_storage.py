"""A third-party page-cache storage: the memory storage, counting the entries it served.

Name it in the configuration by its dotted path::

    cache_backend = "examples.counting_storage:open_counting_storage"

A real backend (memcached, a database, an object store) subclasses `StorageBase` the same way
and implements its primitives instead of inheriting the memory storage's.
"""

from __future__ import annotations

from sitecache.cache import MemoryStorage, Storage, StorageOptions


class CountingStorage(MemoryStorage):
    """The memory storage under its own name, counting reads that found an entry."""

    backend = "counting-memory"

    def __init__(self, namespace: str) -> None:
        super().__init__()
        self.location = f"memory ({namespace})"
        self.served = 0

    def get(self, key: str, generation: object = None) -> bytes | None:
        """The stored entry, counted when there is one."""
        found = super().get(key, generation)
        if found is not None:
            self.served += 1
        return found


def open_counting_storage(options: StorageOptions) -> Storage:
    """The factory ``cache_backend`` names: called once per process with what the built-in
    backends get (the disk cache's directory, the Redis URL, the site's namespace)."""
    return CountingStorage(options.namespace)

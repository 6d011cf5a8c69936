"""Storage backends of the page cache behind one protocol (`Storage`), built on `StorageBase`."""

from __future__ import annotations

from sitecache.cache.storage.base import (
    ANY_GENERATION,
    STORE_IDENTITY,
    Announcements,
    Announcer,
    Dimension,
    EntryStatus,
    EntryStore,
    Generations,
    LockStore,
    PendingRemoval,
    RemovalReport,
    SharedState,
    Storage,
    StorageBase,
    StorageError,
    StorageSummary,
    StorageUnavailable,
    StorageUnusable,
)
from sitecache.cache.storage.disk import DiskStorage
from sitecache.cache.storage.memory import MemoryStorage
from sitecache.cache.storage.opening import (
    BUILT_IN_BACKENDS,
    StorageFactory,
    StorageOptions,
    open_storage,
)

__all__ = [
    "ANY_GENERATION",
    "BUILT_IN_BACKENDS",
    "STORE_IDENTITY",
    "Announcements",
    "Announcer",
    "Dimension",
    "DiskStorage",
    "EntryStatus",
    "EntryStore",
    "Generations",
    "LockStore",
    "MemoryStorage",
    "PendingRemoval",
    "RemovalReport",
    "SharedState",
    "Storage",
    "StorageBase",
    "StorageError",
    "StorageFactory",
    "StorageOptions",
    "StorageSummary",
    "StorageUnavailable",
    "StorageUnusable",
    "open_storage",
]

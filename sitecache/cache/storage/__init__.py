"""Storage backends of the page cache behind one protocol (`Storage`), built on `StorageBase`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from sitecache.cache.storage.base import (
    ANY_GENERATION,
    STORE_IDENTITY,
    Announcements,
    Dimension,
    EntryStatus,
    LockStore,
    PendingRemoval,
    RemovalReport,
    Storage,
    StorageBase,
    StorageError,
    StorageSummary,
    StorageUnavailable,
    StorageUnusable,
)
from sitecache.cache.storage.disk import DiskStorage
from sitecache.cache.storage.memory import MemoryStorage

__all__ = [
    "ANY_GENERATION",
    "STORE_IDENTITY",
    "Announcements",
    "Dimension",
    "DiskStorage",
    "EntryStatus",
    "LockStore",
    "MemoryStorage",
    "PendingRemoval",
    "RemovalReport",
    "Storage",
    "StorageBase",
    "StorageError",
    "StorageSummary",
    "StorageUnavailable",
    "StorageUnusable",
    "open_storage",
]


def open_storage(
    backend: Literal["memory", "disk", "redis"] | str,
    *,
    path: str | Path | None = None,
    redis_url: str | None = None,
    namespace: str = "default",
) -> Storage:
    """The backend named ``backend`` (``disk`` needs ``path``, ``redis`` a ``redis_url``).

    Raises:
        StorageError: the backend is unknown or cannot be opened.
    """
    if backend == "memory":
        return MemoryStorage()
    if backend == "disk":
        if path is None:
            raise StorageError("the disk cache needs a directory")
        return DiskStorage(path)
    if backend == "redis":
        from sitecache.cache.storage.redis import RedisStorage

        return RedisStorage(redis_url or "redis://127.0.0.1:6379/0", namespace)
    raise StorageError(f"unknown cache backend {backend!r} (memory, disk or redis)")

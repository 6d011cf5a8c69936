"""Cross-process locks: who holds a named lock of the storage, taken and freed by owner token.

A lock lives in the storage, so it is shared by every process using it (the node's workers on
disk, every node on Redis) and expires by itself when its holder dies. Its owner token names
the process and the thread that took it: the pid is part of it because a forked worker shares
its parent's memory (and often its thread idents) and must never pass for its lock holder.
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Protocol

from sitecache.cache.storage import LockStore, StorageError
from sitecache.cache.storage_log import Warn

__all__ = ["LockService", "Locks"]


class LockService(Protocol):
    """The lock operations the miss coalescer (`sitecache.cache.fills`) needs."""

    def token(self) -> str:
        """The owner token `acquire` would give the calling thread."""

    def acquire(self, name: str, ttl: float) -> str | None:
        """Take ``name`` for ``ttl`` seconds: the owner token, or ``None`` when it is held.

        Raises:
            StorageError: the storage failed.
        """

    def lock_owner(self, name: str) -> str | None:
        """Who holds ``name`` now, or ``None`` when it is free.

        Raises:
            StorageError: the storage failed.
        """

    def release(self, name: str, owner: str) -> None:
        """Free ``name`` if ``owner`` still holds it (a storage failure is only logged)."""


#: This process's id (PERF: not a system call per lock; a forked child reads its own).
_pid = os.getpid()


def _forked() -> None:
    global _pid  # refreshed in the child after a fork
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


class Locks:
    """The storage's named locks, with owner tokens of this process (a `LockService`).

    Args:
        storage: where the locks live (a `Storage`, or the locks it keeps for misses:
            `Storage.fill_locks`).
        warn: reports storage failures of `release` (rate-limited by the caller).
    """

    def __init__(self, storage: LockStore, warn: Warn) -> None:
        self.storage = storage
        self.warn = warn
        self._prefix = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"

    def token(self) -> str:
        """The owner token of the calling thread of this process."""
        return f"{self._prefix}-{_pid}-{threading.get_ident()}"

    def acquire(self, name: str, ttl: float) -> str | None:
        """Take ``name`` for ``ttl`` seconds: the owner token to release it, or ``None`` when
        another owner holds it.

        Raises:
            StorageError: the storage failed.
        """
        owner = self.token()
        return owner if self.storage.acquire_lock(name, owner, ttl) else None

    def renew(self, name: str, owner: str, ttl: float) -> bool:
        """Extend ``owner``'s hold on ``name`` to ``ttl`` seconds from now; whether it still
        holds it (``False``: it expired and someone else took it).

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.acquire_lock(name, owner, ttl)

    def lock_owner(self, name: str) -> str | None:
        """Who holds ``name`` now, or ``None`` when it is free or expired.

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.lock_owner(name)

    def release(self, name: str, owner: str) -> None:
        """Free ``name`` if ``owner`` still holds it; a storage failure is logged (the lock
        then expires by itself)."""
        try:
            self.storage.release_lock(name, owner)
        except StorageError as exc:
            self.warn("cache lock %s not released: %s", name, exc)

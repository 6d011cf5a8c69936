"""Where the cache keeps the named values that must outlive its storage: its settings and the
companion plugins' switches are configuration, not cache.

The cache storage (Redis, the disk index, memory) may lose anything: a Redis restarted without
persistence, ``FLUSHDB``, an eviction under ``allkeys-lru``. The values named durable
(`NamedValues.keep_durably`) are therefore written to a `DurableValues` first (the site's own
database, wired by the application: the cache layer never imports the site), and the storage
holds a fast copy that every process reads each second (`DurableCopies`):

- a copy found missing is never read as "no value": each process keeps what it was told;
- every `DURABLE_CHECK_SECONDS`, each process's timer thread compares the copies with the
  durable values, rebuilds a missing copy and rewrites one that differs (older, or written by
  a process that does not know the durable store); a process compares them when it starts,
  and again as soon as it finds a copy missing;
- a value stored before the durable store was attached (an upgrade) is made durable.

Requests never wait for the durable store: only the start, the timers and the writes of
settings and switches read or write it. A `PageCache` built without one keeps its named
values in its storage alone, as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Iterable
from typing import Final, Protocol

from sitecache.cache.storage import SharedState, StorageError
from sitecache.cache.storage_log import Warn

__all__ = ["DURABLE_CHECK_SECONDS", "DurableCopies", "DurableValues"]

logger = logging.getLogger("sitecache.cache")

#: Seconds between two comparisons of a process's copies with the durable values.
DURABLE_CHECK_SECONDS: Final = 5.0


class DurableValues(Protocol):
    """A durable home for named values (bytes), shared by every process and node of a site.

    Any exception a method raises is a failure of the durable store: the caller keeps what it
    has (reads) or refuses the change (writes).
    """

    def read_durable(self, names: Collection[str]) -> dict[str, bytes]:
        """The stored values among ``names`` (a name without a value is left out)."""
        ...

    def write_durable(self, name: str, data: bytes) -> None:
        """Store ``data`` as ``name``, durably (committed when this returns)."""
        ...


class DurableCopies:
    """The durable values of one process's named values and their copies in ``storage``.

    Args:
        storage: where the copies live.
        warn: reports failures (rate-limited by the caller).
    """

    def __init__(self, storage: SharedState, warn: Warn) -> None:
        self.storage = storage
        self.warn = warn
        self.durable: DurableValues | None = None
        self.names: set[str] = set()
        #: when (monotonic) the copies are next compared with the durable values
        self.due = float("-inf")
        self._lock = threading.Lock()

    def _store(self) -> DurableValues:
        if self.durable is None:
            raise RuntimeError("no durable store is attached")  # holds() said so first
        return self.durable

    def keep(self, name: str) -> None:
        """Keep ``name`` durably (its copy compared at once when a store is attached)."""
        self.names.add(name)
        if self.durable is not None:
            self.sync([name])

    def attach(self, durable: DurableValues) -> None:
        """Keep the names in ``durable`` from now on, and compare every copy with it now."""
        self.durable = durable
        self.sync()

    def holds(self, name: str) -> bool:
        """Whether ``name`` lives in the durable store."""
        return self.durable is not None and name in self.names

    def lost(self, name: str) -> None:
        """A process found ``name``'s copy missing: compare the copies at the next chance."""
        del name
        self.due = float("-inf")

    def sync_if_due(self) -> None:
        """`sync` when `DURABLE_CHECK_SECONDS` have passed since the last one."""
        if self.durable is not None and time.monotonic() >= self.due:
            self.sync()

    def sync(self, names: Iterable[str] | None = None) -> bool:
        """Compare the copies of ``names`` (all by default) with their durable values: rebuild
        a missing copy, rewrite one that differs, make durable a value only the storage holds.
        Whether the durable store answered (a failure is warned, and the copies stay)."""
        durable = self.durable
        if durable is None:
            return False
        wanted = sorted(self.names if names is None else set(names))
        with self._lock:
            self.due = time.monotonic() + DURABLE_CHECK_SECONDS
            try:
                found = durable.read_durable(wanted)
            except Exception as exc:  # the durable store's own failure (its database down)
                self.warn("durable cache values unreadable, keeping the copies: %s", exc)
                return False
            for name in wanted:
                try:
                    self._compare(name, found.get(name))
                except StorageError as exc:
                    self.warn("cache value %s not compared with the durable one: %s", name, exc)
                    break
        return True

    def _compare(self, name: str, value: bytes | None) -> None:
        copy = self.storage.get_value(name)
        if value is None:
            if copy is not None:
                self._import(name, copy)
        elif copy != value:
            self.storage.set_value(name, value)
            logger.warning(
                "the cache storage %s %s: copied back from the site's database (nothing was lost)",
                "had lost" if copy is None else "held an older",
                name,
            )

    def _import(self, name: str, data: bytes) -> None:
        """Make a copy the durable value when there is none yet (values stored before the
        durable store was attached: an upgrade)."""
        try:
            self._store().write_durable(name, data)
        except Exception as exc:  # the durable store's own failure: tried again later
            self.warn("cache value %s not made durable yet: %s", name, exc)
        else:
            logger.info("the cache value %s is now kept in the site's database", name)

    def read(self, name: str) -> bytes | None:
        """The durable value of ``name`` (a value only its copy holds is made durable); the
        copy while the durable store fails.

        Raises:
            StorageError: the storage failed.
        """
        try:
            found = self._store().read_durable([name])
        except Exception as exc:  # the durable store's own failure: the copy is the last
            self.warn("durable cache value %s unreadable, reading its copy: %s", name, exc)
            return self.storage.get_value(name)
        if name in found:
            return found[name]
        copy = self.storage.get_value(name)
        if copy is not None:
            self._import(name, copy)
        return copy

    def write(self, name: str, data: bytes) -> None:
        """Store ``data`` as ``name``: durably first, then its copy (a copy the storage
        refuses is rebuilt at the next comparison).

        Raises:
            Exception: the durable store's failure, as it raised it (nothing was written).
        """
        self._store().write_durable(name, data)
        try:
            self.storage.set_value(name, data)
        except StorageError as exc:
            self.warn("cache value %s kept, its copy waits for the storage: %s", name, exc)
            self.due = float("-inf")

"""The memory backend: one process, for tests and for embedding without a disk.

Like the other backends it keeps an index beside the entries, so counting, listing the newest
entries and tag, URL, path and host lookups cost the same at 1k entries as at 100k: running
totals, one set of keys per tag, URL, path and host, and a sorted list of expiry times. It
implements the primitives of `StorageBase`; nothing it does raises (it translates no errors).
"""

from __future__ import annotations

import bisect
import heapq
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import replace
from itertools import islice

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.base import ANY_GENERATION, Dimension, StorageBase
from sitecache.cache.storage.index import rewrite_expires

__all__ = ["MemoryStorage"]


class MemoryStorage(StorageBase):
    """Entries, index, counters and locks in dictionaries guarded by one lock.

    Args:
        max_bytes: the bound of the stored entries; the oldest stored go first beyond it.
    """

    backend = "memory"
    location = "memory"

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._size = 0
        self._lock = threading.Lock()
        self._data: dict[str, bytes] = {}
        self._index: dict[str, EntryInfo] = {}  # in the order stored: newest last
        self._deadline: dict[str, float] = {}
        self._by: dict[str, defaultdict[str, set[str]]] = {
            name: defaultdict(set) for name in ("tag", "url", "path", "host")
        }
        # Entries that expire, bucketed by the whole second they expire in (a short sorted
        # list of seconds, so adding and removing never shifts one item per entry).
        self._expiry: dict[int, set[str]] = {}
        self._expiry_seconds: list[int] = []
        self._totals = [0, 0, 0]  # entries (pointers excluded), bytes, compressed bytes
        self._values: dict[str, bytes] = {}
        self._counters: dict[str, int] = {}
        self._locks: dict[str, tuple[str, float]] = {}
        self._generation = 0

    # ------------------------------------------------------------------ index upkeep
    def _index_add(self, key: str, info: EntryInfo) -> None:
        self._index[key] = info
        for tag in info.tags:
            self._by["tag"][tag].add(key)
        self._by["url"][info.url].add(key)
        self._by["path"][info.path].add(key)
        self._by["host"][info.host].add(key)
        if info.expires:
            second = int(info.expires)
            bucket = self._expiry.get(second)
            if bucket is None:
                bucket = self._expiry[second] = set()
                bisect.insort(self._expiry_seconds, second)
            bucket.add(key)
        self._totals[0] += 1 if info.status else 0
        self._totals[1] += info.size
        self._totals[2] += info.compressed_size

    def _index_remove(self, key: str) -> EntryInfo | None:
        info = self._index.pop(key, None)
        if info is None:
            return None
        for name, value in (("url", info.url), ("path", info.path), ("host", info.host)):
            self._discard(name, value, key)
        for tag in info.tags:
            self._discard("tag", tag, key)
        if info.expires:
            second = int(info.expires)
            bucket = self._expiry.get(second)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del self._expiry[second]
                    del self._expiry_seconds[bisect.bisect_left(self._expiry_seconds, second)]
        self._totals[0] -= 1 if info.status else 0
        self._totals[1] -= info.size
        self._totals[2] -= info.compressed_size
        return info

    def _discard(self, name: str, value: str, key: str) -> None:
        keys = self._by[name].get(value)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by[name][value]

    def _remove_locked(self, key: str) -> EntryInfo | None:
        data = self._data.pop(key, None)
        if data is not None:
            self._size -= len(data)
        self._deadline.pop(key, None)
        return self._index_remove(key)

    def _expire_locked(self, key: str, now: float) -> None:
        deadline = self._deadline.get(key)
        if deadline is not None and deadline <= now:
            self._remove_locked(key)

    # ------------------------------------------------------------------ entries
    def get(self, key: str) -> bytes | None:
        with self._lock:
            self._expire_locked(key, time.time())
            return self._data.get(key)

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
    ) -> bool:
        with self._lock:
            if generation is not ANY_GENERATION and generation != self._generation:
                return False
            self._remove_locked(key)
            while self._data and self._size + len(data) > self.max_bytes:
                self._remove_locked(next(iter(self._data)))  # the oldest stored
            self._data[key] = data
            self._size += len(data)
            self._index_add(key, info)
            if ttl is not None:
                self._deadline[key] = time.time() + ttl
        return True

    def _delete_rows(self, keys: list[str]) -> list[EntryInfo]:
        with self._lock:
            return [info for info in map(self._remove_locked, keys) if info is not None]

    def _stale_rows(self, keys: list[str], now: float) -> list[EntryInfo]:
        found: list[EntryInfo] = []
        with self._lock:
            for key in keys:
                info = self._index.get(key)
                data = self._data.get(key)
                if info is None or data is None:
                    continue
                if info.is_fresh(now):
                    self._data[key] = rewrite_expires(data, now)  # same length
                    self._index_remove(key)
                    self._index_add(key, replace(info, expires=now))
                found.append(info)
        return found

    # ------------------------------------------------------------------ index queries
    def _lookup(self, dimension: Dimension, values: list[str]) -> set[str]:
        found: set[str] = set()
        index = self._by[dimension]
        with self._lock:
            for value in values:
                found.update(index.get(value, ()))
        return found

    def _all_keys(self) -> set[str]:
        with self._lock:
            return set(self._index)

    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        with self._lock:
            return [self._index[key] for key in keys if key in self._index]

    def _expired_locked(self, before: float) -> Iterator[EntryInfo]:
        """Entries expiring at or before ``before``, soonest first."""
        for second in self._expiry_seconds:
            if second > before:
                return
            rows = sorted((self._index[key] for key in self._expiry[second]),
                          key=lambda info: (info.expires, info.key))  # fmt: skip
            yield from (info for info in rows if info.expires <= before)

    def _soonest_expiring(self, before: float, limit: int) -> list[str]:
        with self._lock:
            return [info.key for info in islice(self._expired_locked(before), limit)]

    def _oldest_stored(self, limit: int) -> list[str]:
        with self._lock:
            rows = list(self._index.values())
        return [info.key for info in heapq.nsmallest(limit, rows, key=_age)]

    def _newest(self, offset: int, limit: int) -> tuple[list[EntryInfo], int]:
        # Newest stored first, reading only the rows of the page.
        rows: list[EntryInfo] = []
        with self._lock:
            pages = (info for info in reversed(self._index.values()) if info.status)
            rows.extend(islice(pages, offset, offset + limit))
            return rows, self._totals[0]

    def _every_row(self) -> list[EntryInfo]:
        with self._lock:
            return list(self._index.values())

    def _counts(self, now: float) -> tuple[int, int, int, int]:
        with self._lock:
            total, size, compressed = self._totals
            expired = sum(1 for info in self._expired_locked(now) if info.status)
        return total, expired, size, compressed

    # ------------------------------------------------------------------ shared state
    def get_value(self, name: str) -> bytes | None:
        with self._lock:
            return self._values.get(name)

    def set_value(self, name: str, value: bytes) -> None:
        with self._lock:
            self._values[name] = value

    def add_counters(self, deltas: Mapping[str, int]) -> None:
        with self._lock:
            for name, delta in deltas.items():
                self._counters[name] = self._counters.get(name, 0) + delta

    def counters(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counters)

    def reset_counters(self) -> None:
        with self._lock:
            self._counters.clear()

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        now = time.monotonic()
        with self._lock:
            held = self._locks.get(name)
            if held is not None and held[1] > now and held[0] != owner:
                return False
            self._locks[name] = (owner, now + ttl)
            return True

    def lock_owner(self, name: str) -> str | None:
        with self._lock:
            held = self._locks.get(name)
            return held[0] if held is not None and held[1] > time.monotonic() else None

    def release_lock(self, name: str, owner: str) -> None:
        with self._lock:
            held = self._locks.get(name)
            if held is not None and held[0] == owner:
                del self._locks[name]

    def generation(self) -> object:
        return self._generation

    def bump_generation(self) -> None:
        with self._lock:
            self._generation += 1


def _age(info: EntryInfo) -> tuple[float, str]:
    return info.created, info.key

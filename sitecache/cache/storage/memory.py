"""The memory backend: one process, for tests and for embedding without a disk."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.base import EntryStatus, RemovalReport, StorageSummary
from sitecache.cache.storage.index import matches_filter, rewrite_expires

__all__ = ["MemoryStorage"]


class MemoryStorage:
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
        self._index: dict[str, EntryInfo] = {}
        self._deadline: dict[str, float] = {}
        self._values: dict[str, bytes] = {}
        self._counters: dict[str, int] = {}
        self._locks: dict[str, tuple[str, float]] = {}
        self._generation = 0

    def _remove_locked(self, key: str) -> EntryInfo | None:
        data = self._data.pop(key, None)
        if data is not None:
            self._size -= len(data)
        self._deadline.pop(key, None)
        return self._index.pop(key, None)

    def _expire_locked(self, key: str, now: float) -> None:
        deadline = self._deadline.get(key)
        if deadline is not None and deadline <= now:
            self._remove_locked(key)

    def get(self, key: str) -> bytes | None:
        with self._lock:
            self._expire_locked(key, time.time())
            return self._data.get(key)

    def put(self, key: str, data: bytes, info: EntryInfo, ttl: float | None) -> None:
        with self._lock:
            self._remove_locked(key)
            while self._data and self._size + len(data) > self.max_bytes:
                self._remove_locked(next(iter(self._data)))  # the oldest stored
            self._data[key] = data
            self._size += len(data)
            self._index[key] = info
            if ttl is None:
                self._deadline.pop(key, None)
            else:
                self._deadline[key] = time.time() + ttl

    def delete(self, keys: Iterable[str]) -> RemovalReport:
        report = RemovalReport()
        with self._lock:
            for key in keys:
                info = self._remove_locked(key)
                if info is not None:
                    report.add(info)
        return report

    def mark_stale(self, keys: Iterable[str], now: float) -> RemovalReport:
        report = RemovalReport()
        with self._lock:
            for key in keys:
                info = self._index.get(key)
                data = self._data.get(key)
                if info is None or data is None:
                    continue
                if info.expires == 0 or info.expires > now:
                    self._data[key] = rewrite_expires(data, now)  # same length
                    self._index[key] = _with_expires(info, now)
                report.add(info)
        return report

    def keys_for_tags(self, tags: Iterable[str]) -> set[str]:
        wanted = set(tags)
        with self._lock:
            return {key for key, info in self._index.items() if wanted.intersection(info.tags)}

    def keys_for_urls(self, urls: Iterable[str]) -> set[str]:
        wanted = set(urls)
        with self._lock:
            return {key for key, info in self._index.items() if info.url in wanted}

    def keys_for_paths(self, paths: Iterable[str]) -> set[str]:
        wanted = set(paths)
        with self._lock:
            return {key for key, info in self._index.items() if info.path in wanted}

    def infos(self, keys: Iterable[str]) -> list[EntryInfo]:
        with self._lock:
            return [self._index[key] for key in keys if key in self._index]

    def keys_for_hosts(self, hosts: Iterable[str] | None) -> set[str]:
        with self._lock:
            if hosts is None:
                return set(self._index)
            wanted = set(hosts)
            return {key for key, info in self._index.items() if info.host in wanted}

    def expired_keys(self, before: float, limit: int) -> list[str]:
        with self._lock:
            rows = [
                (info.expires, key)
                for key, info in self._index.items()
                if info.expires and info.expires <= before
            ]
        return [key for _, key in sorted(rows)[:limit]]

    def list_entries(
        self,
        offset: int,
        limit: int,
        *,
        now: float,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[EntryInfo], int]:
        with self._lock:
            rows = [info for info in self._index.values() if info.status]
        rows = [info for info in rows if matches_filter(info, now, search, status)]
        rows.sort(key=lambda info: (-info.created, info.url))
        return rows[offset : offset + limit], len(rows)

    def summary(self, now: float) -> StorageSummary:
        with self._lock:
            rows = [info for info in self._index.values() if info.status]
        fresh = sum(1 for info in rows if info.is_fresh(now))
        return StorageSummary(
            total=len(rows),
            fresh=fresh,
            expired=len(rows) - fresh,
            bytes=sum(info.size for info in rows),
            compressed_bytes=sum(info.compressed_size for info in rows),
        )

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

    def close(self) -> None:
        """Nothing to release."""


def _with_expires(info: EntryInfo, expires: float) -> EntryInfo:
    return EntryInfo(**{**info.as_json(), "expires": expires, "tags": info.tags})

"""The memory backend: one process, for tests and for embedding without a disk.

Like the other backends it keeps an index beside the entries, so counting, listing the newest
entries and tag, URL, path and host lookups cost the same at 1k entries as at 100k: running
totals, one set of keys per tag, URL, path and host, one per trigram of the lowered URLs
(``search``), and a sorted list of expiry times. It
implements the primitives of `StorageBase`; nothing it does raises (it translates no errors).
An epoch is a shelf of entries with its own index: invalidating everything swaps in an empty
one.
"""

from __future__ import annotations

import bisect
import heapq
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import replace
from itertools import islice
from typing import Final

from sitecache.cache.entry import (
    TIMES_OFFSET,
    CacheEntry,
    EntryInfo,
    decode_entry,
    encode_entry,
)
from sitecache.cache.storage.base import (
    ANY_GENERATION,
    Dimension,
    EntryStatus,
    StorageBase,
    matches_filter,
)
from sitecache.cache.storage.index import rewrite_expires

__all__ = ["MemoryStorage"]


class _Shelf:
    """The entries of one epoch and their index (the store swaps in a new shelf to invalidate
    every entry at once)."""

    __slots__ = (
        "by",
        "data",
        "deadline",
        "expired_before",
        "expiry",
        "expiry_seconds",
        "grams",
        "index",
        "search_pending",
        "size",
        "totals",
        "unordered",
    )

    def __init__(self) -> None:
        #: encoded entries (`MemoryStorage.put`) or the entries themselves (`put_entry`),
        #: oldest stored first (PERF: an OrderedDict finds it at once where a dict emptied
        #: from its front walks past every slot freed there)
        self.data: OrderedDict[str, bytes | CacheEntry] = OrderedDict()
        self.size = 0
        #: in listing order (`_position`: created, then key), newest last, unless
        #: ``unordered``: a put out of that order sets it, `in_listing_order` sorts once
        self.index: dict[str, EntryInfo] = {}
        self.unordered = False
        self.deadline: dict[str, float] = {}
        self.by: dict[str, defaultdict[str, set[str]]] = {
            name: defaultdict(set) for name in ("tag", "url", "path", "host")
        }
        # Entries that expire, bucketed by the whole second they expire in (a short sorted
        # list of seconds, so adding and removing never shifts one item per entry).
        self.expiry: dict[int, set[str]] = {}
        self.expiry_seconds: list[int] = []
        self.totals = [0, 0, 0]  # entries (pointers excluded), bytes, compressed bytes
        #: the keys of each trigram of the lowered URLs (``search``: `trigrams`), and the keys
        #: stored since the last search, not in them yet (a store adds one key, not ~40)
        self.grams: defaultdict[str, set[str]] = defaultdict(set)
        self.search_pending: set[str] = set()
        #: the expiry cut: entries that expired at or before it are hidden (0: none)
        self.expired_before = 0.0

    def hidden(self, info: EntryInfo) -> bool:
        """Whether the expiry cut hides ``info``."""
        return 0 < info.expires <= self.expired_before

    def hidden_totals(self) -> tuple[int, int, int]:
        """Pages, bytes and compressed bytes the expiry cut hides."""
        rows = list(self.expired(self.expired_before)) if self.expired_before > 0 else []
        return (
            sum(1 for info in rows if info.status),
            sum(info.size for info in rows),
            sum(info.compressed_size for info in rows),
        )

    def index_add(self, key: str, info: EntryInfo) -> None:
        # PERF: a put's share of a miss; lookups hoisted, no call per index.
        index = self.index
        if not self.unordered and index:
            last = next(reversed(index.values()))
            self.unordered = (info.created, info.key) < (last.created, last.key)
        index[key] = info
        by = self.by
        by_tag = by["tag"]
        for tag in info.tags:
            by_tag[tag].add(key)
        by["url"][info.url].add(key)
        by["path"][info.path].add(key)
        by["host"][info.host].add(key)
        self.search_pending.add(key)
        if info.expires:
            second = int(info.expires)
            bucket = self.expiry.get(second)
            if bucket is None:
                bucket = self.expiry[second] = set()
                bisect.insort(self.expiry_seconds, second)
            bucket.add(key)
        totals = self.totals
        totals[0] += 1 if info.status else 0
        totals[1] += info.size
        totals[2] += info.compressed_size

    def in_listing_order(self) -> dict[str, EntryInfo]:
        """The index, sorted first if a put broke its order (once, not per listing)."""
        if self.unordered:
            self.index = dict(sorted(self.index.items(), key=lambda item: _position(item[1])))
            self.unordered = False
        return self.index

    def index_remove(self, key: str) -> EntryInfo | None:
        info = self.index.pop(key, None)
        if info is None:
            return None
        by = self.by
        for name, value in (("url", info.url), ("path", info.path), ("host", info.host)):
            _discard(by[name], value, key)
        by_tag = by["tag"]
        for tag in info.tags:
            _discard(by_tag, tag, key)
        if key in self.search_pending:
            self.search_pending.discard(key)
        else:
            for gram in trigrams(info.url):
                _discard(self.grams, gram, key)
        if info.expires:
            second = int(info.expires)
            bucket = self.expiry.get(second)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del self.expiry[second]
                    del self.expiry_seconds[bisect.bisect_left(self.expiry_seconds, second)]
        totals = self.totals
        totals[0] -= 1 if info.status else 0
        totals[1] -= info.size
        totals[2] -= info.compressed_size
        return info

    def search_catch_up(self) -> None:
        """Put the keys stored since the last search into their trigram sets."""
        for key in self.search_pending:
            for gram in trigrams(self.index[key].url):
                self.grams[gram].add(key)
        self.search_pending.clear()

    def remove(self, key: str) -> EntryInfo | None:
        data = self.data.pop(key, None)
        if data is not None:
            self.size -= _held_size(data)
        self.deadline.pop(key, None)
        return self.index_remove(key)

    def expired(self, before: float) -> Iterator[EntryInfo]:
        """Entries expiring at or before ``before``, soonest first."""
        for second in self.expiry_seconds:
            if second > before:
                return
            rows = sorted((self.index[key] for key in self.expiry[second]),
                          key=lambda info: (info.expires, info.key))  # fmt: skip
            yield from (info for info in rows if info.expires <= before)


class MemoryStorage(StorageBase):
    """Entries, index, counters and locks in dictionaries guarded by one lock.

    The entries of the current epoch are one `_Shelf`; `invalidate_all` puts a new one in its
    place and keeps the old one for `remove_invalidated`, which empties it in slices.

    Args:
        max_bytes: the bound of the stored entries; the oldest stored go first beyond it
            (invalidated shelves go first of all).
    """

    backend = "memory"
    location = "memory"

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._shelf = _Shelf()
        self._invalidated: list[_Shelf] = []
        self._values: dict[str, bytes] = {}
        self._counters: dict[str, int] = {}
        self._locks: dict[str, tuple[str, float]] = {}
        self._generation = 0

    def _expire_locked(self, key: str, now: float) -> None:
        deadline = self._shelf.deadline.get(key)
        if deadline is not None and deadline <= now:
            self._shelf.remove(key)

    # ------------------------------------------------------------------ entries
    def get(self, key: str, generation: object = None) -> bytes | None:
        del generation  # one process: the current shelf is the current epoch
        with self._lock:
            self._expire_locked(key, time.time())
            data = self._shelf.data.get(key)
        return data if data is None or isinstance(data, bytes) else encode_entry(data)

    def get_entry(self, key: str, generation: object = None) -> CacheEntry | None:
        """The entry itself when `put_entry` kept it (decoded when `put` stored bytes).

        A subclass that overrides `get` is read through it."""
        if type(self).get is not MemoryStorage.get:
            return super().get_entry(key, generation)
        with self._lock:
            self._expire_locked(key, time.time())
            data = self._shelf.data.get(key)
        return decode_entry(data) if data is None or isinstance(data, bytes) else data

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
        replaces: bytes | None = None,
        release: tuple[str, str] | None = None,
    ) -> bool:
        del release  # this process's own locks: the caller frees them
        return self._keep(key, data, info, ttl, generation, replaces)

    def put_entry(
        self,
        key: str,
        entry: CacheEntry,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
        replaces: bytes | None = None,
        release: tuple[str, str] | None = None,
    ) -> bool:
        """Keep ``entry`` itself (PERF: it is encoded only if `get` is asked for its bytes;
        entries are immutable, so the memory tier and the store share its body).

        A subclass that overrides `put` is written through it."""
        if type(self).put is not MemoryStorage.put:
            return super().put_entry(key, entry, ttl, generation=generation,
                                     replaces=replaces, release=release)  # fmt: skip
        return self._keep(key, entry, entry.info(key), ttl, generation, replaces)

    def _keep(
        self,
        key: str,
        data: bytes | CacheEntry,
        info: EntryInfo,
        ttl: float | None,
        generation: object,
        replaces: bytes | None,
    ) -> bool:
        size = _held_size(data)
        with self._lock:
            if generation is not ANY_GENERATION and generation != self._generation:
                return False
            shelf = self._shelf
            if replaces is not None:
                old = shelf.data.get(key)
                if old is None or _times(old, len(replaces)) != replaces:
                    return False
            shelf.remove(key)
            if shelf.size + size > self.max_bytes:
                self._invalidated.clear()  # what purges left goes before any live entry
            while shelf.data and shelf.size + size > self.max_bytes:
                shelf.remove(next(iter(shelf.data)))  # the oldest stored
            shelf.data[key] = data
            shelf.size += size
            shelf.index_add(key, info)
            if ttl is not None:
                shelf.deadline[key] = time.time() + ttl
        return True

    def _delete_rows(self, keys: list[str]) -> list[EntryInfo]:
        with self._lock:
            shelf = self._shelf
            return [info for info in map(shelf.remove, keys) if info is not None]

    def _stale_rows(self, keys: list[str], now: float) -> list[EntryInfo]:
        found: list[EntryInfo] = []
        with self._lock:
            shelf = self._shelf
            for key in keys:
                info = shelf.index.get(key)
                data = shelf.data.get(key)
                if info is None or data is None:
                    continue
                if info.is_fresh(now):
                    shelf.data[key] = (
                        rewrite_expires(data, now)  # same length
                        if isinstance(data, bytes)
                        else data.with_expires(now)
                    )
                    shelf.index_remove(key)
                    shelf.index_add(key, replace(info, expires=now))
                found.append(info)
        return found

    # ------------------------------------------------------------------ index queries
    def _lookup(self, dimension: Dimension, values: list[str]) -> set[str]:
        found: set[str] = set()
        with self._lock:
            shelf = self._shelf
            index = shelf.by[dimension]
            for value in values:
                found.update(index.get(value, ()))
            if shelf.expired_before > 0:
                found = {key for key in found if not shelf.hidden(shelf.index[key])}
        return found

    def _all_keys(self) -> set[str]:
        with self._lock:
            shelf = self._shelf
            return {key for key, info in shelf.index.items() if not shelf.hidden(info)}

    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        with self._lock:
            index = self._shelf.index
            return [index[key] for key in keys if key in index]

    def _soonest_expiring(self, before: float, limit: int) -> list[str]:
        with self._lock:
            return [info.key for info in islice(self._shelf.expired(before), limit)]

    def _oldest_stored(self, limit: int) -> list[str]:
        with self._lock:
            rows = list(self._shelf.index.values())
        return [info.key for info in heapq.nsmallest(limit, rows, key=_position)]

    def _newest(self, offset: int, limit: int) -> tuple[list[EntryInfo], int]:
        # Newest stored first, reading only the rows of the page.
        rows: list[EntryInfo] = []
        with self._lock:
            shelf = self._shelf
            pages = (
                info
                for info in reversed(shelf.in_listing_order().values())
                if info.status and not shelf.hidden(info)
            )
            rows.extend(islice(pages, offset, offset + limit))
            return rows, shelf.totals[0] - shelf.hidden_totals()[0]

    def _matching(
        self, offset: int, limit: int, now: float, search: str, status: EntryStatus | None
    ) -> tuple[list[EntryInfo], int]:
        """A ``search`` of three characters or more through the trigram sets (the keys stored
        since the last search join them first): only the rows holding every trigram of the
        lowered term are checked (`matches_filter`); other filters are a scan of every row
        (`StorageBase._matching`)."""
        grams = trigrams(search)
        if not grams:
            return super()._matching(offset, limit, now, search, status)
        with self._lock:
            shelf = self._shelf
            shelf.search_catch_up()
            sets = sorted((shelf.grams.get(gram, set()) for gram in grams), key=len)
            keys = set(sets[0]).intersection(*sets[1:])
            rows = [
                info
                for info in map(shelf.index.__getitem__, keys)
                if info.status
                and not shelf.hidden(info)
                and matches_filter(info, now, search, status)
            ]
        rows.sort(key=lambda info: (-info.created, info.url, info.key))
        return rows[offset : offset + limit], len(rows)

    def _every_row(self) -> list[EntryInfo]:
        with self._lock:
            shelf = self._shelf
            return [info for info in shelf.index.values() if not shelf.hidden(info)]

    def _counts(self, now: float) -> tuple[int, int, int, int]:
        with self._lock:
            shelf = self._shelf
            total, size, compressed = shelf.totals
            pages, hidden, hidden_compressed = shelf.hidden_totals()
            expired = sum(1 for info in shelf.expired(now) if info.status) - pages
        return total - pages, expired, size - hidden, compressed - hidden_compressed

    # ------------------------------------------------------------------ epochs
    def _invalidate(self) -> tuple[int, int]:
        with self._lock:
            old, self._shelf = self._shelf, _Shelf()
            self._shelf.expired_before = old.expired_before
            if old.index:
                self._invalidated.append(old)
        return old.totals[0], old.totals[1] + old.totals[2]

    def _invalidate_expired(self, before: float) -> tuple[int, int]:
        with self._lock:
            shelf = self._shelf
            if before <= shelf.expired_before:
                return 0, 0
            rows = [info for info in shelf.expired(before) if not shelf.hidden(info)]
            shelf.expired_before = before
        return (
            sum(1 for info in rows if info.status),
            sum(info.size + info.compressed_size for info in rows),
        )

    def _only_hosts(self, hosts: list[str]) -> bool:
        with self._lock:
            return set(self._shelf.by["host"]) <= set(hosts)

    def _pending(self) -> tuple[int, int]:
        with self._lock:
            shelves = list(self._invalidated)
            pages, hidden, hidden_compressed = self._shelf.hidden_totals()
        return (
            sum(shelf.totals[0] for shelf in shelves) + pages,
            sum(shelf.totals[1] + shelf.totals[2] for shelf in shelves)
            + hidden
            + hidden_compressed,
        )

    def _remove_invalidated_batch(self) -> int:
        with self._lock:
            if self._invalidated:
                shelf = self._invalidated[0]
                keys = list(islice(shelf.index, self.batch_size))
                if len(keys) == len(shelf.index):
                    self._invalidated.pop(0)
            else:
                shelf = self._shelf
                cut = shelf.expired_before
                rows = islice(shelf.expired(cut), self.batch_size) if cut > 0 else iter(())
                keys = [info.key for info in rows]
            for key in keys:
                shelf.remove(key)
        return len(keys)

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


#: Bytes an entry kept as itself is counted for beyond its bodies (its header fields).
ENTRY_OVERHEAD: Final = 512


def _held_size(data: bytes | CacheEntry) -> int:
    """Bytes ``data`` counts for against `MemoryStorage.max_bytes`: an encoding's length, or
    an entry's bodies plus `ENTRY_OVERHEAD`."""
    if isinstance(data, bytes):
        return len(data)
    return len(data.body) + sum(len(copy) for _, copy in data.copies) + ENTRY_OVERHEAD


def _times(data: bytes | CacheEntry, length: int) -> bytes:
    """The encoded creation and expiry times of ``data`` (`CacheEntry.times`)."""
    if isinstance(data, bytes):
        return data[TIMES_OFFSET : TIMES_OFFSET + length]
    return data.times


def _discard(index: dict[str, set[str]], value: str, key: str) -> None:
    """``key`` out of the set of ``value`` in ``index`` (the set dropped once empty)."""
    keys = index.get(value)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[value]


def trigrams(text: str) -> set[str]:
    """The trigrams of ``text`` lowered (none under three characters): a URL holding a term
    (in any case, `matches_filter`) holds every trigram of the term."""
    lowered = text.lower()
    return {lowered[i : i + 3] for i in range(len(lowered) - 2)}


def _position(info: EntryInfo) -> tuple[float, str]:
    """Where a row sits in the index (oldest first): the plain listing reads it backwards
    (newest created first; equal times by key, descending, as Redis's sorted set orders
    them), eviction of the oldest stored reads it forwards."""
    return info.created, info.key

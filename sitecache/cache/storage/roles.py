"""The roles a page-cache store plays, as protocols, and `Storage`, the store that plays them
all (`sitecache.cache.storage.base` holds the module-level promises: every method may raise
`StorageError` and nothing else; publication under concurrency; O(1) invalidation by epochs).

- `EntryStore`: the encoded entries and their index (lookups by tag, URL, path and host,
  listings, the summary), what the middleware reads and the purges remove;
- `SharedState`: what every process sharing the store sees: named values (settings, preload
  progress), counters and cross-process locks (`LockStore`);
- `Generations`: the purge generation, the O(1) invalidations and the GC that removes what
  they invalidated;
- `Announcer`: records for every machine sharing the store (purges of static copies).

The cache's parts are typed on the role they use (`sitecache.cache.locks` on `LockStore`, ...);
a backend implements `Storage` (in practice by subclassing `StorageBase`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Literal, Protocol, overload

from sitecache.cache.entry import CacheEntry, EntryInfo
from sitecache.cache.storage.records import (
    ANY_GENERATION,
    Announcements,
    Dimension,
    EntryStatus,
    PendingRemoval,
    RemovalReport,
    StorageSummary,
)

__all__ = [
    "Announcer",
    "EntryStore",
    "Generations",
    "LockStore",
    "ResetListener",
    "SharedState",
    "Storage",
]

#: Told, with the reason, that the store dropped every entry at once (`Storage.on_reset`).
ResetListener = Callable[[str], None]


class LockStore(Protocol):
    """Named cross-process locks, taken and freed by owner token (a `Storage` has them)."""

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        """Take the cross-process lock ``name`` for ``ttl`` seconds; ``False`` if held."""

    def lock_owner(self, name: str) -> str | None:
        """Who holds the lock ``name`` now, or ``None`` when it is free or expired."""

    def release_lock(self, name: str, owner: str) -> None:
        """Release ``name`` if ``owner`` still holds it."""


class EntryStore(Protocol):
    """The encoded entries under opaque keys, and their index."""

    #: `put` frees the lock its ``release`` names (in the write's own round trip).
    frees_locks_in_put: bool

    def get(self, key: str, generation: object = None) -> bytes | None:
        """The encoded entry under ``key`` (of the current epoch), or ``None``.

        ``generation`` is the token `generation` gave the request, when there is one: a
        backend that carries the epoch in it reads that epoch's entry without asking for the
        epoch again (a request sees the storage as it was when the request began).
        """

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
        """Store ``data`` under ``key`` atomically and index it; ``ttl`` seconds of life
        (``None``: until deleted). Replaces any entry under ``key``.

        With ``generation`` (a value `generation` returned), the put is refused, atomically
        with respect to `bump_generation`, when the generation has moved since: a page rendered
        before a purge began must not outlive it. With ``replaces`` (16 bytes), it is refused
        too unless an entry of the current epoch is stored under ``key`` whose creation and
        expiry times (the bytes at `sitecache.cache.entry.TIMES_OFFSET` of its encoding) are
        these: a store-back of an entry read earlier (a compressed copy added) never brings back
        a purged entry, undoes a soft purge, or replaces a newer render. ``release`` (lock
        name, owner token): a lock of `acquire_lock` this write frees too, stored or refused,
        where that costs no round trip of its own (Redis: `frees_locks_in_put`); other
        backends leave it to the caller. Returns whether the entry was stored.
        """

    def get_entry(self, key: str, generation: object = None) -> CacheEntry | None:
        """The entry under ``key`` as `get` reads it, decoded (`decode_entry`); ``None`` when
        there is none or it does not decode. What the cache reads its pages with."""

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
        """`put` of ``entry`` encoded (`encode_entry`) with its index row (`CacheEntry.info`),
        on the same terms; what the cache stores its pages with. A store in this process's
        memory may keep the entry itself, encoded only if `get` is asked for its bytes."""

    def delete(self, keys: Iterable[str]) -> RemovalReport:
        """Remove the entries and their index rows; report what was there."""

    def mark_stale(self, keys: Iterable[str], now: float) -> RemovalReport:
        """Soft purge: make the entries expire at ``now`` (served stale while regenerated)."""

    @overload
    def keys_for(self, dimension: Literal["host"], values: Iterable[str] | None) -> set[str]: ...
    @overload
    def keys_for(self, dimension: Dimension, values: Iterable[str]) -> set[str]: ...
    def keys_for(self, dimension: Dimension, values: Iterable[str] | None) -> set[str]:
        """Keys of the entries whose ``dimension`` is any of ``values``: ``"tag"`` (entries
        carrying any of the tags), ``"url"`` (every variant of the canonical URLs), ``"path"``
        (every host, query and variant of the paths) or ``"host"``; every key when
        ``dimension`` is ``"host"`` and ``values`` is ``None``.

        Raises:
            ValueError: an unknown ``dimension``, or ``None`` for another than ``"host"``.
        """

    def infos(self, keys: Iterable[str]) -> list[EntryInfo]:
        """The index rows of ``keys`` (missing ones are skipped)."""

    def expired_keys(self, before: float, limit: int) -> list[str]:
        """Up to ``limit`` keys whose expiry (non-zero) is at or before ``before``, the soonest
        expired first."""

    def eviction_candidates(self, limit: int) -> list[str]:
        """Up to ``limit`` keys to evict first: those soonest to expire, then (entries fresh
        until purged) the oldest stored; equal times in the order of their keys."""

    def list_entries(
        self,
        offset: int,
        limit: int,
        *,
        now: float,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[EntryInfo], int]:
        """A page of index rows (pages, not Vary pointers), newest first, and the total
        matching count."""

    def summary(self, now: float) -> StorageSummary:
        """Counts (pages, not Vary pointers) and sizes of the whole store."""


class SharedState(LockStore, Protocol):
    """Named values, counters and locks every process sharing the store sees."""

    def get_value(self, name: str) -> bytes | None:
        """A named value (settings, preload progress), or ``None``."""

    def set_value(self, name: str, value: bytes) -> None:
        """Store a named value atomically."""

    def add_counters(self, deltas: Mapping[str, int]) -> None:
        """Add ``deltas`` to the shared counters in one step."""

    def counters(self) -> dict[str, int]:
        """Every shared counter."""

    def reset_counters(self) -> None:
        """Set every counter back to nothing."""


class Generations(Protocol):
    """The purge generation, the O(1) invalidations and their garbage collection."""

    def generation(self) -> object:
        """A cheap token that changes whenever `bump_generation` runs anywhere."""

    def generation_for(self, key: str, lock: tuple[str, str, float] | None = None) -> object:
        """`generation`, for a request about to look up ``key``: a backend may read that
        entry in the same round trip, and answer the request's first `get` of ``key`` with
        that token from what it read; ``lock`` (name, owner, ttl): the lock the request takes
        (`acquire_lock`) when ``key`` holds nothing, which such a backend may take in that
        round trip too, and answer that `acquire_lock` from it (`StorageBase`: `generation`
        alone)."""

    def bump_generation(self) -> None:
        """Tell every process that cached copies of entries may be gone."""

    def invalidate_all(self) -> RemovalReport:
        """Make every stored entry a miss at once, in O(1): move to a new epoch. Lookups,
        counts, listings and index lookups no longer see the entries of older epochs; they are
        removed later by `remove_invalidated`. What was invalidated: pages and bytes, read from
        the running totals (no URLs: nothing is walked)."""

    def invalidate_expired(self, before: float) -> RemovalReport:
        """Make the entries that expired at or before ``before`` (time past their stale
        window: every request misses them already) invisible at once: no count, listing or
        index lookup sees them any more; `remove_invalidated` deletes them later. What it
        invalidated (not already hidden by an earlier call): pages and bytes."""

    def only_hosts(self, hosts: Collection[str]) -> bool:
        """Whether every stored entry (Vary pointers included) is of one of ``hosts``, so that
        `invalidate_all` purges exactly those hosts."""

    def pending_removal(self) -> PendingRemoval:
        """What invalidated epochs and expired entries still hold (GC removes it)."""

    def remove_invalidated(self, budget: float) -> int:
        """Remove entries of invalidated epochs for at most about ``budget`` seconds; how many
        keys or rows went (0 when nothing is left)."""

    def housekeeping(self, budget: float) -> int:
        """Bounded upkeep GC runs (files of an older layout, free pages); how much it did."""


class Announcer(Protocol):
    """Records for every machine sharing the store."""

    def announce(self, record: bytes) -> None:
        """Tell every machine sharing this store of ``record`` (a purge the files a machine
        keeps of its own, static copies, must follow); kept for a bounded number of records.
        A store one machine holds keeps nothing: its users share those files already."""

    def announcements(self, cursor: str | None) -> Announcements | None:
        """The records announced after ``cursor`` (at most a thousand; ``None``: none, with the
        cursor of now), or ``None`` when this store is one machine's (nothing to follow)."""


class Storage(EntryStore, SharedState, Generations, Announcer, Protocol):
    """What the page cache needs from a store: every role, and the store's own upkeep (see
    `sitecache.cache.storage.base`'s docstring)."""

    #: the backend's name: ``"memory"``, ``"disk"``, ``"redis"`` or a third-party one's
    backend: str
    #: Where the entries live (a directory, a Redis URL without password, ``"memory"``).
    location: str

    def fill_locks(self) -> LockStore:
        """Where a miss takes the lock of its key while it renders (`sitecache.cache.fills`):
        locks every process sharing this store sees, held for seconds at most."""

    def warnings(self) -> list[tuple[str, str]]:
        """``(code, message)`` pairs an administrator should see (``GET /status``): the store
        cannot be used now, or was found damaged and started empty (`StorageBase`: none)."""

    def on_reset(self, listener: ResetListener) -> None:
        """Tell ``listener`` (with the reason) each time the store drops every entry at once
        because it was found damaged or foreign (`StorageBase` keeps the list)."""

    def close(self) -> None:
        """Release connections and handles."""

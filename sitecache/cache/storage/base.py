"""The base the storage backends build on (`StorageBase`), and what every `Storage` promises
(the protocol and its roles are in `sitecache.cache.storage.roles`).

A backend stores encoded entries (`sitecache.cache.entry`) under opaque keys, keeps an index of
them (URL, host, tags, sizes, times) so that counting, listing, tag lookups and GC never walk
the store, and holds the little shared state the cache needs: named JSON-ish values (settings,
preload progress), counters, cross-process locks and a purge *generation* that changes on every
purge so that an in-process memory tier can tell, on each request, that it must forget.

Every method may raise `StorageError` (disk full, Redis down, ...); nothing else escapes.

Publication under concurrency: a purge bumps the generation, then
removes the entries it finds (or invalidates them all at once, `Storage.invalidate_all`), then
bumps again. A renderer reads the generation before it reads
the site, and stores with ``put(..., generation=<that value>)``, which every backend refuses
atomically once the generation has moved. So an entry rendered before a purge began is either
stored before the purge looks for it (and removed by it) or refused; never left behind.

`StorageBase` holds what every backend would otherwise repeat (Django's ``BaseCache``): the
composite operations (chunked deletes and lookups, removal reports, eviction order, filtered
listing, summary) over a few primitives per backend, and the one translation of a backend's
own errors into `StorageError` (`StorageBase.translate_errors`).

Invalidating everything is O(1): every entry is stored under the storage's current
*epoch*, and `Storage.invalidate_all` moves to a new one. Entries of an older epoch are misses,
and no count, listing or index lookup sees them from that moment; their rows, bodies and keys
are removed afterwards in bounded slices (`Storage.remove_invalidated`, run by the GC timer),
never on a request, and `Storage.pending_removal` says what is left. The purge of expired
entries works alike (`Storage.invalidate_expired`): it moves a cut in time, and entries that
expired before it are no longer counted, listed or found (they were misses already).
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, ClassVar

from sitecache.cache.entry import CacheEntry, EntryInfo, decode_entry, encode_entry
from sitecache.cache.storage.epochs import EpochOperations
from sitecache.cache.storage.records import (
    ANY_GENERATION,
    DIMENSIONS,
    STORE_IDENTITY,
    Announcements,
    Dimension,
    EntryStatus,
    PendingRemoval,
    RemovalReport,
    StorageError,
    StorageSummary,
    StorageUnavailable,
    StorageUnusable,
    UnusableKind,
    chunks,
    matches_filter,
)
from sitecache.cache.storage.roles import (
    Announcer,
    EntryStore,
    Generations,
    LockStore,
    ResetListener,
    SharedState,
    Storage,
)

if TYPE_CHECKING:
    from sitecache.cache.storage.breaker import CircuitBreaker

logger = logging.getLogger("sitecache.cache")


__all__ = [
    "ANY_GENERATION",
    "DIMENSIONS",
    "STORE_IDENTITY",
    "Announcements",
    "Announcer",
    "Dimension",
    "EntryStatus",
    "EntryStore",
    "Generations",
    "LockStore",
    "PendingRemoval",
    "RemovalReport",
    "ResetListener",
    "SharedState",
    "Storage",
    "StorageBase",
    "StorageError",
    "StorageSummary",
    "StorageUnavailable",
    "StorageUnusable",
    "UnusableKind",
    "chunks",
    "matches_filter",
]


class _Translation:
    """The context manager `StorageBase.translate_errors` returns (a class, not a generator:
    it wraps every storage call, `get` and `put` of the request path included)."""

    __slots__ = ("probe", "storage", "what")

    def __init__(self, storage: StorageBase, what: str) -> None:
        self.storage = storage
        self.what = what
        self.probe = False

    def __enter__(self) -> None:
        breaker = self.storage.breaker
        if breaker is not None:
            self.probe = breaker.before()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        storage = self.storage
        breaker = storage.breaker
        if error is None:
            if breaker is not None:
                breaker.succeeded(self.probe)
            return
        if isinstance(error, storage.unavailable_errors):
            if breaker is not None:
                breaker.failed(error, self.probe)
            raise StorageUnavailable(f"{storage.error_label} {self.what}: {error}") from error
        if isinstance(error, storage.storage_errors):
            if breaker is not None:
                breaker.succeeded(self.probe)  # the store answered, with an error
            unusable = storage.recover(error, self.what)
            if unusable is not None:
                raise unusable from error
            raise StorageError(f"{storage.error_label} {self.what}: {error}") from error
        if breaker is not None and self.probe:
            breaker.succeeded(self.probe)  # not the store's failure: let the next call probe


class StorageBase(EpochOperations, Storage):
    """The composite operations of `Storage`, written once over each backend's primitives.

    A backend implements the public primitives of `Storage` (`get`, `put`, named values,
    counters, locks, the generation) and the protected ones below (each marked abstract);
    `delete`, `mark_stale`, `keys_for`, `infos`, `expired_keys`, `eviction_candidates`,
    `list_entries` and `summary` are built here: they chunk key lists, build the removal
    reports, fix the eviction order and run every primitive inside `translate_errors`, so a
    protected primitive translates nothing itself. ``housekeeping`` and ``close`` do nothing
    unless a backend has something to do.

    A backend configures the translation with class attributes: `storage_errors` (its errors,
    raised as `StorageError`), `unavailable_errors` (a store that did not answer, raised as
    `StorageUnavailable` and reported to the `breaker` when it has one) and `error_label`.
    """

    #: The backend's errors that mean "the store failed" (raised as `StorageError`).
    storage_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    #: `put` frees the lock its ``release`` names (Redis: in the write's own script).
    frees_locks_in_put: bool = False
    #: The backend's errors that mean "the store did not answer" (`StorageUnavailable`).
    unavailable_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    #: How error messages name the store (``"disk cache"``, ``"Redis"``).
    error_label: ClassVar[str] = "cache storage"
    #: Keys per delete, soft purge or row read (one transaction or script each).
    batch_size: ClassVar[int] = 500
    #: Values per index lookup (one query each); ``None``: all in one.
    lookup_batch_size: ClassVar[int | None] = None
    #: Opened after a store failed to answer (a store over the network); ``None``: none.
    breaker: CircuitBreaker | None = None

    #: Told when the store dropped every entry at once (`on_reset`); see `_reset`.
    _reset_listeners: list[ResetListener] | None = None
    #: Resets that happened before the first listener came (while the store was opened).
    _untold_resets: list[str] | None = None

    def recover(self, error: BaseException, what: str) -> StorageUnusable | None:
        """Called with each of the backend's own errors (`storage_errors`) before it is
        translated: a backend that tells a damaged, full or unwritable store from an ordinary
        failure repairs what it can (moves a damaged file aside, drops a foreign key) and
        returns the `StorageUnusable` to raise instead; ``None`` (the default): an ordinary
        `StorageError`. ``what`` names the operation."""
        del error, what
        return None

    def warnings(self) -> list[tuple[str, str]]:
        """``(code, message)`` pairs an administrator should see (``GET /status``): the store
        cannot be used now, or was found damaged and started empty. None by default."""
        return []

    def on_reset(self, listener: ResetListener) -> None:
        """Tell ``listener`` (with the reason) each time this store drops every entry at once
        because it was found damaged or foreign; the resets that happened before the first
        listener came (while the store was opened) are told to it at once."""
        if self._reset_listeners is None:
            self._reset_listeners = []
        self._reset_listeners.append(listener)
        untold, self._untold_resets = self._untold_resets or [], None
        for reason in untold:
            self._tell_reset(listener, reason)

    def _reset(self, reason: str) -> None:
        """Tell the `on_reset` listeners that every entry is gone (kept for the first one when
        none listens yet)."""
        if not self._reset_listeners:
            self._untold_resets = [*(self._untold_resets or []), reason]
            return
        for listener in list(self._reset_listeners):
            self._tell_reset(listener, reason)

    @staticmethod
    def _tell_reset(listener: ResetListener, reason: str) -> None:
        try:
            listener(reason)
        except Exception:  # a listener's failure must not fail the storage call
            logger.exception("storage reset listener %r failed", listener)

    def translate_errors(self, what: str) -> _Translation:
        """A context manager that raises the backend's errors as `StorageError` (or
        `StorageUnavailable`) naming ``what``, behind the `breaker` when there is one.

        Raises:
            StorageUnavailable: the store did not answer, or the breaker is open.
            StorageError: the store failed.
        """
        return _Translation(self, what)

    def generation_for(self, key: str, lock: tuple[str, str, float] | None = None) -> object:
        """`generation` alone: the entry under ``key`` is read by `get`, ``lock`` taken by
        `acquire_lock`."""
        del key, lock
        return self.generation()

    # ------------------------------------------------------------------ composites
    def get_entry(self, key: str, generation: object = None) -> CacheEntry | None:
        """`get`, decoded."""
        return decode_entry(self.get(key, generation))

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
        """`put` of ``entry`` encoded, with its index row."""
        return self.put(
            key,
            encode_entry(entry),
            entry.info(key),
            ttl,
            generation=generation,
            replaces=replaces,
            release=release,
        )

    def announce(self, record: bytes) -> None:
        del record  # one machine's store: its users share their files already

    def announcements(self, cursor: str | None) -> Announcements | None:
        del cursor
        return None

    def delete(self, keys: Iterable[str]) -> RemovalReport:
        """Remove in batches (`batch_size`) with `_delete_rows`; report what was there."""
        return self._each_batch("delete", keys, self._delete_rows)

    def mark_stale(self, keys: Iterable[str], now: float) -> RemovalReport:
        """Expire at ``now`` in batches with `_stale_rows`; report every entry found."""
        return self._each_batch("soft purge", keys, lambda batch: self._stale_rows(batch, now))

    def _each_batch(
        self, what: str, keys: Iterable[str], step: Callable[[list[str]], list[EntryInfo]]
    ) -> RemovalReport:
        report = RemovalReport()
        for batch in chunks(sorted(set(keys)), self.batch_size):
            with self.translate_errors(what):
                rows = step(batch)
            for info in rows:
                report.add(info)
        return report

    def keys_for(self, dimension: Dimension, values: Iterable[str] | None) -> set[str]:
        """One `_lookup` per `lookup_batch_size` values; `_all_keys` for every host."""
        if dimension not in DIMENSIONS:
            raise ValueError(f"unknown index dimension {dimension!r}")
        if values is None:
            if dimension != "host":
                raise ValueError(f"keys_for({dimension!r}) needs values")
            with self.translate_errors("index"):
                return self._all_keys()
        found: set[str] = set()
        for batch in chunks(sorted(set(values)), self.lookup_batch_size):
            with self.translate_errors("index"):
                found |= self._lookup(dimension, batch)
        return found

    def infos(self, keys: Iterable[str]) -> list[EntryInfo]:
        """The rows `_rows` finds, in batches, ordered by key."""
        rows: list[EntryInfo] = []
        for batch in chunks(sorted(set(keys)), self.batch_size):
            with self.translate_errors("index"):
                rows.extend(self._rows(batch))
        return rows

    def expired_keys(self, before: float, limit: int) -> list[str]:
        """`_soonest_expiring` up to ``before``."""
        with self.translate_errors("index"):
            return self._soonest_expiring(before, limit)

    def eviction_candidates(self, limit: int) -> list[str]:
        """`_soonest_expiring`, then `_oldest_stored` without those already chosen.

        When fewer than ``limit`` entries expire, every one that does is chosen, so the
        ``limit`` oldest stored hold at least ``limit - chosen`` entries that never expire.
        """
        if limit <= 0:
            return []
        with self.translate_errors("index"):
            keys = self._soonest_expiring(float("inf"), limit)
            if len(keys) < limit:
                chosen = set(keys)
                keys += [key for key in self._oldest_stored(limit) if key not in chosen]
        return keys[:limit]

    def list_entries(
        self,
        offset: int,
        limit: int,
        *,
        now: float,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[EntryInfo], int]:
        """`_newest` without filters, `_matching` with them."""
        with self.translate_errors("index"):
            if not search and status is None:
                return self._newest(offset, limit)
            return self._matching(offset, limit, now, search, status)

    def _matching(
        self, offset: int, limit: int, now: float, search: str, status: EntryStatus | None
    ) -> tuple[list[EntryInfo], int]:
        """A page of the rows passing the filters, newest first, and their count: every row
        of `_every_row` through `matches_filter` (a backend with a query language overrides)."""
        rows = [
            info
            for info in self._every_row()
            if info.status and matches_filter(info, now, search, status)
        ]
        rows.sort(key=lambda info: (-info.created, info.url))
        return rows[offset : offset + limit], len(rows)

    def summary(self, now: float) -> StorageSummary:
        """The summary of `_counts`."""
        with self.translate_errors("index"):
            total, expired, size, compressed = self._counts(now)
        return StorageSummary(
            total=total,
            fresh=total - expired,
            expired=expired,
            bytes=size,
            compressed_bytes=compressed,
        )

    def housekeeping(self, budget: float) -> int:
        """Nothing to do (the store frees what goes); backends with upkeep override."""
        del budget
        return 0

    def fill_locks(self) -> LockStore:
        """The store's own named locks; backends with cheaper ones for misses override."""
        return self

    def close(self) -> None:
        """Nothing to release; backends with connections override."""

    # ------------------------------------------------------------------ primitives
    @abstractmethod
    def _delete_rows(self, keys: list[str]) -> list[EntryInfo]:
        """Remove the entries of ``keys`` (at most `batch_size`, sorted, distinct) and their
        index rows in one step; the rows that were there."""

    @abstractmethod
    def _stale_rows(self, keys: list[str], now: float) -> list[EntryInfo]:
        """Set the expiry of the entries of ``keys`` that are fresh at ``now`` to ``now`` (in
        the index and in the stored bytes), in one step; the rows found, as they were."""

    @abstractmethod
    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        """The index rows of ``keys`` (at most `batch_size`, sorted, distinct), by key."""

    @abstractmethod
    def _lookup(self, dimension: Dimension, values: list[str]) -> set[str]:
        """Keys of the entries whose ``dimension`` is one of ``values`` (one query)."""

    @abstractmethod
    def _all_keys(self) -> set[str]:
        """Every key in the index."""

    @abstractmethod
    def _soonest_expiring(self, before: float, limit: int) -> list[str]:
        """Up to ``limit`` keys of entries with an expiry at or before ``before``, by expiry,
        then by key."""

    @abstractmethod
    def _oldest_stored(self, limit: int) -> list[str]:
        """Up to ``limit`` keys, the oldest stored first (then by key), expiring or not."""

    @abstractmethod
    def _newest(self, offset: int, limit: int) -> tuple[list[EntryInfo], int]:
        """A page of page rows (``status > 0``), newest stored first, and the count of all."""

    @abstractmethod
    def _every_row(self) -> Iterable[EntryInfo]:
        """Every index row (for `_matching`)."""

    @abstractmethod
    def _counts(self, now: float) -> tuple[int, int, int, int]:
        """Pages, pages expired at ``now``, bytes and compressed bytes in the whole store."""

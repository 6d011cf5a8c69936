"""The one storage protocol every backend (memory, disk, Redis) implements.

A backend stores encoded entries (`sitecache.cache.entry`) under opaque keys, keeps an index of
them (URL, host, tags, sizes, times) so that counting, listing, tag lookups and GC never walk
the store, and holds the little shared state the cache needs: named JSON-ish values (settings,
preload progress), counters, cross-process locks and a purge *generation* that changes on every
purge so that an in-process memory tier can tell, on each request, that it must forget.

Every method may raise `StorageError` (disk full, Redis down, ...); nothing else escapes.

Publication under concurrency (CACHE_API.md "Invalidation"): a purge bumps the generation, then
removes the entries it finds, then bumps again. A renderer reads the generation before it reads
the site, and stores with ``put(..., generation=<that value>)``, which every backend refuses
atomically once the generation has moved. So an entry rendered before a purge began is either
stored before the purge looks for it (and removed by it) or refused; never left behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from sitecache.cache.entry import EntryInfo

__all__ = [
    "ANY_GENERATION",
    "EntryStatus",
    "RemovalReport",
    "Storage",
    "StorageError",
    "StorageSummary",
]

#: ``put(..., generation=ANY_GENERATION)`` stores whatever the generation is (tests, tools).
ANY_GENERATION: object = object()

EntryStatus = Literal["fresh", "expired"]


class StorageError(Exception):
    """The storage could not do what was asked; the cache degrades to passing through."""


@dataclass(slots=True)
class RemovalReport:
    """What a delete or a soft purge touched."""

    deleted: int = 0
    bytes: int = 0
    urls: list[str] = field(default_factory=list)

    def add(self, info: EntryInfo) -> None:
        """Count ``info`` (its URL once)."""
        self.deleted += 1
        self.bytes += info.size + info.compressed_size
        if info.url not in self.urls:
            self.urls.append(info.url)


@dataclass(frozen=True, slots=True)
class StorageSummary:
    """Counts and sizes from the index."""

    total: int
    fresh: int
    expired: int
    bytes: int
    compressed_bytes: int


class Storage(Protocol):
    """What the page cache needs from a store (see the module docstring)."""

    #: ``"memory"``, ``"disk"`` or ``"redis"``.
    backend: str
    #: Where the entries live (a directory, a Redis URL without password, ``"memory"``).
    location: str

    def get(self, key: str) -> bytes | None:
        """The encoded entry under ``key``, or ``None``."""

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
    ) -> bool:
        """Store ``data`` under ``key`` atomically and index it; ``ttl`` seconds of life
        (``None``: until deleted). Replaces any entry under ``key``.

        With ``generation`` (a value `generation` returned), the put is refused, atomically
        with respect to `bump_generation`, when the generation has moved since: a page rendered
        before a purge began must not outlive it. Returns whether the entry was stored.
        """

    def delete(self, keys: Iterable[str]) -> RemovalReport:
        """Remove the entries and their index rows; report what was there."""

    def mark_stale(self, keys: Iterable[str], now: float) -> RemovalReport:
        """Soft purge: make the entries expire at ``now`` (served stale while regenerated)."""

    def keys_for_tags(self, tags: Iterable[str]) -> set[str]:
        """Keys of the entries carrying any of ``tags``."""

    def keys_for_urls(self, urls: Iterable[str]) -> set[str]:
        """Keys of the entries (every variant) of the canonical ``urls``."""

    def keys_for_paths(self, paths: Iterable[str]) -> set[str]:
        """Keys of the entries (every host, query and variant) of ``paths``."""

    def infos(self, keys: Iterable[str]) -> list[EntryInfo]:
        """The index rows of ``keys`` (missing ones are skipped)."""

    def keys_for_hosts(self, hosts: Iterable[str] | None) -> set[str]:
        """Keys of the entries of ``hosts``; every key when ``hosts`` is ``None``."""

    def expired_keys(self, before: float, limit: int) -> list[str]:
        """Up to ``limit`` keys whose expiry (non-zero) is at or before ``before``."""

    def eviction_candidates(self, limit: int) -> list[str]:
        """Up to ``limit`` keys to evict first: those soonest to expire, then (entries fresh
        until purged) the oldest stored."""

    def list_entries(
        self,
        offset: int,
        limit: int,
        *,
        now: float,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[EntryInfo], int]:
        """A page of index rows, newest first, and the total matching count."""

    def summary(self, now: float) -> StorageSummary:
        """Counts and sizes of the whole store."""

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

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        """Take the cross-process lock ``name`` for ``ttl`` seconds; ``False`` if held."""

    def lock_owner(self, name: str) -> str | None:
        """Who holds the lock ``name`` now, or ``None`` when it is free or expired."""

    def release_lock(self, name: str, owner: str) -> None:
        """Release ``name`` if ``owner`` still holds it."""

    def generation(self) -> object:
        """A cheap token that changes whenever `bump_generation` runs anywhere."""

    def bump_generation(self) -> None:
        """Tell every process that cached copies of entries may be gone."""

    def housekeeping(self, budget: float) -> int:
        """Bounded upkeep GC runs (files of an older layout, free pages); how much it did."""

    def close(self) -> None:
        """Release connections and handles."""

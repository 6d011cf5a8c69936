"""The values the storage protocol speaks in: errors, removal reports, summaries, filters.

Kept apart from `sitecache.cache.storage.base` (the protocol and the composite operations), which
re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final, Literal

from sitecache.cache.entry import EntryInfo

__all__ = [
    "ANY_GENERATION",
    "DIMENSIONS",
    "STORE_IDENTITY",
    "Announcements",
    "Dimension",
    "EntryStatus",
    "PendingRemoval",
    "RemovalReport",
    "StorageError",
    "StorageSummary",
    "StorageUnavailable",
    "StorageUnusable",
    "UnusableKind",
    "chunks",
    "matches_filter",
]

#: The named value holding a random name of the store, where a backend can lose every entry at
#: once and start again (the disk index, moved aside when found damaged): what others keep of
#: its entries (static copies) belongs to the store of that name. A store without one (memory,
#: Redis: its own announcements say when it was emptied) never changes name.
STORE_IDENTITY: Final = "store_id"

#: ``put(..., generation=ANY_GENERATION)`` stores whatever the generation is (tests, tools).
ANY_GENERATION: object = object()

EntryStatus = Literal["fresh", "expired"]

#: What `Storage.keys_for` looks entries up by.
Dimension = Literal["tag", "url", "path", "host"]
DIMENSIONS: tuple[Dimension, ...] = ("tag", "url", "path", "host")


class StorageError(Exception):
    """The storage could not do what was asked; the cache degrades to passing through."""


class StorageUnavailable(StorageError):
    """The store did not answer (refused, timed out, or the breaker is open)."""


#: Why a store cannot be used (`StorageUnusable.kind`): its file is damaged or foreign (it is
#: moved aside, or dropped, and the store starts empty), its disk is full, or it cannot be
#: written (a read-only or unwritable directory).
UnusableKind = Literal["damaged", "full", "unwritable"]


class StorageUnusable(StorageError):
    """The store cannot be used now, for a reason the backend knows (`kind`): a request passes
    through uncached (``Cache-Status: ...; detail=storage``) and ``GET /status`` says why.

    Attributes:
        kind: ``"damaged"``, ``"full"`` or ``"unwritable"``.
    """

    def __init__(self, kind: UnusableKind, message: str) -> None:
        super().__init__(message)
        self.kind: UnusableKind = kind


@dataclass(slots=True)
class RemovalReport:
    """What a delete, a soft purge or an invalidation touched."""

    deleted: int = 0
    bytes: int = 0
    urls: list[str] = field(default_factory=list)
    #: the URLs already in `urls` (a list scan per entry made a 100k-entry purge quadratic)
    _listed: set[str] = field(default_factory=set, repr=False, compare=False)

    def add(self, info: EntryInfo) -> None:
        """Count ``info`` (its URL once)."""
        self.deleted += 1
        self.bytes += info.size + info.compressed_size
        if info.url not in self._listed:
            self._listed.add(info.url)
            self.urls.append(info.url)


@dataclass(frozen=True, slots=True)
class Announcements:
    """What `Storage.announcements` read: the records announced after a cursor, in order.

    Attributes:
        cursor: where the next read starts (after the last record here).
        records: the records, oldest first.
        complete: ``False`` when some records after the old cursor were dropped before they
            were read (the store keeps a bounded number): the reader must assume anything.
    """

    cursor: str
    records: list[bytes] = field(default_factory=list)
    complete: bool = True


@dataclass(frozen=True, slots=True)
class PendingRemoval:
    """What invalidations left for GC to remove: pages (Vary pointers not counted) and the
    bytes of their bodies and gzip copies."""

    entries: int = 0
    bytes: int = 0

    def __bool__(self) -> bool:
        return bool(self.entries or self.bytes)


@dataclass(frozen=True, slots=True)
class StorageSummary:
    """Counts and sizes from the index."""

    total: int
    fresh: int
    expired: int
    bytes: int
    compressed_bytes: int


def chunks(items: list[str], size: int | None) -> Iterator[list[str]]:
    """``items`` in slices of ``size`` (all at once when ``size`` is ``None``); none if empty."""
    if size is None:
        if items:
            yield items
        return
    for start in range(0, len(items), size):
        yield items[start : start + size]


def matches_filter(info: EntryInfo, now: float, search: str, status: EntryStatus | None) -> bool:
    """Whether an index row passes the list filters (`search` is a URL substring)."""
    if search and search.lower() not in info.url.lower():
        return False
    if status == "fresh":
        return info.is_fresh(now)
    if status == "expired":
        return not info.is_fresh(now)
    return True

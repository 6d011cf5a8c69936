"""The epoch operations of `StorageBase`: invalidations that walk nothing, and GC's
removal of what they left, written once over each backend's primitives.

`invalidate_all` moves the storage to a new epoch (every entry a miss at once);
`invalidate_expired` moves the expiry cut (expired entries leave every count, listing and
lookup at once); `remove_invalidated` deletes what both left, a short batch at a time;
`pending_removal` says how much is left.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Collection
from contextlib import AbstractContextManager

from sitecache.cache.storage.records import PendingRemoval, RemovalReport

__all__ = ["EpochOperations"]


class EpochOperations:
    """The composites of the epoch operations; a backend implements the primitives (each
    marked abstract), which run inside ``translate_errors`` (`StorageBase`)."""

    @abstractmethod
    def translate_errors(self, what: str) -> AbstractContextManager[None]:
        """The backend's errors as `StorageError` naming ``what`` (`StorageBase`)."""

    def invalidate_all(self) -> RemovalReport:
        """`_invalidate`: a new epoch; what the old one held, from its totals."""
        with self.translate_errors("invalidate"):
            entries, size = self._invalidate()
        return RemovalReport(deleted=entries, bytes=size)

    def invalidate_expired(self, before: float) -> RemovalReport:
        """`_invalidate_expired`: the cut moves to ``before`` (never back)."""
        with self.translate_errors("invalidate"):
            entries, size = self._invalidate_expired(before)
        return RemovalReport(deleted=entries, bytes=size)

    def only_hosts(self, hosts: Collection[str]) -> bool:
        """`_only_hosts` (no host: only an empty storage)."""
        with self.translate_errors("index"):
            return self._only_hosts(sorted(set(hosts)))

    def pending_removal(self) -> PendingRemoval:
        """`_pending`."""
        with self.translate_errors("index"):
            entries, size = self._pending()
        return PendingRemoval(entries=entries, bytes=size)

    def remove_invalidated(self, budget: float) -> int:
        """`_remove_invalidated_batch` until nothing is left or ``budget`` seconds passed (a
        batch is short: one transaction, one script or one ``HSCAN`` step)."""
        deadline = time.monotonic() + budget
        removed = 0
        while True:
            with self.translate_errors("removal of invalidated entries"):
                done = self._remove_invalidated_batch()
            removed += done
            if not done or time.monotonic() >= deadline:
                return removed

    # ------------------------------------------------------------------ primitives
    @abstractmethod
    def _invalidate(self) -> tuple[int, int]:
        """Move to a new epoch in one step; the pages and bytes (bodies and gzip copies) the
        old one held."""

    @abstractmethod
    def _invalidate_expired(self, before: float) -> tuple[int, int]:
        """Move the expiry cut to ``before`` when it is later, in one step; the pages and
        bytes of the entries it newly hides."""

    @abstractmethod
    def _only_hosts(self, hosts: list[str]) -> bool:
        """Whether every entry of the current epoch is of one of ``hosts`` (sorted, distinct)."""

    @abstractmethod
    def _pending(self) -> tuple[int, int]:
        """Pages and bytes older epochs and entries expired before the cut still hold."""

    @abstractmethod
    def _remove_invalidated_batch(self) -> int:
        """Remove one short batch of what older epochs hold, then of the entries expired
        before the cut; how much went (0: nothing left, the epochs' bookkeeping gone too)."""

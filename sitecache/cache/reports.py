"""What ``GET /cache`` and ``GET /stats`` show: index rows and counters as JSON objects."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final, Protocol

from sitecache.cache.counters import OWN_LABEL, PRELOAD_LABEL, Counters
from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage import EntryStatus, EntryStore, SharedState
from sitecache.cache.timeseries import read_series

__all__ = ["CacheReports"]

#: The request outcomes ``GET /stats`` reports.
OUTCOMES: Final = ("hit", "stale", "miss", "bypass")
#: The largest offset asked of the storage (far past any count, far from 64-bit overflow).
_FARTHEST_OFFSET: Final = 2**62


class ReportedStore(EntryStore, SharedState, Protocol):
    """What the reports read: the entries' index and the shared counters."""


class CacheReports:
    """Reads the index and the counters for the management API (see the module docstring).

    Args:
        storage: the backend (its index and its shared counters).
        counters: this process's counters (flushed before the figures are read).
        clock: Unix time.
    """

    def __init__(
        self, storage: ReportedStore, counters: Counters, clock: Callable[[], float]
    ) -> None:
        self.storage = storage
        self.counters = counters
        self.clock = clock

    def list_entries(
        self,
        page: int = 1,
        per_page: int = 20,
        *,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of entries as ``GET /cache`` shows them, and the total.

        Raises:
            StorageError: the storage failed.
        """
        now = self.clock()
        # An offset past any store's count, kept where every backend can add the page size
        # to it (Redis and SQLite stop at 64 bits): a page that far is empty, its total exact.
        offset = min((page - 1) * per_page, _FARTHEST_OFFSET)
        rows, total = self.storage.list_entries(
            offset, per_page, now=now, search=search, status=status
        )
        return [entry_json(row, now) for row in rows], total

    def stats(self) -> dict[str, Any]:
        """``GET /stats``: counts from the index, requests and purges from the counters.

        Raises:
            StorageError: the storage failed.
        """
        self.counters.flush()
        now = self.clock()
        summary = self.storage.summary(now)
        counters = self.storage.counters()
        requests = {name: counters.get(name, 0) for name in OUTCOMES}
        served = requests["hit"] + requests["stale"] + requests["miss"]
        hit_ratio = (requests["hit"] + requests["stale"]) / served if served else 0.0
        return {
            "generated": int(now),
            "since": self.counters.since(),
            "entries": {"total": summary.total, "fresh": summary.fresh, "expired": summary.expired},
            "bytes": {"total": summary.bytes, "compressed": summary.compressed_bytes},
            "requests": {**requests, "hit_ratio": round(hit_ratio, 4)},
            # Preload's visits, and the site's own traffic (the cache test's visits, the
            # administration requests), kept out of the visitors' figures above.
            "preload": _labelled(counters, PRELOAD_LABEL),
            "own": _labelled(counters, OWN_LABEL),
            "bypass_reasons": _by_prefix(counters, "bypass:"),
            "purges": _by_prefix(counters, "purge:"),
            # Requests by outcome per minute over the last 24 hours (all workers and nodes).
            "series": read_series(counters, now),
        }


def _labelled(counters: dict[str, int], label: str) -> dict[str, int]:
    """The outcome counts of the traffic counted under ``label`` (``<label>:<outcome>``)."""
    return {name: counters.get(f"{label}:{name}", 0) for name in OUTCOMES}


def _by_prefix(counters: dict[str, int], prefix: str) -> dict[str, int]:
    """The counters named ``<prefix><name>``, as ``{name: value}`` sorted by name."""
    return {
        name.removeprefix(prefix): value
        for name, value in sorted(counters.items())
        if name.startswith(prefix)
    }


def entry_json(info: EntryInfo, now: float) -> dict[str, Any]:
    """One entry as ``GET /cache`` lists it."""
    return {
        "url": info.url,
        "variant": info.variant,
        "status": "fresh" if info.is_fresh(now) else "expired",
        "size": info.size,
        "compressed_size": info.compressed_size,
        "created": _iso(info.created),
        "expires": _iso(info.expires) if info.expires else None,
        "tags": list(info.tags),
        "lifetime": info.lifetime,
    }


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))

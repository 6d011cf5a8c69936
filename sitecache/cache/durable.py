"""Where the cache keeps the named values that must outlive its storage: its settings and the
companion plugins' switches are configuration, not cache.

The cache storage (Redis, the disk index, memory) may lose anything: a Redis restarted without
persistence, ``FLUSHDB``, an eviction under ``allkeys-lru``. The values named durable
(`NamedValues.keep_durably`) are therefore written to a `DurableValues` first (the site's own
database, wired by the application: the cache layer never imports the site), and the storage
holds a fast copy that every process reads each second. A copy that is missing is rebuilt from
the durable value (never read as "no settings"), and every `DURABLE_CHECK_SECONDS` each process
compares the copy with the durable value and rewrites a copy that differs (older, or written
by a process that does not know the durable store). A `PageCache` built without one keeps its
named values in its storage alone, as before.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final, Protocol

__all__ = ["DURABLE_CHECK_SECONDS", "REBUILD_BACKOFF_SECONDS", "DurableValues"]

#: Seconds between two comparisons of a process's copies with the durable values.
DURABLE_CHECK_SECONDS: Final = 5.0
#: Seconds a process waits before it tries the durable values again after they failed.
REBUILD_BACKOFF_SECONDS: Final = 5.0


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

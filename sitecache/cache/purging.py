"""Invalidation: the one purge path every removal of an entry takes.

Every removal (a purge of any scope, GC of expired entries, eviction past the caps, the cache
test's cleanup, exact keys) goes through `Invalidator.purge`: bump the generation, find the
keys, remove them (or mark them stale), bump again, count, then tell the purge listeners
(static-file copies, webhooks). A page rendered before the first bump is refused by the
storage's conditional put (`Storage.put`); copies read into memory tiers before the second bump
carry a stamp no later request matches. Eviction removes pages that are still correct: it
skips the bumps, and still tells the listeners.

A purge of everything (and of the site, when its hosts are all the storage holds) walks
nothing: between the same two bumps it moves the storage to a new epoch
(`Storage.invalidate_all`), which makes every entry a miss at once and answers how many
entries and bytes it held from the running totals; GC removes them later in slices. A purge of
the expired entries moves a cut in time the same way (`Storage.invalidate_expired`). A soft
purge still visits each entry: marking an entry stale rewrites its own expiry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Protocol

from sitecache.cache.counters import Counters
from sitecache.cache.policy import CacheRules
from sitecache.cache.purge_targets import resolve_url
from sitecache.cache.settings import CacheSettings
from sitecache.cache.storage import Dimension, EntryStore, Generations, RemovalReport

__all__ = ["Invalidator", "KeyDimension", "PurgeListener", "PurgeResult"]

logger = logging.getLogger("sitecache.cache")

#: URLs a purge answer lists at most.
URL_REPORT_LIMIT: Final = 100
#: Keys removed per storage call.
CHUNK: Final = 500
#: Entries one eviction run looks at, at most.
EVICTION_BATCH: Final = 5000

#: What the index can find keys by (the storage's `Dimension`).
KeyDimension = Dimension


@dataclass(frozen=True, slots=True)
class PurgeResult:
    """What one purge removed."""

    deleted: int
    bytes: int
    scope: str
    urls: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    soft: bool = False

    def as_json(self) -> dict[str, int | str | list[str]]:
        """The response body of ``POST /cache``."""
        return {
            "deleted": self.deleted,
            "bytes": self.bytes,
            "scope": self.scope,
            "urls": self.urls[:URL_REPORT_LIMIT],
        }


PurgeListener = Callable[[PurgeResult], None]
"""Told every purge once it is done (failures are logged, never raised)."""


class PurgedStore(EntryStore, Generations, Protocol):
    """What the purges use: the entries and their index, the generation and the invalidations."""


@dataclass(eq=False, repr=False)
class Invalidator:
    """The one purge path and the purge scopes (see the module docstring).

    Args:
        storage: the backend.
        counters: where purges are counted (flushed after each purge).
        settings: the current settings (the stale window, the caps).
        rules: the hosts the site serves.
        clock: Unix time.
    """

    storage: PurgedStore
    counters: Counters
    settings: Callable[[], CacheSettings]
    rules: CacheRules
    clock: Callable[[], float]
    #: told of every purge, in order
    listeners: list[PurgeListener] = field(default_factory=list, init=False)

    # ------------------------------------------------------------------ finding
    def keys_for(self, dimension: KeyDimension, values: Iterable[str] | None) -> set[str]:
        """Keys of the entries matching any of ``values`` along ``dimension``: tags,
        canonical URLs (every variant), paths (every host, query and variant), or hosts
        (``None``: every key of the storage; only hosts accept it).

        Raises:
            StorageError: the storage failed.
        """
        if dimension == "host" and values is None:
            return self.storage.keys_for("host", None)
        wanted = set(values or ())
        if not wanted:
            return set()
        return self.storage.keys_for(dimension, wanted)

    # ------------------------------------------------------------------ the one path
    def purge(
        self,
        scope: str,
        find: Callable[[], Iterable[str]],
        *,
        soft: bool = False,
        tags: Iterable[str] = (),
        deadline: float | None = None,
        invalidates: bool = True,
    ) -> PurgeResult:
        """Bump, find the keys, remove them (or mark them stale), bump, count, tell the
        listeners. ``deadline`` (monotonic time) bounds the removal (GC's slice: the rest
        goes next time); ``invalidates=False`` skips the bumps (eviction).

        Raises:
            StorageError: the storage failed; the purge may be partly done (run it again).
        """
        # First bump: a page rendered before this point is refused by the conditional put, or
        # was stored before `find` runs and is found by it.
        if invalidates:
            self.storage.bump_generation()
        report = self._remove(list(find()), soft, deadline)
        # Second bump: copies read into memory tiers meanwhile carry an older stamp.
        if invalidates:
            self.storage.bump_generation()
        result = PurgeResult(
            deleted=report.deleted,
            bytes=report.bytes,
            scope=scope,
            urls=sorted(report.urls),
            tags=sorted(set(tags)),
            soft=soft,
        )
        return self._done(result)

    def invalidate(
        self, scope: str, step: Callable[[], RemovalReport] | None = None
    ) -> PurgeResult:
        """A purge that walks nothing: bump, ``step`` (default: move the storage to a new
        epoch, every entry a miss at once; the totals say how many it held), bump, count, tell
        the listeners (``urls`` is empty). GC removes what it invalidated later.

        Raises:
            StorageError: the storage failed; the purge may be partly done (run it again).
        """
        # The same two bumps as `purge`: a render begun before the first is refused by the
        # conditional put (else it would be stored under the new epoch), and memory tiers
        # forget what they read before the second.
        self.storage.bump_generation()
        report = step() if step is not None else self.storage.invalidate_all()
        self.storage.bump_generation()
        return self._done(PurgeResult(deleted=report.deleted, bytes=report.bytes, scope=scope))

    def storage_reset(self) -> PurgeResult:
        """The storage dropped every entry at once (found damaged, it started empty): tell
        the listeners of a purge of everything, so that what they keep of the lost entries
        (static-file copies, downstream caches) goes too. Counted as ``purge:storage_reset``;
        nothing is written to the storage (this runs inside one of its calls)."""
        result = PurgeResult(deleted=0, bytes=0, scope="all")
        self.counters.count("purge:storage_reset")
        self._tell(result)
        return result

    def _done(self, result: PurgeResult) -> PurgeResult:
        """Count ``result`` and tell the listeners."""
        scope = result.scope
        self.counters.count(f"purge:{scope}")
        self.counters.count(f"purged_entries:{scope}", result.deleted)
        self.counters.flush()
        self._tell(result)
        return result

    def _tell(self, result: PurgeResult) -> None:
        """Tell every listener of ``result`` (a failure is logged)."""
        for listener in list(self.listeners):
            try:
                listener(result)
            except Exception:
                logger.exception("purge listener %r failed", listener)

    def _remove(self, keys: list[str], soft: bool, deadline: float | None) -> RemovalReport:
        report = RemovalReport()
        for start in range(0, len(keys), CHUNK):
            if deadline is not None and start and time.monotonic() > deadline:
                break  # bounded work (GC): the rest goes in the next slice
            chunk = keys[start : start + CHUNK]
            if soft:
                done = self.storage.mark_stale(chunk, self.clock())
            else:
                done = self.storage.delete(chunk)
            report.deleted += done.deleted
            report.bytes += done.bytes
            report.urls.extend(done.urls[: max(0, URL_REPORT_LIMIT - len(report.urls))])
        return report

    # ------------------------------------------------------------------ scopes
    def remove(self, keys: Iterable[str], scope: str, *, soft: bool = False) -> PurgeResult:
        """Purge exactly these storage keys (the cache test's own entries, say).

        Raises:
            StorageError: the storage failed.
        """
        wanted = set(keys)
        return self.purge(scope, lambda: wanted, soft=soft)

    def purge_urls(
        self, urls: Iterable[str], *, soft: bool = False, scope: str = "url"
    ) -> PurgeResult:
        """Purge every variant of each URL (absolute, or a /path on every host).

        Raises:
            InvalidURL: a URL is not one of the site's (nothing was purged).
            StorageError: the storage failed.
        """
        canonical: set[str] = set()
        paths: set[str] = set()
        for url in urls:
            full, path = resolve_url(url, self.rules)
            if full is None:
                paths.add(path)
            else:
                canonical.add(full)
        return self.purge(
            scope, lambda: self.keys_for("url", canonical) | self.keys_for("path", paths), soft=soft
        )

    def purge_tags(
        self, tags: Iterable[str], *, soft: bool = False, scope: str = "tag"
    ) -> PurgeResult:
        """Purge every entry carrying any of ``tags``.

        Raises:
            StorageError: the storage failed.
        """
        wanted = {tag for tag in tags if tag}
        return self.purge(scope, lambda: self.keys_for("tag", wanted), soft=soft, tags=wanted)

    def purge_site(self, *, soft: bool = False) -> PurgeResult:
        """Purge every entry of the hosts this site serves: `invalidate` when they are all
        the storage holds (every host when the site names none), else their entries one by
        one (another site shares the storage). A soft purge marks each entry stale.

        Raises:
            StorageError: the storage failed.
        """
        hosts = self.rules.hosts
        # An entry of another host stored between this check and the new epoch is purged
        # too: one more miss, never a stale page.
        if not soft and (hosts is None or self.storage.only_hosts(hosts)):
            return self.invalidate("site")
        served = sorted(hosts) if hosts is not None else None
        return self.purge("site", lambda: self.keys_for("host", served), soft=soft)

    def purge_all(self, *, soft: bool = False) -> PurgeResult:
        """Purge every entry of every host in this storage: `invalidate`; a soft purge marks
        each entry stale instead (it must visit each one: the expiry is the entry's own).

        Raises:
            StorageError: the storage failed.
        """
        if not soft:
            return self.invalidate("all")
        return self.purge("all", lambda: self.keys_for("host", None), soft=True)

    def purge_expired(self, *, budget: float | None = None, limit: int = 2000) -> PurgeResult:
        """Without ``budget`` (an administrator's purge): every entry past its stale window
        at once, walking none (`Storage.invalidate_expired`: they leave every count, listing
        and lookup; every request missed them already; GC deletes them later). With it (GC's
        bounded slice): delete up to ``limit`` of them, soonest expired first, for at most
        about ``budget`` seconds (it runs again soon while more remain).

        Raises:
            StorageError: the storage failed.
        """
        before = self.clock() - self.settings().stale_while_revalidate
        if budget is None:
            return self.invalidate("expired", lambda: self.storage.invalidate_expired(before))
        deadline = time.monotonic() + budget
        return self.purge(
            "expired", lambda: self.storage.expired_keys(before, limit), deadline=deadline
        )

    def has_expired(self, before: float) -> bool:
        """Whether an entry expired at or before ``before`` is still stored.

        Raises:
            StorageError: the storage failed.
        """
        return bool(self.storage.expired_keys(before, 1))

    def enforce_limits(self, *, budget: float = 0.25) -> PurgeResult | None:
        """Evict entries past ``max_entries`` / ``max_size_mb`` down to 90 % of the cap, the
        soonest to expire first (then the oldest), for at most about ``budget`` seconds; the
        eviction, or ``None`` when under both caps. Run in the background, never on a request.

        Raises:
            StorageError: the storage failed.
        """
        excess = self._excess(self.settings())
        if not excess:
            return None
        keys = self.storage.eviction_candidates(min(excess, EVICTION_BATCH))
        deadline = time.monotonic() + budget
        return self.purge("evicted", lambda: keys, deadline=deadline, invalidates=False)

    def _excess(self, settings: CacheSettings) -> int:
        """How many entries are over the caps (0 when under both, or without caps)."""
        if not settings.max_entries and not settings.max_bytes:
            return 0
        summary = self.storage.summary(self.clock())
        stored_bytes = summary.bytes + summary.compressed_bytes
        excess = 0
        if settings.max_entries and summary.total > settings.max_entries:
            excess = summary.total - int(settings.max_entries * 0.9)
        if settings.max_bytes and stored_bytes > settings.max_bytes and summary.total:
            average = stored_bytes / summary.total
            excess = max(excess, int((stored_bytes - settings.max_bytes * 0.9) / average) + 1)
        return excess

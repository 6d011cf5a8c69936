"""The cache engine: the one door to the storage, composed of small parts with one job each.

`CacheEngine` is what the middleware serves from and what the management API, the plugins,
the timers, the site's hooks and the command line call; none of them touches the storage
itself. Per process it composes:

- `NamedValues` (`sitecache.cache.named_values`): the storage's named values, and the one
  poller that re-reads the watched ones (the settings, the plugin switches) at most once a
  second and tells their subscribers when one changed;
- `SettingsStore` (`sitecache.cache.settings_store`): the compiled settings and their writes;
- `Counters` (`sitecache.cache.counters`): hit/miss/bypass counters, flushed at most once a
  second;
- `Invalidator` (`sitecache.cache.purging`): the one purge path every removal takes;
- `Locks` (`sitecache.cache.locks`): cross-process locks with this process's owner tokens;
- `CacheReports` (`sitecache.cache.reports`): what ``GET /cache`` and ``GET /stats`` show;
- the purge hold (`sitecache.cache.hold`): while a purge owed to a content change could not
  be applied, the cache is bypassed on every process of the node;
- the miss coalescer (`sitecache.cache.fills`): one render per missing page at a time.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from sitecache.cache.counters import Counters
from sitecache.cache.durable import DurableValues
from sitecache.cache.entry import CacheEntry
from sitecache.cache.fills import FillCoordinator
from sitecache.cache.health_probe import probe_storage
from sitecache.cache.hold import PurgeHold
from sitecache.cache.locks import Locks
from sitecache.cache.named_values import NamedValues, Subscriber
from sitecache.cache.policy import CacheRules
from sitecache.cache.purge_targets import resolve_url
from sitecache.cache.purging import Invalidator, KeyDimension, PurgeListener, PurgeResult
from sitecache.cache.reports import CacheReports
from sitecache.cache.settings import CacheSettings, purging_changes
from sitecache.cache.settings_store import SETTINGS_NAME, SettingsStore
from sitecache.cache.storage import (
    STORE_IDENTITY,
    Announcements,
    EntryStatus,
    PendingRemoval,
    Storage,
    StorageError,
)
from sitecache.cache.storage_log import RateLimitedLog
from sitecache.domain_errors import InvalidSettings

__all__ = ["SETTINGS_NAME", "CacheEngine", "PurgeListener", "PurgeResult"]

logger = logging.getLogger("sitecache.cache")

#: The named value `probe_writable` writes.
STATUS_PROBE: Final = "status_probe"


class CacheEngine:
    """The storage and everything the cache keeps per process (see the module docstring).

    Args:
        storage: the backend.
        rules: the deployment's fixed rules (hosts, bypass paths, auth cookies).
        clock: Unix time (tests pass a fake one).
        memory_tier_bytes: the bound of the in-process tier (0 turns it off).
        settings_interval: seconds between two poll rounds of the watched named values.
        flush_interval: seconds between two counter flushes on the request path.
        hold_path: the marker file of the purge hold shared by the node's processes
            (``None``: a hold of this process only).
    """

    def __init__(
        self,
        storage: Storage,
        rules: CacheRules | None = None,
        *,
        clock: Callable[[], float] = time.time,
        memory_tier_bytes: int = 64 * 1024 * 1024,
        settings_interval: float = 1.0,
        flush_interval: float = 1.0,
        hold_path: Path | None = None,
    ) -> None:
        #: the backend: only the engine and the parts it composes call it (a test of the
        #: package's sources keeps every other module of it away)
        self.storage = storage
        self.rules = rules or CacheRules()
        self.clock = clock
        self.memory_tier_bytes = memory_tier_bytes
        self.storage_warning = RateLimitedLog()
        warn = self.storage_warning
        self.values = NamedValues(storage, interval=settings_interval, warn=warn)
        self.locks = Locks(storage, warn)
        self.counters = Counters(
            storage, self.values, clock=clock, interval=flush_interval, warn=warn
        )
        warn.count = self.counters.count  # every storage failure is counted (metrics)
        self._settings = SettingsStore(self.values, self.locks)
        self.invalidator = Invalidator(storage, self.counters, self.settings, self.rules, clock)
        self.reports = CacheReports(storage, self.counters, clock)
        #: told of every purge (static-file copies, webhooks), whatever removed the entries
        self.purge_listeners: list[PurgeListener] = self.invalidator.listeners
        self.hold = PurgeHold(hold_path)
        # A miss's lock may live elsewhere than the others (the disk backend's lock file).
        fill_locks = storage.fill_locks()
        self.fills = FillCoordinator(
            self.locks if fill_locks is storage else Locks(fill_locks, warn), warn
        )
        #: a render's store frees its fill lock in the same write (`Storage.put`'s
        #: ``release``: no round trip of its own)
        self.fill_release_in_store = fill_locks is storage and storage.frees_locks_in_put
        # A store found damaged starts empty: what the listeners keep of its entries
        # (static copies, downstream caches) must go with them.
        storage.on_reset(self._storage_reset)

    def _storage_reset(self, reason: str) -> None:
        """The storage dropped every entry at once (`Storage.on_reset`): log it and tell the
        purge listeners of a purge of everything."""
        logger.warning("cache storage reset: %s; the cache starts empty", reason)
        self.invalidator.storage_reset()

    # ------------------------------------------------------------------ settings
    def settings(self, now: float | None = None) -> CacheSettings:
        """The current settings (the watched values are re-read at most once per interval)."""
        if now is None:
            now = self.clock()
        if now >= self.values.due:
            self.values.poll(now)
        return self._settings.current

    def poll(self, now: float) -> None:
        """Run a poll round of the watched named values if one is due at ``now``."""
        self.values.poll(now)

    def watch(self, name: str, subscriber: Subscriber, *, what: str = "") -> None:
        """Tell ``subscriber`` each new value of the named value ``name`` (read by the poll
        rounds, or written by this process); ``what`` names it in warnings."""
        self.values.watch(name, subscriber, what=what)

    def reload_value(self, name: str) -> None:
        """Re-read the watched value ``name`` now, outside the poll rounds (a storage failure
        is logged; its subscribers keep what they were told)."""
        self.values.reload(name)

    def keep_durably(self, name: str) -> None:
        """Keep the named value ``name`` in the durable store once one is attached
        (`use_durable`)."""
        self.values.keep_durably(name)

    def use_durable(self, durable: DurableValues) -> None:
        """Keep the settings, the plugin switches and every other value named by
        `keep_durably` in ``durable`` (the site's database), the storage holding a copy that
        is rebuilt from it when lost (`sitecache.cache.durable`)."""
        self.values.use_durable(durable)

    def sync_durable(self) -> None:
        """Compare the copies of the durable values with them when due (the timers' thread
        calls this each tick; see `sitecache.cache.durable`)."""
        self.values.sync_durable()

    def settings_values(self) -> dict[str, Any]:
        """Every setting as stored now, read-only ones included (``GET /settings``)."""
        values = dict(self._settings.fresh().values)
        values["storage"] = self.storage.backend
        values["cache_path"] = self.storage.location
        return values

    def update_settings(self, update: object) -> dict[str, Any]:
        """Validate and apply a partial update, all or nothing; the full settings after it.

        Raises:
            InvalidSettings: a field breaks a rule (every bad field is named; nothing changed).
            StorageError: the storage failed.
        """
        return self._settings_changed(self._settings.update(update))

    def reset_settings(self) -> dict[str, Any]:
        """Back to the defaults (``{"reset": true}``); the full settings after it.

        Raises:
            StorageError: the storage failed.
        """
        return self._settings_changed(self._settings.reset())

    def _settings_changed(self, previous: Mapping[str, Any]) -> dict[str, Any]:
        """The full settings after a change from ``previous``, having purged the site when the
        change makes stored pages wrong to serve (`PURGING_CHANGES`: ending ``lock_down``, as
        WP Super Cache does, turning caching off, a page type now never cached, ...)."""
        values = self.settings_values()
        changed = purging_changes(previous, values)
        if changed:
            result = self.purge_site()
            logger.info(
                "settings changed (%s): the site's %d cached pages purged",
                ", ".join(changed),
                result.deleted,
            )
        return values

    def seed_settings(self, values: Mapping[str, Any]) -> None:
        """Store ``values`` as the settings when none are stored yet (a storage failure is
        logged: the cache then runs with what it has).

        Raises:
            ValueError: ``values`` are not valid settings.
        """
        try:
            self._settings.seed(values)
        except InvalidSettings as refused:
            raise ValueError(f"invalid cache settings: {refused.message}") from refused
        except StorageError as exc:
            self.storage_warning("cache settings not written: %s", exc)

    # ------------------------------------------------------------------ counters
    def counting_as(self, label: str) -> contextlib.AbstractContextManager[None]:
        """Count this thread's requests apart, as ``<label>:<name>`` (preload traffic is not
        the visitors' hits and misses)."""
        return self.counters.counting_as(label)

    def count(self, name: str, amount: int = 1) -> None:
        """Add to an in-process counter (flushed to storage at most once per interval)."""
        self.counters.count(name, amount)

    def maybe_flush(self, now: float) -> None:
        """Flush the counters if the interval has passed (called on the request path)."""
        counters = self.counters
        if now - counters.flushed >= counters.interval:
            counters.flush(now)

    def flush_counters(self, now: float | None = None) -> None:
        """Write the in-process counters to storage now (kept for later on a failure)."""
        self.counters.flush(now)

    # ------------------------------------------------------------------ entries
    def generation(self, key: str | None = None) -> object:
        """The purge generation now (read before anything a request renders or looks up);
        with ``key``, the key the request looks up first (`Storage.generation_for`).

        Raises:
            StorageError: the storage failed.
        """
        if key is None:
            return self.storage.generation()
        # Where the fill locks are the storage's own, its lookup may take the lock too.
        lock = self.fills.lock_ahead(key) if self.fill_release_in_store else None
        return self.storage.generation_for(key, lock)

    def forgo_lock(self, key: str) -> None:
        """The request that read ``key`` with `generation` found it stored after all (in the
        memory tier, put there meanwhile): free the fill lock that read may have taken."""
        if self.fill_release_in_store:
            self.fills.forgo(key)

    def load(self, key: str, generation: object = None) -> CacheEntry | None:
        """The stored entry under ``key`` (no memory tier), or ``None``; ``generation`` is
        the one the request read first (a backend may read the epoch it names).

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.get_entry(key, generation)

    def store(
        self,
        key: str,
        entry: CacheEntry,
        stale_while_revalidate: int,
        generation: object,
        *,
        replaces: bytes | None = None,
        release: tuple[str, str] | None = None,
    ) -> bool:
        """Write ``entry`` under ``key`` with a storage lifetime covering its stale window
        (``stale_while_revalidate`` seconds) and its ``stale-if-error`` time, unless the
        purge generation moved from ``generation`` (read before the page was rendered):
        whether it was stored.

        ``replaces`` (`CacheEntry.times` of the entry read): a store-back, refused unless that
        very entry is still stored (`Storage.put`). ``release`` (lock name, owner): the fill
        lock this render holds, freed by the same write where the backend can (Redis).

        Raises:
            StorageError: the storage failed.
        """
        ttl: float | None = None
        if entry.expires:
            window = stale_while_revalidate + entry.fresh.error_window
            ttl = max(1.0, entry.expires - self.clock()) + window + 60
        return self.storage.put_entry(
            key, entry, ttl, generation=generation, replaces=replaces, release=release
        )

    # ------------------------------------------------------------------ locks
    def acquire(self, name: str, ttl: float) -> str | None:
        """Take a cross-process lock; the owner token to release it, or ``None`` if held.

        Raises:
            StorageError: the storage failed.
        """
        return self.locks.acquire(name, ttl)

    def renew(self, name: str, owner: str, ttl: float) -> bool:
        """Extend ``owner``'s lock ``name`` by ``ttl`` seconds; whether it still holds it.

        Raises:
            StorageError: the storage failed.
        """
        return self.locks.renew(name, owner, ttl)

    def release(self, name: str, owner: str) -> None:
        """Release a lock taken with `acquire` (a storage failure is logged)."""
        self.locks.release(name, owner)

    # ------------------------------------------------------------------ named values
    def announce(self, record: bytes) -> None:
        """Tell every machine sharing the storage of ``record`` (`Storage.announce`).

        Raises:
            StorageError: the storage failed.
        """
        self.storage.announce(record)

    def announcements(self, cursor: str | None) -> Announcements | None:
        """What was announced after ``cursor`` (`Storage.announcements`; ``None``: the storage
        is one machine's).

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.announcements(cursor)

    def read_value(self, name: str) -> bytes | None:
        """The named value ``name`` (preload progress, GC schedule, ...), or ``None``.

        Raises:
            StorageError: the storage failed.
        """
        return self.values.read(name)

    def write_value(self, name: str, data: bytes) -> None:
        """Store the named value ``name`` (its watchers in this process are told at once).

        Raises:
            StorageError: the storage failed.
        """
        self.values.write(name, data)

    def read_record(self, name: str) -> dict[str, Any] | None:
        """The JSON object stored as ``name``; ``None`` when missing or not an object.

        Raises:
            StorageError: the storage failed.
        """
        return self.values.read_record(name)

    def write_record(self, name: str, record: Mapping[str, Any]) -> None:
        """Store ``record`` as the JSON named value ``name``.

        Raises:
            StorageError: the storage failed.
        """
        self.values.write_record(name, record)

    # ------------------------------------------------------------------ the storage itself
    @property
    def backend(self) -> str:
        """``"memory"``, ``"disk"`` or ``"redis"``."""
        return self.storage.backend

    @property
    def location(self) -> str:
        """Where the entries live (a directory, a Redis URL without password, ``"memory"``)."""
        return self.storage.location

    def probe_writable(self) -> None:
        """Write a small named value, to learn whether the storage takes writes now.

        Raises:
            StorageError: it does not.
        """
        self.values.write(STATUS_PROBE, str(int(self.clock())).encode("ascii"))

    def store_identity(self) -> bytes | None:
        """The storage's name for its current store (`STORE_IDENTITY`): it changes when the
        store lost every entry at once and started again (a damaged disk index moved aside);
        ``None`` for a store that never does.

        Raises:
            StorageError: the storage failed.
        """
        return self.values.read(STORE_IDENTITY)

    def probe_storage(self) -> str | None:
        """Put a probe entry, read it back and delete it (the site-health test of the cache):
        ``None`` when all three worked, else what went wrong (never raises for a storage
        failure; `sitecache.cache.health_probe`)."""
        return probe_storage(self.storage)

    def storage_warnings(self) -> list[tuple[str, str]]:
        """``(code, message)`` pairs the storage wants an administrator to see
        (`Storage.warnings`: it cannot be used now, it was found damaged and rebuilt)."""
        return self.storage.warnings()

    def housekeeping(self, budget: float) -> int:
        """The storage's bounded upkeep (old layouts, free pages); how much it did.

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.housekeeping(budget)

    def pending_removal(self) -> PendingRemoval:
        """What the purges that walk nothing (everything, the site, the expired entries)
        invalidated and GC has not removed yet.

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.pending_removal()

    def remove_invalidated(self, budget: float) -> int:
        """Remove what the purges that walk nothing invalidated, for at most about
        ``budget`` seconds (background work, never on a request); how much went.

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.remove_invalidated(budget)

    def keys_for(self, dimension: KeyDimension, values: Iterable[str] | None) -> set[str]:
        """Keys of the entries matching any of ``values`` by tag, canonical URL, path or host
        (hosts only: ``None`` is every key).

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.keys_for(dimension, values)

    # ------------------------------------------------------------------ invalidation
    def resolve_url(self, url: object) -> tuple[str | None, str]:
        """``(canonical URL or None for every host, path)`` of an absolute URL or a /path.

        Raises:
            InvalidURL: a host the site does not serve, a path escaping the site, not a URL.
        """
        return resolve_url(url, self.rules)

    def remove(self, keys: Iterable[str], scope: str, *, soft: bool = False) -> PurgeResult:
        """Purge exactly these storage keys through the one purge path (its listeners see
        them go).

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.remove(keys, scope, soft=soft)

    def purge_urls(
        self, urls: Iterable[str], *, soft: bool = False, scope: str = "url"
    ) -> PurgeResult:
        """Purge every variant of each URL (absolute, or a /path on every host).

        Raises:
            InvalidURL: a URL is not one of the site's (nothing was purged).
            StorageError: the storage failed.
        """
        return self.invalidator.purge_urls(urls, soft=soft, scope=scope)

    def purge_tags(
        self, tags: Iterable[str], *, soft: bool = False, scope: str = "tag"
    ) -> PurgeResult:
        """Purge every entry carrying any of ``tags``.

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.purge_tags(tags, soft=soft, scope=scope)

    def purge_site(self, *, soft: bool = False) -> PurgeResult:
        """Purge every entry of the hosts this site serves: in O(1) when they are all the
        storage holds (see `purge_all`).

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.purge_site(soft=soft)

    def purge_all(self, *, soft: bool = False) -> PurgeResult:
        """Purge every entry of every host in this storage, in O(1) at any size: every entry
        is a miss on every process once this returns, the rows and keys go later in GC's
        slices (`remove_invalidated`). A soft purge marks each entry stale (O(entries)).

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.purge_all(soft=soft)

    def purge_expired(self, *, budget: float | None = None, limit: int = 2000) -> PurgeResult:
        """Purge the entries past their stale window: all at once, walking none, without
        ``budget`` (``POST /cache {"expired": true}``); else delete up to ``limit`` of them
        for at most about ``budget`` seconds (GC's bounded slice).

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.purge_expired(budget=budget, limit=limit)

    def has_expired(self, before: float) -> bool:
        """Whether an entry that expired at or before ``before`` is still stored.

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.has_expired(before)

    def enforce_limits(self, *, budget: float = 0.25) -> PurgeResult | None:
        """Evict entries past ``max_entries`` / ``max_size_mb`` (background work); the
        eviction, or ``None`` when under both caps.

        Raises:
            StorageError: the storage failed.
        """
        return self.invalidator.enforce_limits(budget=budget)

    # ------------------------------------------------------------------ reading
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
        return self.reports.list_entries(page, per_page, search=search, status=status)

    def stats(self) -> dict[str, Any]:
        """``GET /stats``: counts from the index, requests and purges from the counters.

        Raises:
            StorageError: the storage failed.
        """
        return self.reports.stats()

    def stored_counters(self) -> dict[str, int]:
        """Every shared counter as the storage holds it (the sum of what every process has
        flushed; this process's own counts since its last flush are not in it), by name:
        ``hit``, ``preload:miss``, ``bypass:<reason>``, ...

        Raises:
            StorageError: the storage failed.
        """
        return self.storage.counters()

    def close(self) -> None:
        """Flush the counters and release the storage."""
        self.counters.flush()
        self.storage.close()

"""The cache engine: storage, settings, counters, the memory tier, and invalidation.

`CacheEngine` is what the middleware serves from and what the management API, the site's
hooks and the command line call. It keeps, per process:

- the compiled settings, re-read from storage at most once a second (parsed only when the
  stored bytes changed), so a change made in one worker reaches every worker within a second;
- hit/miss/bypass counters aggregated in memory and flushed at most once a second;
- the purge hold (`sitecache.cache.hold`): while a purge owed to a content change could not be
  applied, the cache is bypassed on every process of the node;
- the miss coalescer (`sitecache.cache.fills`): one render per missing page at a time.

Every purge follows one path (`CacheEngine._purge`): bump the generation, find the keys, remove
them, bump again, then tell the purge listeners. A page rendered before the first bump is
refused by the storage's conditional put (`Storage.put`); copies read into memory tiers before
the second bump carry a stamp no later request matches.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from sitecache.cache.entry import CacheEntry, EntryInfo, decode_entry, encode_entry
from sitecache.cache.fills import FillCoordinator
from sitecache.cache.hold import PurgeHold
from sitecache.cache.keys import canonical_url, normalize_host, normalize_url_path
from sitecache.cache.policy import CacheRules
from sitecache.cache.settings import CacheSettings, merge_settings, validate_settings_update
from sitecache.cache.storage import EntryStatus, RemovalReport, Storage, StorageError
from sitecache.errors import RestError

__all__ = ["CacheEngine", "PurgeResult"]

logger = logging.getLogger("sitecache.cache")

SETTINGS_NAME = "settings"
SINCE_NAME = "stats_since"
URL_REPORT_LIMIT = 100


@dataclass(frozen=True, slots=True)
class PurgeResult:
    """What one purge removed (CACHE_API.md ``POST /cache``)."""

    deleted: int
    bytes: int
    scope: str
    urls: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    soft: bool = False

    def as_json(self) -> dict[str, Any]:
        """The response body of ``POST /cache``."""
        return {
            "deleted": self.deleted,
            "bytes": self.bytes,
            "scope": self.scope,
            "urls": self.urls[:URL_REPORT_LIMIT],
        }


PurgeListener = Callable[[PurgeResult], None]


class _RateLimitedLog:
    """Logs each kind of storage failure (its message template) at most once per interval: a
    failing disk must not flood the log, and one kind of failure must not hide another."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self._last: dict[str, float] = {}

    def __call__(self, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._last.get(message, float("-inf")) >= self.interval:
            if len(self._last) > 256:
                self._last.clear()
            self._last[message] = now
            logger.warning(message, *args)


class CacheEngine:
    """Storage plus everything the cache keeps per process (see the module docstring).

    Args:
        storage: the backend.
        rules: the deployment's fixed rules (hosts, bypass paths, auth cookies).
        clock: Unix time (tests pass a fake one).
        memory_tier_bytes: the bound of the in-process tier (0 turns it off).
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
        self.storage = storage
        self.rules = rules or CacheRules()
        self.clock = clock
        self.memory_tier_bytes = memory_tier_bytes
        self.settings_interval = settings_interval
        self.flush_interval = flush_interval
        self.purge_listeners: list[PurgeListener] = []
        self.storage_warning = _RateLimitedLog()
        self._settings = CacheSettings.from_values(None)
        self._settings_raw: bytes | None = b""
        self._settings_checked = float("-inf")
        self._counts: dict[str, int] = {}
        self._counts_lock = threading.Lock()
        self._counting = threading.local()
        self._flushed = clock()
        self._since_recorded = False
        self.hold = PurgeHold(hold_path)
        self._owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.fills = FillCoordinator(storage, self._owner, self.storage_warning)

    # ------------------------------------------------------------------ settings
    def settings(self, now: float | None = None) -> CacheSettings:
        """The current settings, re-read from storage at most once per interval."""
        now = self.clock() if now is None else now
        if now - self._settings_checked >= self.settings_interval:
            self._settings_checked = now
            try:
                raw = self.storage.get_value(SETTINGS_NAME)
            except StorageError as exc:
                self.storage_warning("cache settings unreadable, keeping the last: %s", exc)
                return self._settings
            if raw != self._settings_raw:
                stored: Any = None
                if raw:
                    try:
                        stored = json.loads(raw)
                    except ValueError:
                        logger.warning("stored cache settings are not JSON; using defaults")
                try:
                    self._settings = CacheSettings.from_values(
                        stored if isinstance(stored, dict) else None
                    )
                except Exception:  # stored by something else than update_settings
                    logger.exception("stored cache settings unusable; keeping the last ones")
                self._settings_raw = raw
        return self._settings

    def settings_values(self) -> dict[str, Any]:
        """Every setting, read-only ones included (``GET /settings``)."""
        self._settings_checked = float("-inf")
        values = dict(self.settings().values)
        values["storage"] = self.storage.backend
        values["cache_path"] = self.storage.location
        return values

    def update_settings(self, update: Any) -> dict[str, Any] | RestError:
        """Validate and apply a partial update, all or nothing; the full settings after it."""
        clean = validate_settings_update(update)
        if isinstance(clean, RestError):
            return clean
        with self._settings_lock():
            # The stored settings, not this process's copy (up to a second old): two workers
            # changing different keys must both be kept.
            current = merge_settings(self._stored_settings())
            if "pages" in clean:
                clean["pages"] = {**current.get("pages", {}), **clean["pages"]}
            current.update(clean)
            self._write_settings(current)
        return self.settings_values()

    @contextlib.contextmanager
    def _settings_lock(self) -> Iterator[None]:
        """The cross-process lock of settings writes (waits up to 5 s for another writer,
        then writes anyway).

        Raises:
            StorageError: the storage failed (at once: a down store is not waited out).
        """
        owner = None
        deadline = time.monotonic() + 5
        while owner is None and time.monotonic() < deadline:
            owner = self.acquire("settings-write", 10)
            if owner is None:
                time.sleep(0.01)
        try:
            yield
        finally:
            if owner is not None:
                self.release("settings-write", owner)

    def reset_settings(self) -> dict[str, Any]:
        """Back to the defaults (``{"reset": true}``)."""
        self._write_settings(merge_settings(None))
        return self.settings_values()

    def _stored_settings(self) -> dict[str, Any] | None:
        raw = self.storage.get_value(SETTINGS_NAME)
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _write_settings(self, values: Mapping[str, Any]) -> None:
        raw = json.dumps(values, sort_keys=True).encode("utf-8")
        self.storage.set_value(SETTINGS_NAME, raw)
        self._settings_raw = None
        self._settings_checked = float("-inf")
        self.settings()

    # ------------------------------------------------------------------ counters
    @contextlib.contextmanager
    def counting_as(self, label: str) -> Iterator[None]:
        """Count this thread's requests apart, as ``<label>:<name>`` (preload traffic is not
        the visitors' hits and misses)."""
        previous = getattr(self._counting, "label", "")
        self._counting.label = label
        try:
            yield
        finally:
            self._counting.label = previous

    def count(self, name: str, amount: int = 1) -> None:
        """Add to an in-process counter (flushed to storage at most once per interval)."""
        label = getattr(self._counting, "label", "")
        if label:
            name = f"{label}:{name}"
        with self._counts_lock:  # gthread workers count from several threads
            counts = self._counts
            counts[name] = counts.get(name, 0) + amount

    def maybe_flush(self, now: float) -> None:
        """Flush the counters if the interval has passed (called on the request path)."""
        if now - self._flushed >= self.flush_interval:
            self.flush_counters(now)

    def flush_counters(self, now: float | None = None) -> None:
        """Write the in-process counters to storage now."""
        self._flushed = self.clock() if now is None else now
        with self._counts_lock:
            counts, self._counts = self._counts, {}
        if not counts:
            return
        try:
            if not self._since_recorded:
                # When counting started, once per store (any process may be the first).
                if self.storage.get_value(SINCE_NAME) is None:
                    self.storage.set_value(SINCE_NAME, str(int(self._flushed)).encode())
                self._since_recorded = True
            self.storage.add_counters(counts)
        except StorageError as exc:
            self.storage_warning("cache counters not written yet: %s", exc)
            with self._counts_lock:  # kept for the next flush
                for name, value in counts.items():
                    self._counts[name] = self._counts.get(name, 0) + value

    # ------------------------------------------------------------------ entries
    def check_generation(self) -> object:
        """The purge generation now (read before anything a request renders or looks up)."""
        return self.storage.generation()

    def load(self, key: str) -> CacheEntry | None:
        """The stored entry under ``key`` (no memory tier), or ``None``."""
        return decode_entry(self.storage.get(key))

    def store(
        self, key: str, entry: CacheEntry, stale_while_revalidate: int, generation: object
    ) -> bool:
        """Write ``entry`` under ``key`` with a storage lifetime covering its stale window,
        unless the purge generation moved from ``generation`` (read before the page was
        rendered): whether it was stored."""
        ttl: float | None = None
        if entry.expires:
            ttl = max(1.0, entry.expires - self.clock()) + stale_while_revalidate + 60
        return self.storage.put(
            key, encode_entry(entry), entry.info(key), ttl, generation=generation
        )

    def acquire(self, name: str, ttl: float) -> str | None:
        """Take a cross-process lock; the owner token to release it, or ``None`` if held."""
        # The pid too: a forked worker shares ``_owner`` (and often thread idents) with its
        # parent and siblings, and must never pass for their lock holder.
        owner = f"{self._owner}-{os.getpid()}-{threading.get_ident()}"
        return owner if self.storage.acquire_lock(name, owner, ttl) else None

    def release(self, name: str, owner: str) -> None:
        """Release a lock taken with `acquire`."""
        try:
            self.storage.release_lock(name, owner)
        except StorageError as exc:
            self.storage_warning("cache lock %s not released: %s", name, exc)

    # ------------------------------------------------------------------ invalidation
    def _purge(
        self,
        scope: str,
        find: Callable[[], Iterable[str]],
        soft: bool = False,
        tags: Iterable[str] = (),
        *,
        deadline: float | None = None,
        invalidates: bool = True,
    ) -> PurgeResult:
        """The one purge path: bump, find the keys, remove (or mark stale), bump, tell the
        listeners (see the module docstring).

        Raises:
            StorageError: the storage failed; the purge may be partly done (run it again).
        """
        # First bump: a page rendered before this point is refused by the conditional put, or
        # was stored before `find` runs and is found by it. (Eviction removes pages that are
        # still correct: it need not invalidate anything.)
        if invalidates:
            self.storage.bump_generation()
        report = RemovalReport()
        keys = list(find())
        for start in range(0, len(keys), 500):
            if deadline is not None and start and time.monotonic() > deadline:
                break  # bounded work (GC): the rest goes in the next slice
            chunk = keys[start : start + 500]
            if soft:
                done = self.storage.mark_stale(chunk, self.clock())
            else:
                done = self.storage.delete(chunk)
            report.deleted += done.deleted
            report.bytes += done.bytes
            report.urls.extend(done.urls[: max(0, URL_REPORT_LIMIT - len(report.urls))])
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
        self.count(f"purge:{scope}")
        self.count(f"purged_entries:{scope}", report.deleted)
        self.flush_counters()
        for listener in list(self.purge_listeners):
            try:
                listener(result)
            except Exception:
                logger.exception("purge listener %r failed", listener)
        return result

    def resolve_url(self, url: str) -> tuple[str | None, str] | RestError:
        """``(canonical URL or None for every host, path)`` of an absolute URL or a /path.

        Errors (400): a host the site does not serve, a path escaping the site, not a URL.
        """
        if not isinstance(url, str) or not url.strip():
            return _bad_url(url, "is empty")
        try:
            parts = urlsplit(url.strip())
            netloc_host = parts.hostname  # raises on a malformed IPv6 literal or port
            del netloc_host
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            return _bad_url(url, "is not a valid URL")
        if parts.scheme and parts.scheme not in ("http", "https"):
            return _bad_url(url, "is not an http or https URL")
        path = parts.path or "/"
        if not path.startswith("/"):
            return _bad_url(url, "must be an absolute URL or start with /")
        decoded = unquote(path)
        segments = decoded.split("/")
        if ".." in segments or "." in segments or "\\" in decoded:
            return _bad_url(url, "escapes the cache (dot segments are not allowed)")
        if any(ord(char) < 32 for char in decoded):
            return _bad_url(url, "contains control characters")
        normalized = normalize_url_path(path)
        if not parts.netloc:
            if parts.query:
                return _bad_url(url, "needs a scheme and host when it has a query string")
            return None, normalized
        host = normalize_host(parts.netloc, parts.scheme)
        if not self.rules.serves_host(host):
            return _bad_url(url, f"is on a host this site does not serve ({host})")
        query = parse_qsl(parts.query, keep_blank_values=True, encoding="latin-1")
        return canonical_url(parts.scheme, host, normalized, query), normalized

    def purge_urls(
        self, urls: Iterable[str], *, soft: bool = False, scope: str = "url"
    ) -> PurgeResult | RestError:
        """Purge every variant of each URL (absolute, or a /path on every host)."""
        canonical: set[str] = set()
        paths: set[str] = set()
        for url in urls:
            resolved = self.resolve_url(url)
            if isinstance(resolved, RestError):
                return resolved
            full, path = resolved
            if full is None:
                paths.add(path)
            else:
                canonical.add(full)

        def find() -> set[str]:
            keys = self.storage.keys_for("url", canonical) if canonical else set()
            if paths:
                keys |= self.storage.keys_for("path", paths)
            return keys

        return self._purge(scope, find, soft)

    def purge_tags(
        self, tags: Iterable[str], *, soft: bool = False, scope: str = "tag"
    ) -> PurgeResult:
        """Purge every entry carrying any of ``tags``."""
        wanted = {tag for tag in tags if tag}
        return self._purge(
            scope, lambda: self.storage.keys_for("tag", wanted) if wanted else (), soft, wanted
        )

    def purge_keys(self, keys: Iterable[str], *, scope: str, soft: bool = False) -> PurgeResult:
        """Purge exactly these storage keys (the cache test's own entries) through the one
        purge path, so every purge listener sees them go."""
        wanted = set(keys)
        return self._purge(scope, lambda: wanted, soft)

    def purge_expired(self, *, budget: float | None = None, limit: int = 2000) -> PurgeResult:
        """Delete up to ``limit`` entries past their stale window, soonest expired first, for
        at most about ``budget`` seconds (GC's bounded slice: it runs again soon while more
        remain)."""
        before = self.clock() - self.settings().stale_while_revalidate
        deadline = None if budget is None else time.monotonic() + budget
        return self._purge(
            "expired", lambda: self.storage.expired_keys(before, limit), deadline=deadline
        )

    def enforce_limits(self, *, budget: float = 0.25) -> PurgeResult | None:
        """Evict entries past ``max_entries`` / ``max_size_mb`` down to 90 % of the cap, the
        soonest to expire first (then the oldest), for at most about ``budget`` seconds; the
        eviction, or ``None`` when under both caps. Run in the background, never on a request.
        """
        settings = self.settings()
        if not settings.max_entries and not settings.max_bytes:
            return None
        summary = self.storage.summary(self.clock())
        stored_bytes = summary.bytes + summary.compressed_bytes
        excess = 0
        if settings.max_entries and summary.total > settings.max_entries:
            excess = summary.total - int(settings.max_entries * 0.9)
        if settings.max_bytes and stored_bytes > settings.max_bytes and summary.total:
            average = stored_bytes / summary.total
            excess = max(excess, int((stored_bytes - settings.max_bytes * 0.9) / average) + 1)
        if not excess:
            return None
        keys = self.storage.eviction_candidates(min(excess, 5000))
        deadline = time.monotonic() + budget
        return self._purge("evicted", lambda: keys, deadline=deadline, invalidates=False)

    def purge_site(self, *, soft: bool = False) -> PurgeResult:
        """Purge every entry of the hosts this site serves."""
        hosts = self.rules.hosts
        return self._purge(
            "site",
            lambda: self.storage.keys_for("host", sorted(hosts) if hosts is not None else None),
            soft,
        )

    def purge_all(self, *, soft: bool = False) -> PurgeResult:
        """Purge every entry of every host in this storage."""
        return self._purge("all", lambda: self.storage.keys_for("host", None), soft)

    # ------------------------------------------------------------------ reading
    def list_entries(
        self,
        page: int = 1,
        per_page: int = 20,
        *,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of entries as ``GET /cache`` shows them, and the total."""
        now = self.clock()
        rows, total = self.storage.list_entries(
            (page - 1) * per_page, per_page, now=now, search=search, status=status
        )
        return [_entry_json(row, now) for row in rows], total

    def stats(self) -> dict[str, Any]:
        """``GET /stats``: counts from the index, requests and purges from the counters."""
        self.flush_counters()
        now = self.clock()
        summary = self.storage.summary(now)
        counters = self.storage.counters()
        kinds = ("hit", "stale", "miss", "bypass")
        requests = {name: counters.get(name, 0) for name in kinds}
        served = requests["hit"] + requests["stale"] + requests["miss"]
        hit_ratio = (requests["hit"] + requests["stale"]) / served if served else 0.0
        return {
            "generated": int(now),
            "since": self._since(),
            "entries": {"total": summary.total, "fresh": summary.fresh, "expired": summary.expired},
            "bytes": {"total": summary.bytes, "compressed": summary.compressed_bytes},
            "requests": {**requests, "hit_ratio": round(hit_ratio, 4)},
            # Preload's own visits, kept out of the visitors' figures above.
            "preload": {name: counters.get(f"preload:{name}", 0) for name in kinds},
            "bypass_reasons": {
                name.split(":", 1)[1]: value
                for name, value in sorted(counters.items())
                if name.startswith("bypass:")
            },
            "purges": {
                name.split(":", 1)[1]: value
                for name, value in sorted(counters.items())
                if name.startswith("purge:")
            },
        }

    def reset_stats(self) -> None:
        """Start the counters again from now."""
        with self._counts_lock:
            self._counts = {}
        self.storage.reset_counters()
        self.storage.set_value(SINCE_NAME, str(int(self.clock())).encode())

    def _since(self) -> int | None:
        """When the counters started (Unix time), if known."""
        raw = self.storage.get_value(SINCE_NAME)
        try:
            return int(raw) if raw else None
        except ValueError:
            return None

    def close(self) -> None:
        """Flush the counters and release the storage."""
        self.flush_counters()
        self.storage.close()


def _bad_url(url: object, why: str) -> RestError:
    return RestError(
        "rest_invalid_param",
        f"url {why}.",
        {"status": 400, "params": {"url": f"{url!r} {why}"}},
    )


def _entry_json(info: EntryInfo, now: float) -> dict[str, Any]:
    return {
        "url": info.url,
        "variant": info.variant,
        "status": "fresh" if info.is_fresh(now) else "expired",
        "size": info.size,
        "compressed_size": info.compressed_size,
        "created": _iso(info.created),
        "expires": _iso(info.expires) if info.expires else None,
        "tags": list(info.tags),
    }


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))

"""`Purger`: the purge API for an embedding application's own code, in any process.

A Django ``post_save`` handler, a Flask view that saves a form, a management command or a cron
job purges the pages the server's `PageCache` stored, through the same storage: a disk cache
directory on this machine, or a Redis namespace shared by every node. Every purge bumps the
storage's purge generation, so each worker of each node misses from the moment it returns
(`sitecache.cache.purging`); nothing needs to reach the server's processes.

Inside the server's process, `PageCache.purger` gives the same API on the cache's own engine.
Purge listeners run in the process that purges: a `Purger` of another process does not tell
the ones a server registered (static-file copies, webhooks of the companion plugins); a site
that uses those purges through the ``site-cache/v1`` API or ``sitecache cache flush``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from sitecache.cache.engine import CacheEngine
from sitecache.cache.policy import CacheRules
from sitecache.cache.purging import PurgeResult
from sitecache.cache.storage import Storage, open_storage

__all__ = ["Purger"]


class Purger:
    """Purges a page cache's storage by URL, by tag or whole, hard or soft.

    Args:
        storage: the storage the `PageCache` uses (``DiskStorage(same directory)``,
            ``RedisStorage(same URL, same namespace)``); closed by `close`.
        hosts: the hosts the cache serves, as given to `PageCache` (an absolute URL to purge
            must name one of them; ``None``: loopback names only). A ``/path`` purges that
            path on every host.
        engine: an engine already open (`PageCache.engine`) instead of ``storage``; `close`
            leaves it open.

    Raises:
        ValueError: neither or both of ``storage`` and ``engine`` are given.
    """

    def __init__(
        self,
        storage: Storage | None = None,
        *,
        hosts: Iterable[str] | None = None,
        engine: CacheEngine | None = None,
    ) -> None:
        if (storage is None) == (engine is None):
            raise ValueError("give a storage or an engine, not both")
        self._owns_engine = engine is None
        if storage is not None:
            rules = CacheRules(
                hosts=frozenset(host.lower() for host in hosts) if hosts is not None else None
            )
            # No memory tier: a purger never reads pages.
            engine = CacheEngine(storage, rules, memory_tier_bytes=0)
        self.engine: CacheEngine = engine  # type: ignore[assignment]

    @classmethod
    def open(
        cls,
        backend: str,
        *,
        path: str | Path | None = None,
        redis_url: str | None = None,
        namespace: str = "default",
        hosts: Iterable[str] | None = None,
    ) -> Purger:
        """A purger of the storage ``open_storage`` opens with these arguments (``disk`` with
        ``path``; ``redis`` with ``redis_url`` and ``namespace``).

        Raises:
            StorageError: the backend is unknown or cannot be opened.
        """
        storage = open_storage(backend, path=path, redis_url=redis_url, namespace=namespace)
        return cls(storage, hosts=hosts)

    def purge_url(self, url: str, *, soft: bool = False) -> PurgeResult:
        """Purge every variant of ``url`` (absolute, or a ``/path`` on every host); ``soft``
        marks the pages stale (served once more while one request renders them again).

        Raises:
            InvalidURL: ``url`` is not a page of the cache's hosts (nothing was purged).
            StorageError: the storage failed.
        """
        return self.engine.purge_urls([url], soft=soft)

    def purge_urls(self, urls: Iterable[str], *, soft: bool = False) -> PurgeResult:
        """Purge every variant of each of ``urls`` (see `purge_url`).

        Raises:
            InvalidURL: a URL is not a page of the cache's hosts (nothing was purged).
            StorageError: the storage failed.
        """
        return self.engine.purge_urls(urls, soft=soft)

    def purge_tags(self, tags: Iterable[str], *, soft: bool = False) -> PurgeResult:
        """Purge every page whose ``Cache-Tag`` named any of ``tags`` (a single string is one
        tag).

        Raises:
            StorageError: the storage failed.
        """
        return self.engine.purge_tags([tags] if isinstance(tags, str) else tags, soft=soft)

    def purge_all(self, *, soft: bool = False) -> PurgeResult:
        """Purge every page in the storage (hard: at once, at any size; soft: each page
        marked stale).

        Raises:
            StorageError: the storage failed.
        """
        return self.engine.purge_all(soft=soft)

    def close(self) -> None:
        """Flush the purge counters and close the storage (unless the engine was given)."""
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> Purger:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

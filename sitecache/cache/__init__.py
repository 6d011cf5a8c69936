"""The page cache: WSGI middleware, its engine, storage backends and cacheability policy.

`PageCache` wraps any WSGI application; `CacheEngine` holds the storage, the settings,
the counters and the invalidation API that the management routes, the site's hooks and the
command line call. An embedding application tells the cache about each view with
`cache_headers` / `cache_control` (`sitecache.cache.control`) and purges from its own code,
in any process, with a `Purger`.
"""

from sitecache.cache.control import (
    CacheDirectives,
    cache_control,
    cache_headers,
    never_store_headers,
)
from sitecache.cache.engine import CacheEngine, PurgeResult
from sitecache.cache.entry import CacheEntry, EntryInfo
from sitecache.cache.middleware import PageCache
from sitecache.cache.outcome import Outcome
from sitecache.cache.policy import CacheRules
from sitecache.cache.purger import Purger
from sitecache.cache.settings import DEFAULT_SETTINGS, SETTINGS_SCHEMA, CacheSettings
from sitecache.cache.storage import (
    DiskStorage,
    MemoryStorage,
    Storage,
    StorageError,
    StorageOptions,
    open_storage,
)

__all__ = [
    "DEFAULT_SETTINGS",
    "SETTINGS_SCHEMA",
    "CacheDirectives",
    "CacheEngine",
    "CacheEntry",
    "CacheRules",
    "CacheSettings",
    "DiskStorage",
    "EntryInfo",
    "MemoryStorage",
    "Outcome",
    "PageCache",
    "PurgeResult",
    "Purger",
    "Storage",
    "StorageError",
    "StorageOptions",
    "cache_control",
    "cache_headers",
    "never_store_headers",
    "open_storage",
]

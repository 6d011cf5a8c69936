"""The cache engine of a deployment: its rules and storage from plain configuration values.

Shared by the application (``sitecache.app``) and the command line (``sitecache cache ...``), so
both open the very same storage (path, Redis namespace) with the same rules.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from sitecache.auth.sessions import COOKIE_NAME
from sitecache.cache.engine import CacheEngine
from sitecache.cache.keys import normalize_host
from sitecache.cache.policy import AUTH_COOKIE_PREFIXES, BYPASS_PATH_PREFIXES, CacheRules
from sitecache.cache.storage import open_storage

__all__ = ["engine_for", "rules_for"]


def rules_for(site_url: str | None, rest_prefix: str) -> CacheRules:
    """The page cache's fixed rules for a site: its host, its REST and admin paths."""
    hosts = None
    if site_url:
        parts = urlsplit(site_url)
        hosts = frozenset({normalize_host(parts.netloc, parts.scheme)})
    prefix = "/" + rest_prefix.strip("/")
    namespace_paths = (prefix, "/index.php" + prefix)
    return CacheRules(
        hosts=hosts,
        bypass_path_prefixes=tuple(dict.fromkeys((*namespace_paths, *BYPASS_PATH_PREFIXES))),
        auth_cookie_prefixes=tuple(dict.fromkeys((COOKIE_NAME, *AUTH_COOKIE_PREFIXES))),
    )


def engine_for(
    *,
    data_dir: Path,
    site_url: str | None,
    rest_prefix: str,
    backend: str,
    redis_url: str,
    namespace: str = "",
) -> CacheEngine:
    """The engine on the configured backend (disk under ``data_dir/cache`` by default).

    Raises:
        StorageError: the storage cannot be opened.
    """
    if not namespace and site_url:
        namespace = re.sub(r"[^A-Za-z0-9._-]", "_", urlsplit(site_url).netloc.lower())
    storage = open_storage(
        backend, path=data_dir / "cache", redis_url=redis_url, namespace=namespace or "default"
    )
    # The purge hold is shared by every process using this data directory (one node).
    return CacheEngine(
        storage, rules_for(site_url, rest_prefix), hold_path=data_dir / "cache" / "purge-hold"
    )

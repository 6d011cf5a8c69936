"""The cache engine of a deployment: its rules and storage from plain configuration values.

Shared by the application (``sitecache.app``) and the command line (``sitecache cache ...``), so
both open the very same storage (path, Redis namespace) with the same rules.

A site has one identity, its Redis namespace: ``cache_namespace`` when configured, else the
name persisted in ``<data_dir>/site-id`` when the site was initialized (`site_identity`: the
host of ``site_url`` if one was configured then, else a random name). It never depends on how a
process was started (``sitecache serve`` derives a ``site_url`` from its bind address for links;
that address is not the site's identity), so the server, every worker and the command line
open the same keys.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from sitecache.auth.cookie_names import COOKIE_NAME
from sitecache.auth.db import StoreUnavailable
from sitecache.auth.local_copies import keep_copy, read_copy
from sitecache.cache.engine import CacheEngine
from sitecache.cache.keys import normalize_host
from sitecache.cache.policy import (
    AUTH_COOKIE_PREFIXES,
    BYPASS_PATH_PREFIXES,
    LOGIN_COOKIE_PREFIXES,
    CacheRules,
)
from sitecache.cache.storage import StorageError, open_storage

if TYPE_CHECKING:
    from sitecache.auth.store import SiteStore

__all__ = [
    "IDENTITY_FILE",
    "IDENTITY_VALUE",
    "SHARED_IDENTITY_COPY",
    "cache_namespace",
    "engine_for",
    "new_identity",
    "rules_for",
    "shared_identity",
    "site_identity",
]

#: the load balancers' health check (answered by the application, never cached)
HEALTH_PATH: Final = "/healthz"
#: the file of the data directory that holds the site's identity
IDENTITY_FILE: Final = "site-id"
#: the file of the data directory that holds a copy of a shared store's identity
SHARED_IDENTITY_COPY: Final = "shared-site-id"
#: The identity's name among a shared store's values.
IDENTITY_VALUE: Final = "site_identity"
_IDENTITY = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def rules_for(site_url: str | None, rest_prefix: str) -> CacheRules:
    """The page cache's fixed rules for a site: its host, its REST and admin paths."""
    hosts = None
    if site_url:
        parts = urlsplit(site_url)
        hosts = frozenset({normalize_host(parts.netloc, parts.scheme)})
    prefix = "/" + rest_prefix.strip("/")
    # The OpenAPI document and the health check are never looked up or stored.
    namespace_paths = (prefix, "/index.php" + prefix, prefix + "-openapi", HEALTH_PATH)
    return CacheRules(
        hosts=hosts,
        bypass_path_prefixes=tuple(dict.fromkeys((*namespace_paths, *BYPASS_PATH_PREFIXES))),
        auth_cookie_prefixes=tuple(dict.fromkeys((COOKIE_NAME, *AUTH_COOKIE_PREFIXES))),
        login_cookie_prefixes=tuple(dict.fromkeys((COOKIE_NAME, *LOGIN_COOKIE_PREFIXES))),
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
    """The engine on the configured backend (disk under ``data_dir/cache`` by default; Redis
    and a third-party backend in the site's namespace, `cache_namespace`).

    Raises:
        StorageError: the storage cannot be opened.
    """
    if backend not in ("memory", "disk"):
        # A store several machines (or sites) may share: entries under the site's namespace.
        namespace = cache_namespace(data_dir, site_url, namespace)
    storage = open_storage(
        backend, path=data_dir / "cache", redis_url=redis_url, namespace=namespace or "default"
    )
    # The purge hold is shared by every process using this data directory (one node).
    return CacheEngine(
        storage, rules_for(site_url, rest_prefix), hold_path=data_dir / "cache" / "purge-hold"
    )


def cache_namespace(data_dir: Path, site_url: str | None, namespace: str = "") -> str:
    """The site's Redis namespace: ``namespace`` when configured, else `site_identity`.

    Raises:
        StorageError: no identity is persisted and the data directory does not exist.
    """
    return namespace or site_identity(data_dir, site_url)


def new_identity(site_url: str | None) -> str:
    """A new site's identity: the host of ``site_url``, else ``site-<random>``."""
    if site_url:
        return re.sub(r"[^A-Za-z0-9._-]", "_", urlsplit(site_url).netloc.lower())[:64]
    return f"site-{secrets.token_hex(6)}"


def shared_identity(store: SiteStore, site_url: str | None, copy: Path | None = None) -> str:
    """The identity of a site whose store several machines share, kept in that store (created
    there once): every node and command finds the same cache namespace. With ``copy`` (a file
    of the node's data directory), the identity is copied there, and read from there while the
    store does not answer.

    Raises:
        StoreUnavailable: the store does not answer and there is no copy.
    """
    try:
        identity = store.shared_value(IDENTITY_VALUE, new_identity(site_url))
    except StoreUnavailable:
        found = read_copy(copy) if copy is not None else None
        if found is None or not _IDENTITY.match(found):
            raise
        return found
    if copy is not None:
        keep_copy(copy, identity)
    return identity


def site_identity(data_dir: Path, site_url: str | None = None) -> str:
    """The identity persisted in ``data_dir``, created on first use: the host of ``site_url``
    (as configured, never one derived from a bind address), else ``site-<random>``.

    Creation is atomic (a temporary file linked into place): processes starting together all
    read the one name that won.

    Raises:
        StorageError: the data directory does not exist (the site is not initialized) or the
            file cannot be read or written.
    """
    path = data_dir / IDENTITY_FILE
    found = _read_identity(path)
    if found is not None:
        return found
    if not data_dir.is_dir():
        raise StorageError(
            f"the data directory {data_dir} does not exist: run `sitecache init` first "
            "(or set cache_namespace)"
        )
    wanted = new_identity(site_url)
    try:
        handle, temporary = tempfile.mkstemp(prefix=".site-id-", dir=data_dir)
        try:
            with os.fdopen(handle, "w", encoding="ascii") as file:
                file.write(wanted + "\n")
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process won: its name is the site's
        finally:
            os.unlink(temporary)
    except OSError as exc:
        raise StorageError(f"the site identity {path} cannot be written: {exc}") from exc
    found = _read_identity(path)
    if found is None:
        raise StorageError(f"the site identity {path} is not a valid name")
    return found


def _read_identity(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"the site identity {path} cannot be read: {exc}") from exc
    return text if _IDENTITY.match(text) else None

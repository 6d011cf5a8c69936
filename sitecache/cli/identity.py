"""The identity of the site a command runs on: its cache namespace, written once from the
configuration (`persist_identity`) and read by every later process (`cache_namespace`), so
the server, its workers and the command line always read and purge the same cache."""

from __future__ import annotations

from sitecache.auth.store import SiteStore, is_postgres_url, make_private_directory
from sitecache.cache.deployment import SHARED_IDENTITY_COPY, shared_identity, site_identity
from sitecache.cache.storage import StorageError
from sitecache.config import Config, ConfigError

__all__ = ["cache_namespace", "persist_identity"]


def cache_namespace(config: Config) -> str:
    """The configured cache namespace, else the one kept in a shared (PostgreSQL) store, else
    "" (the identity in the data directory)."""
    if config.cache_namespace or not is_postgres_url(config.database_url):
        return config.cache_namespace
    store = SiteStore(url=config.database_url, limits=config.store_limits())
    try:
        return shared_identity(store, config.site_url, config.data_dir / SHARED_IDENTITY_COPY)
    finally:
        store.close()


def persist_identity(config: Config) -> None:
    """Write the site's identity (its cache namespace) once, from the configuration as given:
    every later process (server, workers, the command line) reads the same one. A site in a
    shared PostgreSQL keeps it there (every node finds it), a local one in its data directory.

    Raises:
        ConfigError: the identity cannot be written in the data directory.
    """
    make_private_directory(config.data_dir)  # each node's own files: disk cache, logs
    if is_postgres_url(config.database_url):
        cache_namespace(config)
        return
    try:
        site_identity(config.data_dir, config.site_url)
    except StorageError as exc:
        raise ConfigError(str(exc)) from exc

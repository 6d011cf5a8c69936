"""``sitecache cache ...``: the page cache of the storage the server uses
(`sitecache.cache.api.commands` holds what each cache command does).

The commands that purge or change settings run on the site's own application (its plugins
loaded, as the server's workers load them), so a purge from here reaches the same listeners
and webhooks as one over REST. A ``flush`` that no site code can hear (no configured
``plugins``, no ``--post-id`` for the site's filters) runs on the cache's own API instead,
with the same listeners (static-file copies, the companion and installed cache plugins) and
the same failures, without loading the site: neither do the commands that only read.
"""

from __future__ import annotations

import argparse

from sitecache.cache.api.commands import SITE_COMMANDS, run_cache_command, standalone_api
from sitecache.cache.engine import CacheEngine
from sitecache.cache.storage import StorageError
from sitecache.cli.configuration import configure
from sitecache.cli.identity import cache_namespace
from sitecache.cli.output import storage_failed
from sitecache.config import Config, ConfigError, open_cache_engine

__all__ = ["command_cache", "open_engine"]


def command_cache(args: argparse.Namespace) -> int:
    """``sitecache cache ...`` on the storage the server uses (see the module docstring)."""
    config = configure(args)
    if args.cache_command in SITE_COMMANDS and _needs_site(args, config):
        return _site_cache_command(args, config)
    if args.cache_command in SITE_COMMANDS:
        return _cache_command_without_site(args, config)
    try:
        engine = open_engine(config)
        try:
            return run_cache_command(args, engine, config.site_url, config.static_directory)
        finally:
            engine.close()
    except StorageError as exc:
        return storage_failed(exc)


def _needs_site(args: argparse.Namespace, config: Config) -> bool:
    """Whether a cache command must run on the site's application: every one but a ``flush``
    that neither the site's code (configured ``plugins``) nor its filters (``--post-id``)
    take part in."""
    return args.cache_command != "flush" or bool(config.plugins) or args.post_id is not None


def open_engine(config: Config) -> CacheEngine:
    """The cache engine of the site's storage (the namespace the server uses).

    Raises:
        StorageError: the storage cannot be opened.
    """
    engine = open_cache_engine(config, cache_namespace(config))
    try:
        # A store that cannot be used at all (a server starts on it and serves uncached) is
        # a command's failure: one line, exit status 1. A damaged index was moved aside
        # while the store was opened: the commands then run on the empty one.
        engine.generation()
    except BaseException:
        engine.close()
        raise
    return engine


def _site_cache_command(args: argparse.Namespace, config: Config) -> int:
    """A cache command run on the site's own application (`command_cache`)."""
    # PERF: the whole site is loaded for these commands only: the others, and the cache
    # commands that only read, start without it (tests/test_cli_imports.py).
    from sitecache.app import App

    try:
        app = App(config)
    except ConfigError as exc:
        # The server cannot start on a storage that cannot be opened (a configuration error);
        # for a cache command it is the storage failure every cache command reports.
        if isinstance(exc.__cause__, StorageError):
            return storage_failed(exc.__cause__)
        raise
    try:
        app.cache.engine.generation()  # a store that cannot be used fails as in `open_engine`
        return run_cache_command(
            args, app.cache.engine, config.site_url, config.static_directory, app.cache_api
        )
    except StorageError as exc:
        return storage_failed(exc)
    finally:
        app.close()


def _cache_command_without_site(args: argparse.Namespace, config: Config) -> int:
    """A cache command no site code takes part in, on the cache API the application would
    build (its listeners and plugins), failing as the other cache commands do: a storage that
    cannot be opened is reported by `storage_failed` (exit status 1)."""
    try:
        engine = open_engine(config)
    except StorageError as exc:
        return storage_failed(exc)
    api = standalone_api(engine, config.site_url, config.static_directory, load_entry_points=True)
    try:
        return run_cache_command(args, engine, config.site_url, config.static_directory, api)
    except StorageError as exc:
        return storage_failed(exc)
    finally:
        api.close()
        api.cache.close()

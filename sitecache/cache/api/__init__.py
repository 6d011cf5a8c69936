"""The ``site-cache/v1`` management API and the cache's background work.

`CacheApi` is built by the application around its `PageCache`: it registers the ten routes
(`sitecache.cache.api.routes`) on ``rest_api_init``, owns the `Preloader`, the `CacheTimers`
(GC and scheduled preloads) and the companion plugins (`PluginManager`), and offers two seams
the content site fills through filters on the application's hooks:

- ``cache_preload_urls`` (``urls, settings -> urls``): the URLs a preload visits, in order
  (home, posts newest first up to ``preload_posts``, then term archives when
  ``preload_taxonomies``). Default: the home page.
- ``cache_post_tags`` (``tags, post_id -> tags``): the purge tags of a post and its related
  pages (``POST /cache {"post_id": N}``). Default: ``post-<id>``.
- ``cache_post_exists`` (``None, post_id -> bool | None``): whether the site has that post;
  ``False`` makes ``POST /cache {"post_id": N}`` a 404 ``rest_post_invalid_id``. Default
  ``None``: unknown, the tags are purged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sitecache.cache.api.plugins import (
    ENTRY_POINT_GROUP,
    AwaitingModeration,
    CachePlugin,
    DomainMapping,
    DynamicFragments,
    PluginManager,
    PurgeWebhook,
    builtin_plugins,
    entry_point_plugins,
)
from sitecache.cache.api.preload import Preloader, anonymous_get
from sitecache.cache.api.routes import (
    NAMESPACE,
    TEST_AGENT,
    CacheRoutes,
    attempt_json,
    base_from_environ,
    explain,
    zlib_available,
)
from sitecache.cache.api.schemas import ROUTE_SCHEMAS
from sitecache.cache.api.static import StaticFiles, outdated_nginx_rules
from sitecache.cache.api.timers import CacheTimers
from sitecache.cache.middleware import PageCache
from sitecache.cache.settings_store import SETTINGS_NAME
from sitecache.cache.storage import StorageError
from sitecache.disk_space import DiskSpace
from sitecache.hooks import Hooks

__all__ = [
    "ENTRY_POINT_GROUP",
    "NAMESPACE",
    "ROUTE_SCHEMAS",
    "AwaitingModeration",
    "CacheApi",
    "CachePlugin",
    "CacheTimers",
    "DomainMapping",
    "DynamicFragments",
    "PluginManager",
    "Preloader",
    "PurgeWebhook",
    "StaticFiles",
]


class CacheApi:
    """The management API of one `PageCache` (see the module docstring).

    Args:
        cache: the page cache in front of the site.
        hooks: the application's hooks (``rest_api_init`` and the two seams).
        site_url: the site's address; ``None`` when unset (loopback hosts only).
        load_entry_points: also load third-party plugins (``sitecache.cache_plugins``).
        static_root: where static-file mode writes pages (``None``: the mode is unavailable).
        disk: the free-space probe ``GET /status`` reports (``None``: one of the disk cache's
            directory and the static root).
    """

    def __init__(
        self,
        cache: PageCache,
        hooks: Hooks,
        site_url: str | None = None,
        *,
        load_entry_points: bool = True,
        static_root: Path | None = None,
        disk: DiskSpace | None = None,
    ) -> None:
        self.cache = cache
        self.engine = cache.engine
        self.hooks = hooks
        self.site_url = site_url
        parts = urlsplit(site_url) if site_url else None
        self._base = f"{parts.scheme}://{parts.netloc}" if parts else None
        self.home_path = (parts.path or "/") if parts else "/"
        plugins = builtin_plugins()
        if load_entry_points:
            plugins.extend(entry_point_plugins())
        self.plugins = PluginManager(cache, plugins)
        self.preloader = Preloader(cache, self.preload_urls, self.base_url, self._preload_interval)
        self.static = StaticFiles(self.engine, static_root) if static_root else None
        if disk is None:
            watched = [Path(self.engine.location)] if self.engine.backend == "disk" else []
            disk = DiskSpace([*watched, *([static_root] if static_root else [])])
        #: the free space of the disks the cache writes to (``GET /status``)
        self.disk = disk
        self.timers = CacheTimers(self.engine, self.preloader)
        if self.static is not None:
            cache.copy_writers.append(self.static.write_copy)
            self.engine.purge_listeners.append(self.static.on_purge)
            # Pages already in this process's memory tier when static_files is turned on get
            # their copy on their next request: the tier is emptied, so it reads them again.
            self._static_on = False  # the first poll round tells the stored settings
            self.engine.watch(SETTINGS_NAME, self._settings_changed, what="cache settings")
            # Every process follows the other machines' purges and sweeps its machine's
            # expired copies: the copies are each machine's own (GC runs on one machine).
            self.timers.every_tick.append(self.static.follow)
            self.timers.every_tick.append(self.static.empty_trash)  # the trash is per node
        #: start this process's timers on the first request it serves (under any server)
        self.autostart_timers = True
        self.routes = CacheRoutes(self)
        self._next_tick = float("-inf")
        hooks.add_action("rest_api_init", self.routes.register)
        cache.tick = self.tick

    def _settings_changed(self, raw: bytes | None) -> None:
        """Empty this process's memory tier when static-file mode was just turned on (each
        page read again from the storage gets its static copy)."""
        del raw  # the engine's own subscriber compiled it first
        static_on = self.engine.settings().static_files
        if static_on and not self._static_on:
            self.cache.tier.clear()
        self._static_on = static_on

    # ------------------------------------------------------------------ seams
    def base_url(self, environ: Mapping[str, Any] | None = None) -> str:
        """``scheme://host`` pages are fetched on: the site_url's, else the request's."""
        if self._base is not None:
            return self._base
        return base_from_environ(environ) if environ is not None else "http://localhost"

    def preload_urls(self) -> list[str]:
        """The URLs one preload visits (filter ``cache_preload_urls``)."""
        settings = self.engine.settings_values()
        urls = self.hooks.apply_filters("cache_preload_urls", [self.home_path], settings)
        return [str(url) for url in dict.fromkeys(urls or [])]

    def post_tags(self, post_id: int) -> list[str]:
        """The purge tags of a post and its related pages (filter ``cache_post_tags``)."""
        tags = self.hooks.apply_filters("cache_post_tags", [f"post-{post_id}"], post_id)
        return [str(tag) for tag in tags or []]

    def post_exists(self, post_id: int) -> bool | None:
        """Whether the site has the post (filter ``cache_post_exists``; ``None``: unknown)."""
        exists = self.hooks.apply_filters("cache_post_exists", None, post_id)
        return None if exists is None else bool(exists)

    def _preload_interval(self) -> int:
        return self.engine.settings().preload_interval

    # ------------------------------------------------------------------ per request
    def tick(self, now: float, environ: Mapping[str, Any]) -> None:
        """`PageCache.tick`: run the engine's poll round when due (settings and plugin
        switches changed elsewhere are applied then), and at most once a second make sure
        this process's timers run (started by its first request, whatever the WSGI server:
        the application never guesses its server from ``SERVER_SOFTWARE``)."""
        self.engine.poll(now)
        if now < self._next_tick:
            return
        self._next_tick = now + 1.0
        if self.autostart_timers:
            self.timers.ensure_running()

    # ------------------------------------------------------------------ status
    def status(self) -> dict[str, Any]:
        """``GET /status``."""
        engine = self.engine
        warnings: list[dict[str, str]] = []
        settings = engine.settings()
        writable = True
        try:
            engine.probe_writable()
        except StorageError as exc:
            writable = False
            warnings.append(
                {"code": "storage_error", "message": f"The cache storage failed: {exc}"}
            )
        warnings.extend(
            {"code": code, "message": message}
            for code, message in [*engine.storage_warnings(), *self.disk.warnings()]
        )
        if engine.rules.hosts is None:
            warnings.append(
                {
                    "code": "loopback_only",
                    "message": "site_url is not set: pages are cached only for requests to "
                    "localhost, 127.0.0.1 and [::1]. Set site_url to cache the public site "
                    "(`sitecache serve` uses its bind address as site_url when none is set, "
                    "and then caches that host only).",
                }
            )
        if not settings.enabled:
            warnings.append({"code": "cache_disabled", "message": "Caching is turned off."})
        if engine.hold.active():
            warnings.append(
                {
                    "code": "purges_pending",
                    "message": engine.hold.reason
                    or "Purges owed to content changes are not applied yet; pages are served "
                    "uncached until they are.",
                }
            )
        warnings.extend(self.timers.warnings())
        outdated = outdated_nginx_rules(engine)
        if outdated is not None:
            warnings.append({"code": "nginx_rules_outdated", "message": outdated})
        available = zlib_available()
        if settings.compression and not available:
            warnings.append(
                {"code": "compression_unavailable", "message": "zlib does not work here."}
            )
        return {
            "enabled": settings.enabled,
            "storage": {
                "backend": engine.backend,
                "location": engine.location,
                "writable": writable,
            },
            "compression": {"available": available},
            "disks": [reading.as_json() for reading in self.disk.readings()],
            "preload": self.preloader.progress(),
            "gc": self.timers.gc_status(),
            "warnings": warnings,
        }

    # ------------------------------------------------------------------ the cache test
    def test_page(self, url: str, base: str) -> dict[str, Any]:
        """``POST /cache/test``: prime, first, second; explain a failure; leave nothing.

        ``url`` is a /path on ``base`` or an absolute URL of a host the site serves (as
        ``POST /cache`` accepts). What the test stored is removed through the engine's one
        purge path, so its purge listeners (static-file copies, webhooks) see it go.

        Raises:
            InvalidURL: ``url`` is not a page of the site.
        """
        engine = self.engine
        parts = urlsplit(url)
        absolute = bool(parts.scheme or parts.netloc)
        canonical, _ = engine.resolve_url(url if absolute else base + url)
        path = url
        urls = {canonical} if canonical else set()
        try:
            before = engine.keys_for("url", urls)
        except StorageError as exc:
            before = set()
            engine.storage_warning("cache test: %s", exc)
        enabled = engine.settings().enabled
        answers = {
            name: anonymous_get(self.cache, path, base, TEST_AGENT)
            for name in ("prime", "first", "second")
        }
        now = engine.clock()
        reason = explain(answers, enabled)
        try:
            # Leave nothing behind: what the test stored goes (what was there before stays),
            # through the one purge path, so static copies and other listeners follow.
            created = engine.keys_for("url", urls) - before
            if created:
                engine.remove(created, scope="test")
        except StorageError as exc:
            engine.storage_warning("cache test: entries not removed: %s", exc)
        return {
            "status": reason is None,
            "attempts": {name: attempt_json(answer, now) for name, answer in answers.items()},
            "reason": reason,
        }

    def close(self) -> None:
        """Stop the timers (the preload thread stops with the process)."""
        self.timers.stop()

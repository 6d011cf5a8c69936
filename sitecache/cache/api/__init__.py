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
from sitecache.cache.api.warnings import SERVED_SITE_URL, WarningInputs, cache_warnings
from sitecache.cache.counters import OWN_LABEL
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
        self._published = False
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
        the application never guesses its server from ``SERVER_SOFTWARE``). A serving process
        records its site URL once (`publish_site_url`), from its first request on."""
        self.engine.poll(now)
        if now < self._next_tick:
            return
        self._next_tick = now + 1.0
        if not self._published:
            self._published = self.publish_site_url()
        if self.autostart_timers:
            self.timers.ensure_running()

    # ------------------------------------------------------------------ status
    def publish_site_url(self) -> bool:
        """Record in the storage the site URL this serving application caches pages for
        (`SERVED_SITE_URL`), so a command-line process derives the same warnings; whether it
        was written (a storage failure is logged, and `tick` tries again a second later)."""
        try:
            self.engine.write_value(SERVED_SITE_URL, (self.site_url or "").encode())
        except StorageError as exc:
            self.engine.storage_warning("the served site URL was not recorded: %s", exc)
            return False
        return True

    def served_site_url(self) -> str | None:
        """The site URL pages are cached for: this process's own, else the one the serving
        application recorded (`publish_site_url`); ``None`` when neither has one."""
        if self.site_url:
            return self.site_url
        try:
            recorded = self.engine.read_value(SERVED_SITE_URL)
        except StorageError:
            return None
        return recorded.decode("utf-8", "replace") if recorded else None

    def warning_inputs(self) -> WarningInputs:
        """What `cache_warnings` reads, gathered from the engine, the timers, the storage (one
        probe write) and the disks (`DiskSpace`, measured at most once a second)."""
        engine = self.engine
        settings = engine.settings()
        storage_error = None
        try:
            engine.probe_writable()
        except StorageError as exc:
            storage_error = str(exc) or type(exc).__name__
        held = engine.hold.active()
        return WarningInputs(
            storage_error=storage_error,
            site_url=self.served_site_url(),
            enabled=settings.enabled,
            purges_pending=(engine.hold.reason or "") if held else None,
            scheduled=tuple((w["code"], w["message"]) for w in self.timers.warnings()),
            nginx_outdated=outdated_nginx_rules(engine),
            compression_unavailable=settings.compression and not zlib_available(),
            storage_warnings=(*engine.storage_warnings(), *self.disk.warnings()),
        )

    def warnings(self) -> list[dict[str, str]]:
        """The cache's warnings (`cache_warnings` over `warning_inputs`)."""
        return cache_warnings(self.warning_inputs())

    def status(self) -> dict[str, Any]:
        """``GET /status``."""
        engine = self.engine
        inputs = self.warning_inputs()
        return {
            "enabled": inputs.enabled,
            "storage": {
                "backend": engine.backend,
                "location": engine.location,
                "writable": inputs.storage_error is None,
            },
            "compression": {"available": zlib_available()},
            "disks": [reading.as_json() for reading in self.disk.readings()],
            "preload": self.preloader.progress(),
            "gc": self.timers.gc_status(),
            "warnings": cache_warnings(inputs),
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
        # The test's visits are the site's own traffic: never the visitors' hits and misses.
        with engine.counting_as(OWN_LABEL):
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

"""Companion plugins of the page cache.

A plugin has a ``key``, a ``title``, a ``description`` and ``enable(cache)`` / ``disable(cache)``
methods that add and remove its hook (on `PageCache`: ``store_filters``, ``serve_filters``,
``set_host_aliases``; on the engine: ``purge_listeners``). Which plugins are on is data: the
named value ``plugins`` in the cache's storage, shared by every process and node, which the
engine watches: each process applies a change within a second.

What a plugin needs beyond its switch (alias hosts, webhook URLs, fragment renderers) is set in
Python by the site (an application plugin, see README), never over REST.

Third-party plugins register a factory under the entry-point group ``sitecache.cache_plugins``;
calling it returns an object with the same attributes and methods.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import Any, Final, Protocol

from sitecache.cache.engine import CacheEngine
from sitecache.cache.middleware import PageCache
from sitecache.cache.named_values import decode_record
from sitecache.cache.purging import PurgeResult
from sitecache.cache.storage import StorageError
from sitecache.domain_errors import InvalidPluginSwitches

__all__ = [
    "ENTRY_POINT_GROUP",
    "AwaitingModeration",
    "CachePlugin",
    "DomainMapping",
    "DynamicFragments",
    "PluginManager",
    "PurgeWebhook",
]

logger = logging.getLogger("sitecache.cache.plugins")

ENTRY_POINT_GROUP: Final = "sitecache.cache_plugins"
PLUGINS_NAME: Final = "plugins"


class CachePlugin(Protocol):
    """What a companion plugin provides."""

    key: str
    title: str
    description: str

    def enable(self, cache: PageCache) -> None:
        """Add the plugin's hooks to ``cache``."""

    def disable(self, cache: PageCache) -> None:
        """Remove them."""


class AwaitingModeration:
    """Strips the "awaiting moderation" notice from a page before it is stored."""

    key = "awaiting_moderation"
    title = "Awaiting moderation"
    description = (
        'Removes the "Your comment is awaiting moderation." notice from pages before they are '
        "stored, so no visitor is shown another visitor's notice."
    )
    NOTICE: Final = (
        b'<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'
    )

    def strip(self, body: bytes, url: str) -> bytes:
        """``body`` without the notice (the same object when it has none)."""
        return body.replace(self.NOTICE, b"") if self.NOTICE in body else body

    def enable(self, cache: PageCache) -> None:
        """Strip the notice before each store."""
        if self.strip not in cache.store_filters:
            cache.store_filters.append(self.strip)

    def disable(self, cache: PageCache) -> None:
        """Stop stripping."""
        if self.strip in cache.store_filters:
            cache.store_filters.remove(self.strip)


class DomainMapping:
    """Maps alias hosts to their canonical host, so aliases share one cache.

    Attributes:
        aliases: alias host -> canonical host (``www.example.org`` -> ``example.org``).
    """

    key = "domain_mapping"
    title = "Domain mapping"
    description = (
        "Requests for alias hosts are answered from (and stored in) the canonical host's cache."
    )

    def __init__(self, aliases: Mapping[str, str] | None = None) -> None:
        self.aliases: dict[str, str] = dict(aliases or {})
        self._cache: PageCache | None = None

    def set_aliases(self, aliases: Mapping[str, str]) -> None:
        """Replace the alias table (applied at once when the plugin is on)."""
        self.aliases = dict(aliases)
        if self._cache is not None:
            self._cache.set_host_aliases(self.aliases)

    def enable(self, cache: PageCache) -> None:
        """Key alias hosts under their canonical host."""
        self._cache = cache
        cache.set_host_aliases(self.aliases)

    def disable(self, cache: PageCache) -> None:
        """Key every host as itself again."""
        self._cache = None
        cache.set_host_aliases({})


Renderer = Callable[[Mapping[str, Any]], str]


class DynamicFragments:
    """Replaces secret placeholders in pages with freshly rendered content at serve time.

    A template writes ``placeholder("name")`` where the live fragment goes; at serve time (hit,
    miss or bypass) the plugin replaces it with ``renderers["name"](environ)``. The placeholder
    embeds a random secret kept in the storage, so text a visitor writes (a comment) can never
    produce one.
    """

    key = "dynamic_fragments"
    title = "Dynamic fragments"
    description = (
        "Replaces secret placeholders in cached pages with freshly rendered content each time "
        "a page is served."
    )
    SECRET_NAME: Final = "dynamic_fragments_secret"  # noqa: S105 - a storage name, not a secret

    def __init__(self) -> None:
        self.renderers: dict[str, Renderer] = {}
        self._secret: str | None = None
        self._pattern: re.Pattern[bytes] | None = None
        self._engine: CacheEngine | None = None

    def bind(self, cache: PageCache) -> None:
        """Keep the shared secret in ``cache``'s storage (through its engine)."""
        self._engine = cache.engine

    def secret(self) -> str:
        """The placeholder secret (made once per storage, shared by every node).

        Raises:
            RuntimeError: the plugin is not bound to a cache yet.
            StorageError: the storage failed.
        """
        if self._secret is None:
            engine = self._engine
            if engine is None:
                raise RuntimeError("dynamic_fragments is not bound to a cache yet")
            raw = engine.read_value(self.SECRET_NAME)
            if not raw:
                engine.write_value(self.SECRET_NAME, secrets.token_hex(16).encode("ascii"))
                raw = engine.read_value(self.SECRET_NAME)
            if not raw:
                # SECURITY: never an empty secret (any text could then forge a placeholder).
                raise StorageError("the dynamic fragments secret was not kept")
            self._secret = raw.decode("ascii")
            self._pattern = re.compile(
                rb"<!--sitecache-fragment:"
                + self._secret.encode("ascii")
                + rb":([A-Za-z0-9_-]+)-->"
            )
        return self._secret

    def placeholder(self, name: str) -> str:
        """The HTML comment a template writes where the fragment ``name`` goes."""
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise ValueError(f"fragment names are letters, digits, _ and -: {name!r}")
        return f"<!--sitecache-fragment:{self.secret()}:{name}-->"

    def render(self, body: bytes, environ: Mapping[str, Any]) -> bytes:
        """``body`` with every placeholder replaced (the same object when it has none)."""
        self.secret()
        pattern = self._pattern
        if pattern is None or b"<!--sitecache-fragment:" not in body:
            return body

        def replace(match: re.Match[bytes]) -> bytes:
            renderer = self.renderers.get(match.group(1).decode("ascii"))
            if renderer is None:
                return b""
            try:
                return renderer(environ).encode("utf-8")
            except Exception:
                logger.exception("fragment %r failed to render", match.group(1))
                return b""

        return pattern.sub(replace, body)

    def enable(self, cache: PageCache) -> None:
        """Render fragments on every page sent."""
        self.bind(cache)
        if self.render not in cache.serve_filters:
            cache.serve_filters.append(self.render)

    def disable(self, cache: PageCache) -> None:
        """Stop rendering (placeholders stay invisible HTML comments)."""
        if self.render in cache.serve_filters:
            cache.serve_filters.remove(self.render)


class PurgeWebhook:
    """POSTs every purge's URLs and tags to configured URLs, from a background thread.

    A failed delivery is logged and retried (``retries`` times, doubling ``backoff``); it never
    blocks or fails the purge itself.

    Attributes:
        urls: where to POST (``http`` or ``https`` URLs configured in code).
    """

    key = "purge_webhook"
    title = "Purge webhook"
    description = "On every purge, POSTs the purged URLs and tags as JSON to the configured URLs."

    def __init__(
        self,
        urls: Iterable[str] = (),
        *,
        timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 1.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.urls = list(urls)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.headers = dict(headers or {})
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self.delivered = 0
        self.failed = 0

    def on_purge(self, result: PurgeResult) -> None:
        """The engine's purge listener: queue the notification (never blocks)."""
        if not self.urls:
            return
        self._queue.put(
            {
                "scope": result.scope,
                "urls": list(result.urls),
                "tags": list(result.tags),
                "soft": result.soft,
                "deleted": result.deleted,
                "time": int(time.time()),
            }
        )
        with self._thread_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._deliver_all, name="sitecache-purge-webhook", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float = 10.0) -> bool:
        """Wait until every queued notification was delivered or given up; whether it was."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._queue.unfinished_tasks == 0:
                return True
            time.sleep(0.01)
        return False

    def _deliver_all(self) -> None:
        while True:
            try:
                payload = self._queue.get(timeout=1.0)
            except queue.Empty:
                return
            try:
                for url in list(self.urls):
                    self._deliver(url, payload)
            finally:
                self._queue.task_done()

    def _deliver(self, url: str, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        delay = self.backoff
        for attempt in range(1, self.retries + 2):
            request = urllib.request.Request(  # noqa: S310 - http(s) URLs from the site's code
                url,
                data=data,
                method="POST",
                headers={"Content-Type": "application/json", **self.headers},
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                    response.read()
                self.delivered += 1
                return
            except (urllib.error.URLError, OSError, ValueError) as exc:
                logger.warning(
                    "purge webhook %s failed (attempt %d of %d): %s",
                    url, attempt, self.retries + 1, exc,
                )  # fmt: skip
            if attempt <= self.retries:
                time.sleep(delay)
                delay *= 2
        self.failed += 1
        logger.error("purge webhook %s gave up after %d attempts", url, self.retries + 1)

    def enable(self, cache: PageCache) -> None:
        """Listen to every purge."""
        if self.on_purge not in cache.engine.purge_listeners:
            cache.engine.purge_listeners.append(self.on_purge)

    def disable(self, cache: PageCache) -> None:
        """Stop listening."""
        if self.on_purge in cache.engine.purge_listeners:
            cache.engine.purge_listeners.remove(self.on_purge)


def builtin_plugins() -> list[CachePlugin]:
    """One instance of each plugin that ships with sitecache."""
    return [AwaitingModeration(), DomainMapping(), DynamicFragments(), PurgeWebhook()]


def entry_point_plugins() -> list[CachePlugin]:
    """The plugins installed packages register under `ENTRY_POINT_GROUP` (bad ones logged)."""
    found: list[CachePlugin] = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            factory = entry_point.load()
            plugin = factory()
            for attribute in ("key", "title", "description", "enable", "disable"):
                if not hasattr(plugin, attribute):
                    raise TypeError(f"the plugin has no {attribute}")
        except Exception:
            logger.exception("cache plugin %r cannot be loaded", entry_point.name)
            continue
        found.append(plugin)
    return found


class PluginManager:
    """The plugins of one cache and their switches (see the module docstring).

    The switches are a named value the engine watches: a change made by any process reaches
    this one at the engine's next poll round (at most a second later), a change made here at
    once.
    """

    def __init__(self, cache: PageCache, plugins: Iterable[CachePlugin] | None = None) -> None:
        self.cache = cache
        self.engine = cache.engine
        self.plugins: dict[str, CachePlugin] = {}
        for plugin in plugins if plugins is not None else builtin_plugins():
            self.add(plugin)
        self._active: set[str] = set()
        self._switch_lock = threading.Lock()
        self.engine.keep_durably(PLUGINS_NAME)  # configuration, not cache: see cache.durable
        self.engine.watch(PLUGINS_NAME, self._apply, what="cache plugin switches")
        self.sync()

    def add(self, plugin: CachePlugin) -> None:
        """Make ``plugin`` available (its switch starts off); the first of a key wins."""
        if not re.fullmatch(r"[a-z0-9_]{1,64}", str(plugin.key)):
            logger.error("cache plugin key %r is not [a-z0-9_]{1,64}; ignored", plugin.key)
            return
        if plugin.key in self.plugins:
            logger.error("cache plugin key %r is taken; ignored", plugin.key)
            return
        self.plugins[plugin.key] = plugin

    def get(self, key: str) -> Any:
        """The plugin ``key`` (to configure it), or ``None``."""
        return self.plugins.get(key)

    def states(self) -> dict[str, bool]:
        """Each plugin's switch as stored now (off when never set).

        Raises:
            StorageError: the storage failed.
        """
        return self._states(self.engine.read_record(PLUGINS_NAME))

    def _states(self, stored: Mapping[str, Any] | None) -> dict[str, bool]:
        found = stored or {}
        return {key: found.get(key) is True for key in self.plugins}

    def sync(self) -> None:
        """Apply the stored switches to this process now (a storage failure is logged: the
        switches stay as they were)."""
        self.engine.reload_value(PLUGINS_NAME)

    def _apply(self, raw: bytes | None) -> None:
        """The engine's news of the switches: enable and disable what changed."""
        with self._switch_lock:
            for key, enabled in self._states(decode_record(raw)).items():
                plugin = self.plugins[key]
                try:
                    if enabled and key not in self._active:
                        plugin.enable(self.cache)
                        self._active.add(key)
                    elif not enabled and key in self._active:
                        plugin.disable(self.cache)
                        self._active.discard(key)
                except Exception:
                    logger.exception("cache plugin %r failed to switch", key)

    def listing(self) -> list[dict[str, Any]]:
        """``GET /plugins``: ``[{key, title, description, enabled}]``.

        Raises:
            StorageError: the storage failed.
        """
        states = self.states()
        return [
            {
                "key": key,
                "title": str(plugin.title),
                "description": str(plugin.description),
                "enabled": states[key],
            }
            for key, plugin in self.plugins.items()
        ]

    def update(self, body: object) -> list[dict[str, Any]]:
        """Apply ``{"<key>": bool}`` as a whole (nothing changes on any error); the listing.

        Raises:
            InvalidPluginSwitches: not an object of plugin keys to booleans (every bad key
                is named).
            StorageError: the storage failed.
        """
        if not isinstance(body, dict) or not body:
            raise InvalidPluginSwitches.from_fields(
                {
                    "body": {
                        "code": "rest_invalid_param",
                        "message": 'Send an object of plugin keys to booleans: {"<key>": true}.',
                    }
                }
            )
        details: dict[str, dict[str, Any]] = {}
        for key, value in body.items():
            if key not in self.plugins:
                details[key] = {"code": "rest_invalid_param", "message": f"{key} is not a plugin."}
            elif not isinstance(value, bool):
                details[key] = {
                    "code": "rest_invalid_type",
                    "message": f"{key} is not of type boolean.",
                }
        if details:
            raise InvalidPluginSwitches.from_fields(details)
        states = self.states()
        states.update(body)
        # Written through the engine: this process applies it at once, the others within
        # a second.
        self.engine.write_record(PLUGINS_NAME, states)
        return self.listing()

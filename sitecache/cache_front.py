"""`CacheFront`: the page cache in front of the application, with REST and admin GETs sent
past it without being classified.

The page cache never stores a REST, login or admin answer (its ``rest_or_admin`` guard), so
classifying such a request (its facts, its guards, a key it will not use) is work for nothing,
and REST calls are the hottest path an API client has. A GET or HEAD whose path (``SCRIPT_NAME``
+ ``PATH_INFO``) lies under one of the cache's bypass paths is answered here as the cache
itself answers it: its per-request work first (the tick, the counters' flush, the settings, the
debug log), then the bypass outcome the guards would give (``disabled`` when caching is off,
else ``rest_or_admin``), counted and written in ``Cache-Status`` alike. Every other request goes
through the page cache.

SECURITY: this is a shortcut for requests the cache would never store, never a way around its
guards: the cache's own ``rest_or_admin`` guard still answers for every request that comes to
it (other methods, REST addressed by ``?rest_route=``, paths it normalizes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from sitecache.cache import Outcome, PageCache
from sitecache.cache.answers import send_captured
from sitecache.cache.capture import call_app
from sitecache.cache.debug_log import debugging

__all__ = ["CacheFront"]

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_LOOKED_UP: Final = frozenset({"GET", "HEAD"})
"""The methods the cache looks up; any other bypasses as ``method`` (the cache says so)."""


class CacheFront:
    """The application's entry: `PageCache` ``cache``, or ``app`` directly for a GET or HEAD
    under one of the cache's bypass paths (counted and labelled as the cache would).

    Args:
        cache: the page cache in front of ``app``.
        app: the application behind the cache.
    """

    def __init__(self, cache: PageCache, app: WSGIApp) -> None:
        self.cache = cache
        self.app = app
        prefixes = cache.rules.bypass_path_prefixes
        self._exact = frozenset(prefixes)
        self._below = tuple(f"{prefix}/" for prefix in prefixes)
        # Outcomes are values: each is built (and its Cache-Status written) once.
        self._outcomes = {
            enabled: (outcome, outcome.header())
            for enabled, outcome in (
                (True, Outcome.bypass("rest_or_admin")),
                (False, Outcome.bypass("disabled")),
            )
        }

    def is_bypass_path(self, environ: dict[str, Any]) -> bool:
        """Whether the request is a GET or HEAD under one of the cache's bypass paths (the
        cache's ``is_under`` of its full path): the cache would answer it without a lookup."""
        if environ.get("REQUEST_METHOD", "GET") not in _LOOKED_UP:
            return False
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        return path in self._exact or path.startswith(self._below)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if not self.is_bypass_path(environ):
            return self.cache(environ, start_response)
        return self._bypass(environ, start_response)

    def _bypass(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """`PageCache.__call__` up to its guards, then its bypass, for a request whose first
        firing guard is ``disabled`` or ``rest_or_admin`` (only GET and HEAD come here)."""
        cache = self.cache
        engine = cache.engine
        now = engine.clock()
        if cache.tick is not None:
            cache.tick(now, environ)
        engine.maybe_flush(now)
        settings = engine.settings(now)
        if settings.debug:
            start_response = debugging(cache.debug_logger, environ, start_response)
        outcome, cache_status = self._outcomes[bool(settings.enabled)]
        outcome.count(engine.count)

        def bypass_start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            return start_response(status, [*headers, ("Cache-Status", cache_status)], exc_info)

        if cache.serve_filters:
            captured = call_app(self.app, environ, cache.rules.max_body)
            return send_captured(environ, bypass_start_response, captured, captured.headers,
                                 cache.serve_filters)  # fmt: skip
        return self.app(environ, bypass_start_response)

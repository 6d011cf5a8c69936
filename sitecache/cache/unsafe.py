"""Invalidation by unsafe methods (RFC 9111 §4.4): a change made through the cache purges what
it changed.

A request whose method is not safe (anything but GET, HEAD, OPTIONS and TRACE: POST, PUT,
PATCH, DELETE and methods the cache does not know) passes through to the application. When the
application answers it without error (a 2xx or 3xx status), the cache purges, before the answer
leaves, every stored variant of the request's own URL, and, for a 2xx answer, of the URLs its
``Location`` and ``Content-Location`` fields name on the same host (RFC 9111 §4.4 lets a cache
choose: a 2xx names the resource it created or describes; a redirect after a form, a 302 or 303,
names where the browser goes to look, which a login or a password form did not change), through
the engine's one purge path
(`sitecache.cache.purging`): the purge generation moves, so every worker of every node sharing
the storage misses them from then on, and a render that began before is not stored.

URLs the cache never stores (REST, login and admin paths, a host the site does not serve) are
skipped, and so is a purge when nothing is stored under the URLs nor being rendered for them
(an index lookup and a lock read; a purge would refuse every page being stored meanwhile);
``lock_down`` (no automatic purges during a traffic spike) skips it all. A storage failure is
logged and the answer still goes out.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl, urljoin, urlsplit

from sitecache.cache.capture import StartResponse, status_code
from sitecache.cache.classify import Decision
from sitecache.cache.engine import CacheEngine
from sitecache.cache.keys import (
    base_key,
    canonical_url,
    normalize_host,
    normalize_path,
    normalize_url_path,
)
from sitecache.cache.policy import BYPASS_QUERY_PARAMS, is_under
from sitecache.cache.settings import CacheSettings
from sitecache.cache.storage import StorageError
from sitecache.domain_errors import InvalidURL

__all__ = ["SAFE_METHODS", "SCOPE", "UnsafeInvalidation"]

logger = logging.getLogger("sitecache.cache")

#: Methods that change nothing (RFC 9110 §9.2.1); every other method is unsafe.
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
#: The purge scope these invalidations are counted under (``GET /stats`` ``purges``).
SCOPE: Final = "unsafe_method"
#: The variants a URL may be stored under (`sitecache.cache.classify.Decision.variant`).
VARIANTS: Final = ("", "mobile")
#: Response fields naming other URLs the change touched.
_LOCATION_FIELDS: Final = frozenset({"location", "content-location"})


class UnsafeInvalidation:
    """Purges what an unsafe request changed, for one `PageCache`.

    Args:
        engine: the cache's engine (its purge path and rules).
    """

    def __init__(self, engine: CacheEngine) -> None:
        self.engine = engine

    def watching(
        self,
        environ: Mapping[str, Any],
        decision: Decision,
        settings: CacheSettings,
        start_response: StartResponse,
    ) -> StartResponse:
        """``start_response`` purging the request's targets (`targets`) first when the
        application answers without error; ``start_response`` itself when the method is safe
        or automatic purges are off (``lock_down``)."""
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        if method in SAFE_METHODS or settings.lock_down or not decision.host:
            return start_response

        def invalidating(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            code = status_code(status)
            if exc_info is None and 200 <= code < 400:
                named = headers if code < 300 else ()
                self.invalidate(self.targets(environ, decision, settings, named))
            return start_response(status, headers, exc_info)

        return invalidating

    def targets(
        self,
        environ: Mapping[str, Any],
        decision: Decision,
        settings: CacheSettings,
        headers: Iterable[tuple[str, str]],
    ) -> list[str]:
        """The canonical URLs an unsafe request answered with ``headers`` changed: its own and
        the same-host ones ``headers`` name in ``Location``/``Content-Location``, those the
        cache may store."""
        scheme = str(environ.get("wsgi.url_scheme", "http"))
        path = normalize_path(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""))
        query = str(environ.get("QUERY_STRING", ""))
        found: dict[str, None] = {}
        own = self._canonical(scheme, decision.host, path, query, settings)
        if own is not None:
            found[own] = None
        base = f"{scheme}://{decision.host}{path}"
        for name, value in headers:
            if name.lower() not in _LOCATION_FIELDS or not value.strip():
                continue
            try:
                parts = urlsplit(urljoin(base, value.strip()))
                host = normalize_host(parts.netloc, parts.scheme) if parts.netloc else ""
            except ValueError:
                continue
            if parts.scheme != scheme or host != decision.host:
                continue  # RFC 9111 §4.4: only URLs of the same host
            url = self._canonical(
                scheme, host, normalize_url_path(parts.path or "/"), parts.query, settings
            )
            if url is not None:
                found[url] = None
        return list(found)

    def _canonical(
        self, scheme: str, host: str, path: str, query: str, settings: CacheSettings
    ) -> str | None:
        """The canonical URL the cache keys ``path`` and ``query`` on ``host`` under, or
        ``None`` when it never stores it."""
        rules = self.engine.rules
        pairs = parse_qsl(query, keep_blank_values=True, encoding="latin-1") if query else []
        if is_under(path, rules.bypass_path_prefixes) or any(
            name in BYPASS_QUERY_PARAMS for name, _ in pairs
        ):
            return None
        if not rules.serves_host(host):
            return None
        kept = [(name, value) for name, value in pairs if not settings.is_ignored_param(name)]
        return canonical_url(scheme, host, path, kept)

    def invalidate(self, urls: list[str]) -> None:
        """Purge every variant of ``urls`` (a storage failure is logged) when one is stored or
        being rendered: otherwise there is nothing to purge, and no other page's render is
        disturbed (a purge moves the generation every concurrent store is checked against)."""
        if not urls:
            return
        engine = self.engine
        try:
            if not engine.keys_for("url", urls) and not any(
                engine.fills.busy(base_key(url, variant)) for url in urls for variant in VARIANTS
            ):
                return
            engine.purge_urls(urls, scope=SCOPE)
        except InvalidURL as refused:
            logger.warning("invalidation by an unsafe method skipped: %s", refused.message)
        except StorageError as exc:
            self.engine.storage_warning(
                "cache storage unavailable, pages changed by an unsafe request not purged: %s",
                exc,
            )

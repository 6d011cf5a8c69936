"""`PageCache`: the page-cache WSGI middleware, usable around any WSGI application.

It orchestrates the cache's parts in the order a request meets them: the request is classified
(`sitecache.cache.classify`: the request guards and the key); one that may be looked up is
answered from the memory tier or the storage (`sitecache.cache.tiered`, through ``Vary``
pointers) when a fresh entry exists (`sitecache.cache.answers`: gzip, 304, HEAD). A stale
entry is served while one request regenerates it; a miss is rendered once per key however
many ask at once (`CacheEngine.fills`). The application's answer is captured
(`sitecache.cache.capture`), checked by the response guards, and stored as a
`CacheEntry.from_response` when it may be. Every answer is counted and labelled by one
`sitecache.cache.outcome.Outcome` (the RFC 9211 ``Cache-Status`` header).

A hit does no settings reload, no JSON parse, no SQL and no logging: one ``stat`` of the purge
generation (disk) or one ``GET`` (Redis), a dictionary lookup, and the stored bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from sitecache.cache.answers import Prepared, ServeFilter, send_captured, send_entry
from sitecache.cache.capture import StartResponse, WSGIApp, call_app
from sitecache.cache.classify import PLAIN_MEMO_SIZE, RequestClassifier
from sitecache.cache.debug_log import close_debug_log, debug_logger, debugging
from sitecache.cache.engine import CacheEngine, PurgeResult
from sitecache.cache.outcome import FRESH_HIT, STALE_HIT, Fwd, Outcome
from sitecache.cache.policy import CacheRules
from sitecache.cache.purger import Purger
from sitecache.cache.render import CacheRequest, Renderer, StoredListener, StoreFilter
from sitecache.cache.revalidation import stale_window
from sitecache.cache.storage import MemoryStorage, Storage, StorageError
from sitecache.cache.tier import MemoryTier
from sitecache.cache.tiered import TieredEntries
from sitecache.cache.unsafe import UnsafeInvalidation
from sitecache.cache.vary import with_vary

__all__ = ["PLAIN_MEMO_SIZE", "PageCache", "ServeFilter", "StoreFilter", "StoredListener", "Tick"]

#: ``(now, environ) -> None``: called first on every request (cheap periodic work).
Tick = Callable[[float, Mapping[str, Any]], None]

logger = logging.getLogger("sitecache.cache")

#: Seconds one request may hold the right to regenerate a stale page.
REGENERATION_LOCK_TTL: Final = 30.0


class PageCache:
    """The page cache around a WSGI application (API.md ``sitecache.cache.PageCache``).

    Args:
        app: the WSGI application to cache.
        storage: a `Storage` backend (default: one process's memory).
        hosts: the hosts the site serves (``example.org``, ``example.org:8000``); requests for
            others bypass. ``None`` allows only loopback names (``localhost``, ``127.0.0.1``).
        rules: the full `CacheRules` instead of ``hosts`` (bypass paths, auth cookies, ...).
        engine: an existing `CacheEngine` (shared with a management API) instead of
            ``storage``/``hosts``/``rules``.
        settings: settings written to the storage when it has none yet.
        debug_log: the file the ``debug`` setting writes one line per request to (method,
            path, query parameter names, status, ``Cache-Status``; never cookies, credentials
            or query values). ``None``: the ``sitecache.cache.debug`` logger instead.

    Raises:
        ValueError: ``settings`` are not valid cache settings.
    """

    def __init__(
        self,
        app: WSGIApp,
        storage: Storage | None = None,
        *,
        hosts: Iterable[str] | None = None,
        rules: CacheRules | None = None,
        engine: CacheEngine | None = None,
        settings: Mapping[str, Any] | None = None,
        debug_log: str | Path | None = None,
    ) -> None:
        self.app = app
        self.debug_logger = debug_logger(debug_log)
        self._owns_debug_log = debug_log is not None
        if engine is None:
            if rules is None:
                rules = CacheRules(
                    hosts=frozenset(host.lower() for host in hosts) if hosts is not None else None
                )
            engine = CacheEngine(storage if storage is not None else MemoryStorage(), rules)
        self.engine = engine
        self.rules = engine.rules
        if settings:
            engine.seed_settings(settings)
        self._classifier = RequestClassifier(engine.rules)
        self._entries = TieredEntries(engine, MemoryTier(engine.memory_tier_bytes))
        self._renderer = Renderer(self, engine, self._entries)
        self._unsafe = UnsafeInvalidation(engine)
        # Hook points for companion plugins (`sitecache.cache.api.plugins`). Empty by default:
        # the hot path then pays one attribute test each.
        #: run, in order, on a page's body before it is stored (never on what is served live)
        self.store_filters: list[StoreFilter] = []
        #: run, in order, on every HTML body sent (hit, miss or bypass); a changed body is sent
        #: without gzip, ETag or 304, since it differs per request
        self.serve_filters: list[ServeFilter] = []
        #: told of each page right after it was stored (failures are logged, never raised)
        self.stored_listeners: list[StoredListener] = []
        #: called with the time and the environ before each request is handled
        self.tick: Tick | None = None

    @property
    def tier(self) -> MemoryTier[Prepared]:
        """Prepared entries of this process, stamped with the generation they were read under."""
        return self._entries.tier

    @tier.setter
    def tier(self, tier: MemoryTier[Prepared]) -> None:
        self._entries.tier = tier

    @property
    def host_aliases(self) -> Mapping[str, str]:
        """Alias host -> canonical host (normalized names); set with `set_host_aliases`."""
        return self._classifier.host_aliases

    @host_aliases.setter
    def host_aliases(self, aliases: Mapping[str, str]) -> None:
        self.set_host_aliases(aliases)

    def set_host_aliases(self, aliases: Mapping[str, str]) -> None:
        """Key requests for each alias host under its canonical host (normalized names)."""
        self._classifier.set_host_aliases(aliases)

    # ------------------------------------------------------------------ purge shortcuts
    @property
    def purger(self) -> Purger:
        """The purge API (`sitecache.cache.purger.Purger`) on this cache's engine, for the
        embedding application's code in this process (another process opens its own
        `Purger` on the same storage)."""
        return Purger(engine=self.engine)

    def purge_url(self, url: str, *, soft: bool = False) -> PurgeResult:
        """Purge every variant of ``url`` (absolute, or a /path on every host).

        Raises:
            InvalidURL: ``url`` is not a URL of this site (a foreign host, an escaping path).
        """
        return self.engine.purge_urls([url], soft=soft)

    def purge_tags(self, tags: Iterable[str], *, soft: bool = False) -> PurgeResult:
        """Purge every entry tagged with any of ``tags``."""
        return self.engine.purge_tags(tags, soft=soft)

    def purge_all(self, *, soft: bool = False) -> PurgeResult:
        """Purge everything in the storage."""
        return self.engine.purge_all(soft=soft)

    def close(self) -> None:
        """Flush the counters, close the debug log and the storage."""
        if self._owns_debug_log:
            close_debug_log(self.debug_logger)
        self.engine.close()

    # ------------------------------------------------------------------ WSGI
    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Answer one request (PEP 3333): a bypass, a hit, a stale copy, or a miss."""
        engine = self.engine
        now = engine.clock()
        if self.tick is not None:
            self.tick(now, environ)
        engine.maybe_flush(now)
        settings = engine.settings(now)
        if settings.debug:
            start_response = debugging(self.debug_logger, environ, start_response)
        shortcut = self._classifier.shortcut(environ, settings)
        if shortcut is not None:  # REST, login or admin: never looked up, never stored
            return self._bypass(environ, start_response, Outcome.bypass(shortcut))
        environ, decision = self._classifier.classify(environ, settings)
        if decision.bypass is not None:
            if decision.bypass == "method":  # POST, PUT, DELETE, ...: purge what it changed
                start_response = self._unsafe.watching(environ, decision, settings,
                                                       start_response)  # fmt: skip
            return self._bypass(environ, start_response, Outcome.bypass(decision.bypass))
        if settings.mobile:
            # The key holds the mobile variant: a shared cache downstream must key on the user
            # agent too, or it could serve the mobile copy to desktops (hits and misses alike).
            start_response = _varying_on_user_agent(start_response)
        if engine.hold.active():
            # A purge owed to a content change is not applied yet: fail closed.
            return self._bypass(environ, start_response, Outcome.failed("bypass", "purge_pending"))
        try:
            # Read before the app renders anything: what is stored under it may outlive no
            # purge that began later (the conditional put refuses it).
            generation = self._entries.generation()
            key, prepared = self._entries.lookup(decision.base, environ, now, generation)
        except StorageError as exc:
            engine.storage_warning("cache storage unavailable, passing through: %s", exc)
            return self._bypass(environ, start_response, Outcome.failed("bypass", "storage_error"))
        if prepared is not None:
            expires = prepared.expires
            if not expires or now < expires:
                return send_entry(environ, start_response, prepared, now, FRESH_HIT,
                                  engine.count, self.serve_filters, settings.use_304)  # fmt: skip
            request = CacheRequest(environ, start_response, decision, settings)
            if now < expires + stale_window(prepared.entry.fresh, settings.stale_while_revalidate):
                return self._revalidate(request, key, prepared, now, generation)
            # Past its window (or never allowed one): revalidated or rendered once per key.
            return self._fill(request, now, "stale", generation, prepared)
        fwd: Fwd = "vary-miss" if key != decision.base else "uri-miss"
        request = CacheRequest(environ, start_response, decision, settings)
        return self._fill(request, now, fwd, generation)

    def _revalidate(
        self, request: CacheRequest, key: str, prepared: Prepared, now: float, generation: object
    ) -> Iterable[bytes]:
        """A stale entry within its window: one request (per key, across processes and
        nodes) revalidates or regenerates it; the others are served the stale copy meanwhile.
        Under the response's own ``stale-while-revalidate`` that one is served the stale copy
        too, and revalidates once its answer is sent."""
        engine = self.engine
        lock_name = f"regen:{key}"
        try:
            owner = engine.acquire(lock_name, REGENERATION_LOCK_TTL)
        except StorageError as exc:
            engine.storage_warning("cache lock unavailable: %s", exc)
            owner = None
        if owner is None:
            return self._send(request, prepared, now, STALE_HIT)
        later = False
        try:
            # Another request may have regenerated it between our lookup and the lock.
            try:
                latest = self._entries.prepared(key, now, generation, refresh=True)
            except StorageError:
                latest = None
            if latest is not None and (not latest.expires or now < latest.expires):
                return self._send(request, latest, now, FRESH_HIT)
            if prepared.entry.fresh.background:
                answer = self._send(request, prepared, now, STALE_HIT)
                later = True
                return _then(answer, lambda: self._in_background(
                    request, prepared, generation, lock_name, owner))  # fmt: skip
            return self._renderer.render(request, now, "stale", generation, prepared)[0]
        finally:
            if not later:
                engine.release(lock_name, owner)

    def _in_background(
        self,
        request: CacheRequest,
        stale: Prepared,
        generation: object,
        lock_name: str,
        owner: str,
    ) -> None:
        """Revalidate ``stale`` after its stale copy was sent (nothing more goes to that
        client), then free the regeneration lock."""
        quiet = CacheRequest(dict(request.environ), _discard, request.decision, request.settings)
        try:
            answer = self._renderer.render(quiet, self.engine.clock(), "stale", generation,
                                           stale)[0]  # fmt: skip
            for _ in answer:
                pass
            close = getattr(answer, "close", None)
            if callable(close):
                close()
        except Exception:
            logger.exception("background revalidation of %s failed", stale.entry.url)
        finally:
            self.engine.release(lock_name, owner)

    def _fill(
        self,
        request: CacheRequest,
        now: float,
        fwd: Fwd,
        generation: object,
        stale: Prepared | None = None,
    ) -> Iterable[bytes]:
        """A miss (or a stale entry past its window: ``stale``, revalidated): render once per
        key however many ask at once (`sitecache.cache.fills`); waiters are answered from
        the stored page, or render it themselves when none came."""
        engine = self.engine
        base = request.decision.base
        fill = engine.fills.begin(base)
        if fill.lead:
            stored = unstorable = False
            try:
                answer, stored, unstorable = self._renderer.render(
                    request, now, fwd, generation, stale
                )
            finally:
                engine.fills.finish(fill, stored=stored, unstorable=unstorable)
            return answer
        try:
            engine.fills.wait(fill)
        finally:
            if fill.registered:
                engine.fills.finish(fill, stored=False)
        try:
            later = engine.clock()
            generation = self._entries.generation()
            _, prepared = self._entries.lookup(base, request.environ, later, generation)
        except StorageError as exc:
            engine.storage_warning("cache storage unavailable, passing through: %s", exc)
            outcome = Outcome.failed("bypass", "storage_error")
            return self._bypass(request.environ, request.start_response, outcome)
        if prepared is not None and (not prepared.expires or later < prepared.expires):
            return self._send(request, prepared, later, Outcome.collapsed_into(fwd))
        if fill.recheck:  # stored a moment ago and gone since: collapse with the others again
            engine.fills.forget(base)
            return self._fill(request, later, fwd, generation, stale)
        return self._renderer.render(request, later, fwd, generation, stale)[0]

    def _send(
        self, request: CacheRequest, prepared: Prepared, now: float, outcome: Outcome
    ) -> Iterable[bytes]:
        """Count ``outcome`` and send ``prepared`` labelled with it."""
        return send_entry(
            request.environ,
            request.start_response,
            prepared,
            now,
            outcome,
            self.engine.count,
            self.serve_filters,
            request.settings.use_304,
        )

    def _bypass(
        self, environ: dict[str, Any], start_response: StartResponse, outcome: Outcome
    ) -> Iterable[bytes]:
        """Count ``outcome`` and pass the request to the app, its answer labelled with it."""
        outcome.count(self.engine.count)
        cache_status = outcome.header()

        def bypass_start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            return start_response(status, [*headers, ("Cache-Status", cache_status)], exc_info)

        if self.serve_filters:
            captured = call_app(self.app, environ, self.rules.max_body)
            return send_captured(environ, bypass_start_response, captured, captured.headers,
                                 self.serve_filters)  # fmt: skip
        return self.app(environ, bypass_start_response)


def _discard(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
    """A ``start_response`` for an answer nobody receives (a background revalidation)."""
    return lambda data: None


class _Then:
    """A WSGI answer that runs ``callback`` once the server closes it (after the last byte
    was handed to the client), whether or not its iteration finished."""

    def __init__(self, answer: Iterable[bytes], callback: Callable[[], None]) -> None:
        self._answer = answer
        self._callback: Callable[[], None] | None = callback

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._answer)

    def close(self) -> None:
        callback, self._callback = self._callback, None
        try:
            close = getattr(self._answer, "close", None)
            if callable(close):
                close()
        finally:
            if callback is not None:
                callback()


def _then(answer: Iterable[bytes], callback: Callable[[], None]) -> Iterable[bytes]:
    """``answer``, with ``callback`` run when the server closes it (`_Then`)."""
    return _Then(answer, callback)


def _varying_on_user_agent(start_response: StartResponse) -> StartResponse:
    """``start_response`` adding ``User-Agent`` to the answer's ``Vary`` (`with_vary`)."""

    def varying(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        return start_response(status, with_vary(headers, "User-Agent"), exc_info)

    return varying

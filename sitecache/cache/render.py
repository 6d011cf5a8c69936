"""A page rendered for the cache: the application answers, the response guards decide, the
page is stored, and the client answered, labelled with the `Outcome`.

A stale entry the application gave validators for is revalidated instead: the application is
asked conditionally (`sitecache.cache.revalidation`), a 304 refreshes the entry's fields and
lifetime and it is stored again; an application that fails while a stale entry may still be
served is answered for by that entry.

The store is conditional on the purge generation the request read before the application
rendered (`sitecache.cache.tiered.TieredEntries.save`): a page whose rendering overlapped a purge
is answered but not stored (``detail=purged``), since it may show what the purge was meant to
remove. A HEAD miss primes the GET entry: the application answers a GET, the client gets the
headers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from sitecache.cache.answers import Prepared, ServeFilter, send_captured, send_entry
from sitecache.cache.capture import (
    Captured,
    StartResponse,
    WSGIApp,
    call_app,
    response_facts,
    status_code,
)
from sitecache.cache.classify import Decision
from sitecache.cache.engine import CacheEngine
from sitecache.cache.entry import CacheEntry
from sitecache.cache.fields import end_to_end
from sitecache.cache.fills import Fill
from sitecache.cache.freshness import Freshness, response_freshness
from sitecache.cache.outcome import Fwd, Outcome, OutcomeReason
from sitecache.cache.policy import CacheRules, ResponseFacts, response_refusal_reason
from sitecache.cache.revalidation import (
    APP_FAILURES,
    conditional_environ,
    error_window,
    refreshed_headers,
    stale_window,
)
from sitecache.cache.settings import CacheSettings
from sitecache.cache.storage import StorageError, StorageUnusable
from sitecache.cache.tiered import TieredEntries
from sitecache.cache.vary import keyed_vary

__all__ = [
    "CacheRequest",
    "RenderHooks",
    "Renderer",
    "StoreFilter",
    "StoredListener",
    "storage_failure",
]

logger = logging.getLogger("sitecache.cache")

#: ``(body, url) -> body``: changes a page before it is stored (companion plugins).
StoreFilter = Callable[[bytes, str], bytes]
#: ``(entry, vary) -> None``: told of each page just stored (static-file mode).
StoredListener = Callable[[CacheEntry, tuple[str, ...]], None]


def storage_failure(exc: StorageError) -> OutcomeReason:
    """The outcome reason of a storage failure: ``storage`` when the store cannot be used for
    a reason it knows (damaged, full, unwritable: ``GET /status`` says which), else
    ``storage_error``."""
    return "storage" if isinstance(exc, StorageUnusable) else "storage_error"


class RenderHooks(Protocol):
    """What a render reads of its `PageCache` when it runs (plugins change the hooks)."""

    app: WSGIApp
    rules: CacheRules
    store_filters: list[StoreFilter]
    serve_filters: list[ServeFilter]
    stored_listeners: list[StoredListener]


@dataclass(frozen=True, slots=True)
class CacheRequest:
    """A request the cache looked up and may render: what the steps after the lookup share."""

    environ: dict[str, Any]
    start_response: StartResponse
    decision: Decision
    settings: CacheSettings
    #: the fill this request leads (`sitecache.cache.fills`), when it holds its lock
    fill: Fill | None = None


class Renderer:
    """Renders and stores pages for one `PageCache`.

    Args:
        hooks: the cache whose application, rules and hooks a render uses.
        engine: its engine (counters, storage warnings).
        entries: its entries behind the memory tier.
    """

    def __init__(self, hooks: RenderHooks, engine: CacheEngine, entries: TieredEntries) -> None:
        self.hooks = hooks
        self.engine = engine
        self.entries = entries

    def render(
        self,
        request: CacheRequest,
        now: float,
        fwd: Fwd,
        generation: object,
        stale: Prepared | None = None,
    ) -> tuple[Iterable[bytes], bool, bool]:
        """Ask the app (a conditional request when ``stale``, the stored copy, has the app's
        validators), store what may be stored (unless a purge began since ``generation``),
        answer the client: ``(answer, stored, unstorable)``. When the app fails and ``stale``
        may still answer (`sitecache.cache.revalidation.error_window`), it does."""
        hooks, environ = self.hooks, request.environ
        is_head = environ.get("REQUEST_METHOD") == "HEAD"
        app_environ = environ
        revalidating = stale is not None and stale.entry.fresh.revalidates
        if stale is not None and revalidating:
            app_environ = conditional_environ(environ, stale.entry.fresh)
        elif is_head:
            app_environ = dict(environ)
            app_environ["REQUEST_METHOD"] = "GET"
        try:
            captured = call_app(hooks.app, app_environ, hooks.rules.max_body)
        except Exception:
            if stale is None or not self._may_serve_stale(stale, now, request.settings):
                raise
            logger.exception("the application failed; a stale copy of %s answers", stale.entry.url)
            return self._send(request, stale, now, Outcome.stale_on_error(500)), False, False
        arrived = self.engine.clock()
        status = status_code(captured.status)
        if stale is not None and revalidating and status == 304:
            captured.close()
            return self._refresh(request, stale, captured.headers, now, arrived, fwd, generation)
        if (
            stale is not None
            and status in APP_FAILURES
            and self._may_serve_stale(stale, now, request.settings)
        ):
            captured.close()
            return self._send(request, stale, now, Outcome.stale_on_error(status)), False, False
        facts = response_facts(captured)
        facts.freshness = self._freshness(facts, request, now, arrived)
        reason = response_refusal_reason(facts, request.settings, hooks.rules)
        if reason is None and captured.overflow is not None:
            reason = "too_large"
        if reason is not None:
            outcome = Outcome.refused(fwd, reason)
            return self._refuse(request, captured, outcome, is_head), False, True
        entry = self._entry(request, captured, facts, arrived)
        vary = keyed_vary(facts.vary, encoded=entry.encoded)
        outcome, key = self._store(request, entry, vary, fwd, generation)
        prepared = Prepared(entry)
        if key is not None:
            self.entries.remember(key, prepared, generation)
        return self._send(request, prepared, now, outcome), key is not None, False

    def _send(
        self, request: CacheRequest, prepared: Prepared, now: float, outcome: Outcome
    ) -> Iterable[bytes]:
        """Count ``outcome`` and send ``prepared`` to the client labelled with it."""
        return send_entry(
            request.environ,
            request.start_response,
            prepared,
            now,
            outcome,
            self.engine.count,
            self.hooks.serve_filters,
            request.settings.use_304,
        )

    @staticmethod
    def _may_serve_stale(stale: Prepared, now: float, settings: CacheSettings) -> bool:
        """Whether ``stale`` may answer for an application that failed."""
        window = error_window(stale.entry.fresh, settings.stale_while_revalidate)
        return window > 0 and bool(stale.expires) and now < stale.expires + window

    def _freshness(
        self, facts: ResponseFacts, request: CacheRequest, requested: float, arrived: float
    ) -> Freshness:
        """The freshness of the response the facts describe (`response_freshness`)."""
        settings = request.settings
        return response_freshness(
            facts.headers,
            facts.status,
            requested=requested,
            arrived=arrived,
            heuristic=self.hooks.rules.heuristic,
            max_age=settings.max_age,
            cache_404=settings.cache_404,
        )

    def _refresh(
        self,
        request: CacheRequest,
        stale: Prepared,
        not_modified: list[tuple[str, str]],
        requested: float,
        arrived: float,
        fwd: Fwd,
        generation: object,
    ) -> tuple[Iterable[bytes], bool, bool]:
        """The application said the stale copy is current (304): refresh its header fields
        (RFC 9111 §4.3.4), store it again with a new lifetime, serve it."""
        entry = stale.entry
        headers = refreshed_headers(entry.headers, not_modified)
        etag = next((v for n, v in not_modified if n.lower() == "etag"), entry.fresh.etag)
        if etag:
            headers.append(("ETag", etag))
        ages = [(name, value) for name, value in not_modified if name.lower() == "age"]
        facts = response_facts(_Refreshed(entry.status, [*headers, *ages], len(entry.body)))
        facts.freshness = self._freshness(facts, request, requested, arrived)
        decision = request.decision
        refreshed = CacheEntry.from_response(
            entry.status, headers, entry.body,
            url=decision.url, host=decision.host, path=decision.path, variant=decision.variant,
            vary=facts.vary, now=arrived, compress=entry.compressible,
            max_age=request.settings.max_age, freshness=facts.freshness, omit=_withheld(facts),
            etag=entry.etag, copies=entry.copies,
        )  # fmt: skip
        reason = response_refusal_reason(facts, request.settings, self.hooks.rules)
        prepared = Prepared(refreshed)
        if reason is not None:
            outcome = Outcome.refused(fwd, reason)
            return self._send(request, prepared, requested, outcome), False, True
        vary = keyed_vary(facts.vary, encoded=refreshed.encoded)
        outcome, key = self._store(request, refreshed, vary, fwd, generation)
        if key is not None:
            self.entries.remember(key, prepared, generation)
        outcome = Outcome.revalidated(fwd, stored=key is not None, detail=outcome.detail)
        return self._send(request, prepared, requested, outcome), key is not None, False

    def _refuse(
        self, request: CacheRequest, captured: Captured, outcome: Outcome, is_head: bool
    ) -> Iterable[bytes]:
        """Count ``outcome`` and send the app's unstored answer labelled with it (without
        the fields of one connection, which no WSGI answer may carry)."""
        outcome.count(self.engine.count)
        headers = [*end_to_end(captured.headers), ("Cache-Status", outcome.header())]
        if is_head:
            request.start_response(captured.status, headers)
            captured.close()
            return []
        return send_captured(request.environ, request.start_response, captured, headers,
                             self.hooks.serve_filters)  # fmt: skip

    def _entry(
        self, request: CacheRequest, captured: Captured, facts: ResponseFacts, now: float
    ) -> CacheEntry:
        """The entry to store of a response the guards let through (after the store filters,
        which an encoded body skips)."""
        decision, settings = request.decision, request.settings
        body = captured.body()
        if facts.content_encoding in ("", "identity"):
            for store_filter in self.hooks.store_filters:
                body = store_filter(body, decision.url)
        return CacheEntry.from_response(
            facts.status, captured.headers, body,
            url=decision.url, host=decision.host, path=decision.path, variant=decision.variant,
            vary=facts.vary, now=now, compress=settings.compression, max_age=settings.max_age,
            freshness=facts.freshness, omit=_withheld(facts),
        )  # fmt: skip

    def _store(
        self,
        request: CacheRequest,
        entry: CacheEntry,
        vary: tuple[str, ...],
        fwd: Fwd,
        generation: object,
    ) -> tuple[Outcome, str | None]:
        """Store ``entry`` unless a purge began since ``generation`` and tell the stored
        listeners: the outcome, and the key it was stored under (``None``: not stored)."""
        window = stale_window(entry.fresh, request.settings.stale_while_revalidate)
        fill = request.fill
        release = None
        if fill is not None and fill.owner is not None and self.engine.fill_release_in_store:
            release = (fill.name, fill.owner)  # freed by the write itself: no round trip
        try:
            key = self.entries.save(
                request.decision.base, entry, vary, request.environ, window, generation, release
            )
            if key is not None and fill is not None and release is not None:
                fill.owner = None  # the entry's write freed it
        except StorageError as exc:
            self.engine.storage_warning("cache storage unavailable, page not stored: %s", exc)
            return Outcome.failed(fwd, storage_failure(exc)), None
        if key is None:
            return Outcome.failed(fwd, "purged"), None
        for listener in self.hooks.stored_listeners:
            try:
                listener(entry, vary)
            except Exception:
                logger.exception("stored listener %r failed", listener)
        return Outcome.stored_after(fwd), key


class _Refreshed(Captured):
    """A stored response with refreshed header fields, read as a captured one."""

    def __init__(self, status: int, headers: list[tuple[str, str]], size: int) -> None:
        super().__init__()
        self.status = str(status)
        self.headers = headers
        self.size = size


def _withheld(facts: ResponseFacts) -> tuple[str, ...]:
    """The fields a qualified ``no-cache`` or ``private`` names: never stored."""
    directives = facts.headers.directives
    return (*(directives.fields("no-cache") or ()), *(directives.fields("private") or ()))

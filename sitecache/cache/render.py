"""A page rendered for the cache: the application answers, the response guards decide, the
page is stored, and the client answered, labelled with the `Outcome`.

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
from sitecache.cache.capture import Captured, StartResponse, WSGIApp, call_app, response_facts
from sitecache.cache.classify import Decision
from sitecache.cache.engine import CacheEngine
from sitecache.cache.entry import CacheEntry
from sitecache.cache.outcome import Fwd, Outcome, OutcomeReason
from sitecache.cache.policy import CacheRules, ResponseFacts, response_refusal_reason
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
        self, request: CacheRequest, now: float, fwd: Fwd, generation: object
    ) -> tuple[Iterable[bytes], bool, bool]:
        """Ask the app, store what may be stored (unless a purge began since ``generation``),
        answer the client: ``(answer, stored, unstorable)``."""
        hooks, environ = self.hooks, request.environ
        is_head = environ.get("REQUEST_METHOD") == "HEAD"
        app_environ = environ
        if is_head:
            app_environ = dict(environ)
            app_environ["REQUEST_METHOD"] = "GET"
        captured = call_app(hooks.app, app_environ, hooks.rules.max_body)
        facts = response_facts(captured)
        reason = response_refusal_reason(facts, request.settings, hooks.rules)
        if reason is None and captured.overflow is not None:
            reason = "too_large"
        if reason is not None:
            outcome = Outcome.refused(fwd, reason)
            return self._refuse(request, captured, outcome, is_head), False, True
        entry = self._entry(request, captured, facts, now)
        outcome, key = self._store(request, entry, keyed_vary(facts.vary), fwd, generation)
        prepared = Prepared(entry)
        if key is not None:
            self.entries.remember(key, prepared, generation)
        answer = send_entry(
            environ,
            request.start_response,
            prepared,
            now,
            outcome,
            self.engine.count,
            hooks.serve_filters,
            request.settings.use_304,
        )
        return answer, key is not None, False

    def _refuse(
        self, request: CacheRequest, captured: Captured, outcome: Outcome, is_head: bool
    ) -> Iterable[bytes]:
        """Count ``outcome`` and send the app's unstored answer labelled with it."""
        outcome.count(self.engine.count)
        headers = [*captured.headers, ("Cache-Status", outcome.header())]
        if is_head:
            request.start_response(captured.status, headers)
            captured.close()
            return []
        return send_captured(request.environ, request.start_response, captured, headers,
                             self.hooks.serve_filters)  # fmt: skip

    def _entry(
        self, request: CacheRequest, captured: Captured, facts: ResponseFacts, now: float
    ) -> CacheEntry:
        """The entry to store of a response the guards let through (after the store filters)."""
        decision, settings = request.decision, request.settings
        body = captured.body()
        for store_filter in self.hooks.store_filters:
            body = store_filter(body, decision.url)
        return CacheEntry.from_response(
            facts.status, captured.headers, body,
            url=decision.url, host=decision.host, path=decision.path, variant=decision.variant,
            vary=facts.vary, now=now, compress=settings.compression,
            max_age=settings.max_age if facts.lifetime is None else facts.lifetime,
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
        window = request.settings.stale_while_revalidate
        try:
            key = self.entries.save(
                request.decision.base, entry, vary, request.environ, window, generation
            )
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

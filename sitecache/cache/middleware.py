"""`PageCache`: the page-cache WSGI middleware, usable around any WSGI application.

A request is turned into `RequestFacts` and checked by the request guards
(`sitecache.cache.policy`); one that may be looked up is keyed (`sitecache.cache.keys`) and
answered from the memory tier or the storage when a fresh entry exists. Otherwise the wrapped
application answers; its response is checked by the response guards and stored when it may be.
Every response carries an RFC 9211 ``Cache-Status`` header saying what happened and why.

A hit does no settings reload, no JSON parse, no SQL and no logging: one ``stat`` of the purge
generation (disk) or one ``GET`` (Redis), a dictionary lookup, and the stored bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from email.utils import formatdate, parsedate_to_datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode

from sitecache.cache.engine import CacheEngine, PurgeResult
from sitecache.cache.entry import CacheEntry
from sitecache.cache.keys import base_key, canonical_url, normalize_host, normalize_path, vary_key
from sitecache.cache.policy import (
    BYPASS_QUERY_PARAMS,
    CacheRules,
    RequestFacts,
    ResponseFacts,
    is_under,
    parse_cache_control,
    parse_list_header,
    request_bypass_reason,
    response_refusal_reason,
)
from sitecache.cache.settings import CacheSettings
from sitecache.cache.storage import MemoryStorage, Storage, StorageError
from sitecache.cache.tier import MemoryTier
from sitecache.errors import RestError

__all__ = ["PageCache"]

logger = logging.getLogger("sitecache.cache")

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
#: ``(body, url) -> body``: changes a page before it is stored (companion plugins).
StoreFilter = Callable[[bytes, str], bytes]
#: ``(body, environ) -> body``: changes an HTML page as it is sent (companion plugins).
ServeFilter = Callable[[bytes, Mapping[str, Any]], bytes]
#: ``(entry, vary) -> None``: told of each page just stored (static-file mode).
StoredListener = Callable[[CacheEntry, tuple[str, ...]], None]
#: ``(now, environ) -> None``: called first on every request (cheap periodic work).
Tick = Callable[[float, Mapping[str, Any]], None]

#: Response headers never stored: per-connection, per-response or per-visitor.
UNSTORED_HEADERS: Final = frozenset(
    {
        "set-cookie",
        "date",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "age",
        "cache-status",
        "server",
        "proxy-authenticate",
        "proxy-connection",
        "trailer",
        "te",
        "upgrade",
        "www-authenticate",
        "x-site-nonce",
    }
)

#: Content types worth a gzip copy.
COMPRESSIBLE: Final = (
    "text/",
    "application/json",
    "application/xml",
    "application/rss+xml",
    "application/atom+xml",
    "application/javascript",
    "application/xhtml+xml",
    "image/svg+xml",
)
MIN_GZIP_SIZE: Final = 256
REGENERATION_LOCK_TTL: Final = 30.0
CACHE_NAME: Final = "sitecache"
#: Decisions remembered per settings for plain requests (see `_plain_key`), and the longest
#: path plus user agent remembered: a bounded memo, emptied when full.
PLAIN_MEMO_SIZE: Final = 512
PLAIN_MEMO_MAX_TEXT: Final = 2048

#: What the request guards and the key builder decided for a request:
#: (bypass reason or None, host, path, canonical URL, base key, variant).
Decision = tuple[str | None, str, str, str, str, str]


class Prepared:
    """An entry ready to be sent: status line, header lists and bodies built once."""

    __slots__ = (
        "body",
        "created",
        "entry",
        "etag",
        "expires",
        "gzip_body",
        "gzip_etag",
        "gzip_headers",
        "identity_headers",
        "last_modified",
        "status_line",
        "vary",
        "weight",
    )

    def __init__(self, entry: CacheEntry) -> None:
        self.entry = entry
        self.vary = entry.vary
        self.created = entry.created
        self.expires = entry.expires
        self.body = entry.body
        self.gzip_body = entry.gzip_body
        self.weight = len(entry.body) + len(entry.gzip_body) + 512
        self.status_line = _status_line(entry.status) if entry.status else ""
        self.etag = entry.etag
        self.gzip_etag = entry.etag[:-1] + '-gzip"' if entry.etag else ""
        self.last_modified = entry.extra.get("last_modified", entry.created)
        headers = list(entry.headers)
        self.identity_headers = [
            *headers,
            ("Content-Length", str(len(entry.body))),
        ]
        if self.etag:
            self.identity_headers.append(("ETag", self.etag))
        self.gzip_headers = [
            *headers,
            ("Content-Encoding", "gzip"),
            ("Content-Length", str(len(entry.gzip_body))),
        ]
        if self.gzip_etag:
            self.gzip_headers.append(("ETag", self.gzip_etag))


def _status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def accepts_gzip(value: str) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (``q=0`` refuses it)."""
    if "gzip" not in value and "*" not in value:
        return False
    for item in value.split(","):
        name, _, params = item.partition(";")
        if name.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        for param in params.split(";"):
            key, _, number = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    return float(number) > 0
                except ValueError:
                    return False
        return True
    return False


def _etag_matches(header: str, etag: str) -> bool:
    if not etag:
        return False
    if header.strip() == "*":
        return True
    candidates = {item.strip().removeprefix("W/") for item in header.split(",")}
    return etag in candidates


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
        self.debug_logger = _debug_logger(debug_log)
        self._owns_debug_log = debug_log is not None
        if engine is None:
            if rules is None:
                rules = CacheRules(
                    hosts=frozenset(host.lower() for host in hosts) if hosts is not None else None
                )
            engine = CacheEngine(storage if storage is not None else MemoryStorage(), rules)
        self.engine = engine
        self.rules = engine.rules
        #: prepared entries of this process, stamped with the generation they were read under
        self.tier: MemoryTier[Prepared] = MemoryTier(engine.memory_tier_bytes)
        if settings:
            engine.seed_settings(settings)
        self._hosts: dict[tuple[str, str], str] = {}
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
        self.host_aliases: dict[str, str] = {}
        self._plain_memo: tuple[CacheSettings | None, dict[tuple[Any, ...], Decision]] = (None, {})

    def set_host_aliases(self, aliases: Mapping[str, str]) -> None:
        """Key requests for each alias host under its canonical host (normalized names)."""
        self.host_aliases = {alias.lower(): host.lower() for alias, host in aliases.items()}
        self._hosts = {}
        self._plain_memo = (None, {})  # its decisions name the hosts

    # ------------------------------------------------------------------ purge shortcuts
    def purge_url(self, url: str, *, soft: bool = False) -> PurgeResult | RestError:
        """Purge every variant of ``url`` (absolute, or a /path on every host)."""
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
            for handler in list(self.debug_logger.handlers):
                handler.close()
        self.engine.close()

    # ------------------------------------------------------------------ WSGI
    def _host(self, environ: Mapping[str, Any], scheme: str) -> str:
        """The request's host if it is spelled canonically, else ``""`` (never served).

        SECURITY: the key holds the normalized host, so a spelling the app could reflect
        differently (``LOCALHOST.``, ``example.org:80``) is not keyed at all.
        """
        raw = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
        cached = self._hosts.get((raw, scheme))
        if cached is None:
            normalized = normalize_host(str(raw), scheme)
            default_port = ":443" if scheme == "https" else ":80"
            # The default port spelled out (a proxy's X-Forwarded-Port) is the same origin.
            same = raw in (normalized, normalized + default_port)
            cached = normalized if same else ""
            cached = self.host_aliases.get(cached, cached)
            if len(self._hosts) < 256:
                self._hosts[(raw, scheme)] = cached
        return cached

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        engine = self.engine
        now = engine.clock()
        if self.tick is not None:
            self.tick(now, environ)
        engine.maybe_flush(now)
        settings = engine.settings(now)
        if settings.debug:
            start_response = self._debugging(environ, start_response)
        # A plain request (no query, cookie, credentials, forwarded host or body: most
        # anonymous hits) is decided by its method, scheme, host, path and user agent alone
        # under given settings, so the guards and the key builder run once per request shape.
        memo_key = _plain_key(environ)
        decision = None
        if memo_key is not None:
            memo_settings, memo = self._plain_memo
            if memo_settings is not settings:
                memo = {}
                self._plain_memo = (settings, memo)
            decision = memo.get(memo_key)
        if decision is None:
            environ, decision = self._decide(environ, settings)
            if memo_key is not None:
                if len(memo) >= PLAIN_MEMO_SIZE:
                    memo.clear()
                memo[memo_key] = decision
        reason, base = decision[0], decision[4]
        if reason is not None:
            return self._bypass(environ, start_response, reason)
        if engine.hold.active():
            # A purge owed to a content change is not applied yet: fail closed.
            return self._bypass(environ, start_response, "purge_pending")
        try:
            # Read before the app renders anything: what is stored under it may outlive no
            # purge that began later (the conditional put refuses it).
            generation = self._generation()
            key, prepared = self._lookup(base, environ, now, generation)
        except StorageError as exc:
            engine.storage_warning("cache storage unavailable, passing through: %s", exc)
            return self._bypass(environ, start_response, "storage_error")
        if prepared is not None:
            expires = prepared.expires
            if not expires or now < expires:
                engine.count("hit")
                ttl = f"; ttl={int(expires - now)}" if expires else ""
                return self._send(environ, start_response, prepared, now, f"{CACHE_NAME}; hit{ttl}")
            if now < expires + settings.stale_while_revalidate:
                return self._revalidate(environ, start_response, key, prepared, decision,
                                        settings, now, generation)  # fmt: skip
        fwd = "vary-miss" if key != base else "uri-miss"
        return self._fill(environ, start_response, decision, settings, now, fwd, generation)

    def _revalidate(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        key: str,
        prepared: Prepared,
        decision: Decision,
        settings: CacheSettings,
        now: float,
        generation: object,
    ) -> Iterable[bytes]:
        """A stale entry within its window: one request (per key, across processes and
        nodes) regenerates it; the others are served the stale copy meanwhile."""
        engine = self.engine
        lock_name = f"regen:{key}"
        try:
            owner = engine.acquire(lock_name, REGENERATION_LOCK_TTL)
        except StorageError as exc:
            engine.storage_warning("cache lock unavailable: %s", exc)
            owner = None
        expires = prepared.expires
        if owner is None:
            engine.count("stale")
            status = f"{CACHE_NAME}; hit; ttl={int(expires - now)}; detail=stale"
            return self._send(environ, start_response, prepared, now, status)
        try:
            # Another request may have regenerated it between our lookup and the lock.
            try:
                latest = self._prepared(key, now, generation, refresh=True)
            except StorageError:
                latest = None
            if latest is not None and latest.expires and now < latest.expires:
                engine.count("hit")
                ttl = f"; ttl={int(latest.expires - now)}"
                return self._send(environ, start_response, latest, now, f"{CACHE_NAME}; hit{ttl}")
            fwd = "stale"
            return self._store_render(environ, start_response, decision, settings, now, fwd,
                                      generation)[0]  # fmt: skip
        finally:
            engine.release(lock_name, owner)

    def _fill(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        decision: Decision,
        settings: CacheSettings,
        now: float,
        fwd: str,
        generation: object,
    ) -> Iterable[bytes]:
        """A miss: render once per key however many ask at once (`sitecache.cache.fills`);
        waiters are answered from the stored page, or render it themselves when none came."""
        engine = self.engine
        base = decision[4]
        fill = engine.fills.begin(base)
        if fill.lead:
            stored = unstorable = False
            try:
                answer, stored, unstorable = self._store_render(
                    environ, start_response, decision, settings, now, fwd, generation
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
            generation = self._generation()
            _, prepared = self._lookup(base, environ, later, generation)
        except StorageError as exc:
            engine.storage_warning("cache storage unavailable, passing through: %s", exc)
            return self._bypass(environ, start_response, "storage_error")
        if prepared is not None and (not prepared.expires or later < prepared.expires):
            engine.count("hit")
            status = f"{CACHE_NAME}; fwd={fwd}; collapsed"
            return self._send(environ, start_response, prepared, later, status)
        return self._store_render(environ, start_response, decision, settings, later, fwd,
                                  generation)[0]  # fmt: skip

    def _decide(
        self, environ: dict[str, Any], settings: CacheSettings
    ) -> tuple[dict[str, Any], Decision]:
        """Run the request guards and build the key: the environ the app sees (login cookies
        or ignored query parameters stripped) and the `Decision`."""
        rules = self.rules
        scheme = environ.get("wsgi.url_scheme", "http")
        host = self._host(environ, scheme)
        path_info = environ.get("PATH_INFO", "")
        path = environ.get("SCRIPT_NAME", "") + path_info
        # SECURITY: the bypass rules see the path the app routes on (werkzeug strips leading
        # slashes and ignores SCRIPT_NAME) as well as the full one: `//site-json/` is REST.
        routed = "/" + path_info.lstrip("/")
        query = environ.get("QUERY_STRING", "")
        cookie_header = environ.get("HTTP_COOKIE", "")
        pairs = parse_qsl(query, keep_blank_values=True, encoding="latin-1") if query else []
        cookie_names = _cookie_names(cookie_header) if cookie_header else ()
        method = environ.get("REQUEST_METHOD", "GET")
        forwarded = environ.get("HTTP_X_FORWARDED_HOST")
        facts = RequestFacts(
            method=method,
            path=path,
            routed_path=routed,
            has_body=bool(environ.get("HTTP_TRANSFER_ENCODING"))
            or environ.get("CONTENT_LENGTH", "") not in ("", "0"),
            host=host,
            query_names=tuple(name for name, _ in pairs),
            cookie_names=cookie_names,
            has_authorization=bool(environ.get("HTTP_AUTHORIZATION")),
            user_agent=environ.get("HTTP_USER_AGENT", ""),
            forwarded_host_mismatch=forwarded is not None
            and all(normalize_host(item, scheme) != host for item in str(forwarded).split(",")),
            server_port=str(environ.get("SERVER_PORT", "")),
        )
        if (
            settings.known_users == "anonymous"
            and cookie_names
            and method in ("GET", "HEAD")
            and not is_under(path, rules.bypass_path_prefixes)
            and not is_under(routed, rules.bypass_path_prefixes)
            and BYPASS_QUERY_PARAMS.isdisjoint(facts.query_names)
        ):
            # known_users=anonymous: a front-end GET is answered as for a visitor without a
            # login; the app never sees the login cookies, so the page is the anonymous one.
            kept = [
                name for name in cookie_names if not name.startswith(rules.auth_cookie_prefixes)
            ]
            if len(kept) != len(cookie_names):
                environ = dict(environ)
                environ["HTTP_COOKIE"] = _strip_cookies(cookie_header, rules.auth_cookie_prefixes)
                facts.cookie_names = tuple(kept)
        reason = request_bypass_reason(facts, settings, rules)
        if reason is not None:
            return environ, (reason, host, path, "", "", "")
        kept_pairs = pairs
        if pairs:
            kept_pairs = [(k, v) for k, v in pairs if not settings.is_ignored_param(k)]
            if len(kept_pairs) != len(pairs):
                # The app sees the query the key describes: stripped parameters cannot change
                # a page that others will be served.
                environ = dict(environ)
                environ["QUERY_STRING"] = urlencode(kept_pairs, encoding="latin-1")
        variant = ""
        if settings.mobile:
            agent = facts.user_agent.lower()
            if any(fragment in agent for fragment in settings.mobile_user_agents):
                variant = "mobile"
        # The key holds the path as the app routes it: `//post/` is `/post/`, one entry.
        path = normalize_path(environ.get("SCRIPT_NAME", "") + routed)
        url = canonical_url(scheme, host, path, kept_pairs)
        base = base_key(url, variant)
        return environ, (None, host, path, url, base, variant)

    def _debugging(
        self, environ: Mapping[str, Any], start_response: StartResponse
    ) -> StartResponse:
        """``start_response`` that also writes the request's debug line."""
        method = str(environ.get("REQUEST_METHOD", ""))
        path = normalize_path(str(environ.get("PATH_INFO", "")))
        query = environ.get("QUERY_STRING", "")
        # SECURITY: parameter names only: values may carry tokens; never cookies or credentials.
        names = ",".join(
            sorted({quote(name, safe="") for name, _ in parse_qsl(query, keep_blank_values=True)})
        )
        logger = self.debug_logger

        def debugging_start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            cache_status = next((v for k, v in headers if k == "Cache-Status"), "-")
            logger.info("%s %s%s %s %s", method, path, f" ?{names}" if names else "",
                        status.split(" ", 1)[0], cache_status)  # fmt: skip
            return start_response(status, headers, exc_info)

        return debugging_start_response

    # ------------------------------------------------------------------ lookup
    def _generation(self) -> object:
        """The purge generation now; the memory tier gives back what older ones hold."""
        generation = self.engine.check_generation()
        self.tier.observe(generation)
        return generation

    def _prepared(
        self, key: str, now: float, generation: object, *, refresh: bool = False
    ) -> Prepared | None:
        """The entry under ``key`` ready to send: from the memory tier when it holds one read
        under ``generation`` and still fresh (unless ``refresh``), else from the storage."""
        engine = self.engine
        prepared = self.tier.get(key, generation)
        fresh = prepared is not None and (not prepared.expires or now < prepared.expires)
        if fresh and not refresh:
            return prepared
        # Not here, or stale here: another process may have stored a fresher copy.
        entry = engine.load(key)
        if entry is None:
            if prepared is not None:
                self.tier.forget(key)
            return None
        if prepared is None or entry.created > prepared.created:
            prepared = Prepared(entry)
            self.tier.put(key, prepared, generation)
        return prepared

    def _lookup(
        self, base: str, environ: Mapping[str, Any], now: float, generation: object
    ) -> tuple[str, Prepared | None]:
        prepared = self._prepared(base, now, generation)
        if prepared is None or prepared.status_line:
            return base, prepared
        # A pointer: the real entry is keyed by the request's values of the Vary headers.
        key = vary_key(base, prepared.vary, _vary_values(environ, prepared.vary))
        return key, self._prepared(key, now, generation)

    # ------------------------------------------------------------------ answers
    def _send(
        self,
        environ: Mapping[str, Any],
        start_response: StartResponse,
        prepared: Prepared,
        now: float,
        cache_status: str,
    ) -> Iterable[bytes]:
        use_gzip = bool(prepared.gzip_body) and accepts_gzip(
            environ.get("HTTP_ACCEPT_ENCODING", "")
        )
        extra = [("Age", str(max(0, int(now - prepared.created)))), ("Cache-Status", cache_status)]
        if self.serve_filters and _is_html(prepared.identity_headers):
            body = prepared.body
            for serve_filter in self.serve_filters:
                body = serve_filter(body, environ)
            if body is not prepared.body:
                headers = [
                    (name, value)
                    for name, value in prepared.identity_headers
                    if name.lower() not in ("content-length", "etag", "last-modified")
                ]
                start_response(
                    prepared.status_line,
                    [*headers, ("Content-Length", str(len(body))), *extra],
                )
                return [] if environ.get("REQUEST_METHOD") == "HEAD" else [body]
        if self.engine.settings(now).use_304 and _not_modified(environ, prepared, use_gzip):
            etag = prepared.gzip_etag if use_gzip else prepared.etag
            headers = [
                (name, value)
                for name, value in prepared.identity_headers
                if name.lower()
                in ("cache-control", "content-location", "expires", "vary", "last-modified")
            ]
            if etag:
                headers.append(("ETag", etag))
            start_response("304 Not Modified", headers + extra)
            return []
        if use_gzip:
            start_response(prepared.status_line, prepared.gzip_headers + extra)
            body = prepared.gzip_body
        else:
            start_response(prepared.status_line, prepared.identity_headers + extra)
            body = prepared.body
        if environ.get("REQUEST_METHOD") == "HEAD":
            return []
        return [body]

    def _bypass(
        self, environ: dict[str, Any], start_response: StartResponse, reason: str
    ) -> Iterable[bytes]:
        self.engine.count("bypass")
        self.engine.count(f"bypass:{reason}")
        status_value = f"{CACHE_NAME}; fwd=bypass; detail={reason}"

        def bypass_start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            return start_response(status, [*headers, ("Cache-Status", status_value)], exc_info)

        if self.serve_filters:
            return self._filtered(environ, bypass_start_response)
        return self.app(environ, bypass_start_response)

    def _filtered(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """The app's answer with the serve filters applied to an HTML body."""
        captured = _call(self.app, environ, self.rules.max_body)
        return self._send_captured(environ, start_response, captured, captured.headers)

    def _send_captured(
        self,
        environ: Mapping[str, Any],
        start_response: StartResponse,
        captured: _Captured,
        headers: list[tuple[str, str]],
    ) -> Iterable[bytes]:
        """Send an unstored answer, through the serve filters when it is a whole HTML page."""
        if not self.serve_filters or captured.overflow is not None or not _is_html(headers):
            start_response(captured.status, headers)
            return captured.body_iterable()
        captured.close()
        body = original = captured.body()
        for serve_filter in self.serve_filters:
            body = serve_filter(body, environ)
        if body is not original:
            headers = [(name, value) for name, value in headers
                       if name.lower() not in ("content-length", "etag")]  # fmt: skip
            headers.append(("Content-Length", str(len(body))))
        start_response(captured.status, headers)
        return [body]

    def _store_render(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        decision: Decision,
        settings: CacheSettings,
        now: float,
        fwd: str,
        generation: object,
    ) -> tuple[Iterable[bytes], bool, bool]:
        """Ask the app, store what may be stored, answer the client: ``(answer, stored,
        unstorable)``.

        The store is conditional on ``generation`` (read before the app rendered): a page
        whose rendering overlapped a purge is answered but not stored, since it may show what
        the purge was meant to remove.
        """
        engine = self.engine
        _, host, path, url, base, variant = decision
        is_head = environ.get("REQUEST_METHOD") == "HEAD"
        app_environ = environ
        if is_head:
            # A HEAD miss primes the GET entry: the app answers a GET, the client the headers.
            app_environ = dict(environ)
            app_environ["REQUEST_METHOD"] = "GET"
        captured = _call(self.app, app_environ, self.rules.max_body)
        facts = _response_facts(captured)
        reason = response_refusal_reason(facts, settings, self.rules)
        if reason is None and captured.overflow is not None:
            reason = "too_large"
        if reason is not None:
            engine.count("bypass")
            engine.count(f"bypass:{reason}")
            status_value = f"{CACHE_NAME}; fwd={fwd}; detail={reason}"
            headers = [*captured.headers, ("Cache-Status", status_value)]
            if is_head:
                start_response(captured.status, headers)
                captured.close()
                return [], False, True
            return self._send_captured(environ, start_response, captured, headers), False, True
        entry = _build_entry(captured, facts, url, host, path, variant, settings, now,
                             self.store_filters)  # fmt: skip
        vary = tuple(name for name in facts.vary if name != "accept-encoding")
        key = base
        stored = False
        try:
            if vary:
                key = vary_key(base, vary, _vary_values(environ, vary))
                pointer = CacheEntry(
                    url=url, host=host, path=path, variant=variant, status=0, headers=(),
                    body=b"", gzip_body=b"", created=now, expires=entry.expires, vary=vary,
                )  # fmt: skip
                if not engine.store(base, pointer, settings.stale_while_revalidate, generation):
                    raise _PurgedMeanwhile
                self.tier.forget(base)
            if not engine.store(key, entry, settings.stale_while_revalidate, generation):
                raise _PurgedMeanwhile
            engine.count("miss")
            stored = True
            status_value = f"{CACHE_NAME}; fwd={fwd}; stored"
            for listener in self.stored_listeners:
                try:
                    listener(entry, vary)
                except Exception:
                    logger.exception("stored listener %r failed", listener)
        except _PurgedMeanwhile:
            engine.count("bypass")
            engine.count("bypass:purged")
            status_value = f"{CACHE_NAME}; fwd={fwd}; detail=purged"
        except StorageError as exc:
            engine.storage_warning("cache storage unavailable, page not stored: %s", exc)
            engine.count("bypass")
            engine.count("bypass:storage_error")
            status_value = f"{CACHE_NAME}; fwd={fwd}; detail=storage_error"
        prepared = Prepared(entry)
        if stored:
            self.tier.put(key, prepared, generation)
        return self._send(environ, start_response, prepared, now, status_value), stored, False


# ---------------------------------------------------------------------- helpers
def _plain_key(environ: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What decides a plain request (no query string, cookie, ``Authorization``,
    ``X-Forwarded-Host`` or body): its method, scheme, host, ``SCRIPT_NAME``, ``PATH_INFO`` and
    user agent; ``None`` for any other request, or one whose path and user agent are too long
    to remember. Every environ value `PageCache._decide` reads is either in the key or absent."""
    # (SERVER_PORT is in the key: without site_url, loopback hosts are keyed on it.)
    if (
        environ.get("QUERY_STRING")
        or environ.get("HTTP_COOKIE")
        or environ.get("HTTP_AUTHORIZATION")
        or environ.get("HTTP_X_FORWARDED_HOST") is not None
        or environ.get("HTTP_TRANSFER_ENCODING")
        or environ.get("CONTENT_LENGTH", "") not in ("", "0")
    ):
        return None
    script_name = environ.get("SCRIPT_NAME", "")
    path_info = environ.get("PATH_INFO", "")
    agent = environ.get("HTTP_USER_AGENT", "")
    if len(script_name) + len(path_info) + len(agent) > PLAIN_MEMO_MAX_TEXT:
        return None
    return (
        environ.get("REQUEST_METHOD", "GET"),
        environ.get("wsgi.url_scheme", "http"),
        environ.get("HTTP_HOST") or environ.get("SERVER_NAME", ""),
        environ.get("SERVER_PORT", ""),
        script_name,
        path_info,
        agent,
    )


class _PurgedMeanwhile(Exception):
    """A purge happened while the page was being rendered: do not store it."""


def _debug_logger(path: str | Path | None) -> logging.Logger:
    """The debug logger: this cache's own (unregistered) logger on a private file (0600) when
    ``path`` is given, else the shared ``sitecache.cache.debug`` logger."""
    if path is None:
        return logging.getLogger("sitecache.cache.debug")
    debug = logging.Logger("sitecache.cache.debug", logging.INFO)
    target = Path(path)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    target.touch(mode=0o600, exist_ok=True)
    handler = logging.FileHandler(target, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(message)s"))
    debug.addHandler(handler)
    return debug


class _Captured:
    """The app's response, buffered up to the storable size."""

    __slots__ = ("chunks", "close", "headers", "overflow", "size", "status")

    def __init__(self) -> None:
        self.status = "500 Internal Server Error"
        self.headers: list[tuple[str, str]] = []
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow: Iterator[bytes] | None = None
        self.close: Callable[[], None] = _nothing

    def body(self) -> bytes:
        return b"".join(self.chunks)

    def body_iterable(self) -> Iterable[bytes]:
        if self.overflow is None:
            self.close()
            return self.chunks
        return self._stream()

    def _stream(self) -> Iterator[bytes]:
        try:
            yield from self.chunks
            if self.overflow is not None:
                yield from self.overflow
        finally:
            self.close()


def _nothing() -> None:
    """No resource to release."""


def _call(app: WSGIApp, environ: dict[str, Any], limit: int) -> _Captured:
    captured = _Captured()

    def capture_start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        if exc_info is not None and captured.chunks:
            raise exc_info[1].with_traceback(exc_info[2])
        captured.status = status
        captured.headers = list(headers)
        return captured.chunks.append

    result = app(environ, capture_start_response)
    close = getattr(result, "close", None)
    if callable(close):
        captured.close = close
    iterator = iter(result)
    try:
        for chunk in iterator:
            if chunk:
                captured.chunks.append(chunk)
                captured.size += len(chunk)
                if captured.size > limit:
                    captured.overflow = iterator
                    return captured
    except BaseException:
        captured.close()
        raise
    # PEP 3333: the whole body is buffered, so the app's resources are released now.
    captured.close()
    captured.close = _nothing
    captured.size = sum(len(chunk) for chunk in captured.chunks)
    return captured


def _response_facts(captured: _Captured) -> ResponseFacts:
    set_cookie = False
    cache_control: set[str] = set()
    vary: list[str] = []
    encoding = ""
    page_types: set[str] = set()
    for name, value in captured.headers:
        lower = name.lower()
        if lower == "set-cookie":
            set_cookie = True
        elif lower == "cache-control":
            cache_control |= parse_cache_control(value)
            if _zero_lifetime(value):
                cache_control.add("no-cache")
        elif lower == "vary":
            vary.extend(parse_list_header(value))
        elif lower == "content-encoding":
            encoding = value.strip().lower()
        elif lower == "x-site-page-type":
            page_types.update(parse_list_header(value))
    try:
        status = int(captured.status.split(" ", 1)[0])
    except ValueError:
        status = 500
    return ResponseFacts(
        status=status,
        has_set_cookie=set_cookie,
        cache_control=frozenset(cache_control),
        vary=tuple(dict.fromkeys(vary)),
        body_length=captured.size,
        content_encoding=encoding,
        page_types=frozenset(page_types),
    )


def _build_entry(
    captured: _Captured,
    facts: ResponseFacts,
    url: str,
    host: str,
    path: str,
    variant: str,
    settings: CacheSettings,
    now: float,
    store_filters: Iterable[StoreFilter] = (),
) -> CacheEntry:
    body = captured.body()
    for store_filter in store_filters:
        body = store_filter(body, url)
    headers: list[tuple[str, str]] = []
    tags: list[str] = []
    content_type = ""
    etag = ""
    last_modified = now
    for name, value in captured.headers:
        lower = name.lower()
        if lower in UNSTORED_HEADERS or lower == "vary":
            continue
        if lower == "cache-tag":
            tags.extend(item.strip() for item in value.split(",") if item.strip())
        if lower == "content-type":
            content_type = value.lower()
        if lower == "etag":
            if value.startswith('"') and value.endswith('"'):
                etag = value
            continue
        if lower == "last-modified":
            try:
                last_modified = parsedate_to_datetime(value).timestamp()
            except (TypeError, ValueError):
                continue
        headers.append((name, value))
    if not any(name.lower() == "last-modified" for name, _ in headers):
        headers.append(("Last-Modified", formatdate(now, usegmt=True)))
    gzip_body = b""
    if (
        settings.compression
        and len(body) >= MIN_GZIP_SIZE
        and content_type.startswith(COMPRESSIBLE)
    ):
        gzip_body = gzip.compress(body, compresslevel=6, mtime=0)
    vary = [name for name in facts.vary if name != "accept-encoding"]
    if gzip_body:
        vary.append("accept-encoding")
    if vary:
        headers.append(("Vary", ", ".join(_title(name) for name in vary)))
    if not etag:
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return CacheEntry(
        url=url,
        host=host,
        path=path,
        variant=variant,
        status=facts.status,
        headers=tuple(headers),
        body=body,
        gzip_body=gzip_body,
        created=now,
        expires=now + settings.max_age if settings.max_age else 0.0,
        tags=tuple(dict.fromkeys(tags)),
        etag=etag,
        vary=(),
        extra={"last_modified": last_modified},
    )


def _is_html(headers: Iterable[tuple[str, str]]) -> bool:
    return any(
        name.lower() == "content-type"
        and value.lower().startswith(("text/html", "application/xhtml"))
        for name, value in headers
    )


def _zero_lifetime(value: str) -> bool:
    """Whether a Cache-Control value gives shared caches no lifetime (``s-maxage=0``, or
    ``max-age=0`` without ``s-maxage``)."""
    directives = {}
    for part in value.split(","):
        name, _, argument = part.strip().partition("=")
        directives[name.strip().lower()] = argument.strip().strip('"')
    lifetime = directives.get("s-maxage", directives.get("max-age"))
    return lifetime is not None and lifetime.isdigit() and int(lifetime) == 0


def _title(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-"))


#: Request headers that PEP 3333 (CGI) keeps without the ``HTTP_`` prefix.
_UNPREFIXED_HEADERS: Final = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})


def _vary_values(environ: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """The request's values of the ``Vary`` headers ``names`` (lower case)."""
    values = []
    for name in names:
        variable = name.upper().replace("-", "_")
        if variable not in _UNPREFIXED_HEADERS:
            variable = "HTTP_" + variable
        values.append(str(environ.get(variable, "")).strip())
    return values


def _not_modified(environ: Mapping[str, Any], prepared: Prepared, use_gzip: bool) -> bool:
    if not prepared.status_line.startswith("2"):  # RFC 9110 §13.2.1: preconditions on 2xx only
        return False
    if_none_match = environ.get("HTTP_IF_NONE_MATCH")
    if if_none_match:
        return _etag_matches(if_none_match, prepared.gzip_etag if use_gzip else prepared.etag)
    since = environ.get("HTTP_IF_MODIFIED_SINCE")
    if since:
        try:
            return int(prepared.last_modified) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, OverflowError):
            return False
    return False


def _cookie_names(header: str) -> tuple[str, ...]:
    names = []
    for part in header.split(";"):
        name = part.split("=", 1)[0].strip()
        if name:
            names.append(name)
    return tuple(names)


def _strip_cookies(header: str, prefixes: tuple[str, ...]) -> str:
    kept = [
        part.strip()
        for part in header.split(";")
        if part.strip() and not part.split("=", 1)[0].strip().startswith(prefixes)
    ]
    return "; ".join(kept)

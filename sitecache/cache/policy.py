"""What may be stored and served: the cacheability guards, pure functions of values.

Two flat guard lists, in the style of Django's cache middleware: each row a `Guard` holding a
reason code, a predicate and the sentence that explains the reason to an administrator, with one
comment saying why. The first guard that fires decides, and its reason feeds the
``Cache-Status`` header, the stats and the cache test (whose explanations are the rows' own, so
they cannot drift). Rows marked ``SECURITY:`` are the "never stored" rules: they fail closed
whatever the settings say.

Nothing here does I/O or imports werkzeug; the middleware turns the WSGI environ and the app's
response into `RequestFacts` and `ResponseFacts` (the latter with the response's freshness,
`sitecache.cache.freshness`, which the storability rows read: RFC 9111 §3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

from sitecache.cache.directives import Directives
from sitecache.cache.freshness import (
    HEURISTIC_STATUSES,
    Freshness,
    HeaderFacts,
    Heuristic,
    understood,
)
from sitecache.cache.settings import CacheSettings

__all__ = [
    "AUTH_COOKIE_PREFIXES",
    "BYPASS_PATH_PREFIXES",
    "BYPASS_QUERY_PARAMS",
    "LOGIN_COOKIE_PREFIXES",
    "NEVER_STORED_STATUSES",
    "REQUEST_GUARDS",
    "RESPONSE_GUARDS",
    "UNLOCK_COOKIE_PREFIXES",
    "CacheRules",
    "Guard",
    "RequestFacts",
    "ResponseFacts",
    "heuristic_status",
    "parse_list_header",
    "request_bypass_reason",
    "response_refusal_reason",
]

#: Cookies that mean "this visitor is somebody": sitecache's session, comment-author and
#: post-password cookies, and WordPress's, for sites that embed `PageCache` in front of one.
AUTH_COOKIE_PREFIXES: Final = (
    "sitecache_session",
    "sitecache_comment_author",
    "sitecache_postpass",
    "wordpress_logged_in",
    "wordpress_sec",
    "wp-postpass",
    "comment_author",
)

#: The login cookies among `AUTH_COOKIE_PREFIXES` (sitecache's session and WordPress's): a
#: request to a REST, login or admin path carrying one, or credentials, is the site's own
#: administration traffic, counted apart from the visitors' (`RequestClassifier.is_own`).
LOGIN_COOKIE_PREFIXES: Final = ("sitecache_session", "wordpress_logged_in", "wordpress_sec")

#: The post-password (unlock) cookies among `AUTH_COOKIE_PREFIXES`: they bypass the cache in
#: every ``known_users`` mode (``anonymous`` keeps them), since the page they show (an unlocked
#: post's content) is never the anonymous one (its password form).
UNLOCK_COOKIE_PREFIXES: Final = ("sitecache_postpass", "wp-postpass")

#: Paths that are never cached: REST, login and admin (sitecache's and WordPress's).
BYPASS_PATH_PREFIXES: Final = (
    "/site-json",
    "/index.php/site-json",
    "/site-admin",
    "/login",
    "/logout",
    "/wp-json",
    "/wp-admin",
    "/wp-login.php",
)

#: Query parameters that mark a REST, preview or admin request whatever the path.
BYPASS_QUERY_PARAMS: Final = frozenset({"rest_route", "preview", "preview_id", "_sitenonce"})

#: Request headers that make a response per-visitor: a ``Vary`` on them is never stored.
PRIVATE_VARY_HEADERS: Final = frozenset({"*", "cookie", "authorization"})

#: Statuses never stored, whatever the response says: partial content (a whole response is
#: stored and ranges are cut from it) and "not modified" (it refreshes a stored one).
NEVER_STORED_STATUSES: Final = frozenset({206, 304})


@dataclass(frozen=True, slots=True)
class CacheRules:
    """The deployment's fixed rules (not settings: they never change at run time).

    Attributes:
        hosts: the hosts the site serves (lower case, ``host`` or ``host:port``); a request for
            any other host bypasses. ``None`` allows only loopback names.
        bypass_path_prefixes: paths never cached (REST, login, admin).
        auth_cookie_prefixes: cookie-name prefixes of logged-in, comment-author and
            post-password cookies.
        unlock_cookie_prefixes: those of post-password cookies: ``known_users=anonymous``
            keeps them, so they bypass in every mode.
        login_cookie_prefixes: those of login session cookies (`LOGIN_COOKIE_PREFIXES`).
        max_body: the largest body stored, in bytes.
        heuristic: the lifetime of a response that states none (no ``Cache-Control``
            ``max-age``/``s-maxage``, no ``Expires``): ``max_age``, the setting, for a 200 (a
            404 with ``cache_404``); or ``last_modified``, a tenth of the time since its
            ``Last-Modified`` (at most ``max_age``) for any status RFC 9110 calls
            heuristically cacheable, and none without one (`sitecache.cache.freshness`).
    """

    hosts: frozenset[str] | None = None
    bypass_path_prefixes: tuple[str, ...] = BYPASS_PATH_PREFIXES
    auth_cookie_prefixes: tuple[str, ...] = AUTH_COOKIE_PREFIXES
    unlock_cookie_prefixes: tuple[str, ...] = UNLOCK_COOKIE_PREFIXES
    login_cookie_prefixes: tuple[str, ...] = LOGIN_COOKIE_PREFIXES
    max_body: int = 8 * 1024 * 1024
    heuristic: Heuristic = "max_age"

    def serves_host(self, host: str, server_port: str | None = None) -> bool:
        """Whether ``host`` (normalized, maybe with a port) is one of the site's.

        SECURITY: exactly a configured ``host`` or ``host:port`` (every other spelling would be
        a new key an attacker could mint); without configured hosts, a loopback name with no
        port or the port the server listens on (``server_port``; any numeric port when
        ``None``, for purge URLs that name no request), so random ports mint no keys.
        """
        if self.hosts is not None:
            return host in self.hosts
        name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if not name:
            name, port = host, ""
        if name not in ("localhost", "127.0.0.1", "[::1]"):
            return False
        if server_port is not None:
            return port in ("", server_port)
        return port == "" or (port.isdigit() and len(port) <= 5)


@dataclass(slots=True)
class RequestFacts:
    """What the guards read of a request (built by the middleware from the environ)."""

    method: str
    path: str
    host: str
    query_names: tuple[str, ...]
    cookie_names: tuple[str, ...]
    has_authorization: bool
    user_agent: str
    forwarded_host_mismatch: bool
    routed_path: str = ""
    has_body: bool = False
    #: the port the server listens on (``SERVER_PORT``)
    server_port: str = ""


#: The freshness facts are given before the guards run; until then, a lifetime the settings
#: give (what a response that states nothing gets by default).
_UNDECIDED: Final = Freshness("max_age", 0.0, forever=True)


@dataclass(slots=True)
class ResponseFacts:
    """What the guards read of the app's response."""

    status: int
    has_set_cookie: bool
    #: the names of the cache directives in force (``Cache-Control``'s, or
    #: ``CDN-Cache-Control``'s when it parses)
    cache_control: frozenset[str]
    vary: tuple[str, ...]
    body_length: int
    content_encoding: str
    page_types: frozenset[str]
    #: what the freshness rules read of the header fields
    headers: HeaderFacts = field(default_factory=HeaderFacts)
    #: the response's freshness (`sitecache.cache.freshness.response_freshness`), decided by
    #: the renderer before the guards run
    freshness: Freshness = _UNDECIDED


FactsT = TypeVar("FactsT", RequestFacts, ResponseFacts)


@dataclass(frozen=True, slots=True)
class Guard(Generic[FactsT]):
    """One row of a guard table.

    Attributes:
        reason: the code the ``Cache-Status`` ``detail``, the stats and the cache test name.
        fires: whether the guard refuses these facts under these settings and rules.
        explanation: one sentence telling an administrator what happened and what to change.
    """

    reason: str
    fires: Callable[[FactsT, CacheSettings, CacheRules], bool]
    explanation: str


def _is_auth_cookie(name: str, rules: CacheRules) -> bool:
    return name.startswith(rules.auth_cookie_prefixes)


def _logged_in(facts: RequestFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    # known_users="anonymous" is applied by the middleware before the guards run: it strips
    # these cookies from a front-end GET but the post-password ones, the only ones left here.
    return any(_is_auth_cookie(name, rules) for name in facts.cookie_names)


def _rejected_cookie(facts: RequestFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    if settings.known_users == "bypass_any_cookie" and facts.cookie_names:
        return True
    prefixes = settings.rejected_cookies
    return bool(prefixes) and any(name.startswith(prefixes) for name in facts.cookie_names)


def is_under(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``prefixes`` or below one (``/login`` and ``/login/x``, not
    ``/login-tips/``), as the app routes them."""
    if path in prefixes:
        return True
    # PERF: one startswith over the prefixes with their slash, made once per prefix tuple.
    below = _BELOW.get(prefixes)
    if below is None:
        if len(_BELOW) >= 64:
            _BELOW.clear()
        below = _BELOW[prefixes] = tuple(f"{prefix}/" for prefix in prefixes)
    return path.startswith(below)


#: prefixes -> the same with a trailing slash (`is_under`): the deployment's few tuples
_BELOW: dict[tuple[str, ...], tuple[str, ...]] = {}


def _rest_or_admin(facts: RequestFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    prefixes = rules.bypass_path_prefixes
    return (
        is_under(facts.path, prefixes)
        or is_under(facts.routed_path, prefixes)
        or not BYPASS_QUERY_PARAMS.isdisjoint(facts.query_names)
    )


def _query_string(facts: RequestFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    if settings.cache_query_strings:
        return False
    return any(not settings.is_ignored_param(name) for name in facts.query_names)


def _rejected_user_agent(facts: RequestFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    agent = facts.user_agent.lower()
    return any(fragment in agent for fragment in settings.rejected_user_agents)


def _rejected_uri(facts: RequestFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    # One search for the joined patterns, all within one time budget (fails closed).
    return settings.rejected_uris.matches(facts.path)


#: Request guards, first match wins.
REQUEST_GUARDS: Final[tuple[Guard[RequestFacts], ...]] = (
    # Caching switched off in the settings.
    Guard(
        "disabled",
        lambda f, s, r: not s.enabled,
        "Caching is off (the enabled setting is false).",
    ),
    # Only GET and HEAD are looked up; HEAD is answered from the GET entry.
    Guard(
        "method",
        lambda f, s, r: f.method not in ("GET", "HEAD"),
        "Only GET and HEAD requests are cached.",
    ),
    # SECURITY: REST, login and admin paths are never cached (their answers are per user).
    Guard("rest_or_admin", _rest_or_admin, "REST, login and admin paths are never cached."),
    # A GET with a body: the body is unkeyed input an app might read ("fat GET").
    Guard(
        "request_body",
        lambda f, s, r: f.has_body,
        "Requests with a body are never cached (the body is unkeyed input).",
    ),
    # SECURITY: only hosts the site serves are keyed; anything else could poison a key.
    Guard(
        "foreign_host",
        lambda f, s, r: not r.serves_host(f.host, f.server_port),
        "The request's host is not one this site serves (set site_url).",
    ),
    # SECURITY: an X-Forwarded-Host that no trusted proxy applied is unkeyed input.
    Guard(
        "forwarded_host",
        lambda f, s, r: f.forwarded_host_mismatch,
        "An X-Forwarded-Host header no trusted proxy applied made it bypass.",
    ),
    # SECURITY: credentials mean a per-user answer, whatever the settings say.
    Guard(
        "authorization",
        lambda f, s, r: f.has_authorization,
        "Requests with credentials are never cached.",
    ),
    # SECURITY: logged-in, comment-author and post-password cookies mean a per-user page.
    Guard(
        "logged_in_cookie",
        _logged_in,
        "Requests with a login, comment-author or post-password cookie bypass.",
    ),
    # Cookies the administrator lists (or any cookie with known_users=bypass_any_cookie).
    Guard(
        "rejected_cookie",
        _rejected_cookie,
        "A cookie listed in rejected_cookies made the request bypass.",
    ),
    # Paths the administrator lists.
    Guard("rejected_uri", _rejected_uri, "The path matches rejected_uris."),
    # User agents the administrator lists.
    Guard(
        "rejected_user_agent",
        _rejected_user_agent,
        "The user agent matches rejected_user_agents.",
    ),
    # A query string (beyond ignored tracking parameters) unless cache_query_strings.
    Guard(
        "query_string",
        _query_string,
        "URLs with a query string are not cached (cache_query_strings is off).",
    ),
)


def request_bypass_reason(
    facts: RequestFacts, settings: CacheSettings, rules: CacheRules
) -> str | None:
    """The reason this request must bypass the cache, or ``None`` when it may be looked up."""
    for guard in REQUEST_GUARDS:
        if guard.fires(facts, settings, rules):
            return guard.reason
    return None


def heuristic_status(status: int, heuristic: Heuristic, cache_404: bool, public: bool) -> bool:
    """Whether a response with ``status`` that states no lifetime may be stored under the
    deployment's ``heuristic`` (a 404 only with ``cache_404``; ``public`` widens the
    ``last_modified`` heuristic to any status)."""
    if status == 404:
        return cache_404
    if heuristic == "max_age":
        return status == 200
    return status in HEURISTIC_STATUSES or public


def _status(facts: ResponseFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    status = facts.status
    directives = facts.headers.directives
    if status < 200 or status in NEVER_STORED_STATUSES:
        return True
    if directives.present("must-understand") and not understood(status):
        return True
    if facts.freshness.explicit:
        return False
    public = directives.present("public")
    return not heuristic_status(status, rules.heuristic, settings.cache_404, public)


def _says(directives: Directives, name: str) -> bool:
    """Whether ``directives`` hold ``name`` unqualified (``private="X"`` only withholds X)."""
    if name == "private":
        return directives.fields("private") == ()
    return directives.present(name)


def _binding(facts: ResponseFacts, name: str) -> bool:
    """Whether ``private`` or ``no-store`` binds this cache.

    SECURITY: ``CDN-Cache-Control`` sets aside ``Cache-Control`` (RFC 9213), but its
    ``private`` and ``no-store`` still bind unless the targeted field gives this cache a
    lifetime of its own."""
    headers = facts.headers
    if _says(headers.directives, name):
        return True
    return (
        headers.targeted
        and facts.freshness.rule != "cdn-cache-control"
        and _says(headers.cache_control, name)
    )


def _no_store(facts: ResponseFacts, settings: CacheSettings, rules: CacheRules) -> bool:
    if not _binding(facts, "no-store"):
        return False
    # must-understand: a cache that understands the status stores it despite no-store.
    return not (facts.headers.directives.present("must-understand") and understood(facts.status))


def _unvalidated(facts: ResponseFacts) -> bool:
    return not facts.headers.validated


#: Response guards, first match wins.
RESPONSE_GUARDS: Final[tuple[Guard[ResponseFacts], ...]] = (
    # SECURITY: a response that sets a cookie belongs to one visitor.
    Guard(
        "set_cookie",
        lambda f, s, r: f.has_set_cookie,
        "The page sets a cookie, so it belongs to one visitor and is not stored.",
    ),
    # SECURITY: the application said so.
    Guard(
        "private",
        lambda f, s, r: _binding(f, "private"),
        "The page says Cache-Control: private.",
    ),
    Guard("no_store", _no_store, "The page says Cache-Control: no-store."),
    # SECURITY: Vary: * (or on Cookie / Authorization) makes every visitor's answer unique.
    Guard(
        "vary",
        lambda f, s, r: any(name in PRIVATE_VARY_HEADERS for name in f.vary),
        "The page varies on Cookie, Authorization or *.",
    ),
    # RFC 9111 §3: partial and "not modified" answers are never stored; other statuses than
    # 200 (and 404 with cache_404) only with a lifetime of their own.
    Guard(
        "status",
        _status,
        "Only 200 responses (and 404 with cache_404) are stored unless the page states its "
        "own lifetime (Cache-Control max-age or s-maxage, Expires); 206 and 304 never are.",
    ),
    # Stored only to be revalidated before each use: useless without a validator.
    Guard(
        "no_cache",
        lambda f, s, r: f.freshness.must_revalidate_each_use() and _unvalidated(f),
        "The page must be revalidated before every use (no-cache, a lifetime of zero or an "
        "invalid one) and has no ETag or Last-Modified to revalidate it with.",
    ),
    Guard(
        "stale",
        lambda f, s, r: f.freshness.stale_on_arrival() and _unvalidated(f),
        "The page was already stale when it arrived (an Expires in the past, an Age past its "
        "lifetime) and has no ETag or Last-Modified to revalidate it with.",
    ),
    # An empty body is never a page worth replaying (often a failure), unless it is what the
    # status says (204 No Content) or the page states a lifetime of its own (a redirect).
    Guard(
        "empty_body",
        lambda f, s, r: f.body_length == 0 and f.status != 204 and not f.freshness.explicit,
        "The page's body is empty (and it states no lifetime of its own).",
    ),
    # Bodies larger than the configured bound (also when the body ran past it while buffered).
    Guard(
        "too_large",
        lambda f, s, r: f.body_length > r.max_body,
        "The page is larger than the cache stores.",
    ),
    # Page types the administrator excluded (the app names them in X-Site-Page-Type).
    Guard(
        "page_type",
        lambda f, s, r: bool(f.page_types & s.skipped_page_types),
        "This page type is excluded in the pages setting.",
    ),
)


def response_refusal_reason(
    facts: ResponseFacts, settings: CacheSettings, rules: CacheRules
) -> str | None:
    """The reason this response must not be stored, or ``None`` when it may be."""
    for guard in RESPONSE_GUARDS:
        if guard.fires(facts, settings, rules):
            return guard.reason
    return None


def parse_list_header(value: str) -> tuple[str, ...]:
    """A comma-separated header as lower-case, stripped, non-empty items."""
    return tuple(item.strip().lower() for item in value.split(",") if item.strip())

"""Request classification: a WSGI environ turned into a `Decision` (a bypass reason, or a key).

`RequestClassifier.classify` runs the request guards (`sitecache.cache.policy`) over the
request's facts and builds its key (`sitecache.cache.keys`). It also gives back the environ the
application must see: with ``known_users=anonymous`` a front-end GET loses its login cookies,
and ignored query parameters are stripped, so the application renders exactly the page the key
names.

A plain request (no query, cookie, credentials, forwarded host or body: most anonymous hits) is
decided by its method, scheme, host, path and user agent alone under given settings, so its
decision is remembered (`plain_key`; at most `PLAIN_MEMO_SIZE` request shapes per settings):
the guards and the key builder run once per request shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from sitecache.bounded_memo import BoundedMemo
from sitecache.cache.keys import base_key, canonical_url, normalize_host, normalize_path
from sitecache.cache.policy import (
    BYPASS_QUERY_PARAMS,
    CacheRules,
    RequestFacts,
    is_under,
    request_bypass_reason,
)
from sitecache.cache.settings import CacheSettings

__all__ = [
    "PLAIN_MEMO_MAX_TEXT",
    "PLAIN_MEMO_SIZE",
    "Decision",
    "RequestClassifier",
    "plain_key",
]

#: Decisions remembered per settings for plain requests (see `plain_key`), and the longest
#: path plus user agent remembered: a bounded memo, emptied when full.
PLAIN_MEMO_SIZE: Final = 512
PLAIN_MEMO_MAX_TEXT: Final = 2048
#: Request host spellings remembered (with their normalized, served form).
HOST_MEMO_SIZE: Final = 256


@dataclass(frozen=True, slots=True)
class Decision:
    """What the request guards and the key builder decided for a request.

    Attributes:
        bypass: the request guard's reason when the request may not be looked up, else ``None``.
        host: the request's host, normalized (``""`` for a spelling that is never served).
        path: the path the key holds (the raw ``SCRIPT_NAME`` + ``PATH_INFO`` on a bypass).
        url: the canonical URL (``""`` on a bypass).
        base: the key before any ``Vary`` header applies (``""`` on a bypass).
        variant: ``""`` or ``"mobile"``.
    """

    bypass: str | None
    host: str
    path: str
    url: str = ""
    base: str = ""
    variant: str = ""


class RequestClassifier:
    """Decides requests for one `PageCache`: its host spellings and plain-request memo.

    Args:
        rules: the deployment's fixed rules.
    """

    def __init__(self, rules: CacheRules) -> None:
        self.rules = rules
        self._bypass_exact = frozenset(rules.bypass_path_prefixes)
        self._bypass_below = tuple(f"{prefix}/" for prefix in rules.bypass_path_prefixes)
        #: alias host -> canonical host (normalized names): keyed under the canonical one
        self.host_aliases: dict[str, str] = {}
        self._hosts: dict[tuple[str, str], str] = {}
        self._memo: tuple[CacheSettings | None, BoundedMemo[tuple[Any, ...], Decision]] = (
            None,
            BoundedMemo(PLAIN_MEMO_SIZE),
        )

    def set_host_aliases(self, aliases: Mapping[str, str]) -> None:
        """Key requests for each alias host under its canonical host; forget what was decided
        under the former aliases."""
        self.host_aliases = {alias.lower(): host.lower() for alias, host in aliases.items()}
        self._hosts = {}
        self._memo = (None, BoundedMemo(PLAIN_MEMO_SIZE))  # its decisions name the hosts

    @property
    def remembered(self) -> int:
        """How many plain request shapes are remembered now."""
        return len(self._memo[1])

    def shortcut(self, environ: Mapping[str, Any], settings: CacheSettings) -> str | None:
        """The bypass reason of a GET or HEAD whose full path (``SCRIPT_NAME`` + ``PATH_INFO``)
        lies under one of the bypass paths, decided without classifying it: the first request
        guard that fires for it is ``disabled`` when caching is off, else ``rest_or_admin``.
        ``None`` for every other request, which `classify` decides (REST addressed by
        ``?rest_route=``, paths the app normalizes, other methods).

        REST calls are an API client's hottest path; this spares them the facts, guards and
        key of a request the cache never stores.
        """
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            return None
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        if path in self._bypass_exact or path.startswith(self._bypass_below):
            return "rest_or_admin" if settings.enabled else "disabled"
        return None

    def is_own(self, environ: Mapping[str, Any], reason: str) -> bool:
        """Whether a request that bypassed the cache for ``reason`` is the site's own
        administration traffic, counted apart from the visitors' (``own`` in the stats): sent
        to a REST, login or admin path (or addressed by ``rest_route``) with credentials or a
        login session cookie: the dashboard, the REST calls of logged-in users and scripts.

        Run on bypasses only: a hit never pays for it.
        """
        if reason != "rest_or_admin":
            path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
            if path not in self._bypass_exact and not path.startswith(self._bypass_below):
                return False
        if environ.get("HTTP_AUTHORIZATION"):
            return True
        cookie = environ.get("HTTP_COOKIE")
        if not cookie:
            return False
        prefixes = self.rules.login_cookie_prefixes
        return any(part.lstrip().startswith(prefixes) for part in str(cookie).split(";"))

    def classify(
        self, environ: dict[str, Any], settings: CacheSettings
    ) -> tuple[dict[str, Any], Decision]:
        """The environ the application sees and the `Decision` for this request under
        ``settings`` (remembered for a plain request)."""
        memo_key = plain_key(environ)
        if memo_key is None:
            return self._decide(environ, settings)
        memo_settings, memo = self._memo
        if memo_settings is not settings:
            memo = BoundedMemo(PLAIN_MEMO_SIZE)
            self._memo = (settings, memo)
        decision = memo.get(memo_key)
        if decision is None:
            environ, decision = self._decide(environ, settings)
            memo.keep(memo_key, decision)
        return environ, decision

    def host(self, environ: Mapping[str, Any], scheme: str) -> str:
        """The request's host (under its canonical name when it is an alias) if it is spelled
        canonically, else ``""`` (never served).

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
            if len(self._hosts) < HOST_MEMO_SIZE:
                self._hosts[(raw, scheme)] = cached
        return cached

    def _decide(
        self, environ: dict[str, Any], settings: CacheSettings
    ) -> tuple[dict[str, Any], Decision]:
        """Run the request guards and build the key (nothing remembered)."""
        scheme = environ.get("wsgi.url_scheme", "http")
        query = environ.get("QUERY_STRING", "")
        pairs = parse_qsl(query, keep_blank_values=True, encoding="latin-1") if query else []
        facts = request_facts(environ, scheme, self.host(environ, scheme), pairs)
        if settings.known_users == "anonymous" and facts.cookie_names:
            environ = self._as_anonymous(environ, facts)
        reason = request_bypass_reason(facts, settings, self.rules)
        if reason is not None:
            return environ, Decision(reason, facts.host, facts.path)
        kept = pairs
        if pairs:
            kept = [(name, value) for name, value in pairs if not settings.is_ignored_param(name)]
            if len(kept) != len(pairs):
                # The app sees the query the key describes: stripped parameters cannot change
                # a page that others will be served.
                environ = dict(environ)
                environ["QUERY_STRING"] = urlencode(kept, encoding="latin-1")
        variant = ""
        if settings.mobile:
            agent = facts.user_agent.lower()
            if any(fragment in agent for fragment in settings.mobile_user_agents):
                variant = "mobile"
        # The key holds the path as the app routes it: `//post/` is `/post/`, one entry.
        path = normalize_path(environ.get("SCRIPT_NAME", "") + facts.routed_path)
        url = canonical_url(scheme, facts.host, path, kept)
        return environ, Decision(None, facts.host, path, url, base_key(url, variant), variant)

    def _as_anonymous(self, environ: dict[str, Any], facts: RequestFacts) -> dict[str, Any]:
        """``known_users=anonymous``: a front-end GET is answered as for a visitor without a
        login; the app never sees the login and comment-author cookies, so the page is the
        anonymous one. A post-password (unlock) cookie stays: it shows a page no anonymous
        visitor gets (the unlocked content), so the request bypasses as in every mode. The
        environ without the stripped cookies (``facts`` updated to match), or ``environ``
        itself."""
        prefixes = self.rules.bypass_path_prefixes
        if (
            facts.method not in ("GET", "HEAD")
            or is_under(facts.path, prefixes)
            or is_under(facts.routed_path, prefixes)
            or not BYPASS_QUERY_PARAMS.isdisjoint(facts.query_names)
        ):
            return environ
        auth, unlock = self.rules.auth_cookie_prefixes, self.rules.unlock_cookie_prefixes
        kept = [
            name
            for name in facts.cookie_names
            if not name.startswith(auth) or name.startswith(unlock)
        ]
        if len(kept) == len(facts.cookie_names):
            return environ
        environ = dict(environ)
        environ["HTTP_COOKIE"] = _strip_cookies(environ.get("HTTP_COOKIE", ""), auth, unlock)
        facts.cookie_names = tuple(kept)
        return environ


def request_facts(
    environ: Mapping[str, Any], scheme: str, host: str, pairs: list[tuple[str, str]]
) -> RequestFacts:
    """What the request guards read of a request whose host is ``host`` (normalized) and
    whose query is ``pairs``."""
    path_info = environ.get("PATH_INFO", "")
    cookie_header = environ.get("HTTP_COOKIE", "")
    forwarded = environ.get("HTTP_X_FORWARDED_HOST")
    return RequestFacts(
        method=environ.get("REQUEST_METHOD", "GET"),
        path=environ.get("SCRIPT_NAME", "") + path_info,
        # SECURITY: the bypass rules see the path the app routes on (werkzeug strips leading
        # slashes and ignores SCRIPT_NAME) as well as the full one: `//site-json/` is REST.
        routed_path="/" + path_info.lstrip("/"),
        has_body=bool(environ.get("HTTP_TRANSFER_ENCODING"))
        or environ.get("CONTENT_LENGTH", "") not in ("", "0"),
        host=host,
        query_names=tuple(name for name, _ in pairs),
        cookie_names=_cookie_names(cookie_header) if cookie_header else (),
        has_authorization=bool(environ.get("HTTP_AUTHORIZATION")),
        user_agent=environ.get("HTTP_USER_AGENT", ""),
        forwarded_host_mismatch=forwarded is not None
        and all(normalize_host(item, scheme) != host for item in str(forwarded).split(",")),
        server_port=str(environ.get("SERVER_PORT", "")),
    )


def plain_key(environ: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What decides a plain request (no query string, cookie, ``Authorization``,
    ``X-Forwarded-Host`` or body): its method, scheme, host, ``SERVER_PORT``, ``SCRIPT_NAME``,
    ``PATH_INFO`` and user agent; ``None`` for any other request, or one whose path and user
    agent are too long to remember. Every environ value `RequestClassifier` reads is either in
    the key or absent."""
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


def _cookie_names(header: str) -> tuple[str, ...]:
    names = []
    for part in header.split(";"):
        name = part.split("=", 1)[0].strip()
        if name:
            names.append(name)
    return tuple(names)


def _strip_cookies(header: str, prefixes: tuple[str, ...], keep: tuple[str, ...] = ()) -> str:
    """``header`` without the cookies whose names start with one of ``prefixes`` but none of
    ``keep``."""
    kept = []
    for part in header.split(";"):
        name = part.split("=", 1)[0].strip()
        if part.strip() and (not name.startswith(prefixes) or name.startswith(keep)):
            kept.append(part.strip())
    return "; ".join(kept)

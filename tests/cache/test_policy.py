"""The cacheability guards, rule by rule, as data tables."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sitecache.cache.capture import Captured, response_facts
from sitecache.cache.freshness import response_freshness
from sitecache.cache.policy import (
    REQUEST_GUARDS,
    RESPONSE_GUARDS,
    CacheRules,
    RequestFacts,
    ResponseFacts,
    is_under,
    request_bypass_reason,
    response_refusal_reason,
)
from sitecache.cache.settings import CacheSettings

RULES = CacheRules(hosts=frozenset({"example.org"}))
BASE_REQUEST = RequestFacts(
    method="GET", path="/hello/", host="example.org", query_names=(), cookie_names=(),
    has_authorization=False, user_agent="Mozilla/5.0", forwarded_host_mismatch=False,
)  # fmt: skip
NOW = 1_800_000_000.0

# (changes to the request, settings, expected reason or None)
REQUEST_CASES: list[tuple[dict[str, Any], dict[str, Any], str | None]] = [
    ({}, {}, None),
    ({}, {"enabled": False}, "disabled"),
    ({"method": "HEAD"}, {}, None),
    ({"method": "POST"}, {}, "method"),
    ({"method": "PURGE"}, {}, "method"),
    ({"path": "/site-json/site/v2/posts"}, {}, "rest_or_admin"),
    ({"path": "/index.php/site-json/"}, {}, "rest_or_admin"),
    ({"path": "/site-admin/"}, {}, "rest_or_admin"),
    ({"path": "/login"}, {}, "rest_or_admin"),
    ({"query_names": ("rest_route",)}, {"cache_query_strings": True}, "rest_or_admin"),
    ({"query_names": ("preview",)}, {"cache_query_strings": True}, "rest_or_admin"),
    ({"host": "evil.example"}, {}, "foreign_host"),
    # SECURITY: another port is another spelling an attacker could mint keys with.
    ({"host": "example.org:8080"}, {}, "foreign_host"),
    ({"path": "//site-json/", "routed_path": "/site-json/"}, {}, "rest_or_admin"),
    ({"path": "/blog/site-json/", "routed_path": "/site-json/"}, {}, "rest_or_admin"),
    ({"has_body": True}, {}, "request_body"),
    ({"forwarded_host_mismatch": True}, {}, "forwarded_host"),
    ({"has_authorization": True}, {}, "authorization"),
    # SECURITY: the settings cannot turn the credential rules off.
    ({"has_authorization": True}, {"known_users": "anonymous"}, "authorization"),
    ({"cookie_names": ("sitecache_session",)}, {}, "logged_in_cookie"),
    ({"cookie_names": ("wordpress_logged_in_abc",)}, {}, "logged_in_cookie"),
    ({"cookie_names": ("comment_author_12",)}, {}, "logged_in_cookie"),
    ({"cookie_names": ("sitecache_comment_author_x",)}, {}, "logged_in_cookie"),
    ({"cookie_names": ("sitecache_postpass_x",)}, {}, "logged_in_cookie"),
    ({"cookie_names": ("theme",)}, {}, None),
    ({"cookie_names": ("theme",)}, {"known_users": "bypass_any_cookie"}, "rejected_cookie"),
    ({"cookie_names": ("cart_id",)}, {"rejected_cookies": ["cart_"]}, "rejected_cookie"),
    ({"path": "/shop/basket/"}, {"rejected_uris": ["^/shop/"]}, "rejected_uri"),
    ({"path": "/blog/shop/"}, {"rejected_uris": ["^/shop/"]}, None),
    (
        {"user_agent": "Mozilla BadBot/1"},
        {"rejected_user_agents": ["badbot"]},
        "rejected_user_agent",
    ),
    ({"query_names": ("page",)}, {}, "query_string"),
    ({"query_names": ("utm_source", "fbclid")}, {}, None),
    ({"query_names": ("utm_anything",)}, {}, None),
    ({"query_names": ("page",)}, {"cache_query_strings": True}, None),
]


@pytest.mark.parametrize(("changes", "settings", "expected"), REQUEST_CASES)
def test_request_guards_decide_with_a_reason(
    changes: dict[str, Any], settings: dict[str, Any], expected: str | None
) -> None:
    facts = replace(BASE_REQUEST, **changes)
    assert request_bypass_reason(facts, CacheSettings.from_values(settings), RULES) == expected


# (status, response headers, changes to the other facts, settings, expected reason or None).
# The facts come from the headers as the renderer reads them: `response_facts`, then
# `response_freshness` under the settings.
Headers = list[tuple[str, str]]
RESPONSE_CASES: list[tuple[int, Headers, dict[str, Any], dict[str, Any], str | None]] = [
    (200, [], {}, {}, None),
    (200, [], {"has_set_cookie": True}, {}, "set_cookie"),
    (200, [("Cache-Control", "private")], {}, {}, "private"),
    (200, [("Cache-Control", "PRIVATE, max-age=60")], {}, {}, "private"),
    # A qualified private only withholds the fields it names.
    (200, [("Cache-Control", 'private="x-user", max-age=60')], {}, {}, None),
    (200, [("Cache-Control", "no-store")], {}, {}, "no_store"),
    (200, [("Cache-Control", "no-cache")], {}, {}, "no_cache"),
    # no-cache with a validator: stored, and revalidated before every use.
    (200, [("Cache-Control", "no-cache"), ("ETag", '"v1"')], {}, {}, None),
    (200, [("Cache-Control", "max-age=0")], {}, {}, "no_cache"),
    (200, [("Cache-Control", "max-age=-1")], {}, {}, "no_cache"),
    (200, [("Cache-Control", "max-age=0"), ("Last-Modified", "Sat, 01 Jan 2000 00:00:00 GMT")],
     {}, {}, None),
    (200, [("Cache-Control", "max-age=60"), ("Age", "120")], {}, {}, "stale"),
    (200, [("Expires", "0")], {}, {}, "no_cache"),
    (200, [("Cache-Control", "max-age=60, public")], {}, {}, None),
    # must-understand: a status the cache understands is stored despite no-store.
    (200, [("Cache-Control", "max-age=60, no-store, must-understand")], {}, {}, None),
    (599, [("Cache-Control", "max-age=60, no-store, must-understand")], {}, {}, "no_store"),
    (599, [("Cache-Control", "max-age=60, must-understand")], {}, {}, "status"),
    # CDN-Cache-Control is this cache's own field; its lifetime sets Cache-Control aside...
    (200, [("Cache-Control", "no-store"), ("CDN-Cache-Control", "max-age=60")], {}, {}, None),
    (200, [("CDN-Cache-Control", "private"), ("Cache-Control", "max-age=60")], {}, {},
     "private"),
    # ...but SECURITY: without one of its own, Cache-Control's private and no-store bind.
    (200, [("Cache-Control", "private"), ("CDN-Cache-Control", "no-transform")], {}, {},
     "private"),
    (200, [], {"vary": ("*",)}, {}, "vary"),
    (200, [], {"vary": ("cookie",)}, {}, "vary"),
    (200, [], {"vary": ("accept-language",)}, {}, None),
    (404, [], {}, {}, "status"),
    (404, [], {}, {"cache_404": True}, None),
    (500, [], {}, {"cache_404": True}, "status"),
    (301, [], {}, {}, "status"),
    # A status other than 200 is stored when the page states its own lifetime...
    (301, [("Cache-Control", "max-age=60")], {}, {}, None),
    (500, [("Expires", "Sat, 01 Jan 2100 00:00:00 GMT")], {}, {}, None),
    (404, [("Cache-Control", "s-maxage=60")], {}, {}, None),
    # ...but never a partial answer or a 304, whatever it says.
    (206, [("Cache-Control", "max-age=60")], {}, {}, "status"),
    (304, [("Cache-Control", "max-age=60")], {}, {}, "status"),
    (200, [], {"body_length": 0}, {}, "empty_body"),
    (204, [], {"body_length": 0}, {"max_age": 60}, "status"),
    (204, [("Cache-Control", "max-age=60")], {"body_length": 0}, {}, None),
    (301, [("Cache-Control", "max-age=60")], {"body_length": 0}, {}, None),
    # A body the application encoded itself is stored as it is (keyed on Accept-Encoding).
    (200, [], {"content_encoding": "gzip"}, {}, None),
    (200, [], {"body_length": 9 * 1024 * 1024}, {}, "too_large"),
    (200, [], {"page_types": frozenset({"search"})}, {"pages": {"search": True}}, "page_type"),
    (200, [], {"page_types": frozenset({"home", "frontpage"})}, {"pages": {"frontpage": True}},
     "page_type"),
    (200, [], {"page_types": frozenset({"single"})}, {"pages": {"search": True}}, None),
    # SECURITY: whatever the settings, a cookie-setting response is refused first.
    (404, [], {"has_set_cookie": True}, {"cache_404": True}, "set_cookie"),
    (200, [("Cache-Control", "max-age=60")], {"has_set_cookie": True}, {}, "set_cookie"),
]  # fmt: skip


def facts_of(
    status: int, headers: list[tuple[str, str]], changes: dict[str, Any], settings: CacheSettings
) -> ResponseFacts:
    """The facts of a 100-byte response with these headers, as the renderer reads them."""
    captured = Captured()
    captured.status = f"{status} X"
    captured.headers = headers
    captured.size = 100
    facts = replace(response_facts(captured), **{"page_types": frozenset({"single"}), **changes})
    facts.freshness = response_freshness(
        facts.headers, status, requested=NOW, arrived=NOW, heuristic=RULES.heuristic,
        max_age=settings.max_age, cache_404=settings.cache_404,
    )  # fmt: skip
    return facts


@pytest.mark.parametrize(("status", "headers", "changes", "settings", "expected"), RESPONSE_CASES)
def test_response_guards_decide_with_a_reason(
    status: int,
    headers: list[tuple[str, str]],
    changes: dict[str, Any],
    settings: dict[str, Any],
    expected: str | None,
) -> None:
    compiled = CacheSettings.from_values(settings)
    facts = facts_of(status, headers, changes, compiled)
    assert response_refusal_reason(facts, compiled, RULES) == expected


def test_every_guard_reason_is_exercised_by_a_table_row() -> None:
    request_reasons = {guard.reason for guard in REQUEST_GUARDS}
    response_reasons = {guard.reason for guard in RESPONSE_GUARDS}
    assert request_reasons <= {expected for _, _, expected in REQUEST_CASES}
    assert response_reasons <= {row[-1] for row in RESPONSE_CASES}


def test_without_configured_hosts_only_loopback_names_are_served() -> None:
    rules = CacheRules(hosts=None)
    assert rules.serves_host("127.0.0.1:8000")
    assert rules.serves_host("localhost")
    assert rules.serves_host("[::1]:8000")
    assert not rules.serves_host("127.attacker.example")
    assert not rules.serves_host("example.org")
    assert not rules.serves_host("localhost:abc")
    assert not rules.serves_host("localhost:@evil.example")


@pytest.mark.parametrize(
    ("path", "prefixes", "expected"),
    [
        ("/login", ("/login", "/wp-admin"), True),
        ("/login/", ("/login", "/wp-admin"), True),
        ("/wp-admin/edit.php", ("/login", "/wp-admin"), True),
        ("/login-tips/", ("/login", "/wp-admin"), False),
        ("/logi", ("/login",), False),
        ("/", ("/login",), False),
        ("/anything", (), False),
        ("/a/b", ("/a/b", "/a"), True),
    ],
)
def test_a_path_is_under_a_prefix_when_it_is_the_prefix_or_below_it(
    path: str, prefixes: tuple[str, ...], expected: bool
) -> None:
    # Twice: the second call reads the prefixes' slashed form made by the first.
    assert is_under(path, prefixes) is expected
    assert is_under(path, prefixes) is expected

"""The cacheability guards, rule by rule, as data tables."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sitecache.cache.policy import (
    REQUEST_GUARDS,
    RESPONSE_GUARDS,
    CacheRules,
    RequestFacts,
    ResponseFacts,
    request_bypass_reason,
    response_refusal_reason,
)
from sitecache.cache.settings import CacheSettings

RULES = CacheRules(hosts=frozenset({"example.org"}))
BASE_REQUEST = RequestFacts(
    method="GET", path="/hello/", host="example.org", query_names=(), cookie_names=(),
    has_authorization=False, user_agent="Mozilla/5.0", forwarded_host_mismatch=False,
)  # fmt: skip
BASE_RESPONSE = ResponseFacts(
    status=200, has_set_cookie=False, cache_control=frozenset(), vary=(), body_length=100,
    content_encoding="", page_types=frozenset({"single"}),
)  # fmt: skip

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


RESPONSE_CASES: list[tuple[dict[str, Any], dict[str, Any], str | None]] = [
    ({}, {}, None),
    ({"has_set_cookie": True}, {}, "set_cookie"),
    ({"cache_control": frozenset({"private"})}, {}, "private"),
    ({"cache_control": frozenset({"no-store"})}, {}, "no_store"),
    ({"cache_control": frozenset({"no-cache"})}, {}, "no_cache"),
    ({"cache_control": frozenset({"max-age", "public"})}, {}, None),
    ({"vary": ("*",)}, {}, "vary"),
    ({"vary": ("cookie",)}, {}, "vary"),
    ({"vary": ("accept-language",)}, {}, None),
    ({"status": 404}, {}, "status"),
    ({"status": 404}, {"cache_404": True}, None),
    ({"status": 500}, {"cache_404": True}, "status"),
    ({"status": 301}, {}, "status"),
    ({"status": 206}, {}, "status"),
    ({"body_length": 0}, {}, "empty_body"),
    ({"content_encoding": "gzip"}, {}, "content_encoding"),
    ({"body_length": 9 * 1024 * 1024}, {}, "too_large"),
    ({"page_types": frozenset({"search"})}, {"pages": {"search": True}}, "page_type"),
    ({"page_types": frozenset({"home", "frontpage"})}, {"pages": {"frontpage": True}}, "page_type"),
    ({"page_types": frozenset({"single"})}, {"pages": {"search": True}}, None),
    # SECURITY: whatever the settings, a cookie-setting response is refused first.
    ({"has_set_cookie": True, "status": 404}, {"cache_404": True}, "set_cookie"),
]


@pytest.mark.parametrize(("changes", "settings", "expected"), RESPONSE_CASES)
def test_response_guards_decide_with_a_reason(
    changes: dict[str, Any], settings: dict[str, Any], expected: str | None
) -> None:
    facts = replace(BASE_RESPONSE, **changes)
    assert response_refusal_reason(facts, CacheSettings.from_values(settings), RULES) == expected


def test_every_guard_reason_is_exercised_by_a_table_row() -> None:
    request_reasons = {guard.reason for guard in REQUEST_GUARDS}
    response_reasons = {guard.reason for guard in RESPONSE_GUARDS}
    assert request_reasons <= {expected for _, _, expected in REQUEST_CASES}
    assert response_reasons <= {expected for _, _, expected in RESPONSE_CASES}


def test_without_configured_hosts_only_loopback_names_are_served() -> None:
    rules = CacheRules(hosts=None)
    assert rules.serves_host("127.0.0.1:8000")
    assert rules.serves_host("localhost")
    assert rules.serves_host("[::1]:8000")
    assert not rules.serves_host("127.attacker.example")
    assert not rules.serves_host("example.org")
    assert not rules.serves_host("localhost:abc")
    assert not rules.serves_host("localhost:@evil.example")

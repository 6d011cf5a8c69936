"""Request classification, row by row: an environ becomes a `Decision` (a bypass reason or a
key) and the environ the application sees; plain requests are remembered, never others."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitecache.cache.classify import PLAIN_MEMO_MAX_TEXT, Decision, RequestClassifier, plain_key
from sitecache.cache.keys import base_key, normalize_path
from sitecache.cache.policy import CacheRules
from sitecache.cache.settings import CacheSettings

RULES = CacheRules(hosts=frozenset({"example.org", "example.org:8080"}))
BASE_ENVIRON: dict[str, Any] = {
    "REQUEST_METHOD": "GET",
    "wsgi.url_scheme": "http",
    "HTTP_HOST": "example.org",
    "SERVER_NAME": "example.org",
    "SERVER_PORT": "80",
    "SCRIPT_NAME": "",
    "PATH_INFO": "/post/",
    "QUERY_STRING": "",
}

# (environ changes, settings, bypass reason, canonical URL or "", variant)
DECISION_CASES: list[tuple[dict[str, Any], dict[str, Any], str | None, str, str]] = [
    ({}, {}, None, "http://example.org/post/", ""),
    # The default port spelled out (a proxy's X-Forwarded-Port) is the same origin.
    ({"HTTP_HOST": "example.org:80"}, {}, None, "http://example.org/post/", ""),
    (
        {"wsgi.url_scheme": "https", "HTTP_HOST": "example.org:443"},
        {},
        None,
        "https://example.org/post/",
        "",
    ),
    ({"HTTP_HOST": "example.org:8080"}, {}, None, "http://example.org:8080/post/", ""),
    ({"HTTP_HOST": ""}, {}, None, "http://example.org/post/", ""),  # SERVER_NAME then
    # SECURITY: another spelling of a served host is never keyed.
    ({"HTTP_HOST": "Example.org"}, {}, "foreign_host", "", ""),
    ({"HTTP_HOST": "example.org."}, {}, "foreign_host", "", ""),
    ({"HTTP_HOST": "evil.example"}, {}, "foreign_host", "", ""),
    ({"PATH_INFO": "//post/"}, {}, None, "http://example.org/post/", ""),
    ({"SCRIPT_NAME": "/blog"}, {}, None, "http://example.org/blog/post/", ""),
    ({"PATH_INFO": "/caf\xc3\xa9/"}, {}, None, "http://example.org/caf%C3%A9/", ""),
    ({"PATH_INFO": ""}, {}, None, "http://example.org/", ""),
    ({"QUERY_STRING": "utm_source=news&fbclid=1"}, {}, None, "http://example.org/post/", ""),
    ({"QUERY_STRING": "page=2"}, {}, "query_string", "", ""),
    (
        {"QUERY_STRING": "b=2&a=1&utm_source=x"},
        {"cache_query_strings": True},
        None,
        "http://example.org/post/?a=1&b=2",
        "",
    ),
    ({"HTTP_USER_AGENT": "Mozilla/5.0 (iPhone)"}, {}, None, "http://example.org/post/", ""),
    (
        {"HTTP_USER_AGENT": "Mozilla/5.0 (iPhone)"},
        {"mobile": True},
        None,
        "http://example.org/post/",
        "mobile",
    ),
    ({"HTTP_X_FORWARDED_HOST": "example.org"}, {}, None, "http://example.org/post/", ""),
    ({"HTTP_X_FORWARDED_HOST": "evil.example"}, {}, "forwarded_host", "", ""),
    ({"REQUEST_METHOD": "POST"}, {}, "method", "", ""),
    ({"CONTENT_LENGTH": "3"}, {}, "request_body", "", ""),
    ({"HTTP_TRANSFER_ENCODING": "chunked"}, {}, "request_body", "", ""),
    ({"HTTP_COOKIE": "sitecache_session=abc"}, {}, "logged_in_cookie", "", ""),
    (
        {"HTTP_COOKIE": "sitecache_session=abc"},
        {"known_users": "anonymous"},
        None,
        "http://example.org/post/",
        "",
    ),
    # A post-password (unlock) cookie bypasses in every mode: anonymous keeps it.
    (
        {"HTTP_COOKIE": "sitecache_session=abc; sitecache_postpass_1=x"},
        {"known_users": "anonymous"},
        "logged_in_cookie",
        "",
        "",
    ),
    ({"HTTP_COOKIE": "wp-postpass_1=x"}, {"known_users": "anonymous"}, "logged_in_cookie", "", ""),
    (
        {"HTTP_COOKIE": "sitecache_session=abc", "REQUEST_METHOD": "POST"},
        {"known_users": "anonymous"},
        "method",
        "",
        "",
    ),
    ({"PATH_INFO": "/site-json/wp/v2/posts"}, {}, "rest_or_admin", "", ""),
]


@pytest.mark.parametrize(("changes", "settings", "bypass", "url", "variant"), DECISION_CASES)
def test_an_environ_is_decided_into_a_bypass_or_a_key(
    changes: dict[str, Any],
    settings: dict[str, Any],
    bypass: str | None,
    url: str,
    variant: str,
) -> None:
    classifier = RequestClassifier(RULES)
    _, decision = classifier.classify(
        {**BASE_ENVIRON, **changes}, CacheSettings.from_values(settings)
    )
    assert decision.bypass == bypass
    assert decision.url == url
    assert decision.variant == variant
    assert decision.base == (base_key(url, variant) if bypass is None else "")


# (environ changes, settings, what the application sees of the changed variables)
APP_ENVIRON_CASES: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        {"QUERY_STRING": "utm_source=news&id=4"},
        {"cache_query_strings": True},
        {"QUERY_STRING": "id=4"},
    ),
    ({"QUERY_STRING": "id=4&utm_source=news"}, {}, {"QUERY_STRING": "id=4&utm_source=news"}),
    (
        {"HTTP_COOKIE": "theme=dark; sitecache_session=abc; wordpress_logged_in_1=x"},
        {"known_users": "anonymous"},
        {"HTTP_COOKIE": "theme=dark"},
    ),
    # Only front-end GETs: REST, admin, previews and other methods keep their cookies.
    (
        {"HTTP_COOKIE": "sitecache_session=abc", "PATH_INFO": "/site-admin/"},
        {"known_users": "anonymous"},
        {"HTTP_COOKIE": "sitecache_session=abc"},
    ),
    (
        {"HTTP_COOKIE": "sitecache_session=abc", "QUERY_STRING": "preview=true"},
        {"known_users": "anonymous"},
        {"HTTP_COOKIE": "sitecache_session=abc"},
    ),
    (
        {"HTTP_COOKIE": "sitecache_session=abc"},
        {"known_users": "bypass"},
        {"HTTP_COOKIE": "sitecache_session=abc"},
    ),
]


@pytest.mark.parametrize(("changes", "settings", "seen"), APP_ENVIRON_CASES)
def test_the_application_sees_what_the_key_describes(
    changes: dict[str, Any], settings: dict[str, Any], seen: dict[str, Any]
) -> None:
    environ = {**BASE_ENVIRON, **changes}
    original = dict(environ)
    app_environ, _ = RequestClassifier(RULES).classify(environ, CacheSettings.from_values(settings))
    assert {name: app_environ[name] for name in seen} == seen
    assert environ == original  # the server's environ is never changed in place


def test_an_alias_host_is_keyed_under_its_canonical_host_once_set() -> None:
    classifier = RequestClassifier(RULES)
    settings = CacheSettings.from_values(None)
    alias = {**BASE_ENVIRON, "HTTP_HOST": "www.example.org"}
    assert classifier.classify(alias, settings)[1].bypass == "foreign_host"
    classifier.set_host_aliases({"WWW.example.org": "Example.org"})
    decision = classifier.classify(alias, settings)[1]
    assert decision == classifier.classify(dict(BASE_ENVIRON), settings)[1]
    assert decision.host == "example.org"


def test_a_plain_request_is_remembered_and_a_settings_change_forgets_it() -> None:
    classifier = RequestClassifier(RULES)
    settings = CacheSettings.from_values(None)
    first = classifier.classify(dict(BASE_ENVIRON), settings)[1]
    assert classifier.classify(dict(BASE_ENVIRON), settings)[1] is first
    assert classifier.remembered == 1
    changed = CacheSettings.from_values({"enabled": False})
    assert classifier.classify(dict(BASE_ENVIRON), changed)[1] == Decision(
        "disabled", "example.org", "/post/"
    )
    assert classifier.remembered == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"QUERY_STRING": "a=1"},
        {"HTTP_COOKIE": "theme=dark"},
        {"HTTP_AUTHORIZATION": "Basic eA=="},
        {"HTTP_X_FORWARDED_HOST": "example.org"},
        {"HTTP_X_FORWARDED_HOST": ""},
        {"HTTP_TRANSFER_ENCODING": "chunked"},
        {"CONTENT_LENGTH": "1"},
        {"HTTP_USER_AGENT": "x" * PLAIN_MEMO_MAX_TEXT},
    ],
)
def test_only_plain_requests_have_a_memo_key(changes: dict[str, Any]) -> None:
    assert plain_key(BASE_ENVIRON) is not None
    assert plain_key({**BASE_ENVIRON, "CONTENT_LENGTH": "0"}) == plain_key(BASE_ENVIRON)
    assert plain_key({**BASE_ENVIRON, **changes}) is None


@pytest.mark.parametrize(
    "changes",
    [
        {"REQUEST_METHOD": "HEAD"},
        {"wsgi.url_scheme": "https"},
        {"HTTP_HOST": "example.org:8080"},
        {"SERVER_PORT": "8000"},
        {"SCRIPT_NAME": "/blog"},
        {"PATH_INFO": "/other/"},
        {"HTTP_USER_AGENT": "Mozilla/5.0 (iPhone)"},
    ],
)
def test_every_value_a_plain_decision_reads_is_in_its_memo_key(changes: dict[str, Any]) -> None:
    assert plain_key({**BASE_ENVIRON, **changes}) != plain_key(BASE_ENVIRON)


@given(st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=40))
def test_a_path_is_keyed_percent_encoded_as_quote_spells_it(path: str) -> None:
    # Paths with nothing to encode are returned as they are; the others go through quote.
    try:
        raw = path.encode("latin-1")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "surrogateescape")
    assert normalize_path(path) == quote(raw or b"/", safe="/:@!$&'()*+,;=-._~")

"""Per-view control (`sitecache.cache.control`): the headers it writes are exactly what
`PageCache` reads: tags purge, ``s-maxage`` sets the lifetime, ``Vary`` keys copies, and
"never store" is never stored."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client

from sitecache.cache import (
    CacheDirectives,
    CacheEngine,
    CacheRules,
    MemoryStorage,
    PageCache,
    cache_control,
    cache_headers,
    never_store_headers,
)
from sitecache.cache.capture import StartResponse
from tests.cache.conftest import FakeClock

SITE = "http://example.org"


def page(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    language = environ.get("HTTP_ACCEPT_LANGUAGE", "en")
    start_response("200 OK", [("Content-Type", "text/html"), ("Cache-Control", "public")])
    return [f"<p>{environ['PATH_INFO']} {language}</p>".encode()]


def build(view: Any, clock: FakeClock) -> PageCache:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})), clock=clock)
    engine.update_settings({"max_age": 3600})
    return PageCache(view, engine=engine)


def get(cache: PageCache, path: str = "/", **headers: str) -> Any:
    return Client(cache, use_cookies=False).get(path, base_url=SITE, headers=headers)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, []),
        ({"tags": ["post-1", "home"]}, [("Cache-Tag", "post-1, home")]),
        ({"tags": "home"}, [("Cache-Tag", "home")]),
        ({"s_maxage": 60}, [("Cache-Control", "s-maxage=60")]),
        ({"s_maxage": 0}, [("Cache-Control", "s-maxage=0")]),
        ({"vary": ["Accept-Language"]}, [("Vary", "Accept-Language")]),
        ({"no_store": True, "s_maxage": 60}, [("Cache-Control", "no-store, private")]),
        (
            {"tags": ["a"], "s_maxage": 5, "vary": "Accept"},
            [("Cache-Tag", "a"), ("Cache-Control", "s-maxage=5"), ("Vary", "Accept")],
        ),
    ],
)
def test_cache_headers_say_each_directive_once(
    arguments: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert cache_headers(**arguments) == expected


@pytest.mark.parametrize(
    "arguments",
    [
        {"tags": ["a,b"]},
        {"tags": ["two words"]},
        {"tags": ["x\r\nSet-Cookie: a=b"]},
        {"tags": [""]},
        {"vary": ["Accept Language"]},
        {"vary": ["X\n"]},
        {"s_maxage": -1},
        {"s_maxage": True},
    ],
)
def test_values_a_header_cannot_carry_are_refused(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"tag|Vary|s_maxage"):
        cache_headers(**arguments)


def test_apply_merges_with_what_the_view_already_set() -> None:
    directives = CacheDirectives.of(tags=["b", "c"], s_maxage=30, vary=["Accept-Language"])
    merged = directives.apply(
        [
            ("Content-Type", "text/html"),
            ("Cache-Tag", "a, B"),
            ("Cache-Control", "public, max-age=10, s-maxage=99"),
            ("Vary", "Accept-Encoding"),
        ]
    )
    assert merged == [
        ("Content-Type", "text/html"),
        ("Cache-Tag", "a, B, c"),
        ("Cache-Control", "public, max-age=10, s-maxage=30"),
        ("Vary", "Accept-Encoding, Accept-Language"),
    ]


@given(
    tags=st.lists(st.from_regex(r"[a-z0-9:_-]{1,12}", fullmatch=True), max_size=5),
    seconds=st.none() | st.integers(min_value=0, max_value=10**6),
)
def test_applying_twice_is_applying_once(tags: list[str], seconds: int | None) -> None:
    directives = CacheDirectives.of(tags=tags, s_maxage=seconds)
    once = directives.apply([("Content-Type", "text/html")])
    assert directives.apply(once) == once


def test_the_decorated_view_is_stored_under_its_tags_and_purged_by_them(clock: FakeClock) -> None:
    cache = build(cache_control(tags=["post-7"])(page), clock)
    assert "stored" in get(cache, "/a/").headers["Cache-Status"]
    assert "hit" in get(cache, "/a/").headers["Cache-Status"]
    result = cache.purger.purge_tags("post-7")
    assert result.deleted == 1
    assert "miss" in get(cache, "/a/").headers["Cache-Status"]


def test_s_maxage_sets_the_lifetime_instead_of_max_age(clock: FakeClock) -> None:
    cache = build(cache_control(s_maxage=60)(page), clock)
    get(cache)
    assert get(cache).headers["Cache-Status"] == "sitecache; hit; ttl=60; detail=s-maxage"
    clock.advance(61)
    assert "hit" not in get(cache).headers["Cache-Status"].split("; ")


def test_no_s_maxage_keeps_the_max_age_setting(clock: FakeClock) -> None:
    cache = build(page, clock)
    get(cache)
    assert get(cache).headers["Cache-Status"] == "sitecache; hit; ttl=3600"


@pytest.mark.parametrize(
    "view",
    [
        cache_control(no_store=True)(page),
        cache_control(s_maxage=0)(page),
        cache_control(vary=["Cookie"])(page),
    ],
)
def test_never_store_and_zero_lifetime_are_never_stored(view: Any, clock: FakeClock) -> None:
    cache = build(view, clock)
    for _ in range(2):
        assert "stored" not in get(cache).headers["Cache-Status"]
    assert cache.engine.stats()["entries"]["total"] == 0


def test_never_store_headers_are_what_a_plain_view_returns(clock: FakeClock) -> None:
    def view(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/html"), *never_store_headers()])
        return [b"private"]

    cache = build(view, clock)
    assert "detail=private" in get(cache).headers["Cache-Status"]


def test_vary_keeps_one_copy_per_value(clock: FakeClock) -> None:
    cache = build(cache_control(vary=["Accept-Language"])(page), clock)
    assert get(cache, Accept_Language="fr").data.endswith(b"fr</p>")
    assert get(cache, Accept_Language="de").data.endswith(b"de</p>")
    assert "hit" in get(cache, Accept_Language="fr").headers["Cache-Status"]
    assert get(cache, Accept_Language="fr").data.endswith(b"fr</p>")

"""A miss rendered for the cache: pages too large to buffer, HEAD misses the guards refuse,
and stored listeners that fail."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheEntry, CacheRules, MemoryStorage, PageCache
from tests.cache.conftest import FakeClock, PageApp

SITE = "http://example.org"


def build(app: Any, max_body: int = 8 * 1024 * 1024) -> PageCache:
    rules = CacheRules(hosts=frozenset({"example.org"}), max_body=max_body)
    return PageCache(app, engine=CacheEngine(MemoryStorage(), rules, clock=FakeClock()))


def test_a_page_larger_than_the_cache_stores_is_streamed_whole_and_not_stored() -> None:
    closed: list[bool] = []

    class Body:
        def __iter__(self) -> Iterator[bytes]:
            yield from (b"<p>" + b"x" * 600, b"y" * 600 + b"</p>")

        def close(self) -> None:
            closed.append(True)

    def big(environ: dict[str, Any], start_response: Any) -> Body:
        start_response("200 OK", [("Content-Type", "text/html")])
        return Body()

    cache = build(big, max_body=1000)
    for _ in range(2):
        answer = Client(cache, use_cookies=False).get("/big/", base_url=SITE)
        assert answer.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=too_large"
        assert answer.data == b"<p>" + b"x" * 600 + b"y" * 600 + b"</p>"
    assert closed == [True, True]
    assert cache.engine.stats()["bypass_reasons"] == {"too_large": 2}


def test_a_head_miss_the_guards_refuse_gets_the_headers_only_and_closes_the_app(
    page_app: PageApp,
) -> None:
    page_app.headers.append(("Set-Cookie", "visitor=1"))
    cache = build(page_app)
    answer = Client(cache, use_cookies=False).head("/a/", base_url=SITE)
    assert answer.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=set_cookie"
    assert answer.data == b""
    assert page_app.seen[-1]["REQUEST_METHOD"] == "GET"


def test_a_stored_listener_that_fails_is_logged_and_the_page_still_served_from_the_cache(
    page_app: PageApp, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[tuple[str, tuple[str, ...]]] = []

    def broken(entry: CacheEntry, vary: tuple[str, ...]) -> None:
        raise OSError("static root is read-only")

    def listening(entry: CacheEntry, vary: tuple[str, ...]) -> None:
        told.append((entry.url, vary))

    page_app.headers.append(("Vary", "Accept-Language"))
    cache = build(page_app)
    cache.stored_listeners.extend([broken, listening])
    client = Client(cache, use_cookies=False)
    first = client.get("/a/", base_url=SITE)
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert "stored listener" in caplog.text
    assert told == [(f"{SITE}/a/", ("accept-language",))]
    assert client.get("/a/", base_url=SITE).headers["Cache-Status"].startswith("sitecache; hit")


def test_store_filters_change_the_stored_page_and_the_miss_is_answered_from_it(
    page_app: PageApp,
) -> None:
    cache = build(page_app)
    cache.store_filters.append(lambda body, url: body.replace(b"Hello", b"Hi"))
    client = Client(cache, use_cookies=False)
    first = client.get("/a/", base_url=SITE)
    second = client.get("/a/", base_url=SITE)
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert b"Hi, reader" in first.data
    assert first.data == second.data
    bypass = client.get("/a/", base_url=SITE, headers={"Authorization": "Basic eA=="})
    assert b"Hello, reader" in bypass.data  # never on what is served live

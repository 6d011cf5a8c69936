"""The decision memo of plain requests: a hit's guards and key are computed once per request
shape, and nothing that should change the decision is ever answered from the memo."""

from __future__ import annotations

from typing import Any

from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache
from sitecache.cache.middleware import PLAIN_MEMO_SIZE
from tests.cache.conftest import FakeClock, PageApp

SITE = "http://example.org"


def build(app: PageApp, clock: FakeClock) -> PageCache:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})), clock=clock)
    return PageCache(app, engine=engine)


def get(cache: PageCache, path: str = "/", **headers: str) -> Any:
    return Client(cache, use_cookies=False).get(path, base_url=SITE, headers=headers)


def test_a_settings_change_applies_to_a_remembered_request(
    page_app: PageApp, clock: FakeClock
) -> None:
    cache = build(page_app, clock)
    get(cache, "/a/", User_Agent="Crawler/1.0")
    assert (
        get(cache, "/a/", User_Agent="Crawler/1.0")
        .headers["Cache-Status"]
        .startswith("sitecache; hit")
    )
    assert isinstance(cache.engine.update_settings({"rejected_user_agents": ["crawler"]}), dict)
    response = get(cache, "/a/", User_Agent="Crawler/1.0")
    assert response.headers["Cache-Status"] == ("sitecache; fwd=bypass; detail=rejected_user_agent")
    assert (
        get(cache, "/a/", User_Agent="Reader/2")
        .headers["Cache-Status"]
        .startswith("sitecache; hit")
    )


def test_credentials_cookies_queries_and_bodies_are_never_answered_from_the_memo(
    page_app: PageApp, clock: FakeClock
) -> None:
    cache = build(page_app, clock)
    get(cache, "/a/")
    assert get(cache, "/a/").headers["Cache-Status"].startswith("sitecache; hit")
    statuses = [
        get(cache, "/a/", Authorization="Bearer x").headers["Cache-Status"],
        get(cache, "/a/", Cookie="sitecache_session=abc").headers["Cache-Status"],
        get(cache, "/a/?page=2").headers["Cache-Status"],
        get(cache, "/a/", X_Forwarded_Host="evil.example").headers["Cache-Status"],
        Client(cache).get("/a/", base_url=SITE, data=b"x").headers["Cache-Status"],
    ]
    assert statuses == [
        "sitecache; fwd=bypass; detail=authorization",
        "sitecache; fwd=bypass; detail=logged_in_cookie",
        "sitecache; fwd=bypass; detail=query_string",
        "sitecache; fwd=bypass; detail=forwarded_host",
        "sitecache; fwd=bypass; detail=request_body",
    ]


def test_the_memo_stays_bounded(page_app: PageApp, clock: FakeClock) -> None:
    cache = build(page_app, clock)
    for number in range(PLAIN_MEMO_SIZE + 50):
        get(cache, f"/p/{number}/")
    assert 0 < cache._classifier.remembered <= PLAIN_MEMO_SIZE
    assert get(cache, "/p/3/").headers["Cache-Status"].startswith("sitecache; hit")


def test_a_remembered_bypass_stays_a_bypass(page_app: PageApp, clock: FakeClock) -> None:
    cache = build(page_app, clock)
    for _ in range(3):
        response = get(cache, "/site-json/wp/v2/posts")
        assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin"
    assert page_app.calls == 3


def test_host_aliases_set_after_requests_were_remembered_apply_at_once(
    page_app: PageApp, clock: FakeClock
) -> None:
    cache = build(page_app, clock)
    alias = "http://www.example.org"
    client = Client(cache, use_cookies=False)
    assert client.get("/a/", base_url=alias).headers["Cache-Status"] == (
        "sitecache; fwd=bypass; detail=foreign_host"
    )
    get(cache, "/a/")
    cache.host_aliases = {"WWW.example.org": "example.org"}
    assert cache.host_aliases == {"www.example.org": "example.org"}
    assert client.get("/a/", base_url=alias).headers["Cache-Status"].startswith("sitecache; hit")
    cache.set_host_aliases({})
    assert client.get("/a/", base_url=alias).headers["Cache-Status"].endswith("foreign_host")

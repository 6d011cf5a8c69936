"""Invalidation by unsafe methods (RFC 9111 §4.4), as a table: which stored pages a POST, PUT,
PATCH, DELETE or unknown method purges, by the status it got and the URLs it names."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache
from sitecache.cache.unsafe import SCOPE
from tests.cache.conftest import FakeClock

SITE = "http://example.org"
PAGES = ("/a/", "/b/", "/c/?x=1")


class ChangingApp:
    """Pages that say how often they were rendered; unsafe requests get ``status`` and
    ``headers``."""

    def __init__(self) -> None:
        self.renders: dict[str, int] = {}
        self.status = "200 OK"
        self.headers: list[tuple[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD"):
            start_response(self.status, [("Content-Type", "text/plain"), *self.headers])
            return [b"done"]
        path = environ["PATH_INFO"] + "?" + environ.get("QUERY_STRING", "")
        self.renders[path] = self.renders.get(path, 0) + 1
        start_response("200 OK", [("Content-Type", "text/html")])
        return [f"<p>{path} render {self.renders[path]}</p>".encode() * 20]


def cache_for(app: ChangingApp, **settings: Any) -> PageCache:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})),
                         clock=FakeClock())  # fmt: skip
    assert isinstance(engine.update_settings({"cache_query_strings": True, **settings}), dict)
    return PageCache(app, engine=engine)


def cached(cache: PageCache, path: str) -> bool:
    status = Client(cache).get(path, base_url=SITE).headers["Cache-Status"]
    return status.startswith("sitecache; hit")


# (method, request path, status, response fields, pages purged)
CASES: list[tuple[str, str, str, list[tuple[str, str]], set[str]]] = [
    ("POST", "/a/", "200 OK", [], {"/a/"}),
    ("PUT", "/a/", "201 Created", [], {"/a/"}),
    ("PATCH", "/b/", "204 No Content", [], {"/b/"}),
    ("DELETE", "/c/?x=1", "200 OK", [], {"/c/?x=1"}),
    ("M-SEARCH", "/b/", "200 OK", [], {"/b/"}),
    # A 2xx names the resource it created or describes: purged too.
    ("POST", "/a/", "200 OK", [("Location", "/b/")], {"/a/", "/b/"}),
    ("PUT", "/a/", "200 OK", [("Content-Location", "/b/")], {"/a/", "/b/"}),
    # A redirect after a form names where to look next (a login, a password form): only the
    # request's own URL changed.
    ("POST", "/a/", "303 See Other", [("Location", "/b/")], {"/a/"}),
    ("POST", "/login-form/", "302 Found", [("Location", "/b/")], set()),
    ("POST", "/new/", "201 Created", [("Location", "http://example.org/b/"),
                                      ("Content-Location", "../c/?x=1")], {"/b/", "/c/?x=1"}),
    # The ignored tracking parameters are not part of the key: /a/ is the page changed.
    ("POST", "/a/?utm_source=mail", "200 OK", [], {"/a/"}),
    # Another host's URLs are not this cache's business.
    ("POST", "/new/", "201 Created", [("Location", "http://elsewhere.example/b/")], set()),
    ("POST", "/new/", "201 Created", [("Location", "https://example.org/b/")], set()),
    # An error answer changed nothing.
    ("POST", "/a/", "400 Bad Request", [("Location", "/b/")], set()),
    ("DELETE", "/a/", "500 Internal Server Error", [], set()),
    # Safe methods change nothing.
    ("OPTIONS", "/a/", "200 OK", [], set()),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "status", "headers", "purged"), CASES)
def test_a_successful_unsafe_request_purges_its_url_and_same_host_locations(
    method: str, path: str, status: str, headers: list[tuple[str, str]], purged: set[str]
) -> None:
    app = ChangingApp()
    cache = cache_for(app)
    for page in PAGES:
        Client(cache).get(page, base_url=SITE)
    app.status, app.headers = status, headers
    answer = Client(cache).open(path, base_url=SITE, method=method, data=b"x=1")
    assert answer.status == status
    assert "fwd=bypass; detail=method" in answer.headers["Cache-Status"]
    still = {page for page in PAGES if cached(cache, page)}
    assert still == set(PAGES) - purged


def test_its_purges_are_counted_under_their_own_scope() -> None:
    app = ChangingApp()
    cache = cache_for(app)
    Client(cache).get("/a/", base_url=SITE)
    Client(cache).post("/a/", base_url=SITE)
    cache.engine.flush_counters()
    assert cache.engine.stats()["purges"] == {SCOPE: 1}


def test_nothing_stored_nothing_rendering_moves_no_generation() -> None:
    app = ChangingApp()
    cache = cache_for(app)
    Client(cache).get("/a/", base_url=SITE)
    before = cache.engine.generation()
    Client(cache).post("/elsewhere/", base_url=SITE)
    assert cache.engine.generation() == before  # a render of another page would be stored
    assert cached(cache, "/a/")


def test_a_page_being_rendered_is_purged_even_before_it_is_stored() -> None:
    app = ChangingApp()
    cache = cache_for(app)
    posted: list[str] = []

    def rendering(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] == "GET" and not posted:
            # The page changes while its old version is rendered.
            posted.append(Client(cache).post("/a/", base_url=SITE).status)
        return app(environ, start_response)

    cache.app = rendering
    first = Client(cache).get("/a/", base_url=SITE)
    assert posted == ["200 OK"]
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=purged"
    assert not cached(cache, "/a/")


def test_lock_down_leaves_stored_pages_alone() -> None:
    app = ChangingApp()
    cache = cache_for(app, lock_down=True)
    Client(cache).get("/a/", base_url=SITE)
    Client(cache).post("/a/", base_url=SITE)
    assert cached(cache, "/a/")


def test_rest_and_admin_urls_are_never_purged_for() -> None:
    app = ChangingApp()
    cache = cache_for(app)
    Client(cache).get("/a/", base_url=SITE)
    before = cache.engine.generation()
    app.headers = [("Location", "/site-json/site/v2/posts/4")]
    Client(cache).post("/site-json/site/v2/posts", base_url=SITE)
    assert cache.engine.generation() == before

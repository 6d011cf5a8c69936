"""The site's own traffic is counted apart from the visitors': the cache test, a preload and
the administration requests (the dashboard, logged-in REST calls) leave the visitors' hit and
miss counters, bypass reasons and series as they were."""

from __future__ import annotations

from typing import Any

from tests.auth.conftest import log_in
from tests.cache.api.conftest import Api, add_page

VISITORS = ("hit", "stale", "miss", "bypass")


def visitors(api: Api) -> dict[str, Any]:
    """The visitors' figures of ``GET /stats``: requests, bypass reasons, series totals."""
    stats = api.json("GET", "/stats")
    series = stats["series"]
    return {
        "requests": stats["requests"],
        "bypass_reasons": stats["bypass_reasons"],
        "series": {name: sum(series[name]) for name in VISITORS},
    }


def own(api: Api) -> dict[str, int]:
    return dict(api.json("GET", "/stats")["own"])


def test_a_cache_test_leaves_the_visitors_counters_unchanged(api: Api) -> None:
    add_page(api.site, "/visited")
    for _ in range(4):
        api.page("/visited")  # a miss, then hits: the visitors' figures
    before = visitors(api)
    own_before = own(api)
    answer = api.json("POST", "/cache/test")
    assert answer["status"] is True
    assert visitors(api) == before
    after = own(api)
    # prime (a miss), first and second (hits), each counted as the site's own.
    assert after["miss"] >= own_before["miss"] + 1
    assert after["hit"] >= own_before["hit"] + 2


def test_a_full_preload_leaves_the_visitors_counters_unchanged(api: Api) -> None:
    paths = [f"/warm-{number}" for number in range(4)]
    for path in paths:
        add_page(api.site, path)
    api.site.app.hooks.add_filter("cache_preload_urls", lambda urls, settings: [*urls, *paths])
    api.page("/")
    before = visitors(api)
    api.json("POST", "/preload", {"enable": True})
    api.site.app.cache_api.preloader.wait(10)
    assert api.json("GET", "/status")["preload"]["done"] == 5
    assert visitors(api) == before
    assert api.json("GET", "/stats")["preload"]["miss"] == 4  # the home page was cached


def test_administration_requests_count_as_the_sites_own(api: Api) -> None:
    client = api.site.client()
    login = api.site.users["administrator"].login
    # Logging in is a form anybody may post: the visitors' (a POST bypass).
    assert log_in(client, login, base_url="http://example.org").status_code == 303
    before = visitors(api)
    own_before = own(api)["bypass"]
    for _ in range(3):
        api.call("GET", "/settings")  # an application password: credentials
    assert client.get("/site-admin/cache", base_url="http://example.org").status_code == 200
    assert client.get("/site-admin/", base_url="http://example.org").status_code == 200
    assert visitors(api) == before
    # Three REST calls, two admin pages (and the stats reads of `own` and `visitors` above).
    assert own(api)["bypass"] >= own_before + 5


def test_an_anonymous_rest_call_is_a_visitors_bypass(api: Api) -> None:
    before = api.json("GET", "/stats")["bypass_reasons"].get("rest_or_admin", 0)
    api.site.client().get("/site-json/", base_url="http://example.org")
    api.site.client().get("/login", base_url="http://example.org")
    after = api.json("GET", "/stats")["bypass_reasons"].get("rest_or_admin", 0)
    assert after == before + 2


def test_a_visitors_cookie_on_a_page_is_no_administration(api: Api) -> None:
    # A login cookie on a front page: a person reading the site (a visitor's bypass).
    before = api.json("GET", "/stats")["bypass_reasons"].get("logged_in_cookie", 0)
    client = api.site.client()
    client.set_cookie("sitecache_session", "whatever", domain="example.org")
    page = client.get("/", base_url="http://example.org")
    assert "detail=logged_in_cookie" in page.headers["Cache-Status"]
    after = api.json("GET", "/stats")["bypass_reasons"].get("logged_in_cookie", 0)
    assert after == before + 1


def test_the_metrics_show_the_sites_own_traffic(api: Api) -> None:
    api.json("POST", "/cache/test")
    client = api.site.client()
    login = api.site.users["administrator"].login
    assert log_in(client, login, base_url="http://example.org").status_code == 303
    response = client.get("/site-admin/metrics", base_url="http://example.org")
    assert response.status_code == 200, response.text
    assert 'sitecache_own_requests_total{outcome="hit"} 2' in response.text

"""Regressions from trying the cache as a newcomer and an attacker would (issues #7, #8)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache import CacheEngine, DiskStorage
from tests.cache.api.conftest import Api


def details(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, response.get_data(as_text=True)
    return dict(response.get_json()["data"]["details"])


def test_settings_changed_by_two_workers_one_after_another_are_both_kept(tmp_path: Path) -> None:
    # Two engines over one store are two workers, each with its own (stale) copy.
    one, two = CacheEngine(DiskStorage(tmp_path)), CacheEngine(DiskStorage(tmp_path))
    one.settings()
    two.settings()
    for number in range(10):
        assert isinstance(one.update_settings({"max_age": 1000 + number}), dict)
        assert isinstance(two.update_settings({"stale_while_revalidate": number}), dict)
        values = CacheEngine(DiskStorage(tmp_path)).settings_values()
        assert (values["max_age"], values["stale_while_revalidate"]) == (1000 + number, number)


def test_concurrent_settings_changes_are_all_kept(tmp_path: Path) -> None:
    engines = [CacheEngine(DiskStorage(tmp_path)) for _ in range(4)]
    keys = ["compression", "mobile", "cache_404", "debug"]

    def change(engine: CacheEngine, key: str) -> None:
        assert isinstance(engine.update_settings({key: not engine.settings().values[key]}), dict)

    threads = [
        threading.Thread(target=change, args=pair) for pair in zip(engines, keys, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    values = CacheEngine(DiskStorage(tmp_path)).settings_values()
    assert [values[key] for key in keys] == [False, True, True, True]


def test_rejected_uris_that_only_fail_together_are_accepted_and_work(api: Api) -> None:
    answer = api.json("POST", "/settings", {"rejected_uris": ["/private/", "(?i)/secret/"]})
    assert answer["rejected_uris"] == ["/private/", "(?i)/secret/"]
    assert api.page("/login").status_code in (200, 303)
    assert (
        api.page("/SECRET/").headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rejected_uri"
    )


def test_a_catastrophic_rejected_uri_cannot_hold_a_worker(api: Api) -> None:
    api.json("POST", "/settings", {"rejected_uris": ["(a+)+$"]})
    response = api.page("/search/" + "a" * 40 + "!/")
    assert response.status_code in (200, 404)  # the regex engine does not backtrack forever


def test_a_rejected_uri_pattern_that_times_out_rejects_the_path() -> None:
    from sitecache.cache.policy import CacheRules, RequestFacts, request_bypass_reason
    from sitecache.cache.settings import CacheSettings

    class Slow:
        def search(self, text: str, timeout: float) -> None:
            raise TimeoutError("regex timed out")

    settings = CacheSettings.from_values({"rejected_uris": ["^/never/"]})
    settings.rejected_uris.joined = Slow()  # type: ignore[assignment]
    facts = RequestFacts(
        method="GET", path="/a/", host="localhost", query_names=(), cookie_names=(),
        has_authorization=False, user_agent="", forwarded_host_mismatch=False,
    )  # fmt: skip
    assert request_bypass_reason(facts, settings, CacheRules()) == "rejected_uri"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"max_age": 10**30}, "max_age"),
        ({"stale_while_revalidate": 10**20}, "stale_while_revalidate"),
        ({"preload_interval": 10**9}, "preload_interval"),
        ({"preload_posts": 10**12}, "preload_posts"),
    ],
)
def test_numeric_settings_have_upper_bounds(api: Api, body: dict[str, Any], field: str) -> None:
    response = api.call("POST", "/settings", body)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert field in response.get_data(as_text=True)
    assert api.json("GET", "/settings")[field] != body[field]


def test_an_overflowing_number_is_not_read_as_never_expiring(api: Api) -> None:
    response = api.site.client().post(
        "/site-json/site-cache/v1/settings",
        data='{"max_age": 1e400}',
        headers={**api.site.basic("administrator"), "Content-Type": "application/json"},
        base_url="http://example.org",
    )
    assert response.status_code == 400, response.get_data(as_text=True)
    assert api.json("GET", "/settings")["max_age"] == 3600


def test_an_empty_list_for_pages_is_an_empty_object(api: Api) -> None:
    answer = api.json("POST", "/settings", {"pages": []})
    assert answer["pages"]["search"] is False


@pytest.mark.parametrize(
    "body",
    [
        {"url": "http://[::1/x"},
        {"urls": ["/a/", "http://[::1/x"]},
        {"url": "http://example.org:notaport/"},
        {"url": "/a/\u0000/"},
        {"post_id": 10**30},
    ],
)
def test_malformed_purge_targets_are_400_not_500(api: Api, body: dict[str, Any]) -> None:
    response = api.call("POST", "/cache", body)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert response.get_json()["code"] == "rest_invalid_param"


def test_the_cache_test_of_a_non_utf8_path_answers(api: Api) -> None:
    response = api.call("POST", "/cache/test", {"url": "/%ff/"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["status"] is False


def test_listing_a_later_page_of_an_empty_cache_is_an_empty_list(api: Api) -> None:
    response = api.call("GET", "/cache", query={"page": 2})
    assert response.status_code == 200
    assert response.get_json() == []


def test_a_post_whose_slug_starts_like_a_bypass_path_is_cached(api: Api) -> None:
    from tests.cache.api.conftest import add_page

    add_page(api.site, "/login-tips/", "<p>Tips</p>")
    assert api.page("/login-tips/").headers["Cache-Status"].endswith("stored")
    assert api.page("/login-tips/").headers["Cache-Status"].startswith("sitecache; hit")


def test_leading_slashes_do_not_make_new_keys(api: Api) -> None:
    from tests.cache.api.conftest import add_page

    add_page(api.site, "/post/", "<p>Post</p>")
    assert api.page("/post/").headers["Cache-Status"].endswith("stored")
    doubled = api.site.client().get(
        "//post/", base_url="http://example.org", environ_overrides={"PATH_INFO": "//post/"}
    )
    assert doubled.headers["Cache-Status"].startswith("sitecache; hit")

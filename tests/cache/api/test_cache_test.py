"""``POST /cache/test``: prime, two hits of one stored entry, real failure causes, no traces."""

from __future__ import annotations

import pytest

from sitecache.cache.storage import StorageError
from tests.cache.api.conftest import Api, add_page


def test_the_home_page_passes_and_the_test_leaves_nothing_behind(api: Api) -> None:
    answer = api.json("POST", "/cache/test")
    assert answer["status"] is True
    assert answer["reason"] is None
    attempts = answer["attempts"]
    assert "fwd=uri-miss; stored" in attempts["prime"]["cache"]
    assert "; hit" in attempts["first"]["cache"]
    assert "; hit" in attempts["second"]["cache"]
    assert all(attempt["http_status"] == 200 for attempt in attempts.values())
    assert all(attempt["status"] is True for attempt in attempts.values())
    assert attempts["first"]["generated"] == attempts["second"]["generated"]
    assert api.json("GET", "/cache") == []
    assert "stored" in api.page("/").headers["Cache-Status"]


def test_an_entry_that_was_there_before_stays(api: Api) -> None:
    add_page(api.site, "/kept")
    api.page("/kept")
    answer = api.json("POST", "/cache/test", {"url": "/kept"})
    assert answer["status"] is True
    assert "; hit" in answer["attempts"]["prime"]["cache"]
    assert [row["url"] for row in api.json("GET", "/cache")] == ["http://example.org/kept"]


def test_caching_off_is_named_as_the_cause(api: Api) -> None:
    api.json("POST", "/settings", {"enabled": False})
    answer = api.json("POST", "/cache/test")
    assert answer["status"] is False
    assert "Caching is off" in answer["reason"]
    assert "detail=disabled" in answer["attempts"]["prime"]["cache"]


def test_a_page_that_sets_a_cookie_is_named_as_the_cause(api: Api) -> None:
    add_page(api.site, "/cookie", headers={"Set-Cookie": "visitor=1"})
    answer = api.json("POST", "/cache/test", {"url": "/cookie"})
    assert answer["status"] is False
    assert "sets a cookie" in answer["reason"]
    assert api.json("GET", "/cache") == []


def test_a_non_200_page_is_named_as_the_cause(api: Api) -> None:
    answer = api.json("POST", "/cache/test", {"url": "/no-such-page"})
    assert answer["status"] is False
    assert "HTTP 404" in answer["reason"]
    assert answer["attempts"]["prime"]["http_status"] == 404


def test_an_excluded_path_is_named_as_the_cause(api: Api) -> None:
    add_page(api.site, "/private-area")
    api.json("POST", "/settings", {"rejected_uris": ["^/private"]})
    answer = api.json("POST", "/cache/test", {"url": "/private-area"})
    assert "rejected_uris" in answer["reason"]


def test_a_storage_error_is_named_as_the_cause(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = api.site.app.cache.engine.storage

    def broken(*args: object, **kwargs: object) -> None:
        raise StorageError("disk full")

    monkeypatch.setattr(storage, "put", broken)
    answer = api.json("POST", "/cache/test")
    assert answer["status"] is False
    assert "storage failed" in answer["reason"]


def test_the_url_is_a_path_or_an_absolute_url_of_the_site(api: Api) -> None:
    # As POST /cache accepts it (#16): an absolute URL on the site's host is tested there.
    add_page(api.site, "/absolute/")
    answer = api.json("POST", "/cache/test", {"url": "http://example.org/absolute/"})
    assert answer["status"] is True, answer
    assert api.json("GET", "/cache") == []
    for body in (
        {"url": "http://evil.example/"},
        {"url": "ftp://example.org/"},
        {"url": "no-slash"},
        {"url": "/a/../b"},
        {"url": 5},
        {"status": True},
    ):
        response = api.call("POST", "/cache/test", body)
        assert response.status_code == 400, body
        error = response.get_json()
        assert error["code"] == "rest_invalid_param"
        field = next(iter(body))
        assert set(error["data"]["details"]) == {field}, error


def test_the_test_leaves_no_static_copy_behind(api: Api) -> None:
    # #16: the test's entries went through the storage directly, so static-file mode's
    # purge listener never removed the copy the test had written.
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/tested/")
    static = api.site.app.cache_api.static
    assert static is not None
    copy = static.root / "example.org" / "tested"
    answer = api.json("POST", "/cache/test", {"url": "/tested/"})
    assert answer["status"] is True, answer
    assert api.json("GET", "/cache") == []
    assert not (copy / "index.html").exists()
    assert not (copy / "index.html.gz").exists()
    # A page that was stored before the test keeps its entry and its copy.
    api.page("/tested/")
    assert (copy / "index.html").exists()
    assert api.json("POST", "/cache/test", {"url": "/tested/"})["status"] is True
    assert (copy / "index.html").exists()
    assert [row["url"] for row in api.json("GET", "/cache")] == ["http://example.org/tested/"]

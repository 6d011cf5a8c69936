"""The ``site-cache/v1`` routes in-process: every route, body, answer and error."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sitecache.cache import DEFAULT_SETTINGS
from sitecache.cache.api import ROUTE_SCHEMAS
from sitecache.cache.storage import StorageError
from sitecache.errors import RestError
from sitecache.schema import validate_value_from_schema
from tests.auth.conftest import log_in, rest_nonce
from tests.cache.api.conftest import BASE, Api, add_page

#: (method, route, body) of every route.
ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/settings", None),
    ("POST", "/settings", {"max_age": 60}),
    ("GET", "/status", None),
    ("GET", "/stats", None),
    ("GET", "/cache", None),
    ("POST", "/cache", {"all": True}),
    ("POST", "/preload", {"enable": False}),
    ("POST", "/cache/test", {}),
    ("GET", "/plugins", None),
    ("POST", "/plugins", {"awaiting_moderation": True}),
]


def fill(api: Api, *paths: str) -> None:
    """Serve and visit ``paths`` so each is stored."""
    for path in paths:
        if path not in api.site.app.views:
            add_page(api.site, path, headers={"Cache-Tag": f"tag{path.replace('/', '-')}"})
        response = api.page(path)
        assert "stored" in response.headers["Cache-Status"], response.headers["Cache-Status"]


def details(response: Any) -> dict[str, Any]:
    body = response.get_json()
    assert response.status_code == 400, body
    assert body["code"] == "rest_invalid_param"
    return dict(body["data"]["details"])


# ---------------------------------------------------------------------- permission
@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
def test_nobody_gets_401_rest_forbidden_on_every_route(
    api: Api, method: str, route: str, body: Any
) -> None:
    response = api.call(method, route, body, role=None)
    assert (response.status_code, response.get_json()["code"]) == (401, "rest_forbidden")


@pytest.mark.parametrize("role", ["subscriber", "editor", "author", "contributor"])
@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
def test_a_user_without_manage_options_gets_403_rest_forbidden(
    api: Api, method: str, route: str, body: Any, role: str
) -> None:
    response = api.call(method, route, body, role=role)
    assert (response.status_code, response.get_json()["code"]) == (403, "rest_forbidden")


def test_forbidden_calls_change_nothing(api: Api) -> None:
    api.call("POST", "/settings", {"max_age": 1}, role="subscriber")
    api.call("POST", "/plugins", {"awaiting_moderation": True}, role=None)
    assert api.json("GET", "/settings")["max_age"] == DEFAULT_SETTINGS["max_age"]
    assert not any(plugin["enabled"] for plugin in api.json("GET", "/plugins"))


@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
def test_an_administrator_with_a_cookie_session_and_nonce_may_call_every_route(
    api: Api, method: str, route: str, body: Any
) -> None:
    client = api.site.logged_in("administrator")
    nonce = rest_nonce(client)
    response = client.open(
        BASE + route,
        method=method,
        json=body,
        headers={"X-Site-Nonce": nonce},
    )
    assert response.status_code == 200, response.get_data(as_text=True)


def test_a_cookie_session_without_its_nonce_is_nobody(api: Api) -> None:
    client = api.site.client()
    log_in(client, api.site.users["administrator"].login)
    response = client.get(BASE + "/settings")
    assert (response.status_code, response.get_json()["code"]) == (401, "rest_forbidden")


# ---------------------------------------------------------------------- discovery
def test_the_index_lists_every_route_with_empty_args_and_its_schema_in_help_context(
    api: Api,
) -> None:
    index = api.site.client().get("/site-json/", base_url="http://example.org").get_json()
    assert "site-cache/v1" in index["namespaces"]
    namespace = (
        api.site.client()
        .get(BASE, query_string={"context": "help"}, base_url="http://example.org")
        .get_json()
    )
    for route, schema in ROUTE_SCHEMAS.items():
        published = namespace["routes"][f"/site-cache/v1{route}"]
        assert published["schema"]["title"] == schema["title"]
        for endpoint in published["endpoints"]:
            assert endpoint["args"] == {}


def test_options_publishes_the_schema(api: Api) -> None:
    response = api.call("OPTIONS", "/cache", role=None)
    assert response.status_code == 200
    assert response.get_json()["schema"]["title"] == "site-cache-entry"


def _validate(value: Any, schema: dict[str, Any], where: str) -> None:
    checked = validate_value_from_schema(value, schema, where)
    assert not isinstance(checked, RestError), f"{where}: {checked.message}"
    assert checked is True


def test_every_answer_validates_against_its_routes_published_schema(api: Api) -> None:
    fill(api, "/one", "/two")
    namespace = (
        api.site.client()
        .get(BASE, query_string={"context": "help"}, base_url="http://example.org")
        .get_json()
    )

    def schema_of(route: str) -> dict[str, Any]:
        return dict(namespace["routes"][f"/site-cache/v1{route}"]["schema"])

    answers: list[tuple[str, Any]] = [
        ("/settings", api.json("GET", "/settings")),
        ("/settings", api.json("POST", "/settings", {"max_age": 120, "pages": {"feed": True}})),
        ("/status", api.json("GET", "/status")),
        ("/stats", api.json("GET", "/stats")),
        ("/cache/test", api.json("POST", "/cache/test", {})),
        ("/cache/test", api.json("POST", "/cache/test", {"url": "/missing"})),
        ("/preload", api.json("POST", "/preload", {"enable": True})),
    ]
    api.site.app.cache_api.preloader.wait(10)
    answers.append(("/preload", api.json("POST", "/preload", {"enable": False})))
    answers += [("/cache", row) for row in api.json("GET", "/cache")]
    answers.append(("/cache", api.json("POST", "/cache", {"url": "/one", "soft": True})))
    answers += [("/cache", row) for row in api.json("GET", "/cache", query={"status": "expired"})]
    answers.append(("/cache", api.json("POST", "/cache", {})))
    answers += [("/plugins", row) for row in api.json("GET", "/plugins")]
    answers += [("/plugins", row) for row in api.json("POST", "/plugins", {"domain_mapping": True})]
    assert len(answers) > 15
    for route, answer in answers:
        _validate(answer, schema_of(route), route)


# ---------------------------------------------------------------------- settings
def test_get_settings_shows_every_setting_and_where_the_cache_lives(api: Api) -> None:
    settings = api.json("GET", "/settings")
    assert {key: settings[key] for key in DEFAULT_SETTINGS} == DEFAULT_SETTINGS
    assert settings["storage"] == "disk"
    assert settings["cache_path"].endswith("cache")


def test_a_partial_update_changes_only_its_fields_and_answers_the_full_object(api: Api) -> None:
    answer = api.json("POST", "/settings", {"max_age": 90, "pages": {"feed": True}})
    assert answer["max_age"] == 90
    assert answer["pages"] == {**DEFAULT_SETTINGS["pages"], "feed": True}
    assert answer["gc_interval"] == DEFAULT_SETTINGS["gc_interval"]
    assert api.json("GET", "/settings") == answer


def test_one_bad_field_rejects_the_whole_update_naming_each_field(api: Api) -> None:
    response = api.call(
        "POST",
        "/settings",
        {"max_age": 30, "gc_interval": 5, "known_users": "everyone", "rejected_uris": ["("]},
    )
    found = details(response)
    assert set(found) == {"gc_interval", "known_users", "rejected_uris"}
    assert all(detail["message"] for detail in found.values())
    assert api.json("GET", "/settings")["max_age"] == DEFAULT_SETTINGS["max_age"]


@pytest.mark.parametrize(
    "body",
    [{"storage": "memory"}, {"cache_path": "/tmp/elsewhere"}, {"no_such_setting": True}],
)
def test_read_only_and_unknown_settings_are_400(api: Api, body: dict[str, Any]) -> None:
    assert set(details(api.call("POST", "/settings", body))) == set(body)


def test_preload_interval_below_ten_minutes_is_400(api: Api) -> None:
    assert set(details(api.call("POST", "/settings", {"preload_interval": 5}))) == {
        "preload_interval"
    }


def test_reset_restores_every_default(api: Api) -> None:
    api.json("POST", "/settings", {"max_age": 5, "mobile": True})
    answer = api.json("POST", "/settings", {"reset": True})
    assert {key: answer[key] for key in DEFAULT_SETTINGS} == DEFAULT_SETTINGS


@pytest.mark.parametrize("body", [{"reset": True, "max_age": 5}, {"reset": False}])
def test_reset_must_be_true_and_alone(api: Api, body: dict[str, Any]) -> None:
    api.json("POST", "/settings", {"max_age": 7})
    assert "reset" in details(api.call("POST", "/settings", body))
    assert api.json("GET", "/settings")["max_age"] == 7


@pytest.mark.parametrize("route", ["/settings", "/cache", "/preload", "/plugins"])
def test_a_body_that_is_not_a_json_object_is_400(api: Api, route: str) -> None:
    response = api.call("POST", route, [1, 2])
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_param"


def test_a_form_body_is_400(api: Api) -> None:
    response = api.site.client().post(
        BASE + "/settings",
        data={"max_age": "5"},
        headers=api.site.basic("administrator"),
        base_url="http://example.org",
    )
    assert response.status_code == 400


def test_a_settings_change_reaches_the_page_cache(api: Api) -> None:
    fill(api, "/page")
    api.json("POST", "/settings", {"enabled": False})
    response = api.page("/page")
    assert "detail=disabled" in response.headers["Cache-Status"]


# ---------------------------------------------------------------------- status and stats
def test_status_reports_storage_compression_preload_gc_and_no_warning(api: Api) -> None:
    api.site.app.cache_api.timers.tick()  # the timers run (a server starts them)
    status = api.json("GET", "/status")
    assert status["enabled"] is True
    assert status["storage"]["backend"] == "disk"
    assert status["storage"]["writable"] is True
    assert status["compression"] == {"available": True}
    assert status["preload"]["running"] is False
    assert set(status["gc"]) == {"last_run", "next_run", "pending"}
    assert status["gc"]["pending"] == {"entries": 0, "bytes": 0}
    assert status["warnings"] == []


def test_status_warns_when_caching_is_limited_to_loopback_hosts(app_factory: Any) -> None:
    from tests.auth.conftest import FakeClock, build_site

    api = Api(build_site(app_factory(site_url=None), FakeClock()))
    api.site.app.cache_api.timers.tick()
    codes = [warning["code"] for warning in api.json("GET", "/status")["warnings"]]
    assert codes == ["loopback_only"]


def test_status_warns_when_caching_is_off(api: Api) -> None:
    api.site.app.cache_api.timers.tick()
    api.json("POST", "/settings", {"enabled": False})
    status = api.json("GET", "/status")
    assert status["enabled"] is False
    assert [warning["code"] for warning in status["warnings"]] == ["cache_disabled"]


def test_status_reports_a_storage_that_cannot_be_written(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = api.site.app.cache.engine.storage

    def broken(name: str, value: bytes) -> None:
        raise StorageError("disk full")

    monkeypatch.setattr(storage, "set_value", broken)
    status = api.json("GET", "/status")
    assert status["storage"]["writable"] is False
    assert status["warnings"][0]["code"] == "storage_error"
    assert "disk full" in status["warnings"][0]["message"]


def test_status_shows_the_gc_schedule_once_the_timers_ran(api: Api) -> None:
    timers = api.site.app.cache_api.timers
    engine = api.site.app.cache.engine
    now = engine.clock()
    assert timers.tick(now) is True
    gc = api.json("GET", "/status")["gc"]
    assert gc["last_run"] is None
    assert gc["next_run"] is not None
    assert timers.run_gc_if_due(now + 601) is True
    gc = api.json("GET", "/status")["gc"]
    assert gc["last_run"] is not None


def test_stats_count_hits_misses_bypasses_and_purges(api: Api) -> None:
    fill(api, "/a")
    api.page("/a")
    api.page("/a", Authorization="Basic eA==")
    api.json("POST", "/cache", {"url": "/a"})
    stats = api.json("GET", "/stats")
    assert stats["entries"] == {"total": 0, "fresh": 0, "expired": 0}
    assert stats["requests"]["miss"] >= 1
    assert stats["requests"]["hit"] >= 1
    assert stats["bypass_reasons"]["authorization"] == 1
    assert stats["purges"] == {"url": 1}


# ---------------------------------------------------------------------- GET /cache
def test_the_list_pages_with_total_headers(api: Api) -> None:
    fill(api, "/a", "/b", "/c")
    response = api.call("GET", "/cache", query={"per_page": 2})
    assert response.headers["X-Site-Total"] == "3"
    assert response.headers["X-Site-TotalPages"] == "2"
    first = response.get_json()
    second = api.json("GET", "/cache", query={"per_page": 2, "page": 2})
    assert len(first) == 2
    assert len(second) == 1
    urls = {row["url"] for row in first + second}
    assert urls == {"http://example.org/a", "http://example.org/b", "http://example.org/c"}
    row = second[0]
    assert set(row) == {"url", "variant", "status", "size", "compressed_size", "created",
                        "expires", "tags", "lifetime"}  # fmt: skip
    assert row["status"] == "fresh"
    assert row["lifetime"] == "max_age"  # the page stated no lifetime of its own
    assert row["size"] > 0


def test_the_list_filters_by_search_and_status(api: Api) -> None:
    fill(api, "/apple", "/banana")
    assert [row["url"] for row in api.json("GET", "/cache", query={"search": "apple"})] == [
        "http://example.org/apple"
    ]
    api.json("POST", "/cache", {"url": "/banana", "soft": True})
    expired = api.json("GET", "/cache", query={"status": "expired"})
    assert [row["url"] for row in expired] == ["http://example.org/banana"]
    fresh = api.json("GET", "/cache", query={"status": "fresh"})
    assert [row["url"] for row in fresh] == ["http://example.org/apple"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"per_page": "0"}, "per_page"),
        ({"per_page": "101"}, "per_page"),
        ({"per_page": "ten"}, "per_page"),
        ({"page": "0"}, "page"),
        ({"page": "-1"}, "page"),
        ({"status": "stale"}, "status"),
    ],
)
def test_a_bad_list_query_is_400_naming_the_parameter(
    api: Api, query: dict[str, str], field: str
) -> None:
    assert field in details(api.call("GET", "/cache", query=query))


def test_a_page_past_the_end_is_400(api: Api) -> None:
    fill(api, "/a")
    response = api.call("GET", "/cache", query={"page": 3})
    assert (response.status_code, response.get_json()["code"]) == (400, "rest_invalid_page_number")


@pytest.mark.parametrize("page", ["1000000000", str(2**63), "9" * 30, "9" * 5000])
def test_a_page_of_any_number_of_digits_is_past_the_end_not_a_type_error(
    api: Api, page: str
) -> None:
    # As WordPress (PHP casts a longer number to its largest integer): an empty store lists
    # nothing, a store with entries says the page is past the last.
    empty = api.call("GET", "/cache", query={"page": page})
    assert empty.status_code == 200, empty.text
    assert empty.get_json() == []
    assert empty.headers["X-Site-Total"] == "0"
    fill(api, "/a")
    response = api.call("GET", "/cache", query={"page": page, "search": "a"})
    assert (response.status_code, response.get_json()["code"]) == (400, "rest_invalid_page_number")


def test_leading_zeros_do_not_make_a_page_large(api: Api) -> None:
    fill(api, "/a")
    rows = api.json("GET", "/cache", query={"page": "0" * 30 + "1"})
    assert [row["url"] for row in rows] == ["http://example.org/a"]


@pytest.mark.parametrize("search", ["\x00", "a\x00", "\x1b[31m", "a\tb", "\x7f"])
def test_a_search_with_a_control_character_is_400_naming_search(api: Api, search: str) -> None:
    fill(api, "/a", "/b")
    response = api.call("GET", "/cache", query={"search": search})
    assert response.status_code == 400, response.text
    body = response.get_json()
    assert body["code"] == "rest_invalid_param"
    assert body["data"]["params"] == {"search": "search must not contain control characters."}


# ---------------------------------------------------------------------- POST /cache
def test_an_empty_body_purges_this_site(api: Api) -> None:
    fill(api, "/a", "/b")
    answer = api.json("POST", "/cache", {})
    assert answer["scope"] == "site"
    assert answer["deleted"] == 2
    assert answer["bytes"] > 0
    assert answer["urls"] == []  # the site's hosts are all the storage holds: nothing walked
    assert api.json("GET", "/cache") == []


def test_all_purges_every_host(api: Api) -> None:
    fill(api, "/a")
    assert api.json("POST", "/cache", {"all": True})["scope"] == "all"
    assert api.json("GET", "/cache") == []


def test_expired_purges_only_expired_entries(api: Api) -> None:
    fill(api, "/old", "/new")
    engine = api.site.app.cache.engine
    old = engine.storage.keys_for("url", {"http://example.org/old"})
    engine.storage.mark_stale(old, engine.clock() - 3600)
    answer = api.json("POST", "/cache", {"expired": True})
    assert (answer["scope"], answer["deleted"], answer["urls"]) == ("expired", 1, [])
    assert [row["url"] for row in api.json("GET", "/cache")] == ["http://example.org/new"]
    assert api.json("GET", "/stats")["entries"] == {"total": 1, "fresh": 1, "expired": 0}
    assert api.json("GET", "/status")["gc"]["pending"]["entries"] == 1
    api.site.app.cache_api.timers.tick()
    assert api.json("GET", "/status")["gc"]["pending"]["entries"] == 0
    assert engine.storage.get(next(iter(old))) is None


@pytest.mark.parametrize("target", ["/a", "http://example.org/a"])
def test_url_purges_one_page(api: Api, target: str) -> None:
    fill(api, "/a", "/b")
    answer = api.json("POST", "/cache", {"url": target})
    assert (answer["scope"], answer["deleted"]) == ("url", 1)
    assert [row["url"] for row in api.json("GET", "/cache")] == ["http://example.org/b"]


def test_urls_purges_several(api: Api) -> None:
    fill(api, "/a", "/b", "/c")
    answer = api.json("POST", "/cache", {"urls": ["/a", "http://example.org/b"]})
    assert (answer["scope"], answer["deleted"]) == ("urls", 2)


def test_soft_marks_entries_stale_instead_of_deleting(api: Api) -> None:
    fill(api, "/a")
    answer = api.json("POST", "/cache", {"url": "/a", "soft": True})
    assert answer["deleted"] == 1
    assert [row["status"] for row in api.json("GET", "/cache")] == ["expired"]


def test_tag_and_tags_purge_by_tag(api: Api) -> None:
    fill(api, "/a", "/b", "/c")
    assert api.json("POST", "/cache", {"tag": "tag-a"})["urls"] == ["http://example.org/a"]
    answer = api.json("POST", "/cache", {"tags": ["tag-b", "tag-c"]})
    assert (answer["scope"], answer["deleted"]) == ("tags", 2)


def a_post(api: Api) -> int:
    """The id of a draft post of the site (nothing lists it)."""
    author = api.site.users["administrator"].id
    return api.site.app.content.create_post(title="Draft", status="draft", author=author).id


def test_post_id_purges_the_post_tag_by_default(api: Api) -> None:
    post_id = a_post(api)
    add_page(api.site, "/post", headers={"Cache-Tag": f"post-{post_id}"})
    fill(api, "/post", "/other")
    answer = api.json("POST", "/cache", {"post_id": post_id})
    assert answer["scope"] == "post_id"
    assert "http://example.org/post" in answer["urls"]
    assert "http://example.org/other" not in answer["urls"]


def test_post_id_of_a_post_the_site_does_not_have_is_404_and_purges_nothing(api: Api) -> None:
    # #16: it answered 200 and purged the feed, the home page and the archives.
    add_page(api.site, "/feed-like", headers={"Cache-Tag": "feed"})
    fill(api, "/feed-like")
    response = api.call("POST", "/cache", {"post_id": 999999})
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_post_invalid_id"
    assert len(api.json("GET", "/cache")) == 1


def test_post_id_is_purged_when_the_site_cannot_say_whether_it_exists(api: Api) -> None:
    # A site embedding the cache API without the cache_post_exists seam: the tags are purged.
    add_page(api.site, "/post", headers={"Cache-Tag": "post-7"})
    fill(api, "/post")
    api.site.app.hooks.add_filter("cache_post_exists", lambda exists, post_id: None, 20)
    assert api.json("POST", "/cache", {"post_id": 7})["urls"] == ["http://example.org/post"]


def test_post_id_purges_the_related_pages_the_site_names(api: Api) -> None:
    add_page(api.site, "/post", headers={"Cache-Tag": "post-7"})
    add_page(api.site, "/archive", headers={"Cache-Tag": "term-3"})
    fill(api, "/post", "/archive", "/other")
    api.site.app.hooks.add_filter("cache_post_exists", lambda exists, post_id: True, 20)
    api.site.app.hooks.add_filter("cache_post_tags", lambda tags, post_id: [*tags, "term-3"])
    answer = api.json("POST", "/cache", {"post_id": 7})
    assert sorted(answer["urls"]) == ["http://example.org/archive", "http://example.org/post"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "http://evil.example/a"}, "url"),
        ({"url": "/a/../../etc"}, "url"),
        ({"urls": ["/a", "ftp://example.org/a"]}, "urls"),
        ({"url": "/a", "tag": "x"}, "url"),
        ({"all": True, "expired": True}, "all"),
        ({"all": False}, "all"),
        ({"post_id": 0}, "post_id"),
        ({"urls": []}, "urls"),
        ({"tags": []}, "tags"),
        ({"expired": True, "soft": True}, "soft"),
        ({"soft": "yes"}, "soft"),
        ({"id": 3}, "id"),
        ({"deleted": 3}, "deleted"),
    ],
)
def test_a_bad_purge_is_400_and_deletes_nothing(api: Api, body: dict[str, Any], field: str) -> None:
    fill(api, "/a")
    response = api.call("POST", "/cache", body)
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["code"] == "rest_invalid_param"
    assert field in response.get_json()["data"]["params"]
    assert len(api.json("GET", "/cache")) == 1


def test_the_purge_answer_caps_urls_at_100(api: Api) -> None:
    paths = [f"/p{number}" for number in range(105)]
    for path in paths:
        add_page(api.site, path, headers={"Cache-Tag": "many"})
    fill(api, *paths)
    answer = api.json("POST", "/cache", {"tag": "many"})
    assert answer["deleted"] == 105
    assert len(answer["urls"]) == 100


def test_the_docs_show_a_curl_example_for_every_route() -> None:
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "reference" / "rest-site-cache-v1.md"
    readme = page.read_text(encoding="utf-8")
    for route in ROUTE_SCHEMAS:
        assert re.search(rf"curl [^\n]*\$S{re.escape(route)}\b", readme), route
    for method_body in ('{"reset": true}', '{"enable": false}', '{"all": true}'):
        assert method_body in readme


def test_post_id_uses_the_content_sites_related_tags_when_it_has_them(
    app_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitecache.site import FrontSite
    from tests.auth.conftest import FakeClock, build_site

    monkeypatch.setattr(
        FrontSite, "related_tags", lambda self, post_id: [f"term-{post_id}"], raising=False
    )
    api = Api(build_site(app_factory(), FakeClock()))
    add_page(api.site, "/archive", headers={"Cache-Tag": "term-7"})
    add_page(api.site, "/other", headers={"Cache-Tag": "term-8"})
    fill(api, "/archive", "/other")
    api.site.app.hooks.add_filter("cache_post_exists", lambda exists, post_id: True, 20)
    assert api.json("POST", "/cache", {"post_id": 7})["urls"] == ["http://example.org/archive"]


def test_post_id_purges_the_post_and_the_home_page_the_site_names(api: Api) -> None:
    post = api.site.app.content.create_post(
        title="Hello", status="publish", author=api.site.users["administrator"].id
    )
    home = api.page("/")
    assert "stored" in home.headers["Cache-Status"]
    answer = api.json("POST", "/cache", {"post_id": post.id})
    assert answer["scope"] == "post_id"
    assert "http://example.org/" in answer["urls"]


@pytest.mark.parametrize(
    ("method", "route", "body"),
    [
        ("GET", "/settings", None),
        ("POST", "/settings", {"max_age": 60}),
        ("GET", "/plugins", None),
        ("POST", "/plugins", {"purge_webhook": False}),
        ("GET", "/stats", None),
        ("GET", "/cache", None),
        ("POST", "/cache", {"all": True}),
        ("POST", "/preload", {"enable": False}),
    ],
)
def test_every_route_answers_a_failing_storage_with_503_at_once(
    api: Api, monkeypatch: pytest.MonkeyPatch, method: str, route: str, body: Any
) -> None:
    """#15 point 4: a down store is a 503 site_cache_storage_error on every route, never a
    500 and never a five-second wait for a lock."""
    storage = api.site.app.cache.engine.storage
    calls = {"count": 0}

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls["count"] += 1
        raise StorageError("Redis: Timeout reading from socket")

    for name in ("get_value", "set_value", "acquire_lock", "counters", "summary", "add_counters",
                 "list_entries", "bump_generation", "keys_for", "generation"):  # fmt: skip
        monkeypatch.setattr(storage, name, broken)
    api.site.app.cache.engine.values.expire()  # the next request re-reads the settings
    response = api.call(method, route, body)
    if route == "/settings" and method == "GET":
        # The settings a process already holds are still shown (read-only answer).
        assert response.status_code in (200, 503)
    else:
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.get_json()["code"] == "site_cache_storage_error"
    assert calls["count"] < 20  # no retry loop against a dead store


@pytest.mark.parametrize(
    ("setting", "literal", "float_literal"),
    [("max_age", "1" + "0" * 5000, "1e999"), ("max_age", "-1" + "0" * 5000, "-1e999")],
    ids=["huge", "huge-negative"],
)
def test_an_integer_too_long_for_python_is_answered_as_its_float_not_a_bad_body(
    api: Api, setting: str, literal: str, float_literal: str
) -> None:
    def post(raw: str) -> Any:
        return api.site.client().post(
            BASE + "/settings",
            data=raw,
            headers={**api.site.basic("administrator"), "Content-Type": "application/json"},
            base_url="http://example.org",
        )

    answer = post(f'{{"{setting}": {literal}}}')
    assert answer.status_code == 400
    assert set(details(answer)) == {setting}
    assert answer.get_json() == post(f'{{"{setting}": {float_literal}}}').get_json()

"""`create_app()` puts the page cache in front of the site, with the site's own rules."""

from __future__ import annotations

from pathlib import Path

from werkzeug.test import Client

from tests.conftest import AppFactory


def test_the_front_page_is_cached_tagged_and_purged_by_tag(app_factory: AppFactory) -> None:
    app = app_factory()
    client = Client(app, use_cookies=False)
    first = client.get("/", base_url="http://example.org")
    second = client.get("/", base_url="http://example.org")
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert second.headers["Cache-Status"].startswith("sitecache; hit")
    assert second.headers["Cache-Tag"] == "home"
    result = app.cache.purge_tags(["home"])
    assert result.deleted == 1
    assert result.urls == ["http://example.org/"]


def test_the_disk_cache_lives_under_the_data_directory(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    app = app_factory()
    Client(app).get("/", base_url="http://example.org")
    assert (tmp_path / "var" / "cache" / "index.sqlite3").exists()
    assert app.cache.engine.storage.backend == "disk"


def test_rest_login_admin_and_foreign_hosts_are_never_stored(app_factory: AppFactory) -> None:
    app = app_factory()
    client = Client(app, use_cookies=False)
    for path in ("/site-json/", "/site-json/site/v2", "/login", "/site-admin/", "/?rest_route=/"):
        response = client.get(path, base_url="http://example.org")
        assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin", (
            path
        )
    other = client.get("/", base_url="http://other.example")
    assert other.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=foreign_host"
    assert app.cache.engine.storage.summary(0).total == 0


def test_a_custom_rest_prefix_is_never_stored_either(app_factory: AppFactory) -> None:
    app = app_factory(rest_prefix="api")
    response = Client(app).get("/api/", base_url="http://example.org")
    assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin"


def test_the_memory_backend_can_be_chosen(app_factory: AppFactory) -> None:
    app = app_factory(cache_backend="memory")
    assert app.cache.engine.storage.backend == "memory"

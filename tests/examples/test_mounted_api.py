"""The management API mounted under ``/cache-admin`` of an existing site
(``examples/mounted_api.py`` under gunicorn): application passwords and the mounted login
work, and the API acts on the cache the existing site is served from."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from tests.e2e.deployment import Deployment
from tests.examples.server import ExampleServer, gunicorn, serving

API = "/cache-admin/site-json/site-cache/v1"
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ExampleServer]:
    site = Deployment(tmp_path_factory.mktemp("mounted") / "site")
    credentials = site.init()
    site.cli("user", "create", "ops", "--role", "administrator", "--password", PASSWORD)
    example = ExampleServer(
        gunicorn("examples.mounted_api:application"),
        site.root / "server.log",
        environment=site.environment(),
        ready_path="/cache-admin/site-json/",
        credentials=credentials,
    )
    with serving(example, request):
        yield example


def test_a_tag_purge_over_the_mounted_api_reaches_the_existing_sites_pages(
    server: ExampleServer,
) -> None:
    assert "stored" in server.cache_status("/")
    assert "stored" in server.cache_status("/about/")
    assert "; hit" in server.cache_status("/")
    purged = server.request("POST", f"{API}/cache", {"tags": ["home"]}, admin=True)
    assert purged.status == 200, purged.body
    assert purged.json()["deleted"] == 1  # type: ignore[index]
    assert "miss" in server.cache_status("/")
    assert "; hit" in server.cache_status("/about/")


def test_the_mounted_api_lists_the_existing_sites_entries(server: ExampleServer) -> None:
    server.cache_status("/listed/")
    listing = server.request("GET", f"{API}/cache?search=/listed/", admin=True)
    assert listing.status == 200, listing.body
    listed = listing.json()
    assert isinstance(listed, list)
    [entry] = listed
    assert entry["url"].endswith("/listed/")
    assert entry["tags"] == ["page"]


def test_without_credentials_the_mounted_api_is_refused(server: ExampleServer) -> None:
    for method, body in (("GET", None), ("POST", {"all": True})):
        refused = server.request(method, f"{API}/cache", body)
        assert refused.status == 401
        assert refused.json()["code"] == "rest_forbidden"  # type: ignore[index]


def test_only_the_api_login_and_account_pages_are_reachable_under_the_mount(
    server: ExampleServer,
) -> None:
    assert server.request("GET", "/cache-admin/").status == 404
    assert server.request("GET", "/cache-admin/site-json/").status == 200
    login = server.request("GET", "/cache-admin/login")
    assert login.status == 200
    assert b'action="/cache-admin/login"' in login.body
    account = server.request("GET", "/cache-admin/site-admin/")
    assert account.status == 303
    assert account.headers["location"].startswith("/cache-admin/login?")


def test_a_login_at_the_mount_works_with_its_nonce_and_bypasses_the_site_cache(
    server: ExampleServer,
) -> None:
    login = server.request(
        "POST",
        "/cache-admin/login",
        f"log=ops&pwd={PASSWORD.replace(' ', '+')}",
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert login.status in (302, 303), login.body
    cookie = "; ".join(
        value.split(";", 1)[0] for value in login.header_values("set-cookie") if "=" in value
    )
    nonce = server.request("GET", "/cache-admin/site-admin/rest-nonce", None, {"Cookie": cookie})
    assert nonce.status == 200
    stats = server.request(
        "GET", f"{API}/stats", None, {"Cookie": cookie, "X-Site-Nonce": nonce.body.decode()}
    )
    assert stats.status == 200, stats.body
    assert "entries" in json.loads(stats.body)
    # The session cookie is the site's too: a logged-in visitor is never served from the cache.
    page = server.request("GET", "/", None, {"Cookie": cookie})
    assert re.search(r"bypass|detail=logged_in", page.headers["cache-status"])

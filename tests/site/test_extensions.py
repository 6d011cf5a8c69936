"""Installed plugins (`sitecache.site.extensions`) and their ``site/v2`` routes: discovery
through entry points, activation persisted and followed by every application on the same
store, permissions, a broken plugin reported without taking the site down, the block directory."""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.rest import RestRequest, RestServer, return_true
from sitecache.site.extensions import ENTRY_POINT_GROUP, InstalledPlugin, discover_plugins
from tests.conftest import AppFactory

ECHO = "tests-echo/echo"
BROKEN = "tests-broken/broken"


def echo_plugin(app: Any) -> None:
    """A plugin: one route ``echo/v1/ping`` and a filter on the REST index."""

    def ping(request: RestRequest) -> dict[str, str]:
        return {"pong": "yes"}

    def routes(server: RestServer) -> None:
        server.register_rest_route(
            "echo/v1",
            "/ping",
            {"methods": "GET", "callback": ping, "permission_callback": return_true},
        )

    app.hooks.add_action("rest_api_init", routes)
    app.hooks.add_filter("tests_echo_marker", lambda value: [*value, "echo"])


def broken_plugin(app: Any) -> None:
    """A plugin that adds a hook, then fails while loading."""
    app.hooks.add_filter("tests_echo_marker", lambda value: [*value, "broken"])
    raise RuntimeError("the broken plugin cannot start")


def fake(plugin_id: str, target: Any, description: str = "") -> InstalledPlugin:
    """An installed plugin whose loader returns ``target`` (no package needed)."""
    return InstalledPlugin(
        plugin=plugin_id,
        name=plugin_id.split("/")[0],
        version="1.2.3",
        description=description or f"The {plugin_id} test plugin.",
        author="Tests",
        author_uri="",
        plugin_uri="",
        requires_python=">=3.11",
        loader=lambda: target,
    )


def with_fakes(app: App) -> App:
    """``app`` with the echo and broken plugins installed, following the store at once."""
    app.plugins.discover = lambda: [fake(ECHO, echo_plugin), fake(BROKEN, broken_plugin)]
    app.plugins.sync_interval = 0
    return app


def admin_headers(app: App, role: str = "administrator") -> dict[str, str]:
    user = app.auth.users.create(f"{role}-user", "password123", role)
    password, _ = app.auth.app_passwords.create(user, "tests", "")
    token = base64.b64encode(f"{role}-user:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def call(
    client: Client, method: str, path: str, headers: dict[str, str] | None = None, body: Any = None
) -> TestResponse:
    sent = dict(headers or {})
    if body is not None:
        sent["Content-Type"] = "application/json"
    return client.open(
        f"/site-json{path}",
        method=method,
        headers=sent,
        data=json.dumps(body) if body is not None else None,
    )


def test_plugins_are_discovered_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tests_found_plugin.py").write_text(
        "def activate(app):\n    app.found = True\n", encoding="utf-8"
    )
    info = tmp_path / "tests_found_plugin-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tests-found-plugin\nVersion: 2.0\n"
        "Summary: Found by its entry point.\nAuthor: Someone\n",
        encoding="utf-8",
    )
    (info / "entry_points.txt").write_text(
        "[sitecache.plugins]\nfound = tests_found_plugin:activate\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {plugin.plugin: plugin for plugin in discover_plugins()}
    plugin = found["tests-found-plugin/found"]
    assert (plugin.version, plugin.description, plugin.author) == (
        "2.0",
        "Found by its entry point.",
        "Someone",
    )

    class Host:
        found = False

    host = Host()
    plugin.load()(host)
    assert host.found is True
    monkeypatch.delitem(sys.modules, "tests_found_plugin", raising=False)


def test_activation_is_stored_and_followed_by_another_worker(app_factory: AppFactory) -> None:
    first = with_fakes(app_factory(application_passwords="on"))
    second = with_fakes(app_factory(application_passwords="on"))  # another worker on the same store
    headers = admin_headers(first)
    one, two = Client(first), Client(second)
    assert call(two, "GET", "/echo/v1/ping").status_code == 404
    listed = {
        item["plugin"]: item for item in call(one, "GET", "/site/v2/plugins", headers).get_json()
    }
    assert listed[ECHO]["status"] == "inactive"
    assert listed[ECHO]["version"] == "1.2.3"

    activated = call(one, "POST", f"/site/v2/plugins/{ECHO}", headers, {"status": "active"})
    assert (activated.status_code, activated.get_json()["status"]) == (200, "active")
    assert first.plugins.stored_active() == [ECHO]
    assert call(one, "GET", "/echo/v1/ping").get_json() == {"pong": "yes"}
    assert call(two, "GET", "/echo/v1/ping").get_json() == {"pong": "yes"}
    assert second.hooks.apply_filters("tests_echo_marker", []) == ["echo"]
    assert "echo/v1" in call(two, "GET", "/").get_json()["namespaces"]

    # A third worker started later loads it from the store on its first request.
    third = with_fakes(app_factory(application_passwords="on"))
    assert call(Client(third), "GET", "/echo/v1/ping").status_code == 200

    call(two, "PATCH", f"/site/v2/plugins/{ECHO}", headers, {"status": "inactive"})
    assert call(one, "GET", "/echo/v1/ping").status_code == 404
    assert call(two, "GET", "/echo/v1/ping").status_code == 404
    assert first.hooks.apply_filters("tests_echo_marker", []) == []
    assert "echo/v1" not in call(one, "GET", "/").get_json()["namespaces"]


def test_plugins_are_for_administrators(app_factory: AppFactory) -> None:
    app = with_fakes(app_factory(application_passwords="on"))
    client = Client(app)
    author = admin_headers(app, "author")
    for method, path, code in (
        ("GET", "/site/v2/plugins", "rest_cannot_view_plugins"),
        ("GET", f"/site/v2/plugins/{ECHO}", "rest_cannot_view_plugin"),
        ("POST", f"/site/v2/plugins/{ECHO}", "rest_cannot_manage_plugins"),
        ("GET", "/site/v2/block-directory/search?term=echo", "rest_block_directory_cannot_view"),
    ):
        body = {"status": "active"} if method == "POST" else None
        anonymous = call(client, method, path, None, body)
        assert (anonymous.status_code, anonymous.get_json()["code"]) == (401, code), path
        refused = call(client, method, path, author, body)
        assert (refused.status_code, refused.get_json()["code"]) == (403, code), path
    assert app.plugins.stored_active() == []


def test_a_broken_plugin_is_reported_and_the_site_keeps_serving(app_factory: AppFactory) -> None:
    app = with_fakes(app_factory(application_passwords="on"))
    client = Client(app)
    headers = admin_headers(app)
    failed = call(client, "POST", f"/site/v2/plugins/{BROKEN}", headers, {"status": "active"})
    assert failed.status_code == 500
    assert failed.get_json()["code"] == "rest_plugin_activation_failed"
    assert "the broken plugin cannot start" in failed.get_json()["message"]
    assert app.plugins.stored_active() == []
    assert app.hooks.apply_filters("tests_echo_marker", []) == []  # its hook was removed

    # Stored as active elsewhere (e.g. a node where it loaded): reported here as an error.
    call(client, "POST", f"/site/v2/plugins/{ECHO}", headers, {"status": "active"})
    with app.auth.store.transaction() as connection:
        connection.execute(
            "UPDATE options SET value = ? WHERE name = 'plugins:active'",
            (json.dumps([BROKEN, ECHO]),),
        )
    item = call(client, "GET", f"/site/v2/plugins/{BROKEN}", headers).get_json()
    assert item["status"] == "error"
    assert "RuntimeError: the broken plugin cannot start" in item["error"]
    assert call(client, "GET", "/echo/v1/ping").status_code == 200
    assert call(client, "GET", "/site/v2/posts").status_code == 200
    assert client.get("/").status_code == 200


def test_installing_and_deleting_point_to_pip(app_factory: AppFactory) -> None:
    app = with_fakes(app_factory(application_passwords="on"))
    client = Client(app)
    headers = admin_headers(app)
    for method, path, body in (
        ("DELETE", f"/site/v2/plugins/{ECHO}", None),
        ("POST", "/site/v2/plugins", {"slug": "akismet"}),
    ):
        answer = call(client, method, path, headers, body)
        assert (answer.status_code, answer.get_json()["code"]) == (
            400,
            "rest_cannot_manage_plugins",
        )
        assert "pip" in answer.get_json()["message"]
    missing = call(client, "GET", "/site/v2/plugins/no-such/plugin", headers)
    assert (missing.status_code, missing.get_json()["code"]) == (404, "rest_plugin_not_found")


def test_listing_filters_by_status_and_search(app_factory: AppFactory) -> None:
    app = with_fakes(app_factory(application_passwords="on"))
    client = Client(app)
    headers = admin_headers(app)
    call(client, "POST", f"/site/v2/plugins/{ECHO}", headers, {"status": "active"})
    active = call(client, "GET", "/site/v2/plugins?status=active", headers).get_json()
    assert [item["plugin"] for item in active] == [ECHO]
    found = call(client, "GET", "/site/v2/plugins?search=BROKEN", headers).get_json()
    assert [item["plugin"] for item in found] == [BROKEN]


def test_the_block_directory_searches_inactive_plugins(app_factory: AppFactory) -> None:
    app = with_fakes(app_factory(application_passwords="on"))
    client = Client(app)
    headers = admin_headers(app)
    path = "/site/v2/block-directory/search?term=test plugin"
    assert {item["name"] for item in call(client, "GET", path, headers).get_json()} == {
        ECHO,
        BROKEN,
    }
    call(client, "POST", f"/site/v2/plugins/{ECHO}", headers, {"status": "active"})
    assert [item["name"] for item in call(client, "GET", path, headers).get_json()] == [BROKEN]
    missing = call(client, "GET", "/site/v2/block-directory/search", headers)
    assert (missing.status_code, missing.get_json()["code"]) == (400, "rest_missing_callback_param")


def test_a_store_that_cannot_be_read_keeps_the_loaded_plugins(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = with_fakes(app_factory(application_passwords="on"))
    client = Client(app)
    call(client, "POST", f"/site/v2/plugins/{ECHO}", admin_headers(app), {"status": "active"})

    def broken() -> Any:
        raise OSError("disk gone")

    monkeypatch.setattr(app.auth.store, "connection", broken)
    app.plugins.sync(force=True)
    app.themes.sync()
    assert call(client, "GET", "/echo/v1/ping").get_json() == {"pong": "yes"}


# ---------------------------------------------------------------------- plugins that change
# routes other code registered, and plugins the configuration already loads
EXTENDER = "tests-extender/extender"


def extender_plugin(app: Any) -> None:
    """A plugin that adds a method to a core route and replaces another core route."""

    def shout(request: RestRequest) -> dict[str, str]:
        return {"shout": "extended"}

    def replaced(request: RestRequest) -> dict[str, str]:
        return {"replaced": "yes"}

    def routes(server: RestServer) -> None:
        server.register_rest_route(
            "site/v2",
            "/types",
            {"methods": "POST", "callback": shout, "permission_callback": return_true},
        )
        server.register_rest_route(
            "site/v2",
            "/statuses",
            {"methods": "GET", "callback": replaced, "permission_callback": return_true},
            override=True,
        )

    app.hooks.add_action("rest_api_init", routes)


def test_deactivating_a_plugin_takes_back_only_what_it_changed(app_factory: AppFactory) -> None:
    app = app_factory(application_passwords="on")
    app.plugins.discover = lambda: [fake(EXTENDER, extender_plugin)]
    app.plugins.sync_interval = 0
    client = Client(app)
    headers = admin_headers(app)
    types_before = call(client, "GET", "/site/v2/types").get_json()
    statuses_before = call(client, "GET", "/site/v2/statuses").get_json()
    assert call(client, "POST", "/site/v2/types").status_code == 404  # no POST handler yet

    call(client, "POST", f"/site/v2/plugins/{EXTENDER}", headers, {"status": "active"})
    assert call(client, "POST", "/site/v2/types").get_json() == {"shout": "extended"}
    assert (
        call(client, "GET", "/site/v2/types").get_json() == types_before
    )  # extended, not replaced
    assert call(client, "GET", "/site/v2/statuses").get_json() == {"replaced": "yes"}

    call(client, "POST", f"/site/v2/plugins/{EXTENDER}", headers, {"status": "inactive"})
    assert call(client, "POST", "/site/v2/types").status_code == 404
    assert call(client, "GET", "/site/v2/types").get_json() == types_before
    assert (
        call(client, "GET", "/site/v2/statuses").get_json() == statuses_before
    )  # the original back
    assert "site/v2" in call(client, "GET", "/").get_json()["namespaces"]


def test_a_plugin_the_configuration_loads_is_never_loaded_twice(app_factory: AppFactory) -> None:
    spec = f"{__name__}:echo_plugin"
    app = app_factory(application_passwords="on", plugins=[spec])
    module, _, attribute = spec.partition(":")
    point = EntryPoint(name="echo", value=f"{module} : {attribute}", group=ENTRY_POINT_GROUP)
    installed = replace(fake(ECHO, echo_plugin), loader=None, entry_point=point)
    app.plugins.discover = lambda: [installed]
    app.plugins.sync_interval = 0
    client = Client(app)
    headers = admin_headers(app)
    assert app.hooks.apply_filters("tests_echo_marker", []) == ["echo"]
    listed = call(client, "GET", f"/site/v2/plugins/{ECHO}", headers).get_json()
    assert listed["status"] == "active"  # running since start, whatever the store says

    activated = call(client, "POST", f"/site/v2/plugins/{ECHO}", headers, {"status": "active"})
    assert (activated.status_code, activated.get_json()["status"]) == (200, "active")
    assert app.hooks.apply_filters("tests_echo_marker", []) == ["echo"]  # not a second time
    assert call(client, "GET", "/echo/v1/ping").get_json() == {"pong": "yes"}

    refused = call(client, "POST", f"/site/v2/plugins/{ECHO}", headers, {"status": "inactive"})
    assert (refused.status_code, refused.get_json()["code"]) == (400, "rest_plugin_configured")
    assert "configuration" in refused.get_json()["message"]
    assert call(client, "GET", "/echo/v1/ping").get_json() == {"pong": "yes"}
    assert app.plugins.stored_active() == [ECHO]


def test_a_failed_activation_leaves_the_plugin_inactive_in_every_process(
    app_factory: AppFactory,
) -> None:
    tried = with_fakes(app_factory(application_passwords="on"))
    other = with_fakes(app_factory(application_passwords="on"))
    headers = admin_headers(tried)
    here, there = Client(tried), Client(other)
    failed = call(here, "POST", f"/site/v2/plugins/{BROKEN}", headers, {"status": "active"})
    assert failed.status_code == 500
    assert tried.plugins.stored_active() == []
    for client in (here, there):
        item = call(client, "GET", f"/site/v2/plugins/{BROKEN}", headers).get_json()
        assert (item["status"], item["error"]) == ("inactive", "")
        listed = call(client, "GET", "/site/v2/plugins?status=inactive", headers).get_json()
        assert BROKEN in [entry["plugin"] for entry in listed]
    # Stored as active (by another node), it is an error where it fails to load, in each process.
    with tried.auth.store.transaction() as connection:
        connection.execute(
            "INSERT INTO options (name, value) VALUES ('plugins:active', ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (json.dumps([BROKEN]),),
        )
    for client in (here, there):
        item = call(client, "GET", f"/site/v2/plugins/{BROKEN}", headers).get_json()
        assert item["status"] == "error"
        assert "RuntimeError: the broken plugin cannot start" in item["error"]

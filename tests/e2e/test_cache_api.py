"""The ``site-cache/v1`` API end to end: a real gunicorn (2 workers), real credentials.

Application passwords and a cookie session with its nonce on every route; 401 and 403 on every
route; a settings change seen by every worker within a second; a preload that grows, is a
no-op when started twice, stops on cancel, resumes after a restart and fills the cache.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.e2e.server import LiveServer, Response
from tests.e2e.test_auth import basic, cli, log_in

PLUGINS = ["tests.e2e.cache_plugin:activate"]
SERVER_CONFIG = ['site_url = "http://127.0.0.1"']
BASE = "/site-json/site-cache/v1"
PAGES = 300

ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/settings", None),
    ("POST", "/settings", {"max_age": 3600}),
    ("GET", "/status", None),
    ("GET", "/stats", None),
    ("GET", "/cache", None),
    ("POST", "/cache", {"url": "/nothing-here"}),
    ("POST", "/preload", {"enable": False}),
    ("POST", "/cache/test", {}),
    ("GET", "/plugins", None),
    ("POST", "/plugins", {"awaiting_moderation": False}),
]


@pytest.fixture(scope="module")
def credentials(live_server: LiveServer) -> dict[str, dict[str, str]]:
    """Basic headers of an administrator's and a subscriber's application passwords."""
    found: dict[str, dict[str, str]] = {}
    for login, role in (("ada", "administrator"), ("sam", "subscriber")):
        cli(live_server, "user", "create", login, "--role", role, "--password", f"{login}-pw-1")
        output = cli(live_server, "app-password", "create", login, "--name", "e2e cache")
        match = re.search(r"password: ((?:\w{4} ){5}\w{4})", output)
        assert match is not None, output
        found[role] = basic(login, match.group(1))
    return found


def call(
    live_server: LiveServer,
    method: str,
    route: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Response:
    sent = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body)
        sent["Content-Type"] = "application/json"
    return live_server.request(method, BASE + route, data, sent)


def until(condition: Callable[[], Any], timeout: float, message: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(message)


@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
def test_every_route_answers_an_administrators_application_password(
    live_server: LiveServer,
    credentials: dict[str, dict[str, str]],
    method: str,
    route: str,
    body: Any,
) -> None:
    response = call(live_server, method, route, body, credentials["administrator"])
    assert response.status == 200, response.body
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
def test_every_route_refuses_a_subscriber_with_403_and_nobody_with_401(
    live_server: LiveServer,
    credentials: dict[str, dict[str, str]],
    method: str,
    route: str,
    body: Any,
) -> None:
    subscriber = call(live_server, method, route, body, credentials["subscriber"])
    assert (subscriber.status, subscriber.json()["code"]) == (403, "rest_forbidden")  # type: ignore[index]
    nobody = call(live_server, method, route, body)
    assert (nobody.status, nobody.json()["code"]) == (401, "rest_forbidden")  # type: ignore[index]


@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
def test_every_route_answers_a_cookie_session_with_its_nonce(
    live_server: LiveServer,
    credentials: dict[str, dict[str, str]],
    method: str,
    route: str,
    body: Any,
) -> None:
    cookie = log_in(live_server, "ada", "ada-pw-1")
    nonce = live_server.request("GET", "/site-admin/rest-nonce", headers={"Cookie": cookie})
    headers = {"Cookie": cookie, "X-Site-Nonce": nonce.body.decode()}
    response = call(live_server, method, route, body, headers)
    assert response.status == 200, response.body


def test_a_rest_client_discovers_the_namespace_from_the_site_url(live_server: LiveServer) -> None:
    home = live_server.request("GET", "/")
    link = re.search(r"<([^>]+)>; rel=\"https://api.w.org/\"", home.headers["link"])
    assert link is not None
    root = link.group(1).replace("http://127.0.0.1", "")
    index = live_server.request("GET", root).json()
    assert "site-cache/v1" in index["namespaces"]  # type: ignore[index]
    routes = index["routes"]  # type: ignore[index]
    for route in ("settings", "status", "stats", "cache", "preload", "cache/test", "plugins"):
        assert f"/site-cache/v1/{route}" in routes
    # Plain paths only: no regular expression a client would have to interpret.
    ours = [route for route in routes if route.startswith("/site-cache/v1")]
    assert len(ours) == 8
    assert all(re.fullmatch(r"[a-z0-9/-]+", route) for route in ours), ours
    for route in ours[1:]:
        endpoints = routes[route]["endpoints"]
        assert all(endpoint["args"] == {} for endpoint in endpoints)


def test_bad_bodies_are_400_with_details(
    live_server: LiveServer, credentials: dict[str, dict[str, str]]
) -> None:
    admin = credentials["administrator"]
    response = call(live_server, "POST", "/settings", {"max_age": -1, "storage": "x"}, admin)
    assert response.status == 400
    assert set(response.json()["data"]["details"]) == {"max_age", "storage"}  # type: ignore[index]
    response = call(live_server, "POST", "/cache", {"url": "http://evil.example/"}, admin)
    assert response.status == 400
    response = call(live_server, "GET", "/cache?per_page=500", None, admin)
    assert response.status == 400


def test_a_settings_change_is_seen_by_every_worker_within_a_second(
    live_server: LiveServer, credentials: dict[str, dict[str, str]]
) -> None:
    admin = credentials["administrator"]
    for _ in range(6):  # both workers have read the settings once
        live_server.request("GET", "/")
    assert call(live_server, "POST", "/settings", {"enabled": False}, admin).status == 200
    time.sleep(1.1)
    statuses = [live_server.request("GET", "/").headers["cache-status"] for _ in range(20)]
    assert all("detail=disabled" in status for status in statuses), statuses
    assert call(live_server, "POST", "/settings", {"enabled": True}, admin).status == 200
    time.sleep(1.1)
    statuses = [live_server.request("GET", "/").headers["cache-status"] for _ in range(20)]
    assert not any("detail=disabled" in status for status in statuses), statuses


def progress(live_server: LiveServer, admin: dict[str, str]) -> dict[str, Any]:
    status = call(live_server, "GET", "/status", None, admin).json()
    return dict(status["preload"])  # type: ignore[index]


def test_preload_grows_is_started_once_cancels_resumes_after_a_restart_and_fills_the_cache(
    live_server: LiveServer, credentials: dict[str, dict[str, str]]
) -> None:
    admin = credentials["administrator"]
    call(live_server, "POST", "/cache", {"all": True}, admin)
    started = call(live_server, "POST", "/preload", {"enable": True}, admin).json()
    assert started["running"] is True  # type: ignore[index]
    assert started["total"] == PAGES + 1  # type: ignore[index]
    again = call(live_server, "POST", "/preload", {"enable": True}, admin).json()
    assert again["started"] == started["started"]  # type: ignore[index]
    first = until(lambda: progress(live_server, admin)["done"] or None, 10, "no progress")
    until(lambda: progress(live_server, admin)["done"] > first, 10, "progress does not grow")

    cancelled = call(live_server, "POST", "/preload", {"enable": False}, admin).json()
    assert cancelled["running"] is False  # type: ignore[index]
    time.sleep(0.5)
    stopped = progress(live_server, admin)
    assert stopped["running"] is False
    assert stopped["done"] < stopped["total"]
    time.sleep(0.5)
    assert progress(live_server, admin)["done"] == stopped["done"]
    assert call(live_server, "POST", "/preload", {"enable": False}, admin).status == 200

    # A new preload, interrupted by a restart of the whole server, resumes where it stopped.
    restarted = call(live_server, "POST", "/preload", {"enable": True}, admin).json()
    until(lambda: progress(live_server, admin)["done"] >= 30, 20, "the preload did not start")
    live_server.stop()
    live_server.start()
    before = progress(live_server, admin)
    assert before["started"] == restarted["started"]  # type: ignore[index]
    assert before["done"] >= 30
    progress_after_restart = until(
        lambda: (lambda p: p if not p["running"] and p["done"] == p["total"] else None)(
            progress(live_server, admin)
        ),
        60,
        "the preload did not resume and finish after the restart",
    )
    assert progress_after_restart["started"] == restarted["started"]  # type: ignore[index]
    assert progress_after_restart["failed"] == 0

    listing = call(live_server, "GET", "/cache?per_page=1", None, admin)
    assert listing.headers["x-site-total"] == str(PAGES + 1)
    # The preload fetched the site_url's host (no port): ask for the same one.
    page = live_server.request("GET", "/e2e-page/299", headers={"Host": "127.0.0.1"})
    assert "; hit" in page.headers["cache-status"]


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[LiveServer, LiveServer, dict[str, str]]]:
    """Two gunicorn servers (two workers each) sharing one Redis namespace; an administrator's
    application password valid on both (each node has its own user database)."""
    redis_or_skip()
    namespace = f"e2e-api-{uuid.uuid4().hex[:12]}"
    config = [
        f"plugins = {json.dumps(PLUGINS)}",
        'cache_backend = "redis"',
        f'redis_url = "{REDIS_URL}"',
        f'cache_namespace = "{namespace}"',
    ]
    nodes = [
        LiveServer(data_dir=tmp_path / name / "var", config_lines=list(config))
        for name in ("one", "two")
    ]
    headers: dict[str, str] = {}
    try:
        for index, node in enumerate(nodes):
            node.start()
            cli(node, "user", "create", "ada", "--role", "administrator", "--password", "ada-pw-1")
            output = cli(node, "app-password", "create", "ada", "--name", "node")
            match = re.search(r"password: ((?:\w{4} ){5}\w{4})", output)
            assert match is not None, output
            headers[f"node{index}"] = basic("ada", match.group(1))["Authorization"]
        yield nodes[0], nodes[1], headers
    finally:
        for node in nodes:
            node.stop()
        from sitecache.cache.storage.redis import RedisStorage

        RedisStorage(REDIS_URL, namespace).clear_namespace()


def test_a_second_node_on_the_same_redis_sees_settings_and_the_one_preload(
    two_nodes: tuple[LiveServer, LiveServer, dict[str, str]],
) -> None:
    one, two, auth = two_nodes
    admin_one = {"Authorization": auth["node0"]}
    admin_two = {"Authorization": auth["node1"]}
    local = {"Host": "localhost"}
    assert call(one, "POST", "/settings", {"enabled": False}, admin_one).status == 200
    time.sleep(1.1)
    statuses = [two.request("GET", "/", headers=local).headers["cache-status"] for _ in range(10)]
    assert all("detail=disabled" in status for status in statuses), statuses
    assert call(two, "GET", "/settings", None, admin_two).json()["enabled"] is False  # type: ignore[index]
    assert call(two, "POST", "/settings", {"enabled": True}, admin_two).status == 200

    started = call(one, "POST", "/preload", {"enable": True}, admin_one).json()
    assert started["running"] is True  # type: ignore[index]
    elsewhere = call(two, "POST", "/preload", {"enable": True}, admin_two).json()
    assert elsewhere["started"] == started["started"]  # type: ignore[index]
    cancelled = call(two, "POST", "/preload", {"enable": False}, admin_two).json()
    assert cancelled["running"] is False  # type: ignore[index]
    time.sleep(0.5)
    assert progress(one, admin_one)["running"] is False

"""The API index's encoded body is kept while nothing that shapes it changes (#18).

A kept body is answered only for the same settings, host, scheme, routes, ``context``,
``_pretty`` and ``authentication`` entry, and only while no plugin filter could change it; the
headers are still built for each request and caller.
"""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

import sitecache.rest.http as rest_http
from sitecache.app import App
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from sitecache.rest.index_body import BODY_FILTERS
from tests.rest.support import body_of


@pytest.fixture
def encodings(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every value the REST server encodes as a response body, in order."""
    seen: list[Any] = []
    encode = rest_http.encode_json

    def counting(data: Any, pretty: bool = False) -> str:
        seen.append(data)
        return encode(data, pretty)

    monkeypatch.setattr(rest_http, "encode_json", counting)
    return seen


def index_encodings(encodings: list[Any]) -> int:
    return sum(1 for data in encodings if isinstance(data, dict) and "routes" in data)


def register_widgets(server: RestServer) -> None:
    server.register_rest_route(
        "widgets/v1",
        "/widgets",
        {"methods": "GET", "callback": lambda r: [], "permission_callback": return_true},
    )


def test_the_index_is_encoded_once_for_repeated_requests(
    client: Client, encodings: list[Any]
) -> None:
    first = client.get("/site-json/")
    second = client.get("/site-json/")
    assert second.get_data() == first.get_data()
    assert list(second.headers) == list(first.headers)
    assert index_encodings(encodings) == 1


def test_a_new_route_gives_a_new_body(app: App, client: Client, encodings: list[Any]) -> None:
    client.get("/site-json/")
    app.server.register_rest_route(
        "widgets/v1",
        "/gadgets",
        {"methods": "GET", "callback": lambda r: [], "permission_callback": return_true},
    )
    assert "/widgets/v1/gadgets" in body_of(client.get("/site-json/"))["routes"]
    assert index_encodings(encodings) == 2


@pytest.mark.parametrize("name", BODY_FILTERS)
def test_a_filter_that_could_change_the_body_turns_the_kept_body_off(
    app: App, client: Client, encodings: list[Any], name: str
) -> None:
    client.get("/site-json/")
    app.hooks.add_filter(name, lambda value, *args: value)
    client.get("/site-json/")
    client.get("/site-json/")
    assert index_encodings(encodings) == 3


def test_removing_the_filter_again_lets_the_body_be_kept(
    app: App, client: Client, encodings: list[Any]
) -> None:
    def mark(data: Any, server: RestServer, request: RestRequest) -> Any:
        return {**data, "marked": True}

    assert "marked" not in body_of(client.get("/site-json/"))
    app.hooks.add_filter("rest_pre_echo_response", mark)
    assert body_of(client.get("/site-json/"))["marked"] is True
    app.hooks.remove_filter("rest_pre_echo_response", mark)
    assert "marked" not in body_of(client.get("/site-json/"))
    assert "marked" not in body_of(client.get("/site-json/"))
    assert index_encodings(encodings) == 3


def test_host_scheme_context_and_pretty_each_have_their_own_body(
    app_factory: Any, encodings: list[Any]
) -> None:
    app = app_factory(site_url=None)
    app.hooks.add_action("rest_api_init", register_widgets)
    client = Client(app)
    variants = [
        ("/site-json/", "http://one.example"),
        ("/site-json/", "http://two.example"),
        ("/site-json/", "https://one.example"),
        ("/site-json/?context=edit", "http://one.example"),
        ("/site-json/?_pretty=1", "http://one.example"),
    ]
    bodies = [client.get(path, base_url=base).get_data() for path, base in variants]
    again = [client.get(path, base_url=base).get_data() for path, base in variants]
    assert again == bodies
    assert index_encodings(encodings) == len(variants)
    assert b"http://two.example/site-json/widgets/v1/widgets" in bodies[1]
    assert b"https://one.example/site-json/widgets/v1/widgets" in bodies[2]
    assert bodies[4].startswith(b"{\n    ")


def test_the_help_context_fields_and_embed_are_built_every_time(
    client: Client, encodings: list[Any]
) -> None:
    for path in ("/site-json/?context=help", "/site-json/?_fields=name", "/site-json/?_embed"):
        client.get(path)
        client.get(path)
    assert index_encodings(encodings) == 4  # _fields=name leaves no routes to count


def test_each_client_gets_its_own_authentication_entry(client: Client) -> None:
    loopback = body_of(client.get("/site-json/", environ_base={"REMOTE_ADDR": "127.0.0.1"}))
    remote = body_of(client.get("/site-json/", environ_base={"REMOTE_ADDR": "203.0.113.9"}))
    again = body_of(client.get("/site-json/", environ_base={"REMOTE_ADDR": "127.0.0.1"}))
    assert "application-passwords" in loopback["authentication"]
    assert remote["authentication"] == {}
    assert again == loopback


def test_an_authentication_entry_for_one_user_never_reaches_another(
    app: App, client: Client
) -> None:
    def per_caller(value: Any, request: RestRequest) -> Any:
        return {**value, "caller": request.get_header("x_caller")}

    app.hooks.add_filter("rest_authentication_index", per_caller)
    for caller in ("alice", "bob", "alice", "bob"):
        answer = body_of(client.get("/site-json/", headers={"X-Caller": caller}))
        assert answer["authentication"]["caller"] == caller


def test_headers_are_still_built_for_each_caller(app: App, client: Client) -> None:
    admin = app.auth.users.create("admin", "admin-password-1", role="administrator")
    password, _ = app.auth.app_passwords.create(admin, "test")
    anonymous = client.get("/site-json/", environ_base={"REMOTE_ADDR": "127.0.0.1"})
    logged_in = client.get(
        "/site-json/",
        auth=("admin", password),
        headers={"Origin": "http://elsewhere.example"},
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert logged_in.get_data() == anonymous.get_data()
    assert anonymous.headers["Vary"] == "Origin"
    assert "Cache-Control" not in anonymous.headers
    assert logged_in.headers["Cache-Control"].startswith("no-cache")
    assert logged_in.headers["Access-Control-Allow-Origin"] == "http://elsewhere.example"
    assert logged_in.headers["Allow"] == anonymous.headers["Allow"] == "GET"


def test_a_jsonp_index_wraps_the_kept_body(client: Client, encodings: list[Any]) -> None:
    plain = client.get("/site-json/").get_data()
    wrapped = client.get("/site-json/?_jsonp=show").get_data()
    assert wrapped == b"/**/show(" + plain + b")"
    assert index_encodings(encodings) == 1


def test_an_index_changed_by_a_rest_index_filter_is_never_kept(app: App, client: Client) -> None:
    calls: list[int] = []

    def count(response: RestResponse, request: RestRequest) -> RestResponse:
        calls.append(1)
        response.get_data()["calls"] = len(calls)
        return response

    app.hooks.add_filter("rest_index", count)
    assert [body_of(client.get("/site-json/"))["calls"] for _ in range(3)] == [1, 2, 3]

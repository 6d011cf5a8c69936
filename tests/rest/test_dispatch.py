"""Serving REST requests through the WSGI application, end to end in-process.

Rules from WordPress's addressing, behaviours common to all routes, authorization
statuses), §7 (errors) and WordPress's REST server, with the product decisions:
permission callbacks pass only on exactly ``True``, empty JSON objects are ``{}``, and an
unexpected exception is a generic 500 whose details go to the log only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import (
    Authentication,
    RequestContext,
    RestRequest,
    RestResponse,
    RestServer,
)
from tests.conftest import AppFactory
from tests.rest.support import FakeUser, echo, public
from tests.rest.support import body_of as json_of

NS = "test-ns"
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
NO_ROUTE = {
    "code": "rest_no_route",
    "message": "No route was found matching the URL and request method.",
    "data": {"status": 404},
}
API_ROOT_REL = "https://api.w.org/"
SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "thing",
    "type": "object",
    "properties": {"id": {"type": "integer", "context": ["view"]}},
}


# ---------------------------------------------------------------------- helpers
class FakeAuthenticator:
    """Authenticates every request as ``user``."""

    def __init__(self, user: FakeUser) -> None:
        self.user = user

    def authenticate(self, request: RestRequest) -> Authentication:
        return Authentication(user=self.user, method="test")


def log_in(app: App, user: FakeUser | None = None) -> None:
    """Make every REST request of ``app`` come from a logged-in user."""
    app.server.add_authenticator(FakeAuthenticator(user or FakeUser(id=1, login="admin")))


def register_route(app: App, route: str, args: Any, **options: Any) -> None:
    """Register one ``test-ns`` route during ``rest_api_init``."""

    def register(server: RestServer) -> None:
        server.register_rest_route(NS, route, args, **options)

    app.hooks.add_action("rest_api_init", register)


def counting(calls: list[RestRequest], result: Any = None) -> Callable[[RestRequest], Any]:
    """A handler that records each call and returns ``result`` (default: ``{"ok": True}``)."""

    def handler(request: RestRequest) -> Any:
        calls.append(request)
        return {"ok": True} if result is None else result

    return handler


@pytest.fixture
def echo_route(app: App) -> None:
    """``/test-ns/echo`` answering every method with what the handler saw."""
    register_route(app, "/echo", public(ALL_METHODS))


# ---------------------------------------------------------------------- URL forms
@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize(
    "path",
    [
        "/site-json/test-ns/echo",
        "/index.php/site-json/test-ns/echo",
        "/index.php?rest_route=/test-ns/echo",
        "/?rest_route=/test-ns/echo",
    ],
)
def test_every_url_form_reaches_the_same_route(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert json_of(response)["route"] == "/test-ns/echo"


@pytest.mark.parametrize(
    "path",
    [
        "/site-json",
        "/site-json/",
        "/index.php/site-json",
        "/index.php/site-json/",
        "/?rest_route=/",
        "/index.php?rest_route=/",
    ],
)
def test_an_empty_route_is_the_api_index(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 200
    body = json_of(response)
    assert "/" in body["routes"]
    assert "namespaces" in body


@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize(
    "path",
    [
        "/site-json/test-ns/echo/",
        "/site-json/test-ns/echo///",
        "/index.php/site-json/test-ns/echo/",
        "/?rest_route=/test-ns/echo/",
        "/?rest_route=/test-ns/echo%5C",
        "/?rest_route=/test-ns/echo/%5C/",
    ],
)
def test_trailing_slashes_are_removed_before_dispatch(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert json_of(response)["route"] == "/test-ns/echo"


@pytest.mark.usefixtures("echo_route")
def test_a_rest_route_in_a_post_form_body_is_honoured(client: Client) -> None:
    # WordPress's REST server: rest_route is read from POST, then GET, then the rewrite.
    response = client.post("/", data={"rest_route": "/test-ns/echo"})

    assert response.status_code == 200
    assert json_of(response)["route"] == "/test-ns/echo"


def test_different_rest_routes_in_the_form_body_and_query_are_a_400(client: Client) -> None:
    # WordPress refuses a query variable given twice with different values.
    response = client.post("/?rest_route=/test-ns/other", data={"rest_route": "/test-ns/echo"})

    assert response.status_code == 400
    assert json_of(response) == {
        "code": "rest_route_mismatch",
        "message": "A variable mismatch has been detected.",
        "data": {"status": 400},
    }


@pytest.mark.parametrize("path", ["/?rest_route=", "/index.php?rest_route="])
def test_an_empty_rest_route_query_is_not_a_rest_request(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert response.content_type.startswith("text/html")


@pytest.mark.parametrize(
    "path",
    ["/?rest_route[]=x", "/index.php?rest_route[a]=x", "/site-json/test-ns/echo?rest_route[]=x"],
)
@pytest.mark.parametrize(
    "headers",
    [{"Accept": "application/json"}, {"Accept": "text/html, application/json;q=0.9"}],
)
def test_a_rest_route_that_is_not_a_string_is_400_rest_path_invalid_type(
    app: App, client: Client, path: str, headers: dict[str, str]
) -> None:
    # rest_api_loaded: wp_die(WP_Error) before REST_REQUEST; JSON clients get _json_wp_die_handler.
    initialized: list[object] = []
    app.hooks.add_action("rest_api_init", initialized.append)

    response = client.get(path, headers=headers)

    assert response.status_code == 400
    assert response.content_type == "application/json; charset=utf-8"
    assert json_of(response) == {
        "code": "rest_path_invalid_type",
        "message": "The REST route parameter must be a string.",
        "data": {"status": 400},
        "additional_errors": [],
    }
    assert response.headers["Cache-Control"] == (
        "no-cache, must-revalidate, max-age=0, no-store, private"
    )
    assert "X-Robots-Tag" not in response.headers
    assert "Link" not in response.headers
    assert initialized == []


def test_a_rest_route_array_from_a_browser_is_an_html_400_page(client: Client) -> None:
    response = client.get("/?rest_route[]=x", headers={"Accept": "text/html"})

    assert response.status_code == 400
    assert response.content_type == "text/html; charset=utf-8"
    assert "<p>The REST route parameter must be a string.</p>" in response.get_data(as_text=True)
    assert "no-store" in response.headers["Cache-Control"]


def test_a_json_content_type_also_makes_a_json_client(client: Client) -> None:
    response = client.post("/?rest_route[]=x", data="{}", content_type="application/json")

    assert response.status_code == 400
    assert json_of(response)["code"] == "rest_path_invalid_type"


def test_the_url_prefix_can_be_changed(app_factory: AppFactory) -> None:
    app = app_factory(rest_prefix="api")
    register_route(app, "/echo", public())
    client = Client(app)

    response = client.get("/api/test-ns/echo")

    assert response.status_code == 200
    assert json_of(response)["route"] == "/test-ns/echo"
    assert response.headers["Link"] == f'<http://example.org/api/>; rel="{API_ROOT_REL}"'
    assert not client.get("/site-json/test-ns/echo").content_type.startswith("application/json")


def test_plain_permalinks_make_rest_urls_use_the_rest_route_query(
    app_factory: AppFactory,
) -> None:
    app = app_factory(permalink_structure="")
    register_route(app, "/echo", public())

    response = Client(app).get("/index.php?rest_route=/")

    assert response.status_code == 200
    assert response.headers["Link"] == (
        f'<http://example.org/index.php?rest_route=/>; rel="{API_ROOT_REL}"'
    )
    routes = json_of(response)["routes"]
    assert routes["/test-ns/echo"]["_links"] == {
        "self": [{"href": "http://example.org/index.php?rest_route=/test-ns/echo"}]
    }


def test_plain_permalinks_leave_rest_route_out_of_the_parameters(
    app_factory: AppFactory,
) -> None:
    app = app_factory(permalink_structure="")
    register_route(app, "/echo", public())

    response = Client(app).get("/index.php?rest_route=/test-ns/echo&a=1")

    assert json_of(response)["params"] == {"a": "1"}


def test_plain_permalinks_keep_rest_route_among_the_query_parameters(
    app_factory: AppFactory,
) -> None:
    # WP_REST_Request (6.8): get_params drops rest_route; get_query_params keeps $_GET whole.
    app = app_factory(permalink_structure="")

    def both(request: RestRequest) -> dict[str, Any]:
        return {"query": request.get_query_params(), "params": request.get_params()}

    register_route(app, "/both", public(callback=both))

    response = Client(app).get("/index.php?rest_route=/test-ns/both&a=1")

    assert json_of(response) == {
        "query": {"rest_route": "/test-ns/both", "a": "1"},
        "params": {"a": "1"},
    }


def test_pretty_permalinks_keep_rest_route_among_every_parameter(client: Client, app: App) -> None:
    register_route(app, "/echo", public())

    response = client.get("/?rest_route=/test-ns/echo&a=1")

    assert json_of(response)["params"] == {"rest_route": "/test-ns/echo", "a": "1"}


@pytest.mark.parametrize(
    "query",
    ["=5&a=1", "a=1&=5", "[]=5&a=1", "[x]=5&a=1", "%20=5&a=1", "a=1&=&=x"],
)
def test_a_query_parameter_without_a_name_is_dropped(client: Client, app: App, query: str) -> None:
    # PHP's parse_str and $_GET skip a variable whose name is empty.
    register_route(app, "/echo", public())

    response = client.get(f"/site-json/test-ns/echo?{query}")

    assert json_of(response)["params"] == {"a": "1"}


def test_a_form_field_without_a_name_is_dropped(client: Client, app: App) -> None:
    register_route(app, "/echo", public("POST"))

    response = client.post("/site-json/test-ns/echo", data={"": "5", "a": "1"})

    assert json_of(response)["params"] == {"a": "1"}


def test_index_permalinks_put_index_php_before_the_prefix(app_factory: AppFactory) -> None:
    app = app_factory(permalink_structure="/index.php/%postname%/")

    response = Client(app).get("/index.php/site-json/")

    assert response.status_code == 200
    assert response.headers["Link"] == (
        f'<http://example.org/index.php/site-json/>; rel="{API_ROOT_REL}"'
    )


@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize("path", ["/site-json/test-ns/echo", "/site-json/nowhere"])
def test_every_rest_response_carries_the_fixed_headers(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Link"] == f'<http://example.org/site-json/>; rel="{API_ROOT_REL}"'
    assert response.headers["Access-Control-Expose-Headers"] == (
        "X-Site-Total, X-Site-TotalPages, Link"
    )
    assert "X-Site-Nonce" in response.headers["Access-Control-Allow-Headers"].split(", ")


# ---------------------------------------------------------------------- rest_url
@pytest.mark.parametrize(
    ("site_url", "base_url", "api_root"),
    [
        pytest.param(
            "http://example.org", "http://example.org", "http://example.org/site-json/", id="http"
        ),
        pytest.param(
            "https://example.org",
            "http://example.org",
            "https://example.org/site-json/",
            id="https-site-url",
        ),
        pytest.param(
            "http://example.org",
            "https://example.org",
            "https://example.org/site-json/",
            id="https-request-same-host",
        ),
        pytest.param(
            "http://example.org",
            "https://other.example",
            "https://example.org/site-json/",
            id="https-request-other-host",
        ),
    ],
)
def test_rest_urls_use_https_for_an_https_site_or_an_https_request(
    app_factory: AppFactory, site_url: str, base_url: str, api_root: str
) -> None:
    app = app_factory(site_url=site_url)
    register_route(app, "/echo", public())

    response = Client(app).get("/site-json/", base_url=base_url)

    assert response.headers["Link"] == f'<{api_root}>; rel="{API_ROOT_REL}"'
    routes = json_of(response)["routes"]
    assert routes["/test-ns/echo"]["_links"]["self"] == [{"href": f"{api_root}test-ns/echo"}]


@pytest.mark.parametrize(
    ("force_ssl_admin", "is_admin", "scheme"),
    [(True, True, "https"), (True, False, "http"), (False, True, "http")],
)
def test_force_ssl_admin_makes_rest_urls_https_in_the_admin_area(
    app_factory: AppFactory, force_ssl_admin: bool, is_admin: bool, scheme: str
) -> None:
    app = app_factory(force_ssl_admin=force_ssl_admin)
    context = RequestContext(
        host_url="http://example.org", is_https=False, server_name="example.org", is_admin=is_admin
    )
    token = app.server.using_context(context)
    try:
        url = app.server.rest_url("/test-ns/echo")
    finally:
        app.server.reset_context(token)

    assert url == f"{scheme}://example.org/site-json/test-ns/echo"


@pytest.mark.parametrize(
    ("overrides", "path", "url"),
    [
        ({}, "", "http://example.org/site-json/"),
        ({}, "/", "http://example.org/site-json/"),
        ({}, "test-ns/echo", "http://example.org/site-json/test-ns/echo"),
        ({}, "/test-ns/echo/", "http://example.org/site-json/test-ns/echo/"),
        ({"rest_prefix": "api"}, "/x", "http://example.org/api/x"),
        ({"permalink_structure": ""}, "", "http://example.org/index.php?rest_route=/"),
        (
            {"permalink_structure": ""},
            "/test-ns/echo",
            "http://example.org/index.php?rest_route=/test-ns/echo",
        ),
        (
            {"permalink_structure": "/index.php/%year%/%postname%/"},
            "test-ns/echo",
            "http://example.org/index.php/site-json/test-ns/echo",
        ),
    ],
)
def test_rest_url_builds_the_url_of_a_path_for_the_permalink_setting(
    app_factory: AppFactory, overrides: dict[str, Any], path: str, url: str
) -> None:
    assert app_factory(**overrides).server.rest_url(path) == url


# ---------------------------------------------------------------------- no route
@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize(
    "path",
    [
        "/site-json/test-ns/nothing",
        "/site-json/other-ns/echo",
        "/site-json/nothing",
        "/?rest_route=/x",
    ],
)
def test_an_unknown_route_is_404_rest_no_route_without_allow(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 404
    assert json_of(response) == NO_ROUTE
    assert "Allow" not in response.headers


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_an_unsupported_method_on_a_known_route_is_404_never_405(
    app: App, client: Client, method: str
) -> None:
    register_route(app, "/read-only", public("GET"))

    response = client.open("/site-json/test-ns/read-only", method=method)

    assert response.status_code == 404
    assert json_of(response) == NO_ROUTE
    assert "Allow" not in response.headers


# ---------------------------------------------------------------------- permissions
@pytest.mark.parametrize(
    ("outcome", "allowed"),
    [
        pytest.param(True, True, id="true"),
        pytest.param(False, False, id="false"),
        pytest.param(None, False, id="none"),
        pytest.param("yes", False, id="truthy-string"),
        pytest.param(1, False, id="one"),
        pytest.param([True], False, id="list"),
        pytest.param({"allowed": True}, False, id="dict"),
    ],
)
@pytest.mark.parametrize(("logged_in", "denied_status"), [(False, 401), (True, 403)])
def test_a_permission_callback_allows_only_on_exactly_true(
    app: App, client: Client, outcome: Any, allowed: bool, logged_in: bool, denied_status: int
) -> None:
    calls: list[RestRequest] = []
    register_route(
        app,
        "/guarded",
        {"methods": "GET", "callback": counting(calls), "permission_callback": lambda r: outcome},
    )
    if logged_in:
        log_in(app)

    response = client.get("/site-json/test-ns/guarded")

    if allowed:
        assert response.status_code == 200
        assert json_of(response) == {"ok": True}
        assert len(calls) == 1
    else:
        assert response.status_code == denied_status
        assert json_of(response) == {
            "code": "rest_forbidden",
            "message": "Sorry, you are not allowed to do that.",
            "data": {"status": denied_status},
        }
        assert calls == []


def test_a_permission_error_is_returned_as_is_with_its_status(app: App, client: Client) -> None:
    calls: list[RestRequest] = []
    error = RestError("custom_denied", "Custom denial.", {"status": 418, "reason": "teapot"})
    register_route(
        app,
        "/guarded",
        {"methods": "GET", "callback": counting(calls), "permission_callback": lambda r: error},
    )

    response = client.get("/site-json/test-ns/guarded")

    assert response.status_code == 418
    assert json_of(response) == {
        "code": "custom_denied",
        "message": "Custom denial.",
        "data": {"status": 418, "reason": "teapot"},
    }
    assert calls == []


def test_a_permission_error_without_status_answers_500(app: App, client: Client) -> None:
    register_route(
        app,
        "/guarded",
        public(permission_callback=lambda r: RestError("no_status", "No status here.")),
    )

    response = client.get("/site-json/test-ns/guarded")

    assert response.status_code == 500
    assert json_of(response) == {"code": "no_status", "message": "No status here.", "data": None}


def test_the_permission_callback_sees_the_request_and_its_parameters(
    app: App, client: Client
) -> None:
    register_route(
        app, "/token", public(permission_callback=lambda r: r.get_param("token") == "open")
    )

    assert client.get("/site-json/test-ns/token?token=open").status_code == 200
    assert client.get("/site-json/test-ns/token?token=shut").status_code == 401


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("", 400, "rest_missing_callback_param"),
        ("?count=abc", 400, "rest_invalid_param"),
        ("?count=0", 400, "rest_invalid_param"),
        ("?count=3", 401, "rest_forbidden"),
    ],
)
def test_parameter_errors_win_over_permission_errors(
    app: App, client: Client, query: str, status: int, code: str
) -> None:
    register_route(
        app,
        "/guarded",
        {
            "methods": "GET",
            "callback": echo,
            "permission_callback": lambda r: False,
            "args": {"count": {"type": "integer", "minimum": 1, "required": True}},
        },
    )

    response = client.get(f"/site-json/test-ns/guarded{query}")

    assert response.status_code == status
    assert json_of(response)["code"] == code


def test_invalid_json_on_a_forbidden_route_is_400(app: App, client: Client) -> None:
    register_route(app, "/guarded", public("POST", permission_callback=lambda r: False))

    response = client.post(
        "/site-json/test-ns/guarded", data="{oops", content_type="application/json"
    )

    assert response.status_code == 400
    assert json_of(response)["code"] == "rest_invalid_json"


def test_invalid_json_for_an_unknown_route_is_404_first(client: Client) -> None:
    response = client.post(
        "/site-json/test-ns/nowhere", data="{oops", content_type="application/json"
    )

    assert response.status_code == 404
    assert json_of(response) == NO_ROUTE


def test_a_validate_callback_returning_false_is_written_with_empty_details_object(
    app: App, client: Client
) -> None:
    register_route(
        app, "/checked", public(args={"a": {"validate_callback": lambda v, r, k: False}})
    )

    response = client.get("/site-json/test-ns/checked?a=1")

    assert response.status_code == 400
    assert json_of(response) == {
        "code": "rest_invalid_param",
        "message": "Invalid parameter(s): a",
        "data": {"status": 400, "params": {"a": "Invalid parameter."}, "details": {}},
    }
    assert b'"details":{}' in response.get_data()


def test_argument_defaults_fill_absent_parameters_except_null_defaults(
    app: App, client: Client
) -> None:
    args = {
        "flag": {"default": False},
        "zero": {"default": 0},
        "empty": {"default": ""},
        "nothing": {"default": None},
        "given": {"default": "default"},
    }
    register_route(app, "/defaults", public(args=args))

    params = json_of(client.get("/site-json/test-ns/defaults?given=query"))["params"]

    assert params == {"flag": False, "zero": 0, "empty": "", "given": "query"}


def test_a_default_satisfies_a_required_argument(app: App, client: Client) -> None:
    register_route(app, "/defaults", public(args={"a": {"required": True, "default": "d"}}))

    response = client.get("/site-json/test-ns/defaults")

    assert response.status_code == 200
    assert json_of(response)["params"] == {"a": "d"}


@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize(
    ("method", "body", "content_type", "expected"),
    [
        pytest.param("POST", '{"key": "json"}', "application/json", "json", id="post-json"),
        pytest.param("GET", '{"key": "json"}', "application/json", "json", id="get-json"),
        pytest.param("PUT", '{"key": "json"}', "application/vnd.api+json", "json", id="put-json"),
        pytest.param(
            "POST", "key=form", "application/x-www-form-urlencoded", "form", id="post-form"
        ),
        pytest.param(
            "PATCH", "key=form", "application/x-www-form-urlencoded", "form", id="patch-form"
        ),
        pytest.param(
            "DELETE", "key=form", "application/x-www-form-urlencoded", "form", id="delete-form"
        ),
        pytest.param(
            "GET", "key=form", "application/x-www-form-urlencoded", "query", id="get-form-ignored"
        ),
        pytest.param("POST", '{"key": "json"}', "text/plain", "query", id="post-text-ignored"),
    ],
)
def test_body_parameters_beat_the_query_string_over_http(
    client: Client, method: str, body: str, content_type: str, expected: str
) -> None:
    response = client.open(
        "/site-json/test-ns/echo?key=query", method=method, data=body, content_type=content_type
    )

    assert response.status_code == 200
    assert json_of(response)["params"]["key"] == expected


# ---------------------------------------------------------------------- handler results
@pytest.mark.parametrize(
    "data",
    [
        {"plain": "data", "nested": {"list": [1, 2.5, None, True]}},
        [1, "two", {"three": 3}],
        "just a string",
        0,
        False,
        [],
    ],
)
def test_plain_data_from_a_handler_is_sent_as_json_with_200(
    app: App, client: Client, data: Any
) -> None:
    register_route(app, "/data", public(callback=lambda request: data))

    response = client.get("/site-json/test-ns/data")

    assert response.status_code == 200
    assert json_of(response) == data


def test_an_empty_dict_from_a_handler_is_written_as_an_empty_object(
    app: App, client: Client
) -> None:
    register_route(app, "/empty", public(callback=lambda request: {}))

    response = client.get("/site-json/test-ns/empty")

    assert response.get_data() == b"{}"


def test_a_rest_response_sets_the_status_and_headers(app: App, client: Client) -> None:
    register_route(
        app,
        "/created",
        public(
            "POST",
            callback=lambda request: RestResponse(
                {"created": True}, 201, {"X-Custom": "yes", "Location": "http://example.org/x/1"}
            ),
        ),
    )

    response = client.post("/site-json/test-ns/created")

    assert response.status_code == 201
    assert json_of(response) == {"created": True}
    assert response.headers["X-Custom"] == "yes"
    assert response.headers["Location"] == "http://example.org/x/1"


def test_a_response_header_replaces_the_default_of_the_same_name(app: App, client: Client) -> None:
    link = '<http://example.org/site-json/test-ns/paged?page=2>; rel="next"'
    register_route(
        app, "/paged", public(callback=lambda request: RestResponse([], 200, {"Link": link}))
    )

    response = client.get("/site-json/test-ns/paged")

    assert response.headers.getlist("Link") == [link]


@pytest.mark.parametrize("how", ["returned", "raised"])
def test_a_rest_error_from_a_handler_answers_with_its_status_and_body(
    app: App, client: Client, how: str
) -> None:
    error = RestError("item_conflict", "The item changed.", {"status": 409, "id": 7})

    def handler(request: RestRequest) -> Any:
        if how == "raised":
            raise error
        return error

    register_route(app, "/conflict", public(callback=handler))

    response = client.get("/site-json/test-ns/conflict")

    assert response.status_code == 409
    assert json_of(response) == {
        "code": "item_conflict",
        "message": "The item changed.",
        "data": {"status": 409, "id": 7},
    }


def test_a_numeric_string_status_of_an_error_is_used_as_the_http_status(
    app: App, client: Client
) -> None:
    register_route(
        app, "/conflict", public(callback=lambda r: RestError("c", "C.", {"status": "409"}))
    )

    response = client.get("/site-json/test-ns/conflict")

    assert response.status_code == 409
    assert json_of(response)["data"] == {"status": "409"}


@pytest.mark.parametrize("how", ["returned", "raised"])
def test_a_rest_error_without_status_from_a_handler_answers_500(
    app: App, client: Client, how: str
) -> None:
    error = RestError("no_status", "Something failed.")

    def handler(request: RestRequest) -> Any:
        if how == "raised":
            raise error
        return error

    register_route(app, "/failing", public(callback=handler))

    response = client.get("/site-json/test-ns/failing")

    assert response.status_code == 500
    assert json_of(response) == {"code": "no_status", "message": "Something failed.", "data": None}


@pytest.mark.parametrize(
    "result",
    [None, RestResponse(), RestResponse(None, 200)],
    ids=["none", "empty-response", "none-data-response"],
)
def test_a_handler_without_data_gives_an_empty_200_body(
    app: App, client: Client, result: Any
) -> None:
    register_route(app, "/nothing", public(callback=lambda request: result))

    response = client.get("/site-json/test-ns/nothing")

    assert response.status_code == 200
    assert response.get_data() == b""


def test_a_204_response_has_no_body_even_with_data(app: App, client: Client) -> None:
    register_route(
        app, "/deleted", public("DELETE", callback=lambda r: RestResponse({"gone": True}, 204))
    )

    response = client.delete("/site-json/test-ns/deleted")

    assert response.status_code == 204
    assert response.get_data() == b""


def test_an_unexpected_exception_is_a_generic_500_with_details_only_in_the_log(
    app: App, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    def crash(request: RestRequest) -> Any:
        raise RuntimeError("secret internal detail")

    register_route(app, "/crash", public(callback=crash))

    with caplog.at_level(logging.ERROR):
        response = client.get("/site-json/test-ns/crash")

    assert response.status_code == 500
    body = json_of(response)
    assert body["code"] == "internal_server_error"
    assert body["data"] == {"status": 500}
    assert isinstance(body["message"], str)
    assert b"secret internal detail" not in response.get_data()
    assert b"RuntimeError" not in response.get_data()
    assert "secret internal detail" in caplog.text


def test_an_exception_in_a_permission_callback_is_a_generic_500(app: App, client: Client) -> None:
    def explode(request: RestRequest) -> bool:
        raise ValueError("permission internals")

    register_route(app, "/crash", public(permission_callback=explode))

    response = client.get("/site-json/test-ns/crash")

    assert response.status_code == 500
    assert json_of(response)["code"] == "internal_server_error"
    assert b"permission internals" not in response.get_data()


# ---------------------------------------------------------------------- HEAD
def test_head_is_served_by_the_get_handler_without_a_body(app: App, client: Client) -> None:
    calls: list[RestRequest] = []
    register_route(app, "/readable", public("GET", callback=counting(calls)))

    response = client.head("/site-json/test-ns/readable")

    assert response.status_code == 200
    assert response.get_data() == b""
    assert len(calls) == 1
    assert calls[0].get_method() == "HEAD"
    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert response.headers["Allow"] == "GET"


def test_head_on_a_route_without_a_get_handler_is_404(app: App, client: Client) -> None:
    register_route(app, "/writable", public("POST"))

    response = client.head("/site-json/test-ns/writable")

    assert response.status_code == 404
    assert response.get_data() == b""


@pytest.mark.parametrize(
    ("head_first", "served_by"), [(True, "head-handler"), (False, "get-handler")]
)
def test_an_explicit_head_handler_wins_only_when_registered_before_get(
    app: App, client: Client, head_first: bool, served_by: str
) -> None:
    seen: list[str] = []
    head = public("HEAD", callback=lambda request: seen.append("head-handler"))
    get = public("GET", callback=lambda request: seen.append("get-handler"))
    register_route(app, "/both", [head, get] if head_first else [get, head])

    client.head("/site-json/test-ns/both")

    assert seen == [served_by]


# ---------------------------------------------------------------------- method override
@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize(
    ("http_method", "query", "headers", "dispatched"),
    [
        pytest.param("GET", "?_method=POST", {}, "POST", id="query-on-get"),
        pytest.param("GET", "?_method=delete", {}, "DELETE", id="query-lowercase"),
        pytest.param("POST", "?_method=PUT", {}, "PUT", id="query-on-post"),
        pytest.param("POST", "", {"X-HTTP-Method-Override": "PATCH"}, "PATCH", id="header-on-post"),
        pytest.param("GET", "", {"X-HTTP-Method-Override": "delete"}, "DELETE", id="header-lower"),
        pytest.param(
            "POST",
            "?_method=PUT",
            {"X-HTTP-Method-Override": "DELETE"},
            "PUT",
            id="query-beats-header",
        ),
    ],
)
def test_the_method_can_be_overridden_by_query_or_header(
    client: Client, http_method: str, query: str, headers: dict[str, str], dispatched: str
) -> None:
    response = client.open(f"/site-json/test-ns/echo{query}", method=http_method, headers=headers)

    assert response.status_code == 200
    body = json_of(response)
    assert body["method"] == dispatched
    if "_method" in query:
        assert "_method" in body["params"]


@pytest.mark.usefixtures("echo_route")
@pytest.mark.parametrize(
    ("query", "headers"),
    [("?_method=OPTIONS", {}), ("", {"X-HTTP-Method-Override": "OPTIONS"})],
)
def test_overriding_the_method_to_options_returns_the_route_data(
    client: Client, query: str, headers: dict[str, str]
) -> None:
    response = client.get(f"/site-json/test-ns/echo{query}", headers=headers)

    assert response.status_code == 200
    body = json_of(response)
    assert body["namespace"] == NS
    assert body["methods"] == ALL_METHODS


def test_an_override_header_ending_in_4xx_sends_no_cache_headers(app: App, client: Client) -> None:
    register_route(app, "/read-only", public("GET"))

    by_header = client.get(
        "/site-json/test-ns/read-only", headers={"X-HTTP-Method-Override": "DELETE"}
    )
    by_query = client.get("/site-json/test-ns/read-only?_method=DELETE")

    assert by_header.status_code == by_query.status_code == 404
    assert by_header.headers["Cache-Control"] == (
        "no-cache, must-revalidate, max-age=0, no-store, private"
    )
    assert by_header.headers["Expires"] == "Wed, 11 Jan 1984 05:00:00 GMT"
    assert "no-store" not in by_query.headers.get("Cache-Control", "")


# ---------------------------------------------------------------------- the API index
@pytest.fixture
def two_namespaces(app: App) -> None:
    """``test-ns`` (an echo route and a route with a schema) and ``other-ns``."""

    def register(server: RestServer) -> None:
        server.register_rest_route(NS, "/echo", public())
        server.register_rest_route("other-ns", "/thing", public(), schema=lambda: SCHEMA)
        server.register_rest_route(NS, r"/items/(?P<id>\d+)", public())

    app.hooks.add_action("rest_api_init", register)


@pytest.mark.usefixtures("two_namespaces")
def test_the_index_describes_the_site_its_namespaces_and_routes(app: App, client: Client) -> None:
    response = client.get("/site-json/")

    assert response.status_code == 200
    body = json_of(response)
    expected_order = [
        "name",
        "description",
        "url",
        "home",
        "gmt_offset",
        "timezone_string",
        "namespaces",
        "authentication",
        "routes",
    ]
    assert [key for key in body if key in expected_order] == expected_order
    assert list(body)[-1] == "_links"
    assert body["url"] == "http://example.org"
    assert body["home"] == "http://example.org"
    assert [name for name in body["namespaces"] if name in (NS, "other-ns")] == [NS, "other-ns"]
    assert isinstance(body["authentication"], dict)
    assert list(body["routes"])[:2] == ["/", "/batch/v1"]
    assert set(body["routes"]) >= {
        "/",
        "/batch/v1",
        "/test-ns",
        "/test-ns/echo",
        "/other-ns",
        "/other-ns/thing",
        r"/test-ns/items/(?P<id>\d+)",
    }
    assert body["_links"]["help"] == [{"href": app.config.help_url}]
    assert response.headers["Allow"] == "GET"


@pytest.mark.usefixtures("two_namespaces")
def test_the_index_shows_route_schemas_only_in_the_help_context(client: Client) -> None:
    view = json_of(client.get("/site-json/"))["routes"]
    help_ = json_of(client.get("/site-json/?context=help"))["routes"]

    assert "schema" not in view["/other-ns/thing"]
    assert help_["/other-ns/thing"]["schema"] == SCHEMA
    assert "schema" not in help_["/test-ns/echo"]


@pytest.mark.usefixtures("two_namespaces")
def test_route_data_lists_namespace_methods_endpoints_and_a_self_link(client: Client) -> None:
    routes = json_of(client.get("/site-json/"))["routes"]

    assert routes["/test-ns/echo"] == {
        "namespace": NS,
        "methods": ["GET"],
        "endpoints": [{"methods": ["GET"], "args": {}}],
        "_links": {"self": [{"href": "http://example.org/site-json/test-ns/echo"}]},
    }
    assert routes["/"]["namespace"] == ""
    assert "_links" not in routes[r"/test-ns/items/(?P<id>\d+)"]


# ---------------------------------------------------------------------- namespace index
@pytest.mark.usefixtures("two_namespaces")
def test_the_namespace_index_lists_its_routes_and_links_up(client: Client) -> None:
    response = client.get("/site-json/test-ns")

    assert response.status_code == 200
    body = json_of(response)
    assert body["namespace"] == NS
    assert list(body["routes"]) == ["/test-ns", "/test-ns/echo", r"/test-ns/items/(?P<id>\d+)"]
    assert body["_links"] == {"up": [{"href": "http://example.org/site-json/"}]}


@pytest.mark.usefixtures("two_namespaces")
def test_the_namespace_parameter_selects_another_namespaces_index(client: Client) -> None:
    body = json_of(client.get("/site-json/test-ns?namespace=other-ns"))

    assert body["namespace"] == "other-ns"
    assert list(body["routes"]) == ["/other-ns", "/other-ns/thing"]


@pytest.mark.usefixtures("two_namespaces")
def test_the_namespace_index_shows_schemas_in_the_help_context(client: Client) -> None:
    view = json_of(client.get("/site-json/other-ns"))["routes"]["/other-ns/thing"]
    help_ = json_of(client.get("/site-json/other-ns?context=help"))["routes"]["/other-ns/thing"]

    assert "schema" not in view
    assert help_["schema"] == SCHEMA


@pytest.mark.usefixtures("two_namespaces")
def test_an_unknown_namespace_parameter_is_404_rest_invalid_namespace(client: Client) -> None:
    response = client.get("/site-json/test-ns?namespace=missing-ns")

    assert response.status_code == 404
    assert json_of(response) == {
        "code": "rest_invalid_namespace",
        "message": "The specified namespace could not be found.",
        "data": {"status": 404},
    }


@pytest.mark.usefixtures("two_namespaces")
def test_an_unregistered_namespace_path_is_rest_no_route(client: Client) -> None:
    response = client.get("/site-json/missing-ns")

    assert response.status_code == 404
    assert json_of(response) == NO_ROUTE


# ---------------------------------------------------------------------- OPTIONS
def test_options_returns_the_route_data_with_argument_descriptions(
    app: App, client: Client
) -> None:
    register_route(
        app,
        "/thing",
        [
            public(
                "GET",
                args={
                    "name": {
                        "type": "string",
                        "description": "A name.",
                        "required": True,
                        "validate_callback": lambda v, r, k: True,
                        "sanitize_callback": lambda v, r, k: v,
                        "not_a_schema_keyword": 1,
                    },
                    "page": {"type": "integer", "default": 1, "minimum": 1},
                },
            ),
            public(["POST", "PUT"]),
        ],
        schema=lambda: SCHEMA,
    )

    response = client.options("/site-json/test-ns/thing")

    assert response.status_code == 200
    assert json_of(response) == {
        "namespace": NS,
        "methods": ["GET", "POST", "PUT"],
        "endpoints": [
            {
                "methods": ["GET"],
                "args": {
                    "name": {"type": "string", "description": "A name.", "required": True},
                    "page": {"type": "integer", "default": 1, "minimum": 1, "required": False},
                },
            },
            {"methods": ["POST", "PUT"], "args": {}},
        ],
        "schema": SCHEMA,
        "_links": {"self": [{"href": "http://example.org/site-json/test-ns/thing"}]},
    }


@pytest.mark.usefixtures("echo_route")
def test_options_shows_no_schema_for_a_route_without_one(client: Client) -> None:
    body = json_of(client.options("/site-json/test-ns/echo"))

    assert "schema" not in body
    assert body["endpoints"] == [{"methods": ALL_METHODS, "args": {}}]


def test_options_runs_no_permission_check_validation_or_handler(app: App, client: Client) -> None:
    calls: list[RestRequest] = []
    register_route(
        app,
        "/guarded",
        {
            "methods": "GET",
            "callback": counting(calls),
            "permission_callback": lambda r: False,
            "args": {"needed": {"type": "integer", "required": True}},
        },
    )

    response = client.options("/site-json/test-ns/guarded?needed=abc")

    assert response.status_code == 200
    assert json_of(response)["methods"] == ["GET"]
    assert calls == []


def test_options_carries_an_allow_header_of_the_permitted_methods(app: App, client: Client) -> None:
    register_route(
        app,
        "/mixed",
        [public("GET"), {"methods": "POST", "callback": echo, "permission_callback": lambda r: 1}],
    )

    response = client.options("/site-json/test-ns/mixed")

    assert response.headers["Allow"] == "GET"


def test_options_on_an_unknown_route_is_200_with_an_empty_object(client: Client) -> None:
    response = client.options("/site-json/test-ns/nowhere")

    assert response.status_code == 200
    assert response.get_data() == b"{}"
    assert "Allow" not in response.headers


def test_options_matches_a_regex_route(app: App, client: Client) -> None:
    register_route(app, r"/items/(?P<id>\d+)", public())

    response = client.options("/site-json/test-ns/items/5")

    assert response.status_code == 200
    assert json_of(response)["namespace"] == NS


# ---------------------------------------------------------------------- batch
BATCH = "/site-json/batch/v1"


@pytest.fixture
def batch_calls(app: App) -> list[RestRequest]:
    """``/test-ns/batchable`` (POST, opted in, a required integer ``count``) and its calls."""
    calls: list[RestRequest] = []

    def handler(request: RestRequest) -> dict[str, Any]:
        calls.append(request)
        return {"count": request.get_param("count"), "tag": request.get_param("tag")}

    register_route(
        app,
        "/batchable",
        public(
            ["POST", "PUT", "DELETE"],
            callback=handler,
            args={"count": {"type": "integer", "required": True}},
        ),
        allow_batch={"v1": True},
    )
    return calls


def test_batch_runs_each_request_and_answers_207_multi_status(
    client: Client, batch_calls: list[RestRequest]
) -> None:
    response = client.post(
        BATCH,
        json={
            "requests": [
                {"path": "/test-ns/batchable", "body": {"count": 1}},
                {"method": "PUT", "path": "/test-ns/batchable", "body": {"count": "2"}},
            ]
        },
    )

    assert response.status_code == 207
    assert json_of(response) == {
        "responses": [
            {
                "body": {"count": 1, "tag": None},
                "status": 200,
                "headers": {"Allow": "POST, PUT, DELETE"},
            },
            {
                "body": {"count": 2, "tag": None},
                "status": 200,
                "headers": {"Allow": "POST, PUT, DELETE"},
            },
        ]
    }
    assert [request.get_method() for request in batch_calls] == ["POST", "PUT"]


def test_a_batch_path_query_string_becomes_query_params(
    client: Client, batch_calls: list[RestRequest]
) -> None:
    response = client.post(BATCH, json={"requests": [{"path": "/test-ns/batchable?tag=x&count=5"}]})

    assert json_of(response)["responses"][0]["body"] == {"count": 5, "tag": "x"}
    assert batch_calls[0].get_route() == "/test-ns/batchable"


def test_a_failing_request_does_not_stop_the_rest_of_a_normal_batch(
    client: Client, batch_calls: list[RestRequest]
) -> None:
    response = client.post(
        BATCH,
        json={
            "requests": [
                {"path": "/test-ns/batchable", "body": {"count": "abc"}},
                {"path": "/test-ns/nowhere"},
                {"path": "/test-ns/batchable", "body": {"count": 3}},
            ]
        },
    )

    assert response.status_code == 207
    responses = json_of(response)["responses"]
    assert [entry["status"] for entry in responses] == [400, 404, 200]
    assert responses[0]["body"]["code"] == "rest_invalid_param"
    assert responses[1]["body"] == NO_ROUTE
    assert responses[2]["body"] == {"count": 3, "tag": None}
    assert len(batch_calls) == 1


def test_require_all_validate_stops_everything_when_one_request_is_invalid(
    client: Client, batch_calls: list[RestRequest]
) -> None:
    response = client.post(
        BATCH,
        json={
            "validation": "require-all-validate",
            "requests": [
                {"path": "/test-ns/batchable", "body": {"count": 1}},
                {"path": "/test-ns/batchable"},
            ],
        },
    )

    assert response.status_code == 207
    assert json_of(response) == {
        "failed": "validation",
        "responses": [
            None,
            {
                "body": {
                    "code": "rest_missing_callback_param",
                    "message": "Missing parameter(s): count",
                    "data": {"status": 400, "params": ["count"]},
                },
                "status": 400,
                "headers": {},
            },
        ],
    }
    assert b'"headers":{}' in response.get_data()
    assert batch_calls == []


def test_require_all_validate_runs_every_request_when_all_are_valid(
    client: Client, batch_calls: list[RestRequest]
) -> None:
    response = client.post(
        BATCH,
        json={
            "validation": "require-all-validate",
            "requests": [
                {"path": "/test-ns/batchable", "body": {"count": 1}},
                {"path": "/test-ns/batchable", "body": {"count": 2}},
            ],
        },
    )

    assert response.status_code == 207
    assert "failed" not in json_of(response)
    assert len(batch_calls) == 2


@pytest.mark.parametrize(
    ("route_option", "handler_option", "allowed"),
    [
        pytest.param({"v1": True}, None, True, id="route-opts-in"),
        pytest.param(None, {"v1": True}, True, id="handler-opts-in"),
        pytest.param({"v1": True}, {"v1": False}, False, id="handler-opts-out"),
        pytest.param({"v1": True}, False, False, id="handler-false"),
        pytest.param(None, None, False, id="no-opt-in"),
        pytest.param({"v1": False}, None, False, id="v1-false"),
        pytest.param({"v2": True}, None, False, id="other-version"),
        pytest.param(True, None, False, id="bare-true-is-not-a-map"),
    ],
)
def test_batch_accepts_only_routes_that_opted_in_for_v1(
    app: App, client: Client, route_option: Any, handler_option: Any, allowed: bool
) -> None:
    handler = public("POST", callback=lambda request: {"ran": True})
    if handler_option is not None:
        handler["allow_batch"] = handler_option
    options = {} if route_option is None else {"allow_batch": route_option}
    register_route(app, "/maybe", handler, **options)

    response = client.post(BATCH, json={"requests": [{"path": "/test-ns/maybe"}]})

    assert response.status_code == 207
    entry = json_of(response)["responses"][0]
    if allowed:
        assert entry["status"] == 200
        assert entry["body"] == {"ran": True}
    else:
        assert entry["status"] == 400
        assert entry["body"] == {
            "code": "rest_batch_not_allowed",
            "message": "The requested route does not support batch requests.",
            "data": {"status": 400},
        }


@pytest.mark.usefixtures("batch_calls")
@pytest.mark.parametrize(("size", "status"), [(25, 207), (26, 400)])
def test_a_batch_holds_at_most_25_requests(client: Client, size: int, status: int) -> None:
    requests = [{"path": "/test-ns/batchable", "body": {"count": 1}}] * size

    response = client.post(BATCH, json={"requests": requests})

    assert response.status_code == status
    if status == 400:
        body = json_of(response)
        assert body["code"] == "rest_invalid_param"
        assert body["data"]["params"] == {"requests": "requests must contain at most 25 items."}


@pytest.mark.usefixtures("batch_calls")
@pytest.mark.parametrize(
    ("payload", "code", "message"),
    [
        pytest.param(
            {}, "rest_missing_callback_param", "Missing parameter(s): requests", id="none"
        ),
        pytest.param(
            {"requests": [{"method": "GET", "path": "/test-ns/batchable"}]},
            "rest_invalid_param",
            "requests[0][method] is not one of POST, PUT, PATCH, and DELETE.",
            id="get-method",
        ),
        pytest.param(
            {"requests": [{"path": "/test-ns/batchable"}], "validation": "strict"},
            "rest_invalid_param",
            "validation is not one of require-all-validate and normal.",
            id="validation-mode",
        ),
    ],
)
def test_an_invalid_batch_is_a_400_for_the_whole_batch(
    client: Client, payload: dict[str, Any], code: str, message: str
) -> None:
    response = client.post(BATCH, json=payload)

    assert response.status_code == 400
    body = json_of(response)
    assert body["code"] == code
    if code == "rest_invalid_param":
        assert message in body["data"]["params"].values()
    else:
        assert body["message"] == message


@pytest.mark.parametrize(("logged_in", "status"), [(True, 200), (False, 401)])
def test_batch_requests_run_as_the_outer_requests_user(
    app: App, client: Client, logged_in: bool, status: int
) -> None:
    register_route(
        app,
        "/mine",
        {
            "methods": "POST",
            "callback": lambda request: {"login": request.user.login},
            "permission_callback": lambda request: request.user.id == 7,
        },
        allow_batch={"v1": True},
    )
    if logged_in:
        log_in(app, FakeUser(id=7, login="seven"))

    response = client.post(BATCH, json={"requests": [{"path": "/test-ns/mine"}]})

    entry = json_of(response)["responses"][0]
    assert entry["status"] == status
    if logged_in:
        assert entry["body"] == {"login": "seven"}


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_the_batch_route_answers_post_only(client: Client, method: str) -> None:
    response = client.open(BATCH, method=method)

    assert response.status_code == 404
    assert json_of(response) == NO_ROUTE


def test_the_batch_route_is_listed_first_after_the_index_with_its_arguments(
    client: Client,
) -> None:
    batch = json_of(client.get("/site-json/"))["routes"]["/batch/v1"]

    assert batch["methods"] == ["POST"]
    assert batch["endpoints"][0]["args"]["requests"]["required"] is True
    assert batch["endpoints"][0]["args"]["requests"]["maxItems"] == 25

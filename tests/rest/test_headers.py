"""Response headers of REST requests: fixed headers, Allow, CORS, no-cache and debug headers.

Rules come from WordPress's headers, CORS, debug headers, authorization and WordPress's REST server,
§5, §13 (Allow), §15 (CORS) and §20 (debug headers), with the product's renames
(``X-Site-*``) and decisions: only an exact ``True`` from a permission callback allows (also
for ``Allow``), and debug headers only for an application created with ``debug=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from tests.rest.support import HeaderLogin, body_of

AppFactory = Callable[..., App]
Register = Callable[[RestServer], None]

API_ROOT_LINK = '<http://example.org/site-json/>; rel="https://api.w.org/"'
EXPOSE_HEADERS = "X-Site-Total, X-Site-TotalPages, Link"
ALLOW_HEADERS = "Authorization, X-Site-Nonce, Content-Disposition, Content-MD5, Content-Type"
CORS_METHODS = "OPTIONS, GET, POST, PUT, PATCH, DELETE"
EXPIRES = "Wed, 11 Jan 1984 05:00:00 GMT"
CACHE_CONTROL = "no-cache, must-revalidate, max-age=0, no-store, private"
LAST_MODIFIED = "Tue, 01 Oct 2024 10:00:00 GMT"
DEBUG_HEADER_NAMES = ("X-Site-DeprecatedFunction", "X-Site-DeprecatedParam", "X-Site-DoingItWrong")


# ---------------------------------------------------------------------- helpers
def make_client(app: App, register: Register, headers: dict[str, str] | None = None) -> Client:
    """A client for ``app`` with ``register`` on ``rest_api_init`` and `HeaderLogin`."""
    app.hooks.add_action("rest_api_init", register)
    app.server.add_authenticator(HeaderLogin(headers or {}))
    return Client(app)


def handler(
    callback: Callable[[RestRequest], Any] | None = None,
    methods: str | list[str] = "GET",
    permission: Callable[[RestRequest], Any] | None = return_true,
    **extra: Any,
) -> dict[str, Any]:
    """A handler dict; ``permission=None`` leaves ``permission_callback`` out."""
    result: dict[str, Any] = {
        "methods": methods,
        "callback": callback or (lambda request: {"ok": True}),
        **extra,
    }
    if permission is not None:
        result["permission_callback"] = permission
    return result


def logged_in_only(request: RestRequest) -> bool:
    """Permission for logged-in users only."""
    return request.user.id != 0


def with_headers(headers: dict[str, str], status: int = 200) -> Callable[[RestRequest], Any]:
    """A callback answering ``{"ok": true}`` with these response headers."""
    return lambda request: RestResponse({"ok": True}, status, headers)


def crash(request: RestRequest) -> Any:
    raise RuntimeError("unexpected")


def register_basic(server: RestServer) -> None:
    server.register_rest_route(
        "hdr/v1",
        "/thing",
        [handler(), handler(methods="POST", permission=logged_in_only)],
    )
    server.register_rest_route(
        "hdr/v1",
        "/dated",
        handler(with_headers({"Last-Modified": LAST_MODIFIED}), ["GET", "POST"]),
    )
    server.register_rest_route(
        "hdr/v1",
        "/dated-error",
        handler(with_headers({"Last-Modified": LAST_MODIFIED}, 409), ["GET", "POST"]),
    )
    server.register_rest_route("hdr/v1", "/crash", handler(crash))
    server.register_rest_route(
        "hdr/v1",
        "/count",
        handler(
            args={"count": {"type": "integer", "required": True}},
            methods=["GET", "POST"],
        ),
    )


# ---------------------------------------------------------------------- fixed headers
FIXED_HEADER_REQUESTS = [
    pytest.param("GET", "/site-json/hdr/v1/thing", 200, id="success"),
    pytest.param("GET", "/site-json/", 200, id="index"),
    pytest.param("GET", "/index.php?rest_route=/hdr/v1/thing", 200, id="rest-route-form"),
    pytest.param("GET", "/site-json/hdr/v1/missing", 404, id="no-route"),
    pytest.param("POST", "/site-json/hdr/v1/thing", 401, id="forbidden"),
    pytest.param("GET", "/site-json/hdr/v1/count?count=x", 400, id="invalid-param"),
    pytest.param("OPTIONS", "/site-json/hdr/v1/thing", 200, id="options"),
    pytest.param("OPTIONS", "/site-json/nowhere", 200, id="options-unknown-route"),
    pytest.param("HEAD", "/site-json/hdr/v1/thing", 200, id="head"),
    pytest.param("GET", "/site-json/hdr/v1/crash", 500, id="handler-exception"),
]


@pytest.mark.parametrize(("method", "url", "status"), FIXED_HEADER_REQUESTS)
def test_every_rest_response_carries_the_fixed_headers(
    app: App, method: str, url: str, status: int
) -> None:
    client = make_client(app, register_basic)

    response = client.open(url, method=method)

    assert response.status_code == status
    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers.getlist("Link") == [API_ROOT_LINK]
    assert response.headers["Access-Control-Expose-Headers"] == EXPOSE_HEADERS
    assert response.headers["Access-Control-Allow-Headers"] == ALLOW_HEADERS


def test_the_api_root_link_follows_plain_permalinks(app_factory: AppFactory) -> None:
    client = make_client(app_factory(permalink_structure=""), register_basic)

    response = client.get("/index.php?rest_route=/hdr/v1/thing")

    assert response.status_code == 200
    assert response.headers["Link"] == (
        '<http://example.org/index.php?rest_route=/>; rel="https://api.w.org/"'
    )


JSONP_CASES = [
    pytest.param("_jsonp=callback", True, 200, id="valid-callback"),
    pytest.param("_jsonp=bad-callback", True, 400, id="invalid-callback"),
    pytest.param("_jsonp=", False, 200, id="empty-value-is-no-jsonp"),
]


@pytest.mark.parametrize(("query", "javascript", "status"), JSONP_CASES)
def test_jsonp_responses_are_served_as_javascript(
    app: App, query: str, javascript: bool, status: int
) -> None:
    client = make_client(app, register_basic)

    response = client.get(f"/site-json/hdr/v1/thing?{query}")

    assert response.status_code == status
    expected = "application/javascript" if javascript else "application/json"
    assert response.headers["Content-Type"] == f"{expected}; charset=UTF-8"


def test_disabled_jsonp_is_reported_as_json(app: App) -> None:
    client = make_client(app, register_basic)
    app.hooks.add_filter("rest_jsonp_enabled", lambda enabled: False)

    response = client.get("/site-json/hdr/v1/thing?_jsonp=callback")

    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json; charset=UTF-8"


@pytest.mark.parametrize("disabled", [False, True], ids=["invalid-callback", "jsonp-disabled"])
def test_an_early_jsonp_error_stops_before_cors_allow_and_nocache_headers(
    app: App, disabled: bool
) -> None:
    client = make_client(app, register_basic)
    if disabled:
        app.hooks.add_filter("rest_jsonp_enabled", lambda enabled: False)
    callback = "callback" if disabled else "bad-callback"

    response = client.get(
        f"/site-json/hdr/v1/thing?_jsonp={callback}",
        headers={"Origin": "https://app.example.com", "X-Test-Login": "1"},
    )

    assert response.status_code == 400
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Link"] == API_ROOT_LINK
    for name in (
        "Access-Control-Expose-Headers",
        "Access-Control-Allow-Headers",
        "Access-Control-Allow-Origin",
        "Access-Control-Allow-Credentials",
        "Allow",
        "Expires",
        "Vary",
    ):
        assert name not in response.headers


def test_a_route_setting_its_own_link_header_replaces_the_api_root_link(app: App) -> None:
    next_page = '<http://example.org/site-json/hdr/v1/list?page=2>; rel="next"'

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hdr/v1",
            "/list",
            handler(
                with_headers({"Link": next_page, "X-Site-Total": "12", "X-Site-TotalPages": "2"})
            ),
        )

    client = make_client(app, register)

    response = client.get("/site-json/hdr/v1/list")

    assert response.headers.getlist("Link") == [next_page]
    assert response.headers["X-Site-Total"] == "12"
    assert response.headers["X-Site-TotalPages"] == "2"


def test_response_headers_replace_the_defaults_of_the_same_name(app: App) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hdr/v1", "/robots", handler(with_headers({"x-robots-tag": "all"}))
        )

    client = make_client(app, register)

    response = client.get("/site-json/hdr/v1/robots")

    assert response.headers.getlist("X-Robots-Tag") == ["all"]


# ---------------------------------------------------------------------- Allow
PERMISSION_VERDICTS = [
    pytest.param(True, "GET, POST", id="true"),
    pytest.param(False, "GET", id="false"),
    pytest.param(None, "GET", id="none"),
    pytest.param(1, "GET", id="one"),
    pytest.param("yes", "GET", id="truthy-string"),
    pytest.param({"allowed": True}, "GET", id="mapping"),
    pytest.param(RestError("no", "No.", {"status": 403}), "GET", id="error"),
]


@pytest.mark.parametrize(("verdict", "allow"), PERMISSION_VERDICTS)
def test_allow_lists_a_method_only_when_its_permission_callback_returns_exactly_true(
    app: App, verdict: Any, allow: str
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hdr/v1",
            "/verdict",
            [handler(), handler(methods="POST", permission=lambda request: verdict)],
        )

    client = make_client(app, register)

    assert client.get("/site-json/hdr/v1/verdict").headers["Allow"] == allow


def test_allow_lists_methods_without_a_permission_callback_uppercase_in_first_seen_order(
    app: App,
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hdr/v1",
            "/open",
            [
                handler(methods="patch, get", permission=None),
                handler(methods=["delete"], permission=lambda request: False),
                handler(methods="post", permission=None),
            ],
        )

    client = make_client(app, register)

    assert client.get("/site-json/hdr/v1/open").headers["Allow"] == "PATCH, GET, POST"


def test_allow_depends_on_the_current_user(app: App) -> None:
    client = make_client(app, register_basic)

    anonymous = client.get("/site-json/hdr/v1/thing")
    logged_in = client.get("/site-json/hdr/v1/thing", headers={"X-Test-Login": "1"})

    assert anonymous.headers["Allow"] == "GET"
    assert logged_in.headers["Allow"] == "GET, POST"


ERROR_RESPONSES = [
    pytest.param("POST", "/site-json/hdr/v1/thing", 401, "GET", id="forbidden"),
    pytest.param("GET", "/site-json/hdr/v1/count?count=x", 400, "GET, POST", id="invalid-param"),
    pytest.param("GET", "/site-json/hdr/v1/count", 400, "GET, POST", id="missing-param"),
    pytest.param("GET", "/site-json/hdr/v1/dated-error", 409, "GET, POST", id="error-status"),
]


@pytest.mark.parametrize(("method", "url", "status", "allow"), ERROR_RESPONSES)
def test_allow_is_sent_on_error_responses_of_a_matched_route(
    app: App, method: str, url: str, status: int, allow: str
) -> None:
    client = make_client(app, register_basic)

    response = client.open(url, method=method)

    assert response.status_code == status
    assert response.headers["Allow"] == allow


NO_ALLOW_REQUESTS = [
    pytest.param("GET", "/site-json/hdr/v1/missing", 404, id="unknown-route"),
    pytest.param("DELETE", "/site-json/hdr/v1/thing", 404, id="method-not-registered"),
    pytest.param("OPTIONS", "/site-json/hdr/v1/missing", 200, id="options-on-unknown-route"),
]


@pytest.mark.parametrize(("method", "url", "status"), NO_ALLOW_REQUESTS)
def test_allow_is_absent_when_no_route_matched(
    app: App, method: str, url: str, status: int
) -> None:
    client = make_client(app, register_basic)

    response = client.open(url, method=method)

    assert response.status_code == status
    if status == 404:
        assert body_of(response)["code"] == "rest_no_route"
    assert "Allow" not in response.headers


def test_options_on_a_matched_route_carries_allow(app: App) -> None:
    client = make_client(app, register_basic)

    response = client.options("/site-json/hdr/v1/thing", headers={"X-Test-Login": "1"})

    assert response.headers["Allow"] == "GET, POST"


def test_head_gets_allow_without_adding_head(app: App) -> None:
    client = make_client(app, register_basic)

    response = client.head("/site-json/hdr/v1/thing")

    assert response.status_code == 200
    assert response.headers["Allow"] == "GET"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert response.get_data() == b""


LATER_HANDLER_CASES = [
    pytest.param(False, True, "GET", id="later-true-allows"),
    pytest.param(True, False, None, id="later-false-forbids"),
    pytest.param(True, "yes", None, id="later-truthy-forbids"),
]


@pytest.mark.parametrize(("first", "second", "allow"), LATER_HANDLER_CASES)
def test_a_later_handler_overrides_the_allow_verdict_for_the_same_method(
    app: App, first: Any, second: Any, allow: str | None
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hdr/v1",
            "/twice",
            [
                handler(permission=lambda request: first),
                handler(permission=lambda request: second),
            ],
        )

    client = make_client(app, register)

    response = client.get("/site-json/hdr/v1/twice")

    assert response.headers.get("Allow") == allow


# ---------------------------------------------------------------------- CORS
ORIGINS = [
    pytest.param("https://app.example.com", "https://app.example.com", id="echoed"),
    pytest.param("http://localhost:3000", "http://localhost:3000", id="echoed-with-port"),
    pytest.param("null", "null", id="null-kept"),
    pytest.param("javascript:alert(1)", "", id="javascript-sanitized-to-empty"),
]


@pytest.mark.parametrize(("origin", "allowed"), ORIGINS)
@pytest.mark.parametrize(
    ("method", "url", "extra"),
    [
        pytest.param("GET", "/site-json/hdr/v1/thing", {}, id="success"),
        pytest.param("GET", "/site-json/hdr/v1/thing", {"X-Test-Login": "1"}, id="logged-in"),
        pytest.param("GET", "/site-json/hdr/v1/missing", {}, id="no-route"),
        pytest.param("POST", "/site-json/hdr/v1/thing", {}, id="forbidden"),
        pytest.param("GET", "/site-json/hdr/v1/thing", {"X-Test-Fail": "1"}, id="auth-error"),
        pytest.param("HEAD", "/site-json/hdr/v1/thing", {}, id="head"),
        pytest.param("OPTIONS", "/site-json/hdr/v1/thing", {}, id="options"),
    ],
)
def test_a_request_with_an_origin_gets_the_cors_headers(
    app: App, origin: str, allowed: str, method: str, url: str, extra: dict[str, str]
) -> None:
    client = make_client(app, register_basic)

    response = client.open(url, method=method, headers={"Origin": origin, **extra})

    assert response.headers.getlist("Access-Control-Allow-Origin") == [allowed]
    assert response.headers["Access-Control-Allow-Methods"] == CORS_METHODS
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    assert response.headers.getlist("Vary") == ["Origin"]


def test_vary_origin_is_appended_to_the_response_vary_header(app: App) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hdr/v1", "/varied", handler(with_headers({"Vary": "Accept-Encoding"}))
        )

    client = make_client(app, register)

    with_origin = client.get("/site-json/hdr/v1/varied", headers={"Origin": "https://a.example"})
    without_origin = client.get("/site-json/hdr/v1/varied")

    assert with_origin.headers.getlist("Vary") == ["Accept-Encoding, Origin"]
    assert without_origin.headers.getlist("Vary") == ["Accept-Encoding, Origin"]


VARY_WITHOUT_ORIGIN = [
    pytest.param("GET", "/site-json/hdr/v1/thing", {}, True, id="anonymous-get"),
    pytest.param("GET", "/site-json/hdr/v1/missing", {}, True, id="anonymous-get-no-route"),
    pytest.param("HEAD", "/site-json/hdr/v1/thing", {}, False, id="anonymous-head"),
    pytest.param("POST", "/site-json/hdr/v1/dated", {}, False, id="anonymous-post"),
    pytest.param("GET", "/site-json/hdr/v1/thing", {"X-Test-Login": "1"}, False, id="logged-in"),
    pytest.param(
        "POST", "/site-json/hdr/v1/dated?_method=GET", {}, False, id="post-overridden-to-get"
    ),
    pytest.param(
        "GET",
        "/site-json/hdr/v1/dated",
        {"X-HTTP-Method-Override": "POST"},
        True,
        id="get-overridden-to-post",
    ),
]


@pytest.mark.parametrize(("method", "url", "headers", "vary"), VARY_WITHOUT_ORIGIN)
def test_without_origin_only_an_anonymous_real_get_varies_on_origin(
    app: App, method: str, url: str, headers: dict[str, str], vary: bool
) -> None:
    client = make_client(app, register_basic)

    response = client.open(url, method=method, headers=headers)

    assert response.headers.getlist("Vary") == (["Origin"] if vary else [])
    assert "Access-Control-Allow-Origin" not in response.headers
    assert "Access-Control-Allow-Methods" not in response.headers
    assert "Access-Control-Allow-Credentials" not in response.headers


# ---------------------------------------------------------------------- no-cache
NOCACHE_CASES = [
    pytest.param(
        "GET", "/site-json/hdr/v1/dated", {"X-Test-Login": "1"}, 200, True, id="logged-in"
    ),
    pytest.param("GET", "/site-json/hdr/v1/dated", {}, 200, False, id="anonymous"),
    pytest.param(
        "GET", "/site-json/hdr/v1/dated", {"X-Test-Fail": "1"}, 403, True, id="authentication-error"
    ),
    pytest.param(
        "GET",
        "/site-json/hdr/v1/dated-error",
        {"X-HTTP-Method-Override": "POST"},
        409,
        True,
        id="header-override-4xx",
    ),
    pytest.param(
        "GET",
        "/site-json/hdr/v1/dated",
        {"X-HTTP-Method-Override": "DELETE"},
        404,
        True,
        id="header-override-no-route",
    ),
    pytest.param(
        "GET",
        "/site-json/hdr/v1/dated",
        {"X-HTTP-Method-Override": "POST"},
        200,
        False,
        id="header-override-2xx",
    ),
    pytest.param(
        "GET", "/site-json/hdr/v1/dated-error?_method=POST", {}, 409, False, id="query-override-4xx"
    ),
    pytest.param(
        "GET",
        "/site-json/hdr/v1/dated?_method=DELETE",
        {},
        404,
        False,
        id="query-override-no-route",
    ),
    pytest.param("GET", "/site-json/hdr/v1/dated-error", {}, 409, False, id="anonymous-4xx"),
]


@pytest.mark.parametrize(("method", "url", "headers", "status", "nocache"), NOCACHE_CASES)
def test_nocache_headers_for_logged_in_users_auth_errors_and_header_overrides_with_4xx(
    app: App, method: str, url: str, headers: dict[str, str], status: int, nocache: bool
) -> None:
    client = make_client(app, register_basic)

    response = client.open(url, method=method, headers=headers)

    assert response.status_code == status
    if nocache:
        assert response.headers["Expires"] == EXPIRES
        assert response.headers["Cache-Control"] == CACHE_CONTROL
        assert "Last-Modified" not in response.headers
    else:
        assert "Expires" not in response.headers
        assert "Cache-Control" not in response.headers
        if "dated" in url and status != 404:
            assert response.headers["Last-Modified"] == LAST_MODIFIED


def test_an_authentication_error_is_the_response_and_skips_the_handler(app: App) -> None:
    calls: list[str] = []

    def tracked(request: RestRequest) -> dict[str, Any]:
        calls.append("called")
        return {}

    def register(server: RestServer) -> None:
        server.register_rest_route("hdr/v1", "/tracked", handler(tracked))

    client = make_client(app, register)

    response = client.get("/site-json/hdr/v1/tracked", headers={"X-Test-Fail": "1"})

    assert response.status_code == 403
    assert body_of(response) == {
        "code": "rest_cookie_invalid_nonce",
        "message": "Cookie check failed",
        "data": {"status": 403},
    }
    assert calls == []


def test_headers_of_a_successful_authentication_are_sent(app: App) -> None:
    client = make_client(app, register_basic, headers={"X-Site-Nonce": "fresh-nonce"})

    logged_in = client.get("/site-json/hdr/v1/thing", headers={"X-Test-Login": "1"})
    no_route = client.get("/site-json/hdr/v1/missing", headers={"X-Test-Login": "1"})
    anonymous = client.get("/site-json/hdr/v1/thing")

    assert logged_in.headers["X-Site-Nonce"] == "fresh-nonce"
    assert no_route.headers["X-Site-Nonce"] == "fresh-nonce"
    assert "X-Site-Nonce" not in anonymous.headers


# ---------------------------------------------------------------------- debug headers
def notice_route(notify: Callable[[App], None], app: App) -> Register:
    """A route whose callback raises notices through ``notify(app)``."""

    def callback(request: RestRequest) -> dict[str, Any]:
        notify(app)
        return {"ok": True}

    def register(server: RestServer) -> None:
        server.register_rest_route("dbg/v1", "/notice", handler(callback))

    return register


NOTICE_FORMATS = [
    pytest.param(
        lambda app: app.doing_it_wrong("some_function", "Do it differently."),
        "X-Site-DoingItWrong",
        "some_function (Do it differently.)",
        id="doing-it-wrong",
    ),
    pytest.param(
        lambda app: app.doing_it_wrong("some_function", "Do it differently.", "1.2.0"),
        "X-Site-DoingItWrong",
        "some_function (since 1.2.0; Do it differently.)",
        id="doing-it-wrong-with-version",
    ),
    pytest.param(
        lambda app: app.deprecated_function("old_function", "new_function"),
        "X-Site-DeprecatedFunction",
        "old_function (use new_function instead)",
        id="deprecated-function",
    ),
    pytest.param(
        lambda app: app.deprecated_function("old_function", "new_function", "2.0"),
        "X-Site-DeprecatedFunction",
        "old_function (since 2.0; use new_function instead)",
        id="deprecated-function-with-version",
    ),
    pytest.param(
        lambda app: app.deprecated_function("old_function"),
        "X-Site-DeprecatedFunction",
        "old_function (no alternative available)",
        id="deprecated-function-without-replacement",
    ),
    pytest.param(
        lambda app: app.deprecated_function("old_function", None, "2.0"),
        "X-Site-DeprecatedFunction",
        "old_function (since 2.0; no alternative available)",
        id="deprecated-function-with-version-without-replacement",
    ),
    pytest.param(
        lambda app: app.deprecated_argument("some_function", "The flag is ignored."),
        "X-Site-DeprecatedParam",
        "some_function (The flag is ignored.)",
        id="deprecated-argument",
    ),
    pytest.param(
        lambda app: app.deprecated_argument("some_function", "The flag is ignored.", "3.1"),
        "X-Site-DeprecatedParam",
        "some_function (since 3.1; The flag is ignored.)",
        id="deprecated-argument-with-version",
    ),
    pytest.param(
        lambda app: app.deprecated_argument("some_function", None, "3.1"),
        "X-Site-DeprecatedParam",
        "some_function (since 3.1; no alternative available)",
        id="deprecated-argument-with-version-without-message",
    ),
]


@pytest.mark.parametrize(("notify", "name", "text"), NOTICE_FORMATS)
def test_debug_headers_carry_the_notice_in_its_format(
    app_factory: AppFactory, notify: Callable[[App], None], name: str, text: str
) -> None:
    app = app_factory(debug=True)
    client = make_client(app, notice_route(notify, app))

    response = client.get("/site-json/dbg/v1/notice")

    assert response.status_code == 200
    assert response.headers.getlist(name) == [text]
    for other in DEBUG_HEADER_NAMES:
        if other != name:
            assert other not in response.headers


def raise_all_three(app: App) -> None:
    app.doing_it_wrong("a_function", "Wrong.")
    app.deprecated_function("b_function", "c_function")
    app.deprecated_argument("d_function", "Old.")


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param({"debug": True}, True, id="debug"),
        pytest.param({}, False, id="default"),
        pytest.param({"debug": False}, False, id="debug-off"),
    ],
)
def test_debug_headers_are_sent_only_in_debug_mode(
    app_factory: AppFactory, config: dict[str, Any], expected: bool
) -> None:
    app = app_factory(**config)
    client = make_client(app, notice_route(raise_all_three, app))

    response = client.get("/site-json/dbg/v1/notice")

    for name in DEBUG_HEADER_NAMES:
        assert (name in response.headers) is expected


def test_debug_headers_are_sent_only_on_rest_responses(app_factory: AppFactory) -> None:
    app = app_factory(debug=True)
    client = make_client(app, notice_route(raise_all_three, app))
    client.get("/site-json/")

    def noisy_url(url: str) -> str:
        raise_all_three(app)
        return url

    app.hooks.add_filter("rest_url", noisy_url)  # the page builds the API-root link with it

    page = client.get("/")

    assert page.status_code == 200
    for name in DEBUG_HEADER_NAMES:
        assert name not in page.headers


def test_notices_raised_outside_a_request_do_not_reach_a_later_response(
    app_factory: AppFactory,
) -> None:
    app = app_factory(debug=True)
    client = make_client(app, notice_route(lambda app: None, app))
    client.get("/site-json/")
    raise_all_three(app)

    response = client.get("/site-json/dbg/v1/notice")

    for name in DEBUG_HEADER_NAMES:
        assert name not in response.headers


def test_the_last_notice_of_a_kind_wins(app_factory: AppFactory) -> None:
    def notify(app: App) -> None:
        app.doing_it_wrong("first_function", "First.")
        app.doing_it_wrong("second_function", "Second.")
        app.deprecated_function("old_one", "new_one")
        app.deprecated_function("old_two")

    app = app_factory(debug=True)
    client = make_client(app, notice_route(notify, app))

    response = client.get("/site-json/dbg/v1/notice")

    assert response.headers.getlist("X-Site-DoingItWrong") == ["second_function (Second.)"]
    assert response.headers.getlist("X-Site-DeprecatedFunction") == [
        "old_two (no alternative available)"
    ]


def test_notices_do_not_leak_from_one_request_to_the_next(app_factory: AppFactory) -> None:
    app = app_factory(debug=True)

    def notify_when_asked(app: App) -> None:
        app.doing_it_wrong("asked_function", "Asked.")

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "dbg/v1",
            "/maybe",
            handler(lambda request: notify_when_asked(app) if request["loud"] else {}),
        )

    client = make_client(app, register)

    loud = client.get("/site-json/dbg/v1/maybe?loud=1")
    quiet = client.get("/site-json/dbg/v1/maybe")

    assert loud.headers["X-Site-DoingItWrong"] == "asked_function (Asked.)"
    assert "X-Site-DoingItWrong" not in quiet.headers


def test_a_schema_without_type_is_reported_as_doing_it_wrong(app_factory: AppFactory) -> None:
    app = app_factory(debug=True)

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "dbg/v1",
            "/schema",
            handler(
                lambda request: {"obj": request["obj"]},
                args={
                    "obj": {
                        "type": "object",
                        "properties": {"untyped": {"description": "No type here."}},
                    }
                },
            ),
        )

    client = make_client(app, register)

    response = client.get("/site-json/dbg/v1/schema?obj[untyped]=1")

    assert response.status_code == 200
    header = response.headers["X-Site-DoingItWrong"]
    assert header.endswith('(The "type" schema keyword for obj[untyped] is required.)')
    assert header.split(" (")[0] in (
        "rest_validate_value_from_schema",
        "rest_sanitize_value_from_schema",
    )


def test_a_route_without_permission_callback_is_reported_while_registering(
    app_factory: AppFactory,
) -> None:
    app = app_factory(debug=True)

    def register(server: RestServer) -> None:
        server.register_rest_route("dbg/v1", "/open", handler(permission=None))

    client = make_client(app, register)

    response = client.get("/site-json/dbg/v1/open")

    assert response.status_code == 200
    assert response.headers["X-Site-DoingItWrong"].startswith(
        "register_rest_route (The REST API route definition for dbg/v1/open is missing the "
        "required permission_callback argument."
    )


# ---------------------------------------------------------------------- header text
MULTILINE_VALUES = [
    pytest.param("first\nsecond", "first second", id="newline"),
    pytest.param("first\r\nsecond", "first second", id="crlf"),
    pytest.param("first \r\n\t  second", "first second", id="whitespace-run"),
]


@pytest.mark.parametrize(("value", "expected"), MULTILINE_VALUES)
def test_response_header_values_never_contain_newlines(
    app_factory: AppFactory, value: str, expected: str
) -> None:
    app = app_factory(debug=True)

    def callback(request: RestRequest) -> RestResponse:
        app.doing_it_wrong("multi_line", value)
        return RestResponse({"ok": True}, 200, {"X-Custom": value})

    def register(server: RestServer) -> None:
        server.register_rest_route("dbg/v1", "/lines", handler(callback))

    client = make_client(app, register)

    response = client.get("/site-json/dbg/v1/lines")

    assert response.headers.getlist("X-Custom") == [expected]
    assert response.headers.getlist("X-Site-DoingItWrong") == [f"multi_line ({expected})"]
    for name, text in response.headers.items():
        assert "\n" not in text, name
        assert "\r" not in text, name

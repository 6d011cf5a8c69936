"""Work the REST hot path leaves out, with the same answers (#18, third pass).

A REST GET without a body gets werkzeug's request lazily; a REST answer keeps its headers by
name until werkzeug's are asked for; the server calls its own filters directly while nothing
else is hooked on them; the default argument callbacks' results for short text values are
kept per handler, never shared when they could be changed.
"""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client, EnvironBuilder
from werkzeug.wrappers import Request, Response

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.page_headers import EVERY_RESPONSE_HEADERS, HTML_PAGE_HEADERS
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from sitecache.rest.http_request import BodilessRequest
from sitecache.rest.http_response import RestHttpResponse, to_http
from sitecache.rest.request import ARG_RESULT_MAX_TEXT, ARG_RESULTS, ARG_RESULTS_KEPT


# ---------------------------------------------------------------------- the lazy request
@pytest.mark.parametrize(
    "path", ["/site-json/site/v2/posts", "//site-json/x/", "/site-json/café", "/site-json"]
)
def test_a_bodiless_request_is_werkzeugs_request(path: str) -> None:
    def environ() -> dict[str, Any]:
        built = EnvironBuilder(
            path="/x", query_string="a=1&b=2", headers=[("X-Thing", "yes")]
        ).get_environ()
        built["PATH_INFO"] = path.encode().decode("latin-1")  # as a WSGI server passes it
        return built

    lazy, eager = BodilessRequest(environ()), Request(environ())
    assert (lazy.method, lazy.path) == (eager.method, eager.path)
    assert "werkzeug.request" not in lazy.environ  # nothing else was made yet
    for name in ("url", "full_path", "args", "remote_addr", "root_path", "scheme"):
        assert getattr(lazy, name) == getattr(eager, name), name
    assert lazy.headers.get("X-Thing") == "yes"
    assert lazy.environ["werkzeug.request"] is lazy
    with pytest.raises(AttributeError):
        lazy.no_such_attribute  # noqa: B018


def test_only_bodiless_gets_and_heads_suit() -> None:
    def environ(method: str, **extra: Any) -> dict[str, Any]:
        return {**EnvironBuilder(method=method).get_environ(), **extra}

    assert BodilessRequest.suits(environ("GET"))
    assert BodilessRequest.suits(environ("HEAD"))
    assert not BodilessRequest.suits(environ("POST"))
    assert not BodilessRequest.suits(environ("GET", CONTENT_LENGTH="2"))
    assert not BodilessRequest.suits(environ("GET", HTTP_TRANSFER_ENCODING="chunked"))


def test_a_rest_route_that_is_not_text_still_answers_as_before(client: Client) -> None:
    response = client.get("/site-json/?rest_route[]=x", headers={"Accept": "application/json"})
    assert response.status_code == 400
    assert response.json is not None
    assert response.json["code"] == "rest_path_invalid_type"


# ---------------------------------------------------------------------- default headers
def werkzeug_defaults(response: Response) -> list[tuple[str, str]]:
    """What the application's security defaults make of ``response`` werkzeug's way."""
    headers = response.headers
    for name, value in EVERY_RESPONSE_HEADERS.items():
        headers.setdefault(name, value)
    if response.mimetype == "text/html":
        for name, value in HTML_PAGE_HEADERS.items():
            headers.setdefault(name, value)
    return list(headers)


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json; charset=UTF-8", "X-Content-Type-Options": "nosniff"},
        {"Content-Type": "application/json"},
        {"Content-Type": "text/html; charset=UTF-8", "x-frame-options": "DENY"},
        {"content-type": " text/html ", "X-CONTENT-TYPE-OPTIONS": "x"},
        {"Content-Type": "TEXT/HTML"},
        {"Content-Type": ""},
        {},
    ],
)
@pytest.mark.parametrize("touched", [False, True])
def test_default_headers_are_set_as_werkzeug_sets_them(
    headers: dict[str, str], touched: bool
) -> None:
    expected = werkzeug_defaults(to_http(200, headers, "{}", {}))
    response = to_http(200, headers, "{}", {})
    assert isinstance(response, RestHttpResponse)  # what the application's own code checks
    if touched:
        response.headers.add("X-Later", "1")  # werkzeug's headers from here on
        expected = werkzeug_defaults(_with_later(to_http(200, headers, "{}", {})))
    response.set_default_headers(EVERY_RESPONSE_HEADERS, HTML_PAGE_HEADERS)
    assert list(response.headers) == expected


def _with_later(response: Response) -> Response:
    response.headers.add("X-Later", "1")
    return response


# ---------------------------------------------------------------------- the server's filters
def test_a_plugin_filter_on_the_servers_own_filters_still_runs(app: App, client: Client) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "own/v1",
            "/thing",
            {"methods": "GET", "callback": lambda r: {"a": 1}, "permission_callback": return_true},
        )

    seen: list[str] = []

    def post_dispatch(response: RestResponse, server: RestServer, request: RestRequest) -> Any:
        seen.append(response.get_headers().get("Allow", ""))
        response.header("X-Plugin", "yes")
        return response

    app.hooks.add_action("rest_api_init", register)
    assert "X-Plugin" not in client.get("/site-json/own/v1/thing").headers
    app.hooks.add_filter("rest_post_dispatch", post_dispatch, 11)  # after Allow
    answered = client.get("/site-json/own/v1/thing")
    assert answered.headers["X-Plugin"] == "yes"
    assert seen == ["GET"]
    app.hooks.remove_filter("rest_post_dispatch", post_dispatch, 11)
    assert "X-Plugin" not in client.get("/site-json/own/v1/thing").headers
    assert app.server.runs_only_own("rest_post_dispatch")


# ---------------------------------------------------------------------- kept argument results
ARRAY_ARG = {"type": "array", "items": {"type": "integer"}}
TEXT_ARG = {"type": "string", "enum": ["a", "b"]}


def _handler(app: App) -> dict[str, Any]:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "kept/v1",
            "/thing",
            {
                "methods": "GET",
                "callback": lambda request: {"ids": request["ids"], "mode": request["mode"]},
                "permission_callback": return_true,
                "args": {"ids": ARRAY_ARG, "mode": TEXT_ARG},
            },
        )

    app.hooks.add_action("rest_api_init", register)
    app.server.ensure_initialized()
    return app.server.registry.routes["/kept/v1/thing"].handlers[0]


def _sanitized(app: App, query: dict[str, Any]) -> RestRequest | RestError:
    request = RestRequest("GET", "/kept/v1/thing")
    request.set_query_params(query)
    assert not isinstance(app.server.match_request_to_handler(request), RestError)
    verdict = request.sanitize_params()
    if isinstance(verdict, RestError):
        return verdict
    assert verdict is True
    return request


def test_a_containers_result_is_never_shared_between_requests(app: App) -> None:
    handler = _handler(app)
    first = _sanitized(app, {"ids": "1,2", "mode": "a"})
    second = _sanitized(app, {"ids": "1,2", "mode": "a"})
    assert isinstance(first, RestRequest)
    assert isinstance(second, RestRequest)
    assert first["ids"] == second["ids"] == [1, 2]
    assert first["ids"] is not second["ids"]
    first["ids"].append(3)
    assert second["ids"] == [1, 2]
    kept = handler[ARG_RESULTS]
    assert kept[("parse", "mode", "a")] == (TEXT_ARG, "a")
    assert not any(key[1] == "ids" for key in kept)


def test_errors_and_long_values_are_worked_out_every_time(app: App) -> None:
    handler = _handler(app)
    refusals = [_sanitized(app, {"mode": "c"}) for _ in range(2)]
    assert all(isinstance(refusal, RestError) for refusal in refusals)
    assert refusals[0] is not refusals[1]
    assert refusals[0].to_dict() == refusals[1].to_dict()  # type: ignore[union-attr]
    assert handler[ARG_RESULTS] == {}
    _free_text(handler)
    answered = _sanitized(app, {"free": "a" * (ARG_RESULT_MAX_TEXT + 1)})
    assert isinstance(answered, RestRequest)
    assert handler[ARG_RESULTS] == {}
    assert isinstance(_sanitized(app, {"free": "a" * ARG_RESULT_MAX_TEXT}), RestRequest)
    assert len(handler[ARG_RESULTS]) == 1


def _free_text(handler: dict[str, Any]) -> None:
    """Give ``handler`` a plain text argument ``free`` (compiled, as registration does)."""
    definition = {"type": "string"}
    handler["args"] = {"free": definition, **handler["args"]}
    handler["compiled_args"]["free"] = type(handler["compiled_args"]["mode"])(definition)


def test_the_kept_results_are_bounded(app: App) -> None:
    handler = _handler(app)
    _free_text(handler)
    for number in range(ARG_RESULTS_KEPT + 10):
        answered = _sanitized(app, {"free": f"v{number}"})
        assert isinstance(answered, RestRequest)
        assert answered["free"] == f"v{number}"
    assert 0 < len(handler[ARG_RESULTS]) <= ARG_RESULTS_KEPT


def test_a_kept_result_answers_for_its_own_definition_only(app: App) -> None:
    _handler(app)
    assert isinstance(_sanitized(app, {"mode": "a"}), RestRequest)  # kept now
    request = RestRequest("GET", "/kept/v1/thing")
    request.set_query_params({"mode": "a"})
    assert not isinstance(app.server.match_request_to_handler(request), RestError)
    attributes = request.get_attributes()
    attributes["args"] = {**attributes["args"], "mode": {"type": "string", "enum": ["b"]}}
    refused = request.sanitize_params()
    assert isinstance(refused, RestError)
    assert refused.code == "rest_invalid_param"
